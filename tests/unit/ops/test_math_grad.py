"""Math gradients beyond the central-difference cases: special points (x = 0, ties,
zeros), gradient graph structure (static broadcast reductions), None gradients, and the
static reduction indices against TensorFlow's `BCast` rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorweave as tf
from tensorweave import errors
from tensorweave.kernels.math_kernels import broadcast_reduction_indices
from tensorweave.ops.gradients_impl import gradients
from tensorweave.ops.math_grad import static_reduction_indices


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def _grad_op_types(g, start):
    """Types of the ops added by gradient functions (not by `gradients` itself)."""
    return [op.type for op in g.get_operations()[start:] if "_grad/" in op.name]


def test_pow_gradient_at_zero_is_finite():
    with tf.Graph().as_default():
        x = tf.constant([0.0, 2.0, -1.0])
        y = tf.constant([2.0, 3.0, 2.0])
        gx, gy = gradients(tf.pow(x, y), [x, y])
        got = _run([gx, gy])
    np.testing.assert_allclose(got[0], [0.0, 12.0, -2.0])
    np.testing.assert_allclose(got[1], [0.0, 8.0 * np.log(2.0), 0.0])


def test_max_gradient_splits_ties():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
        got = _run(gradients(tf.reduce_max(x, axis=1), x)[0])
        gmin = _run(gradients(tf.reduce_min(x), x)[0])
        gk = _run(gradients(tf.reduce_max(x, axis=0, keepdims=True), x)[0])
    np.testing.assert_allclose(got, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(gmin, [[1.0, 0, 0], [0, 0, 0]])
    np.testing.assert_allclose(gk, [[0, 1, 1], [1, 0, 0]])


def test_maximum_minimum_ties_go_to_x():
    with tf.Graph().as_default():
        x, y = tf.constant([1.0, 2.0, 3.0]), tf.constant([2.0, 2.0, 2.0])
        got = _run(gradients(tf.maximum(x, y), [x, y]) + gradients(tf.minimum(x, y), [x, y]))
    np.testing.assert_array_equal(got[0], [0, 1, 1])
    np.testing.assert_array_equal(got[1], [1, 0, 0])
    np.testing.assert_array_equal(got[2], [1, 1, 0])
    np.testing.assert_array_equal(got[3], [0, 0, 1])


def test_prod_gradient_with_zeros():
    x_value = np.array([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0], [2.0, 5.0, 4.0]])
    with tf.Graph().as_default():
        x = tf.constant(x_value)
        rows = _run(gradients(tf.reduce_prod(x, axis=1), x)[0])
        cols = _run(gradients(tf.reduce_prod(x, axis=0), x)[0])
        p = tf.placeholder(tf.float64)
        with pytest.raises(ValueError, match="static input rank"):
            gradients(tf.reduce_prod(p, axis=0), p)
    np.testing.assert_allclose(rows, [[6, 0, 0], [0, 0, 0], [20, 8, 10]])
    np.testing.assert_allclose(cols, [[2, 0, 0], [0, 10, 12], [0, 0, 0]])


def test_non_float_casts_and_integer_ops_have_no_gradient():
    with tf.Graph().as_default():
        x = tf.constant([1.5, 2.5])
        as_int = tf.cast(x, tf.int32)
        y = tf.cast(as_int, tf.float32)
        assert gradients(y, x) == [None]
        assert gradients(tf.floor(x), x) == [None]
        assert gradients(tf.floordiv(x, 2.0), x) == [None]
        a = tf.constant([1.0, 2.0])
        assert gradients(tf.cast(tf.argmax(a), tf.float32), a) == [None]
        assert gradients(tf.cast(tf.less(a, 1.5), tf.float32), a) == [None]
        got = _run(gradients(tf.sign(x) * x, x)[0])
    np.testing.assert_array_equal(got, [1.0, 1.0])


def test_cast_gradient_between_floats():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0], tf.float64)
        (g,) = gradients(tf.cast(x, tf.float32) * 3.0, x)
        assert g.dtype == tf.float64
        np.testing.assert_array_equal(_run(g), [3.0, 3.0])


def test_static_broadcast_gradients_avoid_shape_ops():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 10])
        b = tf.constant(np.arange(10, dtype=np.float32))
        out = x + b
        start = len(g.get_operations())
        gx, gb = gradients(out, [x, b])
        types = _grad_op_types(g, start)
        assert "BroadcastGradientArgs" not in types and "Shape" not in types
        assert gb.op.type == "Sum" and gb.shape.as_list() == [10]
        got = _run([gx, gb], {x: np.ones((4, 10), np.float32)})
    np.testing.assert_array_equal(got[0], np.ones((4, 10)))
    np.testing.assert_array_equal(got[1], np.full(10, 4.0))


def test_equal_shapes_pass_the_gradient_through():
    with tf.Graph().as_default():
        x, y = tf.constant(np.ones((2, 3))), tf.constant(np.ones((2, 3)))
        grad = tf.constant(np.full((2, 3), 2.0))
        gx, gy = gradients(x + y, [x, y], grad_ys=grad)
        assert gx is gy and gx.op.type != "Sum"


def test_kept_dims_broadcast_reshapes_to_input_shape():
    with tf.Graph().as_default():
        x = tf.constant(np.ones((3, 1)))
        y = tf.constant(np.ones((1, 4)))
        gx, gy = gradients(x * y, [x, y])
        assert gx.shape.as_list() == [3, 1] and gy.shape.as_list() == [1, 4]
        got = _run([gx, gy])
    np.testing.assert_array_equal(got[0], np.full((3, 1), 4.0))
    np.testing.assert_array_equal(got[1], np.full((1, 4), 3.0))


def test_undecidable_broadcast_uses_broadcast_gradient_args():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [None, 1])
        y = tf.placeholder(tf.float64, [None, 3])
        start = len(g.get_operations())
        gx, gy = gradients(x - y, [x, y])
        assert "BroadcastGradientArgs" in _grad_op_types(g, start)
        got = _run([gx, gy], {x: np.ones((2, 1)), y: np.ones((2, 3))})
        got1 = _run([gx, gy], {x: np.ones((1, 1)), y: np.ones((2, 3))})
    np.testing.assert_array_equal(got[0], np.full((2, 1), 3.0))
    np.testing.assert_array_equal(got[1], np.full((2, 3), -1.0))
    np.testing.assert_array_equal(got1[0], [[6.0]])


def test_mean_gradient_with_unknown_batch():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        (g,) = gradients(tf.reduce_mean(x), x)
        for n in (1, 4):
            got = _run(g, {x: np.ones((n, 2), np.float32)})
            np.testing.assert_allclose(got, np.full((n, 2), 1.0 / (2 * n)))
            assert got.dtype == np.float32


def test_unary_gradients_use_tf_helper_ops():
    with tf.Graph().as_default():
        x = tf.constant([0.5, 1.0])
        for fn, helper in (
            (tf.sigmoid, "SigmoidGrad"),
            (tf.tanh, "TanhGrad"),
            (tf.sqrt, "SqrtGrad"),
            (tf.rsqrt, "RsqrtGrad"),
            (tf.reciprocal, "ReciprocalGrad"),
        ):
            (gx,) = gradients(fn(x), x)
            assert gx.op.type == helper


def test_indexed_slices_gradient_into_add_is_densified():
    with tf.Graph().as_default():
        params = tf.constant(np.ones((4, 2)))
        rows = tf.gather(params, [0, 2, 0])
        b = tf.constant(np.ones((4, 2)))
        out = tf.reduce_sum(rows) + tf.reduce_sum(params * b)
        (g,) = gradients(out, params)
        got = _run(tf.convert_to_tensor(g))
    np.testing.assert_array_equal(got, [[3, 3], [1, 1], [2, 2], [1, 1]])


def test_check_numerics_gradient_checks_the_gradient():
    with tf.Graph().as_default():
        x = tf.constant([0.0, 1.0])
        y = tf.check_numerics(x, "fwd") * tf.constant([np.inf, 1.0])
        (g,) = gradients(y, x)
        with pytest.raises(errors.InvalidArgumentError, match="detected in gradient. fwd"):
            _run(g)


def test_unsorted_segment_sum_gradient_drops_negative_ids():
    with tf.Graph().as_default():
        data = tf.constant(np.arange(8, dtype=np.float64).reshape(4, 2))
        ids = tf.placeholder(tf.int32, [4])
        out = tf.unsorted_segment_sum(data, ids, 3) * np.array([[1.0], [2.0], [3.0]])
        (g,) = gradients(out, data)
        got = _run(g, {ids: [2, -1, 0, 2]})
    np.testing.assert_array_equal(got, [[3, 3], [0, 0], [1, 1], [3, 3]])


def test_matmul_gradient_end_to_end_with_unknown_batch():
    rng = np.random.default_rng(0)
    xv, wv, bv = rng.standard_normal((5, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, 3])
        w, b = tf.constant(wv), tf.constant(bv)
        loss = tf.reduce_mean(tf.square(tf.sigmoid(tf.matmul(x, w) + b)))
        gw, gb = gradients(loss, [w, b])
        got = _run([gw, gb], {x: xv})
    s = 1 / (1 + np.exp(-(xv @ wv + bv)))
    dz = 2 * s * s * (1 - s) / s.size
    np.testing.assert_allclose(got[0], xv.T @ dz, rtol=1e-10)
    np.testing.assert_allclose(got[1], dz.sum(0), rtol=1e-10)


# ------------------------------------------ static reduction indices vs TF's BCast
@st.composite
def _shape_pairs(draw):
    rank = draw(st.integers(0, 4))
    out = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    sx, sy = [], []
    for d in out:
        choice = draw(st.sampled_from(["both", "x1", "y1"]))
        sx.append(1 if choice == "x1" else d)
        sy.append(1 if choice == "y1" else d)
    sx = sx[draw(st.integers(0, rank)) :]
    sy = sy[draw(st.integers(0, rank)) :]
    mask_x = draw(st.lists(st.booleans(), min_size=len(sx), max_size=len(sx)))
    mask_y = draw(st.lists(st.booleans(), min_size=len(sy), max_size=len(sy)))
    return sx, sy, mask_x, mask_y


@settings(max_examples=300, deadline=None)
@given(_shape_pairs())
def test_static_reduction_indices_agree_with_bcast(pair):
    sx, sy, mask_x, mask_y = pair
    rx_tf, ry_tf = broadcast_reduction_indices(sx, sy)
    assert static_reduction_indices(tuple(sx), tuple(sy)) == (rx_tf, ry_tf)
    px = tuple(None if m else d for d, m in zip(sx, mask_x))
    py = tuple(None if m else d for d, m in zip(sy, mask_y))
    static = static_reduction_indices(px, py)
    if static is None:
        return
    out_shape = np.broadcast_shapes(tuple(sx), tuple(sy))
    grad = np.random.default_rng(0).standard_normal(out_shape)
    for shape, r, r_tf in ((sx, static[0], rx_tf), (sy, static[1], ry_tf)):
        want = np.sum(grad, axis=tuple(r_tf)).reshape(shape)
        got = np.sum(grad, axis=tuple(r)).reshape(shape)
        np.testing.assert_allclose(got, want)
