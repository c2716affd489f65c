"""Element-wise math ops: static shape inference and its errors, run-time broadcast errors,
dtype mismatches, `Tensor`'s operator overloads and `BroadcastGradientArgs`.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.kernels.math_kernels import broadcast_reduction_indices
from tensorweave.ops import math_ops


def _run(fetches, feed_dict=None, graph=None):
    with tf.Session(graph=graph or tf.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


# --------------------------------------------------------- static shapes, errors
@pytest.mark.parametrize(
    "sx,sy,want",
    [
        ([None, 3], [3], [None, 3]),
        ([None, 1], [1, 4], [None, 4]),
        ([None], [5], [5]),
        ([2, None], [None, None], [2, None]),
        ([1], [None], [None]),
        (None, [3], None),
        ([], [None, 2], [None, 2]),
    ],
)
def test_broadcast_static_shape_inference(sx, sy, want):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, sx)
        y = tf.placeholder(tf.float32, sy)
        out = x * y
        if want is None:
            assert out.shape.ndims is None
        else:
            assert out.shape.as_list() == want


def test_static_shape_mismatch_is_value_error_with_tf_message():
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            tf.constant([1.0, 2.0]) + tf.constant([1.0, 2.0, 3.0])
    assert str(info.value) == (
        "Dimensions must be equal, but are 2 and 3 for 'add' (op: 'AddV2') with input "
        "shapes: [2], [3]."
    )


def test_runtime_broadcast_error_is_invalid_argument():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        out = x + tf.constant([1.0, 2.0, 3.0])
        with pytest.raises(
            errors.InvalidArgumentError, match=r"Incompatible shapes: \[2\] vs. \[3\]"
        ):
            _run(out, {x: np.ones(2, np.float32)})


def test_mismatched_dtypes_are_type_errors():
    with tf.Graph().as_default():
        i, f = tf.constant([1]), tf.constant([1.0])
        with pytest.raises(TypeError):
            tf.add(i, f)
        with pytest.raises(TypeError):
            tf.multiply(f, tf.constant([1.0], tf.float64))
        with pytest.raises(TypeError):
            i + 1.5
        with pytest.raises(TypeError):
            tf.sqrt(i)
        with pytest.raises(TypeError):
            tf.abs(tf.constant([1 + 1j]))


# ---------------------------------------------------------------- operators
def test_operators_with_python_scalars_and_reflection():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0, 4.0])
        i = tf.constant([7, -7])
        outs = {
            "add": x + 1,
            "radd": 1 + x,
            "sub": x - 1,
            "rsub": 10 - x,
            "mul": x * 2,
            "rmul": 2 * x,
            "div": x / 2,
            "rdiv": 8 / x,
            "floordiv": i // 2,
            "rfloordiv": 15 // tf.constant([2, 4]),
            "mod": i % 3,
            "rmod": 7 % tf.constant([3]),
            "pow": x**2,
            "rpow": 2**x,
            "neg": -x,
            "abs": abs(i),
            "np_left": np.float32(2.0) * x,
            "np_array": np.array([1.0, 1.0, 1.0], np.float32) + x,
        }
        got = _run(outs)
        rsub = outs["rsub"].op
        assert rsub.name == "sub_1" and rsub.inputs[0].op.name == "sub_1/x"
        assert outs["sub"].op.inputs[1].op.name == outs["sub"].op.name + "/y"
    xv = np.array([1.0, 2.0, 4.0], np.float32)
    np.testing.assert_allclose(got["add"], xv + 1)
    np.testing.assert_allclose(got["radd"], 1 + xv)
    np.testing.assert_allclose(got["sub"], xv - 1)
    np.testing.assert_allclose(got["rsub"], 10 - xv)
    np.testing.assert_allclose(got["mul"], xv * 2)
    np.testing.assert_allclose(got["rmul"], 2 * xv)
    np.testing.assert_allclose(got["div"], xv / 2)
    np.testing.assert_allclose(got["rdiv"], 8 / xv)
    np.testing.assert_array_equal(got["floordiv"], [3, -4])
    np.testing.assert_array_equal(got["rfloordiv"], [7, 3])
    np.testing.assert_array_equal(got["mod"], [1, 2])
    np.testing.assert_array_equal(got["rmod"], [1])
    np.testing.assert_allclose(got["pow"], xv**2)
    np.testing.assert_allclose(got["rpow"], 2**xv)
    np.testing.assert_allclose(got["neg"], -xv)
    np.testing.assert_array_equal(got["abs"], [7, 7])
    np.testing.assert_allclose(got["np_left"], 2 * xv)
    np.testing.assert_allclose(got["np_array"], xv + 1)
    for k, v in got.items():
        if k not in ("floordiv", "rfloordiv", "mod", "rmod", "abs"):
            assert v.dtype == np.float32, k


def test_operator_op_names_follow_tensorflow():
    with tf.Graph().as_default():
        x = tf.constant(1.0)
        assert (x + x).op.name == "add"
        assert (x + x).op.name == "add_1"
        assert (x - x).op.name == "sub"
        assert (x * x).op.name == "mul"
        assert (x / x).op.name == "truediv"
        assert (x // x).op.name == "floordiv"
        assert (x % x).op.name == "mod"
        assert (x**x).op.name == "pow"
        assert (-x).op.type == "Neg"
        assert (x < x).op.type == "Less"


def test_equality_operators_keep_identity():
    with tf.Graph().as_default():
        x, y = tf.constant(1.0), tf.constant(1.0)
        assert (x == x) is True
        assert (x == y) is False
        assert x != y
        assert {x: 1}[x] == 1


def test_variable_operators_delegate():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        m = tf.Variable([[1.0, 2.0]])
        outs = [
            v + 1,
            1 - v,
            v * v,
            v / 2,
            -v,
            v < 1.5,
            m @ tf.constant([[1.0], [1.0]]),
            2.0**v,
            abs(v),
        ]
        with tf.Session() as sess:
            sess.run([v.initializer, m.initializer])
            got = sess.run(outs)
    np.testing.assert_allclose(got[0], [2.0, 3.0])
    np.testing.assert_allclose(got[1], [0.0, -1.0])
    np.testing.assert_allclose(got[2], [1.0, 4.0])
    np.testing.assert_allclose(got[3], [0.5, 1.0])
    np.testing.assert_allclose(got[4], [-1.0, -2.0])
    np.testing.assert_array_equal(got[5], [True, False])
    np.testing.assert_allclose(got[6], [[3.0]])
    np.testing.assert_allclose(got[7], [2.0, 4.0])
    np.testing.assert_allclose(got[8], [1.0, 2.0])


def test_operator_returns_not_implemented_for_tensor_aware_objects():
    class Other:
        def __radd__(self, other):
            return "handled"

    with tf.Graph().as_default():
        assert tf.constant(1.0) + Other() == "handled"


# ------------------------------------------------------- BroadcastGradientArgs
@pytest.mark.parametrize(
    "s0,s1,r0,r1",
    [
        ([2, 3, 5], [1], [], [0, 1, 2]),
        ([2, 3, 5], [5], [], [0, 1]),
        ([2, 3, 5], [3, 5], [], [0]),
        ([2, 3, 5], [3, 1], [], [0, 2]),
        ([2, 1, 5], [3, 1], [1], [0, 2]),
        ([1, 1], [1], [0, 1], [0, 1]),
        ([2, 1], [2, 1], [], []),
        ([], [3], [0], []),
        ([1, 3], [1, 3], [], []),
    ],
)
def test_broadcast_gradient_args(s0, s1, r0, r1):
    with tf.Graph().as_default():
        for dt in (tf.int32, tf.int64):
            a, b = math_ops.broadcast_gradient_args(
                tf.constant(np.array(s0, dt.as_numpy_dtype)),
                tf.constant(np.array(s1, dt.as_numpy_dtype)),
            )
            got = _run([a, b])
            assert got[0].dtype == dt.as_numpy_dtype and got[1].dtype == dt.as_numpy_dtype
            assert got[0].tolist() == r0 and got[1].tolist() == r1
    assert broadcast_reduction_indices(s0, s1) == (r0, r1)


def test_broadcast_gradient_args_incompatible():
    with tf.Graph().as_default():
        r0, _ = math_ops.broadcast_gradient_args(tf.constant([2, 3]), tf.constant([4]))
        with pytest.raises(
            errors.InvalidArgumentError, match=r"Incompatible shapes: \[2,3\] vs. \[4\]"
        ):
            _run(r0)
