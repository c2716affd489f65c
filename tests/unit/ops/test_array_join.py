"""Joining and splitting array ops: Concat, ConcatOffset, Split/SplitV, Tile, Pad, Reverse,
Unique — kernels against NumPy, static shape inference and errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

ALL_DTYPES = [
    np.float16,
    np.float32,
    np.float64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.bool_,
    np.complex64,
    np.complex128,
]


def _value(shape, dtype, seed=0):
    rng = np.random.RandomState(seed)
    if dtype is object:
        return np.array([b"s%d" % i for i in range(int(np.prod(shape)))], dtype=object).reshape(
            shape
        )
    if np.dtype(dtype) == np.bool_:
        return np.asarray(rng.rand(*shape) > 0.5)
    if np.issubdtype(dtype, np.complexfloating):
        return np.asarray(rng.randn(*shape) + 1j * rng.randn(*shape)).astype(dtype)
    if np.issubdtype(dtype, np.unsignedinteger):
        return np.asarray(rng.randint(0, 100, size=shape)).astype(dtype)
    return np.asarray(rng.randn(*shape) * 10).astype(dtype)


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def _check(got, want):
    got = np.asarray(got, dtype=object if np.asarray(want).dtype.kind == "O" else None)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    assert got.shape == np.asarray(want).shape
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------------ Concat


@pytest.mark.parametrize("dtype", ALL_DTYPES + [object])
def test_concat_dtypes(dtype):
    a, b = _value((2, 3), dtype, 0), _value((2, 1), dtype, 1)
    tdt = tf.string if dtype is object else tf.as_dtype(dtype)
    with tf.Graph().as_default():
        got = _run(tf.concat([tf.constant(a, dtype=tdt), tf.constant(b, dtype=tdt)], 1))
    _check(got, np.concatenate([a, b], 1))


def test_concat_shapes_and_kernel():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [2, None])
        b = tf.placeholder(tf.float32, [None, 3])
        c = tf.concat([a, b], 0)
        assert c.op.type == "ConcatV2" and c.op.name == "concat"
        assert c.shape.as_list() == [None, 3]
        assert tf.concat([a, b], 1).shape.as_list() == [2, None]
        assert tf.concat([a, b], tf.placeholder(tf.int32, [])).shape.as_list() == [None, None]
        assert tf.concat([a, tf.placeholder(tf.float32)], 0).shape.as_list() == [None, None]
        e = tf.concat(
            [tf.placeholder(tf.float32, [0, 3]), tf.placeholder(tf.float32, [2, 3])], np.int64(-2)
        )
        assert e.shape.as_list() == [2, 3]
        va, vb = np.ones((2, 3), np.float32), np.zeros((4, 3), np.float32)
        _check(_run(c, {a: va, b: vb}), np.concatenate([va, vb]))
        single = tf.concat([a], 0)
        assert single.op.type == "Identity" and single.op.name.startswith("concat")


def test_concat_errors():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
            tf.concat([a, tf.placeholder(tf.float32, [3, 3])], 1)
        with pytest.raises(ValueError, match="Shape must be at least rank 3 but is rank 2"):
            tf.concat([a, a], 2)
        with pytest.raises(ValueError, match="Can't concatenate scalars"):
            tf.concat([tf.constant(1.0), tf.constant(2.0)], tf.placeholder(tf.int32, []))
        x, y, ax = tf.placeholder(tf.float32), tf.placeholder(tf.float32), tf.placeholder(tf.int32)
        c = tf.concat([x, y], ax)
        v = np.zeros((2, 3), np.float32)
        with tf.Session() as sess:
            with pytest.raises(
                tf.errors.InvalidArgumentError,
                match=r"ConcatOp : Dimensions of "
                r"inputs should match: shape\[0\] = \[2,3\] vs. shape\[1\] = \[2,4\]",
            ):
                sess.run(c, {x: v, y: np.zeros((2, 4)), ax: 0})
            with pytest.raises(tf.errors.InvalidArgumentError, match="Ranks of all input tensors"):
                sess.run(c, {x: v, y: np.zeros(3), ax: 0})
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"range \[-2, 2\), but got 2"):
                sess.run(c, {x: v, y: v, ax: 2})


def test_concat_offset_kernel():
    from tensorweave.framework.op_def_library import apply_op

    with tf.Graph().as_default():
        offsets = apply_op("ConcatOffset", concat_dim=1, shape=[[2, 3, 4], [2, 5, 4], [2, 1, 4]])[0]
        got = _run(offsets)
        for g, want in zip(got, [[0, 0, 0], [0, 3, 0], [0, 8, 0]]):
            _check(g, np.array(want, np.int32))
        bad = apply_op("ConcatOffset", concat_dim=1, shape=[[2, 3], [3, 5]])[0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="All dimensions except 1 must"):
            _run(bad)


# ------------------------------------------------------------------ Split/SplitV


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, object])
def test_split(dtype):
    v = _value((4, 6), dtype)
    tdt = tf.string if dtype is object else tf.as_dtype(dtype)
    with tf.Graph().as_default():
        x = tf.placeholder(tdt, [4, None])
        parts = tf.split(x, 3, axis=1)
        assert [p.shape.as_list() for p in parts] == [[4, None]] * 3
        parts0 = tf.split(x, 2)
        assert [p.shape.as_list() for p in parts0] == [[2, None]] * 2
        sv = tf.split(x, [1, -1, 2], axis=-1)
        assert [p.shape.as_list() for p in sv] == [[4, 1], [4, None], [4, 2]]
        got = _run(parts + parts0 + sv, {x: v})
    for g, w in zip(got, np.split(v, 3, 1) + np.split(v, 2) + np.split(v, [1, 4], 1)):
        _check(g, w)


def test_split_shapes_and_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [5, 6])
        assert [p.shape.as_list() for p in tf.split(x, [2, -1])] == [[2, 6], [3, 6]]
        assert [p.shape.as_list() for p in tf.split(x, tf.constant([2, 4]), 1)] == [[5, 2], [5, 4]]
        sizes = tf.placeholder(tf.int32, [2])
        assert [p.shape.as_list() for p in tf.split(x, sizes)] == [[None, 6]] * 2
        with pytest.raises(ValueError, match="evenly divisible by 2 but is 5"):
            tf.split(x, 2)
        with pytest.raises(ValueError, match="can't split axis of size 5"):
            tf.split(x, [2, 2])
        with pytest.raises(ValueError, match="Cannot infer num"):
            tf.split(x, tf.placeholder(tf.int32))
        with pytest.raises(ValueError, match="Rank-0 tensors are not supported"):
            tf.split(x, tf.constant(2))
        with pytest.raises(ValueError, match=r"must be in range \[-2, 2\)"):
            tf.split(x, 5, axis=2)
        u, d = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
        with pytest.raises(
            tf.errors.InvalidArgumentError,
            match="Number of ways to split should"
            " evenly divide the split dimension, but got split_dim 0",
        ):
            _run(tf.split(u, 2, axis=d), {u: np.zeros(5), d: 0})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Determined shape must either"):
            _run(tf.split(u, sizes), {u: np.zeros(5), sizes: [2, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="only be one -1"):
            _run(tf.split(u, sizes), {u: np.zeros(5), sizes: [-1, -1]})
        _check(_run(tf.split(u, 1)[0], {u: np.zeros(0)}), np.zeros(0, np.float32))


# ------------------------------------------------------------------------- Tile


@pytest.mark.parametrize(
    "shape,multiples", [((2, 3), [2, 1]), ((3,), [0]), ((), []), ((1, 0, 2), [2, 3, 2])]
)
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_, object])
def test_tile(shape, multiples, dtype):
    v = _value(shape, dtype)
    tdt = tf.string if dtype is object else tf.as_dtype(dtype)
    with tf.Graph().as_default():
        x = tf.placeholder(tdt, shape)
        y = tf.tile(x, multiples)
        assert y.shape.as_list() == list(np.tile(v, multiples).shape)
        _check(_run(y, {x: v}), np.tile(v, multiples))


def test_tile_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
            tf.tile(x, [2])
        assert tf.tile(x, tf.placeholder(tf.int32, [2])).shape.as_list() == [None, None]
        assert tf.tile(tf.placeholder(tf.float32), [1, 2]).shape.as_list() == [None, None]
        u, m = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="vector of length 2 but got"):
            _run(tf.tile(u, m), {u: np.zeros((2, 3)), m: [1]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"multiples\[0\] >= 0"):
            _run(tf.tile(u, m), {u: np.zeros(3), m: [-1]})


# -------------------------------------------------------------------------- Pad


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8, np.bool_, np.complex64, object])
def test_pad(dtype):
    v = _value((2, 3), dtype)
    tdt = tf.string if dtype is object else tf.as_dtype(dtype)
    pads = [[1, 0], [2, 1]]
    with tf.Graph().as_default():
        x = tf.placeholder(tdt, [2, None])
        y = tf.pad(x, pads)
        assert y.op.type == "Pad" and y.shape.as_list() == [3, None]
        zero = np.zeros((), v.dtype) if dtype is not object else b""
        fetches = [y]
        if dtype not in (np.bool_, object):
            fetches.append(tf.pad(x, np.array(pads, np.int64), constant_values=7))
        got = _run(fetches, {x: v})
    want = (
        np.pad(v, pads, constant_values=zero)
        if dtype is not object
        else np.array([[b""] * 6] + [[b"", b""] + list(r) + [b""] for r in v], dtype=object)
    )
    _check(got[0], want)
    if len(got) > 1:
        _check(got[1], np.pad(v, pads, constant_values=7))


def test_pad_string_constant_and_errors():
    with tf.Graph().as_default():
        y = tf.pad(tf.constant(["a"]), [[1, 1]], constant_values="z")
        assert y.op.type == "PadV2" and y.shape.as_list() == [3]
        _check(_run(y), np.array([b"z", b"a", b"z"], dtype=object))
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.pad(x, [[1, 1]])
        with pytest.raises(ValueError, match="Paddings must be non-negative"):
            tf.pad(x, [[1, 1], [-1, 0]])
        with pytest.raises(ValueError, match="Unknown padding mode"):
            tf.pad(x, [[1, 1], [0, 0]], mode="FOO")
        with pytest.raises(NotImplementedError):
            tf.pad(x, [[1, 1], [0, 0]], mode="reflect")
        assert tf.pad(x, tf.placeholder(tf.int32, [2, 2])).shape.as_list() == [None, None]
        u, p = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="The first dimension of paddings"):
            _run(tf.pad(u, p), {u: np.zeros((2, 3)), p: [[1, 1]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Paddings must be non-negative"):
            _run(tf.pad(u, p), {u: np.zeros(3), p: [[-1, 1]]})


# ----------------------------------------------------------------------- Reverse


@pytest.mark.parametrize("axes", [[], [0], [1], [-1, 0], [0, 1, 2]])
def test_reverse(axes):
    v = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int16, [2, 3, 4])
        y = tf.reverse(x, np.array(axes, np.int32))
        assert y.shape.as_list() == [2, 3, 4]
        _check(_run(y, {x: v}), np.flip(v, axis=tuple(axes)) if axes else v)


def test_reverse_errors_and_strings():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match=r"'axis'\[0\] = 2 is out of valid range"):
            tf.reverse(x, [2])
        with pytest.raises(ValueError, match="axis 0 specified more than once"):
            tf.reverse(x, [0, -2])
        a = tf.placeholder(tf.int32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="specified more than once"):
            _run(tf.reverse_v2(x, a), {x: np.zeros((2, 3)), a: [1, 1]})
        _check(_run(tf.reverse(tf.constant(["a", "b"]), [0])), np.array([b"b", b"a"], object))


# ------------------------------------------------------------------------ Unique


@pytest.mark.parametrize(
    "values,dtype",
    [
        ([1, 1, 2, 4, 4, 4, 7, 8, 8], np.int32),
        ([3.0, 1.0, 3.0, -2.0], np.float64),
        ([], np.int64),
        ([b"b", b"a", b"b"], object),
    ],
)
def test_unique(values, dtype):
    v = np.array(values, dtype=dtype)
    tdt = tf.string if dtype is object else tf.as_dtype(dtype)
    with tf.Graph().as_default():
        x = tf.placeholder(tdt, [None])
        y, idx = tf.unique(x)
        _, idx64 = tf.unique(x, out_idx=tf.int64)
        assert y.shape.as_list() == [None] and idx.shape.as_list() == [None]
        gy, gi, gi64 = _run([y, idx, idx64], {x: v})
    seen = []
    for e in values:
        if e not in seen:
            seen.append(e)
    _check(gy, np.array(seen, dtype=dtype))
    _check(gi, np.array([seen.index(e) for e in values], np.int32))
    assert gi64.dtype == np.int64
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Shape must be rank 1"):
            tf.unique(tf.placeholder(tf.int32, [2, 2]))
