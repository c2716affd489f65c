"""Indexing array ops: `Tensor.__getitem__`/StridedSlice and Slice — kernels against NumPy,
static shapes and errors. GatherV2, OneHot, Select, Where, boolean_mask, Range and
DynamicStitch: test_array_gather.py."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.strided_slice import validate_strided_slice


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def _check(got, want):
    want = np.asarray(want)
    got = np.asarray(got, dtype=object if want.dtype.kind == "O" else None)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------- __getitem__

_V = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)

INDEX_CASES = [
    1,
    -1,
    (0, 2),
    (1, -1, 3),
    slice(None),
    slice(1, None),
    slice(None, -1),
    slice(None, None, -1),
    (slice(None), slice(0, 3, 2)),
    (slice(None), slice(None, None, -2)),
    (slice(None), slice(-1, 0, -1)),
    (slice(None), slice(5, -10, -1)),
    (slice(None), slice(-100, 100)),
    (slice(None), slice(2, 1)),
    (Ellipsis, 1),
    (Ellipsis, slice(None, 2)),
    (0, Ellipsis),
    (1, Ellipsis, 2),
    (0, Ellipsis, slice(1, 3), 4),
    None,
    (None, 0),
    (slice(None), None, 1),
    (Ellipsis, None),
    (None, Ellipsis, None, 1),
    (0, None, Ellipsis, None),
    (slice(None), slice(None), slice(None), slice(None)),
    (1, 2, 3, 4),
    (-2, -3, -4, -5),
    (slice(None, None, 3), 0, slice(1, None, 2), slice(None, None, -3)),
    (),
    Ellipsis,
]


@pytest.mark.parametrize("index", INDEX_CASES, ids=[repr(c) for c in INDEX_CASES])
def test_getitem_matches_numpy(index):
    want = _V[index]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, _V.shape)
        u = tf.placeholder(tf.int32)
        y, yu = x[index], u[index]
        assert y.op.type == "StridedSlice"
        assert y.shape.as_list() == list(want.shape)
        got, got_u = _run([y, yu], {x: _V, u: _V})
    _check(got, want)
    _check(got_u, want)


def test_getitem_on_partial_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        assert x[1:].shape.as_list() == [None, 4]
        assert x[:, 1].shape.as_list() == [None]
        assert x[0].shape.as_list() == [4]
        assert x[..., None].shape.as_list() == [None, 4, 1]
        assert x[:, ::-1].shape.as_list() == [None, 4]
        assert tf.placeholder(tf.float32)[0].shape.ndims is None


def test_getitem_tensor_indices():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, _V.shape)
        i = tf.placeholder(tf.int32, [])
        j = tf.placeholder(tf.int64, [])
        n = tf.placeholder(tf.int32, [])
        a, b, c, d = x[i], x[i, 1:], x[:n], x[1, j]
        assert a.shape.as_list() == [3, 4, 5]
        assert b.shape.as_list() == [None, 4, 5]  # as TF: begin is not constant
        got = _run([a, b, c, d, x[-i]], {x: _V, i: 1, j: 2, n: 1})
    for g, w in zip(got, [_V[1], _V[1, 1:], _V[:1], _V[1, 2], _V[-1]]):
        _check(g, w)


def test_getitem_dimension_and_numpy_ints():
    with tf.Graph().as_default():
        x = tf.constant(_V)
        d = tf.TensorShape([3])[0]
        got = _run([x[np.int64(1)], x[:, d - 1], x[np.int32(-1), 0]])
    _check(got[0], _V[1])
    _check(got[1], _V[:, 2])
    _check(got[2], _V[-1, 0])


def test_getitem_bool_mask_and_variables():
    v = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    with tf.Graph().as_default():
        x = tf.constant(v)
        m = tf.constant([True, False, True])
        var = tf.Variable(v)
        with tf.Session() as sess:
            sess.run(var.initializer)
            got = sess.run([x[m], x[np.array([False, True, False])], var[1:, 0]])
    _check(got[0], v[[0, 2]])
    _check(got[1], v[[1]])
    _check(got[2], v[1:, 0])


@pytest.mark.parametrize(
    "index", [1.5, "a", [1.0], (slice(0.5, 2),)], ids=["float", "str", "float_list", "float_slice"]
)
def test_getitem_type_errors(index):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 3])
        with pytest.raises(TypeError, match="Only integers, slices"):
            x[index]


def test_getitem_tensor_type_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 3])
        with pytest.raises(TypeError, match="scalar tf.int32/tf.int64 tensors are valid"):
            x[tf.constant([0, 1])]
        with pytest.raises(TypeError, match="scalar tf.int32/tf.int64 tensors are valid"):
            x[tf.constant(1.0)]


def test_getitem_out_of_range():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 4])
        with pytest.raises(ValueError, match="slice index 3 of dimension 0 out of bounds"):
            x[3]
        with pytest.raises(ValueError, match="slice index -5 of dimension 1 out of bounds"):
            x[:, -5]
        with pytest.raises(ValueError, match="Index out of range using input dim 2"):
            x[0, 0, 0]
        with pytest.raises(ValueError, match="Multiple ellipses"):
            x[..., ...]
        u, i = tf.placeholder(tf.float32), tf.placeholder(tf.int32, [])
        with pytest.raises(
            tf.errors.InvalidArgumentError, match="slice index 7 of dimension 0 out of bounds"
        ):
            _run(u[i], {u: np.zeros((3,)), i: 7})


def test_strided_slice_function_and_errors():
    with tf.Graph().as_default():
        x = tf.constant(_V)
        y = tf.strided_slice(x, [0, 1], [2, 3])
        _check(_run(y), _V[0:2, 1:3])
        z = tf.strided_slice(
            x, [1, 0, 0], [0, 0, 0], [1, 1, -1], begin_mask=6, end_mask=6, shrink_axis_mask=1
        )
        _check(_run(z), _V[1, :, ::-1])
        assert z.shape.as_list() == [3, 4, 5]
        with pytest.raises(ValueError, match="strides\\[0\\] must be non-zero"):
            tf.strided_slice(x, [0], [1], [0])
        with pytest.raises(ValueError, match="must be rank 1"):
            tf.strided_slice(x, [[0]], [[1]], [[1]])
        b = tf.placeholder(tf.int32, [2])
        dyn = tf.strided_slice(x, b, [2, 3], [1, 1])
        assert dyn.shape.ndims == 4 or dyn.shape.ndims is None
        _check(_run(dyn, {b: [1, 0]}), _V[1:2, 0:3])
        s = tf.placeholder(tf.int32, [2])
        with pytest.raises(tf.errors.InvalidArgumentError, match="must be non-zero"):
            _run(tf.strided_slice(x, [0, 0], [1, 1], s), {s: [1, 0]})
        bu = tf.placeholder(tf.int32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="1D equal size"):
            _run(tf.strided_slice(x, bu, [1, 1, 1], [1, 1, 1]), {bu: [0, 0]})
        _check(
            _run(tf.strided_slice(tf.constant(["a", "b", "c"]), [2], [0], [-1])),
            np.array([b"c", b"b"], object),
        )


def test_strided_slice_spec_random_against_numpy():
    rng = np.random.RandomState(0)
    for _ in range(400):
        rank = rng.randint(0, 4)
        shape = tuple(int(d) for d in rng.randint(0, 5, size=rank))
        v = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        index = []
        used = 0
        ellipsis = False
        for _ in range(rng.randint(0, rank + 2)):
            kind = rng.randint(0, 5)
            if kind == 0 and used < rank and shape[used] > 0:
                index.append(int(rng.randint(-shape[used], shape[used])))
                used += 1
            elif kind == 1 and used < rank:
                start = None if rng.rand() < 0.3 else int(rng.randint(-6, 7))
                stop = None if rng.rand() < 0.3 else int(rng.randint(-6, 7))
                step = [None, 1, 2, 3, -1, -2][rng.randint(0, 6)]
                index.append(slice(start, stop, step))
                used += 1
            elif kind == 2:
                index.append(None)
            elif kind == 3 and not ellipsis:
                index.append(Ellipsis)
                ellipsis = True
        index = tuple(index)
        try:
            want = v[index]
        except IndexError:
            continue
        with tf.Graph().as_default():
            x = tf.placeholder(tf.int64, shape)
            y = x[index]
            assert y.shape.as_list() == list(want.shape), (shape, index)
            _check(_run(y, {x: v}), want)


def test_validate_strided_slice_partial_values():
    spec = validate_strided_slice([None, 4], None, None, [1, 1], begin_mask=2, end_mask=2)
    assert spec.final_shape == (None, 4)
    spec = validate_strided_slice([5, 4], None, None, [1, 1], shrink_axis_mask=1)
    assert spec.final_shape == (None,)
    spec = validate_strided_slice([5, 4], None, None, [1, 1], 2, 2, shrink_axis_mask=1)
    assert spec.final_shape == (4,)
    spec = validate_strided_slice([5], None, None, [2])
    assert spec.final_shape == (None,)


def test_strided_slice_grad_kernel_values():
    x = np.zeros((4, 3), np.float32)
    dy = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
    with tf.Graph().as_default():
        g = apply_op(
            "StridedSliceGrad",
            shape=[4, 3],
            begin=[1, 0],
            end=[4, 0],
            strides=[2, -1],
            dy=dy,
            end_mask=2,
            begin_mask=2,
        )
        assert g.shape.as_list() == [4, 3]
        got = _run(g)
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape of dy was"):
            _run(apply_op("StridedSliceGrad", shape=[4, 3], begin=[0], end=[1], strides=[1], dy=dy))
    want = x.copy()
    want[1:4:2, ::-1] = dy
    _check(got, want)


# ------------------------------------------------------------------------ Slice


@pytest.mark.parametrize(
    "shape,begin,size",
    [
        ((4, 5), [1, 2], [2, -1]),
        ((3,), [0], [0]),
        ((3,), [3], [-1]),
        ((0, 2), [0, 1], [0, 1]),
        ((), [], []),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, object])
def test_slice(shape, begin, size, dtype):
    v = np.arange(int(np.prod(shape))).reshape(shape)
    v = (
        v.astype(dtype)
        if dtype is not object
        else np.array([b"%d" % i for i in v.reshape(-1)], dtype=object).reshape(shape)
    )
    tdt = tf.string if dtype is object else tf.as_dtype(dtype)
    index = tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))
    want = np.asarray(v[index], dtype=v.dtype)
    with tf.Graph().as_default():
        x = tf.placeholder(tdt, shape)
        y = tf.slice(x, np.array(begin, np.int32), np.array(size, np.int32))
        assert y.shape.as_list() == list(want.shape)
        _check(_run(y, {x: v}), want)


def test_slice_errors_and_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 4])
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.slice(x, [0], [1])
        with pytest.raises(ValueError, match="Negative dimension size"):
            tf.slice(x, [4, 0], [-1, 1])
        b = tf.placeholder(tf.int32, [2])
        assert tf.slice(x, b, [1, 2]).shape.as_list() == [1, 2]
        assert tf.slice(x, b, [-1, 2]).shape.as_list() == [None, 2]
        assert tf.slice(x, b, b).shape.as_list() == [None, None]
        s = tf.placeholder(tf.int32)
        y = tf.slice(x, b, s)
        v = np.zeros((3, 4), np.float32)
        with tf.Session() as sess:
            with pytest.raises(
                tf.errors.InvalidArgumentError, match=r"Expected size\[1\] in \[0, 2\], but got 3"
            ):
                sess.run(y, {x: v, b: [0, 2], s: [1, 3]})
            with pytest.raises(
                tf.errors.InvalidArgumentError, match=r"Expected begin\[0\] in \[0, 3\], but got -1"
            ):
                sess.run(y, {x: v, b: [-1, 0], s: [1, 1]})
            with pytest.raises(
                tf.errors.InvalidArgumentError,
                match="Expected begin and size arguments to be 1-D tensors",
            ):
                sess.run(y, {x: v, b: [0, 0], s: [1]})
