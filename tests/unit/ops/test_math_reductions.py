"""Reductions, arg-reductions, add_n, segment sums, cumulative ops and IndexedSlices
densification: kernels against NumPy, static shapes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.ops import math_ops


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -9
        return rng.integers(lo, 10, size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) > 0.3
    return rng.uniform(-3, 3, size=shape).astype(dtype)


AXES = [None, 0, 1, -1, [0, 2], [], [2, 0, -1], (1,)]
NUMERIC = ["float32", "float64", "int32", "int64", "int8", "uint8", "float16"]


def _np_axis(axis, rank=3):
    if axis is None:
        return None
    if isinstance(axis, list | tuple):
        return tuple(sorted({a % rank for a in axis}))  # TF accepts repeated axes
    return axis


@pytest.mark.parametrize(
    "fn,ref,dtypes",
    [
        (tf.reduce_sum, np.sum, NUMERIC),
        (tf.reduce_prod, np.prod, ["float32", "float64", "int32", "int64"]),
        (tf.reduce_max, np.max, NUMERIC),
        (tf.reduce_min, np.min, NUMERIC),
        (tf.reduce_mean, np.mean, ["float32", "float64", "float16"]),
        (tf.reduce_all, np.all, ["bool"]),
        (tf.reduce_any, np.any, ["bool"]),
    ],
    ids=["sum", "prod", "max", "min", "mean", "all", "any"],
)
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(fn, ref, dtypes, axis, keepdims):
    for dt in dtypes:
        x = _data((2, 3, 4), dt)
        with tf.Graph().as_default():
            out = fn(tf.constant(x), axis=axis, keepdims=keepdims)
            assert out.dtype == tf.as_dtype(dt)
            got = _run(out)
        want = ref(x, axis=_np_axis(axis), keepdims=keepdims)
        if ref not in (np.all, np.any, np.mean):
            want = want.astype(dt)
        assert np.asarray(got).dtype == np.dtype(dt), (fn.__name__, dt)
        assert np.shape(got) == np.shape(want)
        assert out.shape.as_list() == list(np.shape(want))
        np.testing.assert_allclose(got, want, rtol=1e-2 if dt == "float16" else 1e-5)


@pytest.mark.parametrize("dt", ["int32", "int64", "int8"])
def test_integer_mean_truncates_toward_zero(dt):
    x = np.array([[1, 2], [-3, -4], [5, 5], [-1, 0]], dt)
    with tf.Graph().as_default():
        got = _run([tf.reduce_mean(x, axis=1), tf.reduce_mean(x)])
    np.testing.assert_array_equal(got[0], [1, -3, 5, 0])
    assert got[1] == 0  # 5 // 8 -> 0
    assert got[0].dtype == np.dtype(dt) and np.asarray(got[1]).dtype == np.dtype(dt)


def test_int32_sum_stays_int32_and_wraps():
    with tf.Graph().as_default():
        got = _run(tf.reduce_sum(tf.constant([2**31 - 1, 1], tf.int32)))
    assert np.asarray(got).dtype == np.int32 and got == -(2**31)


def test_float32_scalar_results_stay_float32():
    with tf.Graph().as_default():
        got = _run(
            [tf.reduce_sum(tf.constant([1.5, 2.5])), tf.reduce_mean(tf.constant([1.0, 2.0]))]
        )
    for g in got:
        assert np.asarray(g).dtype == np.float32


def test_empty_reductions():
    x = np.zeros((0, 3), np.float32)
    xi = np.zeros((0, 3), np.int32)
    with tf.Graph().as_default():
        c, ci = tf.constant(x), tf.constant(xi)
        got = _run(
            [
                tf.reduce_sum(c, 0),
                tf.reduce_prod(c, 0),
                tf.reduce_max(c, 0),
                tf.reduce_min(c),
                tf.reduce_mean(c, 0),
                tf.reduce_sum(c, 1),
                tf.reduce_max(ci, 0),
                tf.reduce_all(tf.constant(np.zeros((0,), bool))),
                tf.reduce_mean(ci, 0),
            ]
        )
    np.testing.assert_array_equal(got[0], [0, 0, 0])
    np.testing.assert_array_equal(got[1], [1, 1, 1])
    np.testing.assert_array_equal(got[2], [-np.inf] * 3)
    assert got[3] == np.inf
    assert np.all(np.isnan(got[4]))
    assert got[5].shape == (0,)
    np.testing.assert_array_equal(got[6], [np.iinfo(np.int32).min] * 3)
    assert got[7] == True  # noqa: E712  (a numpy bool: `is` would fail)
    np.testing.assert_array_equal(got[8], [0, 0, 0])


def test_reduction_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 4])
        assert tf.reduce_sum(x, 1).shape.as_list() == [None, 4]
        assert tf.reduce_sum(x, [0, -1], keepdims=True).shape.as_list() == [1, 3, 1]
        assert tf.reduce_sum(x).shape.as_list() == []
        axis = tf.placeholder(tf.int32)
        assert tf.reduce_sum(x, axis).shape.ndims is None
        assert tf.reduce_sum(x, axis, keepdims=True).shape.as_list() == [None] * 3
        unknown = tf.placeholder(tf.float32)
        assert tf.reduce_mean(unknown).shape.as_list() == []
        assert tf.reduce_mean(unknown, 0).shape.ndims is None


def test_reduction_sum_op_structure():
    with tf.Graph().as_default():
        out = tf.reduce_sum(tf.constant([[1.0]]), axis=1, keep_dims=True, name="s")
        assert out.op.type == "Sum" and out.op.name == "s"
        assert out.op.get_attr("keep_dims") is True
        assert out.op.get_attr("Tidx") == tf.int32
        assert [i.op.name for i in out.op.inputs][1] == "s/reduction_indices"
        full = tf.reduce_sum(tf.constant([[1.0]]))
        np.testing.assert_array_equal(
            tf.get_default_graph()
            .get_operation_by_name(full.op.inputs[1].op.name)
            .get_attr("value"),
            [0, 1],
        )


def test_reduction_argument_aliases():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Graph().as_default():
        got = _run(
            [
                tf.reduce_sum(x, reduction_indices=[1]),
                tf.reduce_max(x, keep_dims=True),
                tf.reduce_sum(x, axis=tf.constant([0], tf.int64)),
            ]
        )
        with pytest.raises(ValueError, match="Cannot specify both 'axis' and 'reduction_indices'"):
            tf.reduce_sum(x, axis=0, reduction_indices=0)
        with pytest.raises(ValueError, match="Cannot specify both 'keepdims' and 'keep_dims'"):
            tf.reduce_sum(x, keepdims=True, keep_dims=True)
    np.testing.assert_array_equal(got[0], [3, 12])
    np.testing.assert_array_equal(got[1], [[5]])
    np.testing.assert_array_equal(got[2], [3, 5, 7])


def test_reduction_axis_errors():
    with tf.Graph().as_default():
        x = tf.constant(np.ones((2, 3), np.float32))
        with pytest.raises(ValueError, match="Invalid reduction dimension 2 for input with 2"):
            tf.reduce_sum(x, 2)
        axis = tf.placeholder(tf.int32)
        out = tf.reduce_max(x, axis)
        with pytest.raises(errors.InvalidArgumentError, match="Invalid reduction dimension"):
            _run(out, {axis: 5})
        np.testing.assert_array_equal(_run(out, {axis: -2}), [1.0, 1.0, 1.0])


def test_reductions_of_unknown_rank():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32)
        outs = [tf.reduce_sum(p), tf.reduce_max(p, keepdims=True), tf.reduce_mean(p, [0, 2])]
        got = _run(outs, {p: x})
    assert got[0] == x.sum() and got[1].shape == (1, 1, 1) and got[1].item() == 23
    np.testing.assert_allclose(got[2], x.mean(axis=(0, 2)))


def test_reduce_logsumexp():
    x = np.array([[0.0, 1.0, 2.0], [1000.0, 1000.0, -np.inf]], np.float64)
    ref = np.log(np.sum(np.exp(x[:1] - 2.0), axis=1)) + 2.0
    with tf.Graph().as_default():
        got = _run(
            [
                tf.reduce_logsumexp(x, axis=1),
                tf.reduce_logsumexp(x, axis=1, keepdims=True),
                tf.reduce_logsumexp(tf.constant([-np.inf, -np.inf])),
            ]
        )
    np.testing.assert_allclose(got[0], [ref[0], 1000.0 + np.log(2.0)])
    assert got[1].shape == (2, 1)
    assert got[2] == -np.inf


def test_argmax_argmin():
    x = np.array([[1, 5, 5], [7, 0, -1]], np.float32)
    with tf.Graph().as_default():
        outs = [
            tf.argmax(x),
            tf.argmax(x, 1),
            tf.argmin(x, axis=1),
            tf.argmax(x, dimension=1),
            tf.argmax(x, 1, output_type=tf.int32),
            tf.arg_max(x, 1),
            tf.arg_min(x, 0),
        ]
        assert outs[0].dtype == tf.int64 and outs[4].dtype == tf.int32
        assert outs[1].shape.as_list() == [2]
        got = _run(outs)
    np.testing.assert_array_equal(got[0], [1, 0, 0])
    np.testing.assert_array_equal(got[1], [1, 0])  # first index among ties
    np.testing.assert_array_equal(got[2], [0, 2])
    np.testing.assert_array_equal(got[3], [1, 0])
    assert got[4].dtype == np.int32 and got[0].dtype == np.int64
    np.testing.assert_array_equal(got[6], [0, 1, 1])


def test_argmax_errors():
    with tf.Graph().as_default():
        x = tf.constant(np.ones((2, 3), np.float32))
        with pytest.raises(ValueError, match=r"must be in the range \[-2, 2\)"):
            tf.argmax(x, 2)
        d = tf.placeholder(tf.int32)
        out = tf.argmax(x, d)
        with pytest.raises(
            errors.InvalidArgumentError,
            match=r"Expected dimension in the range \[-2, 2\), but got 3",
        ):
            _run(out, {d: 3})
        empty = tf.argmax(tf.constant(np.zeros((0, 2), np.float32)), 0)
        with pytest.raises(errors.InvalidArgumentError, match="Reduction axis 0 is empty"):
            _run(empty)


def test_add_n():
    rng = np.random.default_rng(0)
    xs = [rng.random((2, 3)).astype(np.float32) for _ in range(4)]
    with tf.Graph().as_default():
        cs = [tf.constant(x) for x in xs]
        out = tf.add_n(cs)
        assert out.op.type == "AddN" and out.op.get_attr("N") == 4
        assert tf.add_n(cs[:1]) is cs[0]
        named = tf.add_n(cs[:1], name="one")
        got = _run(
            [
                out,
                named,
                tf.add_n([tf.constant(1), tf.constant(2)]),
                tf.accumulate_n(cs),
                tf.add_n([np.float64(1.0), np.float64(2.0)]),
            ]
        )
        with pytest.raises(ValueError, match="inputs must be a list"):
            tf.add_n([])
        with pytest.raises(ValueError):
            tf.add_n([cs[0], tf.constant([1.0])])
        with pytest.raises(TypeError):
            tf.accumulate_n(cs, tensor_dtype=tf.float64)
    np.testing.assert_allclose(got[0], sum(xs), rtol=1e-6)
    assert got[0].dtype == np.float32
    np.testing.assert_array_equal(got[1], xs[0])
    assert got[2] == 3 and np.asarray(got[2]).dtype == np.int32
    np.testing.assert_allclose(got[3], sum(xs), rtol=1e-6)
    assert got[4] == 3.0


def test_add_n_runtime_shape_mismatch():
    with tf.Graph().as_default():
        a, b = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
        out = tf.add_n([a, b])
        with pytest.raises(errors.InvalidArgumentError, match="must have the same size and shape"):
            _run(out, {a: np.ones(2, np.float32), b: np.ones(3, np.float32)})


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64"])
def test_unsorted_segment_sum(dt):
    data = _data((5, 3), dt)
    ids = np.array([0, 2, 0, -1, 3])
    want = np.zeros((4, 3), dt)
    for i, s in enumerate(ids):
        if s >= 0:
            want[s] += data[i]
    with tf.Graph().as_default():
        out = tf.unsorted_segment_sum(data, tf.constant(ids, tf.int64), 4)
        assert out.shape.as_list() == [4, 3]
        got = _run(out)
    assert got.dtype == np.dtype(dt)
    np.testing.assert_allclose(got, want)


def test_unsorted_segment_sum_shapes_and_errors():
    with tf.Graph().as_default():
        data = tf.constant(np.ones((2, 2, 3), np.float32))
        out = tf.unsorted_segment_sum(data, tf.constant([[0, 1], [1, 1]]), 2)
        assert out.shape.as_list() == [2, 3]
        np.testing.assert_array_equal(_run(out), [[1, 1, 1], [3, 3, 3]])
        n = tf.placeholder(tf.int32)
        assert tf.unsorted_segment_sum(data, tf.constant([0, 1]), n).shape.as_list() == [None, 2, 3]
        bad = tf.unsorted_segment_sum(data, tf.constant([0, 5]), 3)
        with pytest.raises(
            errors.InvalidArgumentError, match=r"segment_ids\[1\] = 5 is out of range \[0, 3\)"
        ):
            _run(bad)
        with pytest.raises(ValueError):
            tf.unsorted_segment_sum(data, tf.constant([0, 1, 2]), 3)
        empty = tf.unsorted_segment_sum(
            tf.constant(np.zeros((0, 2), np.float32)), tf.constant(np.zeros(0, np.int32)), 2
        )
        np.testing.assert_array_equal(_run(empty), np.zeros((2, 2)))


def test_indexed_slices_convert_to_dense():
    with tf.Graph().as_default():
        s = tf.IndexedSlices(
            tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
            tf.constant([2, 0, 2]),
            tf.constant([4, 2]),
        )
        dense = tf.convert_to_tensor(s)
        assert dense.shape.as_list() == [4, 2]
        got = _run([dense, tf.add_n([s]), tf.add_n([s, tf.ones([4, 2])])])
        with pytest.raises(ValueError, match="without dense_shape"):
            tf.convert_to_tensor(tf.IndexedSlices(tf.constant([1.0]), tf.constant([0])))
    want = np.array([[3.0, 4.0], [0, 0], [6.0, 8.0], [0, 0]])
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], want)
    np.testing.assert_array_equal(got[2], want + 1)


def test_count_nonzero():
    x = np.array([[0, 1, 2], [0, 0, 3]], np.float32)
    with tf.Graph().as_default():
        outs = [
            tf.count_nonzero(x),
            tf.count_nonzero(x, axis=1, keepdims=True),
            tf.count_nonzero(x, 0, dtype=tf.int32),
            tf.count_nonzero(tf.constant(["", "a"])),
            tf.count_nonzero(input=tf.constant([True, False, True])),
        ]
        assert outs[0].dtype == tf.int64 and outs[2].dtype == tf.int32
        got = _run(outs)
    assert got[0] == 3
    np.testing.assert_array_equal(got[1], [[2], [1]])
    np.testing.assert_array_equal(got[2], [0, 1, 2])
    assert got[3] == 1 and got[4] == 2


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_cumprod(exclusive, reverse, axis):
    x = np.arange(1, 7, dtype=np.float64).reshape(2, 3)

    def ref(fn, ident):
        y = np.flip(x, axis) if reverse else x
        out = fn(y, axis=axis)
        if exclusive:
            out = np.roll(out, 1, axis=axis)
            idx = [slice(None)] * 2
            idx[axis] = 0
            out[tuple(idx)] = ident
        return np.flip(out, axis) if reverse else out

    with tf.Graph().as_default():
        got = _run(
            [
                tf.cumsum(x, axis, exclusive=exclusive, reverse=reverse),
                tf.cumprod(x, axis, exclusive=exclusive, reverse=reverse),
                tf.cumsum(x.astype(np.int32), axis, exclusive=exclusive, reverse=reverse),
            ]
        )
    np.testing.assert_allclose(got[0], ref(np.cumsum, 0))
    np.testing.assert_allclose(got[1], ref(np.cumprod, 1))
    assert got[2].dtype == np.int32


def test_cumsum_errors_and_empty():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        with pytest.raises(errors.InvalidArgumentError, match="scan axis"):
            _run(tf.cumsum(x, 3))
        empty = tf.cumsum(tf.constant(np.zeros((0, 2), np.float32)), 0, exclusive=True)
        assert _run(empty).shape == (0, 2)


def test_reduced_shape():
    with tf.Graph().as_default():
        static = math_ops.reduced_shape([2, 3, 4], [0, -1])
        assert static.op.type == "Const"
        shape = tf.placeholder(tf.int32, [3])
        axes = tf.placeholder(tf.int32)
        dyn = math_ops.reduced_shape(shape, axes)
        got = _run([static, dyn], {shape: [2, 3, 4], axes: [1, -1]})
    np.testing.assert_array_equal(got[0], [1, 3, 1])
    np.testing.assert_array_equal(got[1], [2, 1, 1])
