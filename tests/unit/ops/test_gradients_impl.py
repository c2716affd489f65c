"""The `tf.gradients` machinery (follows TF's gradients_test.py), on private `_Test*` ops
so that it does not depend on the gradients of the real ops."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.kernels.registry import register_compute
from tensorweave.ops import array_ops
from tensorweave.ops.gradients_impl import (
    AggregationMethod,
    RegisterGradient,
    gradients,
    no_gradient,
)


# ------------------------------------------------------------------ private test ops
def _op(op_type, name=None, **inputs):
    # Root-level op names may not start with "_": default to the type without it.
    return apply_op(op_type, name=name or op_type.lstrip("_"), **inputs)


_FLOAT = "T: {half, float, double}"


def _same(op):
    return [op.inputs[0].shape]


def _merged(op):
    return [op.inputs[0].shape.merge_with(op.inputs[1].shape)]


for _name in (
    "_TestSquare",
    "_TestNoGrad",
    "_TestNotDiff",
    "_TestBadShapeGrad",
    "_TestBadCountGrad",
):
    register_op(_name, inputs=["x: T"], outputs=["y: T"], attrs=[_FLOAT], shape_fn=_same)
register_op(
    "_TestSquareGrad", inputs=["x: T", "dy: T"], outputs=["dx: T"], attrs=[_FLOAT], shape_fn=_merged
)
register_op("_TestMul", inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[_FLOAT], shape_fn=_merged)
register_op(
    "_TestPair",
    inputs=["x: T"],
    outputs=["a: T", "b: T"],
    attrs=[_FLOAT],
    shape_fn=lambda op: [op.inputs[0].shape] * 2,
)
register_op(
    "_TestGather",
    inputs=["params: T", "indices: int32"],
    outputs=["out: T"],
    attrs=[_FLOAT],
    shape_fn=lambda op: [op.inputs[1].shape.concatenate(op.inputs[0].shape[1:])],
)
register_op("_TestToFloat", inputs=["x: int32"], outputs=["y: float"], shape_fn=_same)
register_op(
    "_TestPairGrad",
    inputs=["grad_a: T", "grad_b: T"],
    outputs=["dx: T"],
    attrs=[_FLOAT],
    shape_fn=_merged,
)


@register_compute(
    "_TestSquare", "_TestNoGrad", "_TestNotDiff", "_TestBadShapeGrad", "_TestBadCountGrad"
)
def _square_kernel(ctx, x):
    return x * x


@register_compute("_TestSquareGrad")
def _square_grad_kernel(ctx, x, dy):
    return (2 * x * dy).astype(x.dtype)


@register_compute("_TestMul")
def _mul_kernel(ctx, x, y):
    return x * y


@register_compute("_TestPair")
def _pair_kernel(ctx, x):
    return x, (2 * x).astype(x.dtype)


@register_compute("_TestPairGrad")
def _pair_grad_kernel(ctx, grad_a, grad_b):
    return (grad_a + 2 * grad_b).astype(grad_a.dtype)


@register_compute("_TestGather")
def _gather_kernel(ctx, params, indices):
    return params[indices]


@register_compute("_TestToFloat")
def _to_float_kernel(ctx, x):
    return x.astype(np.float32)


def square(x, name=None):
    return _op("_TestSquare", x=x, name=name)


def mul(x, y, name=None):
    return _op("_TestMul", x=x, y=y, name=name)


@RegisterGradient("_TestSquare")
def _square_grad(op, grad):
    return _op("_TestSquareGrad", x=op.inputs[0], dy=grad)


@RegisterGradient("_TestSquareAlt")
def _square_alt_grad(op, grad):
    return mul(grad, op.inputs[0])  # deliberately "wrong": x * dy instead of 2 x dy


@RegisterGradient("_TestMul")
def _mul_grad(op, grad):
    x, y = op.inputs
    return mul(grad, y), mul(grad, x)


@RegisterGradient("_TestPair")
def _pair_grad(op, grad_a, grad_b):
    # Both output gradients must be Tensors: the machinery fills in zeros for unused ones.
    return _op("_TestPairGrad", grad_a=grad_a, grad_b=grad_b)


@RegisterGradient("_TestGather")
def _gather_grad(op, grad):
    params, indices = op.inputs
    dense_shape = tf.constant(params.shape.as_list(), dtype=tf.int32)
    return IndexedSlices(grad, indices, dense_shape), None


@RegisterGradient("_TestBadShapeGrad")
def _bad_shape_grad(op, grad):
    return tf.constant(np.zeros((7,), dtype=np.float32))


@RegisterGradient("_TestBadCountGrad")
def _bad_count_grad(op, grad):
    return grad, grad


no_gradient("_TestNotDiff")
no_gradient("_TestSquareGrad")
no_gradient("_TestToFloat")
no_gradient("_TestPairGrad")


def gather(params, indices):
    return _op("_TestGather", params=params, indices=indices)


# ----------------------------------------------------------------------- helpers
@pytest.fixture
def g():
    graph = tf.Graph()
    with graph.as_default():
        yield graph


def run(graph, fetches, feed_dict=None):
    with tf.Session(graph=graph) as sess:
        return sess.run(fetches, feed_dict)


X = np.array([1.0, -2.0, 3.0], dtype=np.float32)


# ------------------------------------------------------------------------- tests
def test_single_op_gradient_default_grad_ys(g):
    x = tf.constant(X)
    (dx,) = gradients(square(x), [x])
    np.testing.assert_allclose(run(g, dx), 2 * X)


def test_xs_and_ys_may_be_single_tensors(g):
    x = tf.constant(X)
    result = gradients(square(x), x)
    assert isinstance(result, list) and len(result) == 1


def test_fan_out_is_summed(g):
    x = tf.constant(X)
    y = mul(x, x)  # x reaches y twice
    (dx,) = gradients(y, x)
    np.testing.assert_allclose(run(g, dx), 2 * X)
    assert dx.op.type == "AddN"
    assert dx.op.name == "gradients/AddN"


def test_fan_out_through_several_paths(g):
    x = tf.constant(X)
    a = square(x)
    y = mul(a, x)  # y = x^3 via two paths
    (dx,) = gradients(y, x)
    np.testing.assert_allclose(run(g, dx), 3 * X**2, rtol=1e-6)


def test_tree_aggregation(g):
    x = tf.constant(X)
    y = mul(mul(x, x), x)
    (dx,) = gradients(y, x, aggregation_method=AggregationMethod.EXPERIMENTAL_TREE)
    np.testing.assert_allclose(run(g, dx), 3 * X**2, rtol=1e-6)
    assert "_gradient_sum" in dx.op.name


def test_invalid_aggregation_method(g):
    x = tf.constant(X)
    with pytest.raises(ValueError, match="Invalid aggregation_method"):
        gradients(square(x), x, aggregation_method=7)


def test_unconnected_x_is_none(g):
    x = tf.constant(X)
    z = tf.constant(X)
    dx, dz = gradients(square(x), [x, z])
    assert dz is None
    assert dx is not None


def test_x_after_y_is_none(g):
    x = tf.constant(X)
    y = square(x)
    later = square(y)
    assert gradients(y, [later]) == [None]


def test_stop_gradients_argument(g):
    x = tf.constant(X)
    a = square(x)
    y = mul(a, x)
    (dx,) = gradients(y, x, stop_gradients=[a])
    np.testing.assert_allclose(run(g, dx), X**2)  # a treated as a constant
    (da,) = gradients(y, a, stop_gradients=[a])
    np.testing.assert_allclose(run(g, da), X)


def test_stop_gradient_op(g):
    x = tf.constant(X)
    y = mul(array_ops.stop_gradient(square(x)), x)
    (dx,) = gradients(y, x)
    np.testing.assert_allclose(run(g, dx), X**2)
    assert gradients(array_ops.stop_gradient(x), x) == [None]


def test_grad_ys(g):
    x = tf.constant(X)
    gy = np.array([10.0, 20.0, 30.0], dtype=np.float32)
    (dx,) = gradients(square(x), x, grad_ys=[tf.constant(gy)])
    np.testing.assert_allclose(run(g, dx), 2 * X * gy)
    (dx2,) = gradients(square(x), x, grad_ys=gy)  # a NumPy value is converted
    np.testing.assert_allclose(run(g, dx2), 2 * X * gy)
    assert g.get_operation_by_name("gradients/grad_ys_0").type == "Identity"


def test_grad_ys_none_entries_default_to_ones(g):
    x = tf.constant(X)
    y1, y2 = square(x), mul(x, x)
    (dx,) = gradients([y1, y2], x, grad_ys=[None, tf.constant(2 * np.ones(3, np.float32))])
    np.testing.assert_allclose(run(g, dx), 2 * X + 4 * X)


def test_grad_ys_errors(g):
    x = tf.constant(X)
    y = square(x)
    with pytest.raises(ValueError, match="Passed 2 grad_ys for 1 ys"):
        gradients(y, x, grad_ys=[None, None])
    with pytest.raises(ValueError, match="shape"):
        gradients(y, x, grad_ys=[tf.constant(np.ones(4, np.float32))])
    with pytest.raises(ValueError, match="dtype"):
        gradients(y, x, grad_ys=[tf.constant(np.ones(3, np.float64))])
    with pytest.raises(TypeError, match="must be real or integer"):
        gradients(y, x, grad_ys=[tf.constant(["a", "b", "c"])])


def test_several_ys_are_summed(g):
    x = tf.constant(X)
    (dx,) = gradients([square(x), mul(x, x), x], x)
    np.testing.assert_allclose(run(g, dx), 2 * X + 2 * X + 1)


def test_same_y_twice(g):
    x = tf.constant(X)
    y = square(x)
    (dx,) = gradients([y, y], x)
    np.testing.assert_allclose(run(g, dx), 4 * X)


def test_y_depending_on_another_y(g):
    x = tf.constant(X)
    a = square(x)
    b = square(a)  # b = x^4
    (dx,) = gradients([a, b], x)
    np.testing.assert_allclose(run(g, dx), 2 * X + 4 * X**3, rtol=1e-6)


def test_gradient_of_x_itself_is_grad_y(g):
    x = tf.constant(X)
    (dx,) = gradients(x, x)
    np.testing.assert_allclose(run(g, dx), np.ones(3))


def test_integer_xs_get_none(g):
    i = tf.constant(np.array([1, 2, 3], dtype=np.int32))
    y = _op("_TestToFloat", x=i)
    assert gradients(square(y), [i]) == [None]


def test_integer_ys_give_none(g):
    x = tf.constant(X)
    i = tf.constant(np.array([1, 2], dtype=np.int32))
    assert gradients(i, [x]) == [None]


def test_non_numeric_ys_raise_type_error(g):
    x = tf.constant(X)
    with pytest.raises(TypeError, match="must be numeric"):
        gradients(tf.constant([True, False]), [x])
    with pytest.raises(TypeError, match="must be numeric"):
        gradients(tf.constant(["a"]), [x])


def test_missing_gradient_raises_lookup_error(g):
    x = tf.constant(X)
    y = _op("_TestNoGrad", x=x, name="nograd")
    with pytest.raises(
        LookupError, match=r"No gradient defined for operation 'nograd' \(op type: _TestNoGrad\)"
    ):
        gradients(y, x)


def test_missing_gradient_not_needed_is_fine(g):
    x = tf.constant(X)
    y = _op("_TestNoGrad", x=x)
    assert gradients(y, [tf.constant(X)]) == [None]  # unrelated x: the op is not visited
    assert gradients(y, x, stop_gradients=[y]) == [None]


def test_no_gradient_op_contributes_none(g):
    x = tf.constant(X)
    y = _op("_TestNotDiff", x=x)
    assert gradients(y, x) == [None]
    (dx,) = gradients([y, square(x)], x)
    np.testing.assert_allclose(run(g, dx), 2 * X)


def test_gradient_override_map(g):
    x = tf.constant(X)
    with g.gradient_override_map({"_TestSquare": "_TestSquareAlt"}):
        y = square(x, name="overridden")
    assert y.op.get_attr("_gradient_op_type") == b"_TestSquareAlt"
    (dx,) = gradients(y, x)
    np.testing.assert_allclose(run(g, dx), X)
    (dx_plain,) = gradients(square(x), x)
    np.testing.assert_allclose(run(g, dx_plain), 2 * X)


def test_unused_outputs_get_zero_gradients(g):
    x = tf.constant(X)
    a, b = _op("_TestPair", x=x)
    (dx,) = gradients(b, x)  # grad_a is filled with zeros_like(a)
    np.testing.assert_allclose(run(g, dx), 2 * np.ones(3))
    (dx_a,) = gradients(a, x)
    np.testing.assert_allclose(run(g, dx_a), np.ones(3))


def test_gradient_op_names(g):
    x = tf.constant(X, name="x")
    with tf.name_scope("layer"):
        y = square(x, name="sq")
    (dx,) = gradients(y, x)
    assert dx.op.name == "gradients/layer/sq_grad/TestSquareGrad"
    names = {op.name for op in g.get_operations()}
    assert {"gradients/Shape", "gradients/grad_ys_0", "gradients/Fill"} <= names
    (dx2,) = gradients(y, x)
    assert dx2.op.name.startswith("gradients_1/layer/sq_grad/")
    (dx3,) = gradients(y, x, name="my_grads")
    assert dx3.op.name.startswith("my_grads/layer/sq_grad/")


def test_forward_control_dependencies_not_copied(g):
    x = tf.constant(X)
    anchor = tf.no_op(name="anchor")
    with g.control_dependencies([anchor]):
        y = square(x)
    assert y.op.control_inputs == [anchor]
    (dx,) = gradients(y, x)
    assert dx.op.control_inputs == []


def test_colocate_gradients_with_ops(g):
    x = tf.constant(X)
    with g.device("/job:worker/task:1"):
        y = square(x, name="sq")
    (dx,) = gradients(y, x, colocate_gradients_with_ops=True)
    assert dx.op.colocation_groups() == [b"loc:@sq"]
    assert dx.op.device == y.op.device
    (dx_plain,) = gradients(y, x)
    assert dx_plain.op.colocation_groups() == [f"loc:@{dx_plain.op.name}".encode()]


def test_gate_gradients(g):
    x = tf.constant(X)
    z = tf.constant(2 * X)
    y = mul(x, z)
    dx, dz = gradients(y, [x, z], gate_gradients=True)
    assert "tuple" in dx.op.name and dx.op.type == "Identity"
    assert dx.op.control_inputs and dx.op.control_inputs == dz.op.control_inputs
    np.testing.assert_allclose(run(g, [dx, dz]), [2 * X, X])


def test_wrong_gradient_shape_raises(g):
    x = tf.constant(X)
    y = _op("_TestBadShapeGrad", x=x, name="bad")
    with pytest.raises(ValueError, match="Incompatible shapes between op input and calculated"):
        gradients(y, x)


def test_wrong_gradient_count_raises(g):
    x = tf.constant(X)
    y = _op("_TestBadCountGrad", x=x)
    with pytest.raises(ValueError, match="Num gradients 2 generated for op"):
        gradients(y, x)


def test_variable_x_gets_gradient(g):
    v = tf.Variable(X, name="v")
    (dv,) = gradients(square(v), v)
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(dv), 2 * X)


# ------------------------------------------------------------------- IndexedSlices
PARAMS = np.arange(12, dtype=np.float32).reshape(4, 3)


def test_sparse_gradient_is_indexed_slices(g):
    p = tf.constant(PARAMS)
    (dp,) = gradients(gather(p, tf.constant([1, 3])), p)
    assert isinstance(dp, IndexedSlices)
    values, indices = run(g, [dp.values, dp.indices])
    np.testing.assert_array_equal(indices, [1, 3])
    np.testing.assert_allclose(values, np.ones((2, 3)))


def test_all_sparse_gradients_stay_sparse(g):
    p = tf.constant(PARAMS)
    a = gather(p, tf.constant([0, 2]))
    b = gather(p, tf.constant([2, 3]))
    (dp,) = gradients(mul(a, b), p)
    assert isinstance(dp, IndexedSlices)
    values, indices = run(g, [dp.values, dp.indices])
    np.testing.assert_array_equal(indices, [0, 2, 2, 3])
    np.testing.assert_allclose(values, np.concatenate([PARAMS[[2, 3]], PARAMS[[0, 2]]]))
    dense = tf.convert_to_tensor(dp)
    expected = np.zeros_like(PARAMS)
    np.add.at(expected, [0, 2, 2, 3], values)
    np.testing.assert_allclose(run(g, dense), expected)
    assert dense.shape.as_list() == [4, 3]


def test_mixed_sparse_and_dense_gradients_become_dense(g):
    p = tf.constant(PARAMS)
    y = mul(gather(p, tf.constant([3, 2, 1, 0])), p)
    (dp,) = gradients(y, p)
    assert isinstance(dp, tf.Tensor)
    np.testing.assert_allclose(run(g, dp), 2 * PARAMS[[3, 2, 1, 0]])


def test_indexed_slices_conversion(g):
    values = tf.constant(np.array([1.0, 2.0, 4.0], dtype=np.float32))
    slices = IndexedSlices(values, tf.constant([0, 3, 0]), tf.constant([5]))
    dense = tf.convert_to_tensor(slices)
    np.testing.assert_allclose(run(g, dense), [5.0, 0.0, 0.0, 2.0, 0.0])
    assert dense.op.type == "UnsortedSegmentSum"


def test_indexed_slices_conversion_errors(g):
    values = tf.constant(np.ones((2, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="without dense_shape"):
        tf.convert_to_tensor(IndexedSlices(values, tf.constant([0, 1])))
    with pytest.raises(ValueError, match="requested dtype float64 for IndexedSlices"):
        tf.convert_to_tensor(
            IndexedSlices(values, tf.constant([0, 1]), tf.constant([4, 3])), dtype=tf.float64
        )


def test_indexed_slices_conversion_of_unknown_shape_warns(g, caplog):
    values = tf.constant(np.ones((2, 3), dtype=np.float32))
    shape = array_ops.placeholder(tf.int32, shape=[2])
    slices = IndexedSlices(values, tf.constant([0, 2]), shape)
    with caplog.at_level(logging.WARNING):
        dense = tf.convert_to_tensor(slices)
    assert "dense Tensor of unknown shape" in caplog.text
    result = run(g, dense, {shape: [3, 3]})
    np.testing.assert_allclose(result, [[1, 1, 1], [0, 0, 0], [1, 1, 1]])


def test_indexed_slices_grad_ys(g):
    p = tf.constant(PARAMS)
    grad_y = IndexedSlices(
        tf.constant(np.ones((1, 3), np.float32)), tf.constant([2]), tf.constant([4, 3])
    )
    (dp,) = gradients(square(p), p, grad_ys=[grad_y])  # densified for _TestSquareGrad
    expected = np.zeros_like(PARAMS)
    expected[2] = 2 * PARAMS[2]
    np.testing.assert_allclose(run(g, dp), expected)


def test_static_shape_is_set_from_input(g):
    x = array_ops.placeholder(tf.float32, shape=[3])
    (dx,) = gradients(square(x), x)
    assert dx.shape == TensorShape([3])
