"""Gathering and selecting array ops: GatherV2, OneHot, Select, Where, boolean_mask, Range,
DynamicStitch — kernels against NumPy, static shapes and errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def _check(got, want):
    want = np.asarray(want)
    got = np.asarray(got, dtype=object if want.dtype.kind == "O" else None)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


# -------------------------------------------------------------------- GatherV2


@pytest.mark.parametrize(
    "dtype", [np.float16, np.float64, np.int8, np.int64, np.bool_, np.complex64, object]
)
@pytest.mark.parametrize("index_dtype", [tf.int32, tf.int64])
def test_gather_dtypes(dtype, index_dtype):
    p = np.arange(12).reshape(4, 3)
    p = (
        p.astype(dtype)
        if dtype is not object
        else np.array([b"%d" % i for i in p.reshape(-1)], dtype=object).reshape(4, 3)
    )
    tdt = tf.string if dtype is object else tf.as_dtype(dtype)
    idx = np.array([2, 0, 2], index_dtype.as_numpy_dtype)
    with tf.Graph().as_default():
        x = tf.placeholder(tdt, [4, 3])
        i = tf.placeholder(index_dtype, [3])
        y0, y1 = tf.gather(x, i), tf.gather(x, i, axis=1)
        assert y0.op.type == "GatherV2" and y0.shape.as_list() == [3, 3]
        assert y1.shape.as_list() == [4, 3]
        got = _run([y0, y1], {x: p, i: idx})
    _check(got[0], p[idx])
    _check(got[1], p[:, idx])


@pytest.mark.parametrize(
    "pshape,ishape,axis",
    [
        ((5,), (), 0),
        ((5, 3), (2, 2), 0),
        ((2, 5, 3), (4,), 1),
        ((2, 3, 5), (2, 1), -1),
        ((3, 0), (0,), 0),
        ((0, 3), (0, 2), 0),
        ((2, 3), (4,), -2),
    ],
)
def test_gather_matches_numpy(pshape, ishape, axis):
    rng = np.random.RandomState(1)
    p = rng.randn(*pshape).astype(np.float32)
    limit = pshape[axis]
    idx = rng.randint(0, max(limit, 1), size=ishape).astype(np.int32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, pshape)
        y = tf.gather(x, idx, axis=axis)
        want = np.take(p, idx, axis=axis)
        assert y.shape.as_list() == list(want.shape)
        _check(_run(y, {x: p}), want)


def test_gather_static_shapes_and_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4, None, 3])
        i = tf.placeholder(tf.int32, [None, 2])
        a = tf.placeholder(tf.int32, [])
        assert tf.gather(x, i).shape.as_list() == [None, 2, None, 3]
        assert tf.gather(x, i, axis=2).shape.as_list() == [4, None, None, 2]
        assert tf.gather(x, i, axis=a).shape.as_list() == [None] * 4
        assert tf.gather(tf.placeholder(tf.float32), i).shape.ndims is None
        with pytest.raises(ValueError, match="Shape must be at least rank 4 but is rank 3"):
            tf.gather(x, i, axis=3)
        with pytest.raises(ValueError, match="Shape must be at least rank 1"):
            tf.gather(tf.constant(1.0), [0])
        with pytest.raises(TypeError):
            tf.gather(x, [0.5])
        p = tf.constant([1.0, 2.0, 3.0])
        j = tf.placeholder(tf.int32)
        y = tf.gather(p, j)
        with tf.Session() as sess:
            with pytest.raises(
                tf.errors.InvalidArgumentError, match=r"indices\[1\] = 7 is not in \[0, 3\)"
            ):
                sess.run(y, {j: [0, 7]})
            with pytest.raises(
                tf.errors.InvalidArgumentError, match=r"indices\[1,0\] = -1 is not in \[0, 3\)"
            ):
                sess.run(y, {j: [[0], [-1]]})
            with pytest.raises(
                tf.errors.InvalidArgumentError,
                match=r"Expected axis in the range \[-1, 1\), but got 1",
            ):
                sess.run(tf.gather(p, j, axis=a), {j: [0], a: 1})


# ---------------------------------------------------------------------- OneHot


@pytest.mark.parametrize("axis", [None, -1, 0, 1])
@pytest.mark.parametrize("index_dtype", [tf.int32, tf.int64, tf.uint8])
def test_one_hot(axis, index_dtype):
    idx = np.array([[0, 2], [1, 5]], index_dtype.as_numpy_dtype)
    depth = 3
    eye = (idx[..., None] == np.arange(depth)).astype(np.float32)
    want = eye if axis in (None, -1) else np.moveaxis(eye, -1, axis)
    with tf.Graph().as_default():
        y = tf.one_hot(tf.constant(idx, dtype=index_dtype), depth, axis=axis)
        assert y.dtype == tf.float32 and y.op.name == "one_hot"
        assert y.shape.as_list() == list(want.shape)
        _check(_run(y), want)


def test_one_hot_values_and_dtypes():
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32, [None])
        a = tf.one_hot(i, 3, on_value=5, off_value=-1)
        assert a.dtype == tf.int32 and a.shape.as_list() == [None, 3]
        b = tf.one_hot(i, 2, dtype=tf.bool)
        c = tf.one_hot(i, 2, on_value=2.5, dtype=tf.float64)
        d = tf.one_hot(i, tf.placeholder(tf.int32, []), off_value=0.5)
        assert d.shape.as_list() == [None, None]
        got = _run([a, b, c], {i: [2, -1, 0]})
        _check(got[0], np.array([[-1, -1, 5], [-1, -1, -1], [5, -1, -1]], np.int32))
        _check(got[1], np.array([[False, False], [False, False], [True, False]]))
        _check(got[2], np.array([[0, 0], [0, 0], [2.5, 0]], np.float64))
        with pytest.raises(TypeError, match="does not match dtype"):
            tf.one_hot(i, 2, on_value=1.0, off_value=0)
        with pytest.raises(TypeError, match="does not match dtype parameter"):
            tf.one_hot(i, 2, on_value=tf.constant(1.0), dtype=tf.int32)
        with pytest.raises(ValueError, match="axis must be >= -1"):
            tf.one_hot(i, 2, axis=-2)
        n = tf.placeholder(tf.int32, [])
        with pytest.raises(tf.errors.InvalidArgumentError, match="depth must be non-negative"):
            _run(tf.one_hot(i, n), {i: [0], n: -1})
        _check(_run(tf.one_hot(i, 4), {i: np.zeros(0, np.int32)}), np.zeros((0, 4), np.float32))


# ---------------------------------------------------------------- Select / Where


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.complex128, object])
def test_select(dtype):
    rng = np.random.RandomState(0)
    x = np.arange(6).reshape(2, 3)
    y = -np.arange(6).reshape(2, 3)
    if dtype is object:
        x = np.array([b"x%d" % i for i in x.reshape(-1)], object).reshape(2, 3)
        y = np.array([b"y%d" % i for i in range(6)], object).reshape(2, 3)
    else:
        x, y = x.astype(dtype), y.astype(dtype)
    tdt = tf.string if dtype is object else tf.as_dtype(dtype)
    c = rng.rand(2, 3) > 0.5
    cv = np.array([True, False])
    with tf.Graph().as_default():
        tx, ty = tf.constant(x, tdt), tf.constant(y, tdt)
        s1 = tf.where(c, tx, ty)
        s2 = tf.where(cv, tx, ty)
        s3 = tf.where(tf.constant(False), tx, ty)
        assert s1.op.type == "Select" and s1.shape.as_list() == [2, 3]
        got = _run([s1, s2, s3])
    _check(got[0], np.where(c, x, y))
    _check(got[1], np.where(cv[:, None], x, y))
    _check(got[2], y)


def test_select_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="Dimension 1 in both shapes must be equal"):
            tf.where(tf.placeholder(tf.bool, [2, 3]), x, tf.placeholder(tf.float32, [2, 4]))
        with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
            tf.where(tf.placeholder(tf.bool, [3]), x, x)
        with pytest.raises(ValueError, match="x and y must both be non-None"):
            tf.where(tf.placeholder(tf.bool, [2, 3]), x)
        with pytest.raises(TypeError):
            tf.where(tf.placeholder(tf.int32, [2, 3]), x, x)
        c, a, b = tf.placeholder(tf.bool), tf.placeholder(tf.float32), tf.placeholder(tf.float32)
        s = tf.where(c, a, b)
        v = np.zeros((2, 3), np.float32)
        with tf.Session() as sess:
            with pytest.raises(
                tf.errors.InvalidArgumentError, match="'then' and 'else' must have the same size"
            ):
                sess.run(s, {c: True, a: v, b: np.zeros(3)})
            with pytest.raises(
                tf.errors.InvalidArgumentError,
                match="Number of batches of 'then' must match size of 'cond'",
            ):
                sess.run(s, {c: [True] * 3, a: v, b: v})
            with pytest.raises(
                tf.errors.InvalidArgumentError, match="'cond' and 'then' must have the same size"
            ):
                sess.run(s, {c: [[True]], a: v, b: v})


@pytest.mark.parametrize(
    "value",
    [
        np.array([[True, False], [False, True]]),
        np.array([0, 3, 0, -1], np.int32),
        np.array(True),
        np.array(False),
        np.zeros((0, 3), np.bool_),
        np.array([0.0, 0.5]),
        np.zeros((2, 0, 2), np.float64),
    ],
)
def test_where_coordinates(value):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.as_dtype(value.dtype), value.shape)
        y = tf.where(x)
        assert y.dtype == tf.int64 and y.shape.as_list() == [None, value.ndim]
        _check(_run(y, {x: value}), np.argwhere(value).astype(np.int64))


# ------------------------------------------------------------------ boolean_mask


@pytest.mark.parametrize(
    "shape,mask_shape,axis",
    [
        ((4,), (4,), None),
        ((3, 2), (3,), None),
        ((3, 2), (3, 2), None),
        ((2, 3, 4), (3,), 1),
        ((2, 3, 4), (3, 4), 1),
        ((0, 2), (0,), None),
        ((2, 0), (2,), 0),
    ],
)
def test_boolean_mask(shape, mask_shape, axis):
    rng = np.random.RandomState(3)
    v = rng.randn(*shape).astype(np.float32)
    m = rng.rand(*mask_shape) > 0.4
    a = axis or 0
    flat = (
        v.reshape(shape[:a] + (-1,) + shape[a + len(mask_shape) :])
        if v.size
        else v.reshape(shape[:a] + (int(np.prod(mask_shape)),) + shape[a + len(mask_shape) :])
    )
    want = np.compress(m.reshape(-1), flat, axis=a)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, shape)
        mt = tf.placeholder(tf.bool, mask_shape)
        y = tf.boolean_mask(x, mt, axis=axis)
        assert y.shape.as_list()[:a] == list(shape[:a])
        _check(_run(y, {x: v, mt: m}), want)
        xu = tf.placeholder(tf.float32, [None] * len(shape))
        _check(_run(tf.boolean_mask(xu, mt, axis=axis), {xu: v, mt: m}), want)


def test_boolean_mask_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 2])
        with pytest.raises(ValueError, match="mask cannot be scalar"):
            tf.boolean_mask(x, True)
        with pytest.raises(ValueError, match="Number of mask dimensions must be specified"):
            tf.boolean_mask(x, tf.placeholder(tf.bool))
        with pytest.raises(ValueError):
            tf.boolean_mask(x, [True, False])


# ------------------------------------------------------------------------ Range


@pytest.mark.parametrize(
    "args,kwargs,want",
    [
        ((5,), {}, np.arange(5, dtype=np.int32)),
        ((2, 9, 3), {}, np.arange(2, 9, 3, dtype=np.int32)),
        ((5, 1, -2), {}, np.arange(5, 1, -2, dtype=np.int32)),
        ((3, 3), {}, np.zeros(0, np.int32)),
        ((0.0, 1.0, 0.25), {}, np.arange(0, 1, 0.25, dtype=np.float32)),
        ((1, 2.5, 0.5), {}, np.arange(1, 2.5, 0.5, dtype=np.float32)),
        ((4,), {"dtype": tf.float64}, np.arange(4, dtype=np.float64)),
        ((1, 10, 4), {"dtype": tf.int64}, np.arange(1, 10, 4, dtype=np.int64)),
    ],
)
def test_range(args, kwargs, want):
    with tf.Graph().as_default():
        r = tf.range(*args, **kwargs)
        assert r.op.type == "Range" and r.op.name == "range"
        assert r.shape.as_list() == [want.size]
        got = _run(r)
    _check(got, want)
    np.testing.assert_allclose(got, want)


def test_range_tensor_args_and_dtype_promotion():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        r = tf.range(n)
        assert r.shape.as_list() == [None] and r.dtype == tf.int32
        n64 = tf.placeholder(tf.int64, [])
        r64 = tf.range(1, n64, 2)
        assert r64.dtype == tf.int64
        got = _run([r, r64], {n: 4, n64: 6})
        _check(got[0], np.arange(4, dtype=np.int32))
        _check(got[1], np.arange(1, 6, 2, dtype=np.int64))
        assert tf.range(1, 3, 0.5).dtype == tf.float32


def test_range_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Requires start <= limit when delta > 0: 5/2"):
            tf.range(5, 2)
        with pytest.raises(ValueError, match="Requires delta != 0"):
            tf.range(0, 2, 0)
        with pytest.raises(ValueError, match="Requires start >= limit when delta < 0"):
            tf.range(0, 2, -1)
        n = tf.placeholder(tf.int32, [])
        with pytest.raises(
            tf.errors.InvalidArgumentError, match="Requires start <= limit when delta > 0: 5/2"
        ):
            _run(tf.range(5, n), {n: 2})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Requires delta != 0"):
            _run(tf.range(0, 5, n), {n: 0})


# ---------------------------------------------------------------- DynamicStitch


def test_dynamic_stitch_tf_example():
    indices = [
        np.array(6, np.int32),
        np.array([4, 1], np.int32),
        np.array([[5, 2], [0, 3]], np.int32),
    ]
    data = [
        np.array([61, 62], np.float32),
        np.array([[41, 42], [11, 12]], np.float32),
        np.array([[[51, 52], [21, 22]], [[1, 2], [31, 32]]], np.float32),
    ]
    with tf.Graph().as_default():
        y = tf.dynamic_stitch(indices, data)
        assert y.shape.as_list() == [7, 2]
        got = _run(y)
    want = np.array(
        [[1, 2], [11, 12], [21, 22], [31, 32], [41, 42], [51, 52], [61, 62]], np.float32
    )
    _check(got, want)


def test_dynamic_stitch_duplicates_dtypes_and_errors():
    with tf.Graph().as_default():
        i0, i1 = tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int32, [None])
        d0 = tf.placeholder(tf.int64, [None, 2])
        d1 = tf.placeholder(tf.int64, [None, 2])
        y = tf.dynamic_stitch([i0, i1], [d0, d1])
        assert y.shape.as_list() == [None, 2]
        got = _run(y, {i0: [0, 1], i1: [1, 2], d0: [[1, 1], [2, 2]], d1: [[3, 3], [4, 4]]})
        _check(got, np.array([[1, 1], [3, 3], [4, 4]], np.int64))
        s = tf.dynamic_stitch([[1, 0]], [tf.constant(["a", "b"])])
        _check(_run(s), np.array([b"b", b"a"], object))
        with pytest.raises(ValueError, match="must be equal"):
            tf.dynamic_stitch([[0, 1]], [tf.placeholder(tf.float32, [3])])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="does not start with"):
                sess.run(y, {i0: [0, 1], i1: [2], d0: [[1, 1]], d1: [[3, 3]]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="is out of range"):
                sess.run(y, {i0: [0, -1], i1: [2], d0: [[1, 1], [1, 1]], d1: [[3, 3]]})
