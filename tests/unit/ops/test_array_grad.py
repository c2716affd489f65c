"""Gradients of the array ops, checked without `tf.gradients`: each registered gradient
function is called on its forward op with a random output gradient `g`, and the result is
compared with `J^T g` computed numerically (the ops are linear in their data inputs).
Also: registration meta-checks and the forward run of every `GradientCase`."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import op_def_registry
from tensorweave.kernels.registry import has_kernel
from tensorweave.ops import array_ops_gather, array_ops_index, array_ops_join, array_ops_shape
from tensorweave.ops.gradients_impl import gradient_registry
from tensorweave.testing.gradient_cases_array import CASES

ARRAY_OPS = [
    "Placeholder",
    "PlaceholderWithDefault",
    "Identity",
    "StopGradient",
    "Shape",
    "Size",
    "Rank",
    "Reshape",
    "ExpandDims",
    "Squeeze",
    "Transpose",
    "InvertPermutation",
    "Fill",
    "ZerosLike",
    "OnesLike",
    "Pack",
    "Unpack",
    "ConcatV2",
    "ConcatOffset",
    "Split",
    "SplitV",
    "Tile",
    "Pad",
    "PadV2",
    "ReverseV2",
    "Unique",
    "Slice",
    "StridedSlice",
    "StridedSliceGrad",
    "GatherV2",
    "OneHot",
    "Select",
    "Where",
    "Range",
    "DynamicStitch",
]


@pytest.mark.parametrize("op_type", ARRAY_OPS)
def test_every_array_op_has_kernel_and_gradient_entry(op_type):
    assert op_type in op_def_registry
    assert has_kernel(op_type)
    assert op_type in gradient_registry


@pytest.mark.parametrize(
    "op_type",
    [
        "Shape",
        "Size",
        "Rank",
        "ZerosLike",
        "OnesLike",
        "OneHot",
        "Where",
        "Range",
        "InvertPermutation",
        "Const",
        "Placeholder",
        "StopGradient",
        "Unique",
    ],
)
def test_not_differentiable(op_type):
    assert gradient_registry.lookup(op_type) is None


def test_every_differentiable_array_op_has_a_case():
    covered = {c.op_type for c in CASES}
    differentiable = {t for t in ARRAY_OPS if gradient_registry.lookup(t) is not None}
    assert differentiable <= covered, differentiable - covered


def test_public_names():
    for module in (array_ops_shape, array_ops_join, array_ops_index, array_ops_gather):
        for name in module.__all__:
            assert hasattr(tf, name), name
    assert tf.newaxis is None


@pytest.mark.parametrize("case", CASES, ids=[f"{c.op_type}-{c.name}" for c in CASES])
def test_gradient_case_builds_and_runs(case):
    rng = np.random.RandomState(0)
    with tf.Graph().as_default() as g:
        xs = [tf.placeholder(tf.float64, s) for s in case.input_shapes]
        y = case.build(*xs)
        assert y.dtype == tf.float64
        assert any(op.type == case.op_type for op in g.get_operations())
        feeds = {x: rng.uniform(*case.input_range, size=s) for x, s in zip(xs, case.input_shapes)}
        out = tf.Session().run(y, feeds)
    assert np.all(np.isfinite(out))


# ------------------------------------------------------ gradient functions directly


def _dense_value(sess, grad, feeds, shape):
    if isinstance(grad, IndexedSlices):
        values, indices, dense_shape = sess.run(
            [grad.values, grad.indices, grad.dense_shape], feeds
        )
        assert list(dense_shape) == list(shape)
        out = np.zeros(shape, values.dtype)
        np.add.at(out, indices, values)
        return out
    return np.asarray(sess.run(grad, feeds))


def _check_linear_grad(build, shapes, *, input_index=0, seed=0):
    """Calls the registered gradient of `y.op` (y = build(*xs)) and compares the gradient
    for input `input_index` with the numerical `J^T g`."""
    rng = np.random.RandomState(seed)
    with tf.Graph().as_default():
        xs = [tf.placeholder(tf.float64, s) for s in shapes]
        y = build(*xs)
        op = y.op
        outputs = op.outputs
        gs = [tf.placeholder(tf.float64, o.shape) for o in outputs]
        fn = gradient_registry.lookup(op.type)
        grads = fn(op, *gs)
        grads = grads if isinstance(grads, list | tuple) else [grads]
        assert len(grads) == len(op.inputs)
        data = [rng.randn(*s) for s in shapes]
        with tf.Session() as sess:
            out_vals = sess.run(outputs, dict(zip(xs, data)))
            g_vals = [rng.randn(*np.shape(v)) for v in out_vals]
            feeds = {**dict(zip(xs, data)), **dict(zip(gs, g_vals))}
            x = xs[input_index]
            pos = [i for i, t in enumerate(op.inputs) if t is x]
            assert pos, "input is not a direct input of the op"
            got = sum(_dense_value(sess, grads[i], feeds, shapes[input_index]) for i in pos)
            want = np.zeros(shapes[input_index])
            base = data[input_index]
            for k in range(base.size):
                e = np.zeros_like(base)
                e.flat[k] = 1.0
                vals = sess.run(outputs, {**dict(zip(xs, data)), x: e})
                zero = sess.run(outputs, {**dict(zip(xs, data)), x: np.zeros_like(base)})
                want.flat[k] = sum(
                    float(np.sum((a - b) * gv)) for a, b, gv in zip(vals, zero, g_vals)
                )
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


LINEAR_CASES = [
    ("Identity", lambda x: tf.identity(x), [(2, 3)]),
    ("PlaceholderWithDefault", lambda x: tf.placeholder_with_default(x, [2, None]), [(2, 3)]),
    ("Reshape", lambda x: tf.reshape(x, [3, -1]), [(2, 3)]),
    ("ExpandDims", lambda x: tf.expand_dims(x, 1), [(2, 3)]),
    ("Squeeze", lambda x: tf.squeeze(x), [(2, 1, 3)]),
    ("Transpose", lambda x: tf.transpose(x, [2, 0, 1]), [(2, 3, 4)]),
    ("ConcatV2", lambda a, b: tf.concat([a, b], 1), [(2, 3), (2, 2)]),
    ("Pack", lambda a, b: tf.stack([a, b], axis=1), [(2, 3), (2, 3)]),
    ("Unpack", lambda x: tf.unstack(x, axis=1)[0], [(2, 3)]),
    ("Split", lambda x: tf.split(x, 2, axis=1)[0], [(2, 4)]),
    ("SplitV", lambda x: tf.split(x, [1, 3])[1], [(4, 2)]),
    ("StridedSlice", lambda x: x[1:, ::-2, None], [(3, 5)]),
    ("StridedSlice", lambda x: x[..., 0], [(2, 3)]),
    ("GatherV2", lambda p: tf.gather(p, [[0, 2], [2, 2]]), [(3, 2)]),
    ("Select", lambda a, b: tf.where(tf.constant([[True, False]] * 2), a, b), [(2, 2), (2, 2)]),
    ("Pad", lambda x: tf.pad(x, [[1, 2], [0, 1]]), [(2, 3)]),
    ("PadV2", lambda x: tf.pad(x, [[1, 0]], constant_values=3.0), [(3,)]),
    ("ReverseV2", lambda x: tf.reverse(x, [0, 1]), [(2, 3)]),
    (
        "DynamicStitch",
        lambda a, b: tf.dynamic_stitch([tf.constant([1, 0]), tf.constant([2])], [a, b]),
        [(2, 2), (1, 2)],
    ),
]


@pytest.mark.parametrize(
    "op_type,build,shapes", LINEAR_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(LINEAR_CASES)]
)
def test_gradient_function_matches_numeric(op_type, build, shapes):
    with tf.Graph().as_default():
        y = build(*[tf.placeholder(tf.float64, s) for s in shapes])
        assert y.op.type == op_type
    for i in range(len(shapes)):
        _check_linear_grad(build, shapes, input_index=i)


def test_gather_axis0_gradient_is_indexed_slices():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float64, [4, 3])
        y = tf.gather(p, [[1, 1], [3, 0]])
        g = tf.placeholder(tf.float64, [2, 2, 3])
        grad, gi, ga = gradient_registry.lookup("GatherV2")(y.op, g)
        assert isinstance(grad, IndexedSlices) and gi is None and ga is None
        assert grad.values.shape.as_list() == [4, 3]
        assert grad.indices.shape.as_list() == [4]
        gv = np.arange(12.0).reshape(2, 2, 3)
        values, indices, shape = tf.Session().run(
            [grad.values, grad.indices, grad.dense_shape], {g: gv}
        )
    np.testing.assert_array_equal(values, gv.reshape(4, 3))
    np.testing.assert_array_equal(indices, [1, 1, 3, 0])
    np.testing.assert_array_equal(shape, [4, 3])


def test_split_gradient_fills_missing_output_grads_with_zeros():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [4])
        parts = tf.split(x, 2)
        g = tf.placeholder(tf.float64, [2])
        _, dx = gradient_registry.lookup("Split")(parts[0].op, None, g)
        got = tf.Session().run(dx, {g: [1.0, 2.0]})
    np.testing.assert_array_equal(got, [0.0, 0.0, 1.0, 2.0])


def test_strided_slice_grad_grad_is_strided_slice():
    from tensorweave.framework.op_def_library import apply_op

    with tf.Graph().as_default():
        dy = tf.placeholder(tf.float64, [2, 3])
        out = apply_op(
            "StridedSliceGrad",
            shape=[5, 3],
            begin=[1, 0],
            end=[4, 0],
            strides=[2, -1],
            dy=dy,
            end_mask=2,
            begin_mask=2,
        )
        g = tf.placeholder(tf.float64, [5, 3])
        grads = gradient_registry.lookup("StridedSliceGrad")(out.op, g)
        assert grads[:4] == [None] * 4
        gv = np.arange(15.0).reshape(5, 3)
        got = tf.Session().run(grads[4], {g: gv})
    np.testing.assert_array_equal(got, gv[1:4:2, ::-1])
