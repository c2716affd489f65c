"""Array ops (shapes, reshaping, fills, packing): kernels against NumPy, static shape
inference, graph-construction errors and run-time errors. Joining and splitting:
test_array_join.py."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.tensor_shape import TensorShape

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


# ---------------------------------------------------------------- Shape/Size/Rank


@pytest.mark.parametrize("shape", [(), (0,), (2, 3), (1, 0, 4)])
@pytest.mark.parametrize("out_type", [tf.int32, tf.int64])
def test_shape_size_rank_kernels(shape, out_type):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        fetches = [tf.shape(x, out_type=out_type), tf.size(x, out_type=out_type), tf.rank(x)]
        assert [t.op.type for t in fetches] == ["Shape", "Size", "Rank"]
        s, n, r = _run(fetches, {x: np.zeros(shape, np.float32)})
    _check(s, np.array(shape, dtype=out_type.as_numpy_dtype))
    _check(np.asarray(n), np.array(int(np.prod(shape)), dtype=out_type.as_numpy_dtype))
    _check(np.asarray(r), np.array(len(shape), dtype=np.int32))


def test_shape_of_static_shape_is_const():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        assert tf.shape(x).op.type == "Const"
        assert tf.size(x).op.type == "Const"
        assert tf.rank(x).op.type == "Const"
        assert tf.size(tf.placeholder(tf.float32, [None, 0])).op.type == "Const"
        p = tf.placeholder(tf.float32, [None, 3])
        assert tf.shape(p).op.type == "Shape"
        assert tf.shape(p).shape.as_list() == [2]
        assert tf.shape(tf.placeholder(tf.float32)).shape.as_list() == [None]
        assert tf.rank(tf.placeholder(tf.float32)).op.type == "Rank"
        _check(_run(tf.shape(x, out_type=tf.int64)), np.array([2, 3], np.int64))


# ----------------------------------------------------------------------- Reshape


@pytest.mark.parametrize("dtype", ALL_DTYPES + [object])
def test_reshape_kernel_dtypes(dtype):
    v = _value((2, 3, 4), dtype)
    tdt = tf.string if dtype is object else tf.as_dtype(dtype)
    with tf.Graph().as_default():
        x = tf.placeholder(tdt)
        got = _run([tf.reshape(x, [4, -1]), tf.reshape(x, [24])], {x: v})
    _check(got[0], v.reshape(4, 6))
    _check(got[1], v.reshape(24))


@pytest.mark.parametrize(
    "in_shape,new_shape",
    [((0,), [0, 5]), ((0, 3), [-1, 3]), ((6,), [2, 3]), ((), [1, 1]), ((1,), []), ((2, 3), [-1])],
)
def test_reshape_matches_numpy(in_shape, new_shape):
    v = np.arange(int(np.prod(in_shape)), dtype=np.int64).reshape(in_shape)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int64)
        got = _run(tf.reshape(x, np.array(new_shape, np.int64)), {x: v})
    _check(np.asarray(got), v.reshape(new_shape))


def test_reshape_static_shapes():
    with tf.Graph().as_default():
        assert tf.reshape(tf.placeholder(tf.float32, [2, 3]), [3, 2]).shape.as_list() == [3, 2]
        assert tf.reshape(tf.placeholder(tf.float32, [2, 3]), [-1, 2]).shape.as_list() == [3, 2]
        assert tf.reshape(tf.placeholder(tf.float32, [None, 3]), [-1, 3]).shape.as_list() == [
            None,
            3,
        ]
        assert tf.reshape(tf.placeholder(tf.float32), [-1, 3]).shape.as_list() == [None, 3]
        s = tf.placeholder(tf.int32, [3])
        assert tf.reshape(tf.placeholder(tf.float32), s).shape.as_list() == [None] * 3
        s = tf.placeholder(tf.int32)
        assert tf.reshape(tf.placeholder(tf.float32), s).shape.ndims is None
        x = tf.placeholder(tf.float32, [None, 2, 3])
        y = tf.reshape(x, [tf.shape(x)[0], -1])
        assert y.shape.as_list() == [None, None]
        z = tf.reshape(x, [-1, tf.shape(x)[2]])
        assert z.shape.as_list() == [None, 3]


def test_reshape_static_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="Cannot reshape a tensor with 6 elements to shape"):
            tf.reshape(x, [4])
        with pytest.raises(ValueError, match="evenly divisible by 4 but is 6"):
            tf.reshape(x, [4, -1])
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.reshape(x, [[6]])
        with pytest.raises(TypeError):
            tf.reshape(x, [2.5, 3])


def test_reshape_runtime_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        s = tf.placeholder(tf.int32)
        y = tf.reshape(x, s)
        v = np.zeros((2, 3), np.float32)
        cases = [
            ([4], "Input to reshape is a tensor with 6 values, but the requested shape has 4"),
            ([4, -1], "requested shape requires a multiple of 4"),
            ([-1, -1], "Only one input size may be -1, not both 0 and 1"),
            ([-2, 3], "Size 0 must be non-negative, not -2"),
        ]
        with tf.Session() as sess:
            for shape, message in cases:
                with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                    sess.run(y, {x: v, s: shape})
            with pytest.raises(tf.errors.InvalidArgumentError, match="empty tensor"):
                sess.run(y, {x: np.zeros((0, 3), np.float32), s: [0, -1]})


def test_reshape_output_is_not_writable_alias():
    with tf.Graph().as_default():
        x = tf.constant(np.arange(6.0))
        a, b = _run([x, tf.reshape(x, [2, 3])])
    b[0, 0] = 100.0
    assert a[0] == 0.0


# --------------------------------------------------------------- ExpandDims/Squeeze


@pytest.mark.parametrize("shape", [(), (3,), (2, 0), (2, 3, 4)])
def test_expand_dims(shape):
    v = _value(shape, np.int32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, shape)
        for axis in range(-len(shape) - 1, len(shape) + 1):
            y = tf.expand_dims(x, axis)
            assert y.shape.as_list() == list(np.expand_dims(v, axis).shape)
            _check(_run(y, {x: v}), np.expand_dims(v, axis))


def test_expand_dims_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="Must specify an axis"):
            tf.expand_dims(x)
        with pytest.raises(ValueError, match="Cannot specify both"):
            tf.expand_dims(x, 0, dim=0)
        assert tf.expand_dims(x, dim=1).shape.as_list() == [2, 1, 3]
        with pytest.raises(ValueError, match=r"dim 3 not in the interval \[-3, 2\]"):
            tf.expand_dims(x, 3)
        assert tf.expand_dims(tf.placeholder(tf.float32), 0).shape.ndims is None
        u = tf.placeholder(tf.float32)
        d = tf.placeholder(tf.int32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Tried to expand dim index 3"):
            _run(tf.expand_dims(u, d), {u: np.zeros((2, 3)), d: 3})


def test_squeeze():
    v = np.arange(6, dtype=np.float64).reshape(1, 2, 1, 3, 1)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, v.shape)
        cases = [
            (None, np.squeeze(v)),
            ([0], np.squeeze(v, 0)),
            ([2, -1], np.squeeze(v, (2, 4))),
            (-3, np.squeeze(v, 2)),
        ]
        for axis, want in cases:
            y = tf.squeeze(x, axis)
            assert y.shape.as_list() == list(want.shape)
            _check(_run(y, {x: v}), want)
        assert tf.squeeze(x, squeeze_dims=[0]).shape.as_list() == [2, 1, 3, 1]
        assert tf.squeeze(tf.placeholder(tf.float32, [None, 1])).shape.ndims is None
        assert tf.squeeze(tf.placeholder(tf.float32, [None, 1]), [1]).shape.as_list() == [None]
        assert tf.squeeze(tf.placeholder(tf.float32, [None, 2]), [0]).shape.as_list() == [2]
        with pytest.raises(ValueError, match=r"Can not squeeze dim\[1\], expected a dimension"):
            tf.squeeze(x, [1])
        with pytest.raises(ValueError, match=r"squeeze_dims\[0\] not in \[-5,5\)"):
            tf.squeeze(x, [5])
        with pytest.raises(ValueError, match="Cannot specify both"):
            tf.squeeze(x, [0], squeeze_dims=[0])
        u = tf.placeholder(tf.float64)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Can not squeeze dim\[0\]"):
            _run(tf.squeeze(u, [0]), {u: np.zeros((2, 1))})
        _check(_run(tf.squeeze(u), {u: np.zeros((0, 1))}), np.zeros((0,)))


# ---------------------------------------------------------- Transpose / InvertPermutation


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, object])
def test_transpose(dtype):
    v = _value((2, 3, 4), dtype)
    tdt = tf.string if dtype is object else tf.as_dtype(dtype)
    with tf.Graph().as_default():
        x = tf.placeholder(tdt, [2, 3, 4])
        y1, y2 = tf.transpose(x), tf.transpose(x, [1, 2, 0])
        assert y1.shape.as_list() == [4, 3, 2]
        assert y2.shape.as_list() == [3, 4, 2]
        u = tf.placeholder(tdt)
        y3 = tf.transpose(u)
        assert y3.shape.ndims is None
        got = _run([y1, y2, y3], {x: v, u: v})
    _check(got[0], v.T)
    _check(got[1], v.transpose(1, 2, 0))
    _check(got[2], v.T)


def test_transpose_shapes_and_errors():
    with tf.Graph().as_default():
        u = tf.placeholder(tf.float32)
        assert tf.transpose(u, [1, 0]).shape.as_list() == [None, None]
        assert tf.transpose(
            tf.placeholder(tf.float32, [2, None]), tf.placeholder(tf.int32, [2])
        ).shape.as_list() == [None, None]
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="perm dim 2 is out of range of input rank 2"):
            tf.transpose(x, [0, 2])
        with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
            tf.transpose(x, [0, 1, 2])
        p = tf.placeholder(tf.int32)
        y = tf.transpose(u, p)
        v = np.zeros((2, 3), np.float32)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="transpose expects a vector"):
                sess.run(y, {u: v, p: [0]})
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"0 is missing from \{1,1\}"):
                sess.run(y, {u: v, p: [1, 1]})
        ip = tf.invert_permutation(p)
        assert ip.shape.as_list() == [None]
        _check(_run(ip, {p: [2, 0, 1]}), np.array([1, 2, 0], np.int32))
        _check(
            _run(tf.invert_permutation(tf.constant([1, 0], tf.int64))), np.array([1, 0], np.int64)
        )
        with pytest.raises(tf.errors.InvalidArgumentError, match="1 is duplicated"):
            _run(ip, {p: [1, 1]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="3 is not between 0 and 2"):
            _run(ip, {p: [3, 0]})


# -------------------------------------------------------------------- Fill / zeros


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_fill_kernel(dtype):
    value = _value((), dtype)
    with tf.Graph().as_default():
        d = tf.placeholder(tf.int32)
        y = tf.fill(d, value)
        assert y.dtype == tf.as_dtype(dtype)
        for dims in ([2, 3], [0], []):
            _check(_run(y, {d: dims}), np.full(dims, value, dtype=dtype))


def test_fill_shapes_and_errors():
    with tf.Graph().as_default():
        assert tf.fill([2, 3], 1.0).shape.as_list() == [2, 3]
        assert tf.fill(tf.placeholder(tf.int32, [2]), 1.0).shape.as_list() == [None, None]
        with pytest.raises(ValueError, match="Fill dimensions must be >= 0"):
            tf.fill([-1], 1.0)
        with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
            tf.fill([2], [1.0, 2.0])
        d = tf.placeholder(tf.int32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="dims must be a vector"):
            _run(tf.fill(d, 1), {d: [[1]]})
        _check(_run(tf.fill(np.array([2], np.int64), "a")), np.array([b"a", b"a"], dtype=object))


@pytest.mark.parametrize(
    "dtype,zero,one",
    [
        (tf.float32, 0.0, 1.0),
        (tf.int64, 0, 1),
        (tf.bool, False, True),
        (tf.complex64, 0, 1),
        (tf.uint8, 0, 1),
    ],
)
def test_zeros_ones(dtype, zero, one):
    npt = dtype.as_numpy_dtype
    with tf.Graph().as_default():
        z, o = tf.zeros([2, 3], dtype), tf.ones((2, 3), dtype)
        assert z.op.type == "Const" and o.op.type == "Const"
        assert z.op.name == "zeros" and o.op.name == "ones"
        big = tf.zeros([10, 100], dtype)
        assert big.op.type == "Fill" and big.shape.as_list() == [10, 100]
        d = tf.placeholder(tf.int32, [2])
        dyn = tf.ones(d, dtype)
        assert dyn.op.type == "Fill"
        got = _run([z, o, big, dyn, tf.zeros([], dtype)], {d: [1, 2]})
    _check(got[0], np.full((2, 3), zero, npt))
    _check(got[1], np.full((2, 3), one, npt))
    _check(got[2], np.zeros((10, 100), npt))
    _check(got[3], np.ones((1, 2), npt))
    _check(np.asarray(got[4]), np.zeros((), npt))


def test_zeros_string_and_scalar_shape_tensor():
    with tf.Graph().as_default():
        s = tf.zeros([2], tf.string)
        n = tf.placeholder(tf.int32, [])
        z = tf.zeros(n)
        assert z.shape.as_list() == [None]
        got = _run([s, z], {n: 3})
    _check(got[0], np.array([b"", b""], dtype=object))
    _check(got[1], np.zeros(3, np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.complex128, object])
def test_zeros_like_ones_like(dtype):
    v = _value((2, 3), dtype)
    tdt = tf.string if dtype is object else tf.as_dtype(dtype)
    with tf.Graph().as_default():
        x = tf.placeholder(tdt)
        z = tf.zeros_like(x)
        assert z.op.type == "ZerosLike"
        fetches = [z]
        if dtype is not object:
            o = tf.ones_like(x)
            fetches.append(o)
            fetches.append(tf.zeros_like(x, dtype=tf.float64))
        got = _run(fetches, {x: v})
    _check(got[0], np.zeros_like(v) if dtype is not object else np.full((2, 3), b"", object))
    if dtype is not object:
        _check(got[1], np.ones_like(v))
        _check(got[2], np.zeros((2, 3), np.float64))


def test_zeros_like_static_is_const():
    with tf.Graph().as_default():
        x = tf.constant([[1, 2]], dtype=tf.int64)
        z = tf.zeros_like(x)
        o = tf.ones_like(x, dtype=tf.float32)
        assert z.op.type == "Const" and z.dtype == tf.int64
        assert tf.zeros_like(x, optimize=False).op.type == "ZerosLike"
        assert o.dtype == tf.float32 and o.shape.as_list() == [1, 2]
        _check(_run(o), np.ones((1, 2), np.float32))
        ol = tf.OnesLike if hasattr(tf, "OnesLike") else None
        assert ol is None


def test_ones_like_op_kernel():
    from tensorweave.framework.op_def_library import apply_op

    with tf.Graph().as_default():
        x = tf.placeholder(tf.int16, [None])
        y = apply_op("OnesLike", x=x)
        assert y.shape.as_list() == [None]
        _check(_run(y, {x: np.zeros(3, np.int16)}), np.ones(3, np.int16))
        with pytest.raises(TypeError):
            apply_op("OnesLike", x=tf.constant("a"))


# ---------------------------------------------------------------- Pack / Unpack


@pytest.mark.parametrize("dtype", ALL_DTYPES + [object])
def test_stack_unstack_dtypes(dtype):
    vs = [_value((2, 3), dtype, seed=i) for i in range(3)]
    tdt = tf.string if dtype is object else tf.as_dtype(dtype)
    with tf.Graph().as_default():
        xs = [tf.placeholder(tdt, [2, 3]) for _ in vs]
        feed = dict(zip(xs, vs))
        for axis in (0, 1, 2, -1, -3):
            s = tf.stack(xs, axis=axis)
            assert s.op.type == "Pack"
            assert s.shape.as_list() == list(np.stack(vs, axis).shape)
            parts = tf.unstack(s, axis=axis)
            got = _run([s] + parts, feed)
            _check(got[0], np.stack(vs, axis))
            for g, v in zip(got[1:], vs):
                _check(g, v)


def test_stack_empty_and_errors():
    with tf.Graph().as_default():
        xs = [tf.placeholder(tf.float32, [0, 2]) for _ in range(2)]
        _check(
            _run(
                tf.stack(xs, 1),
                {xs[0]: np.zeros((0, 2), np.float32), xs[1]: np.zeros((0, 2), np.float32)},
            ),
            np.zeros((0, 2, 2), np.float32),
        )
        with pytest.raises(ValueError, match=r"axis = 3 not in \[-3, 3\)"):
            tf.stack(xs, axis=3)
        with pytest.raises(ValueError, match="must be equal rank"):
            tf.stack([tf.placeholder(tf.float32, [2]), tf.placeholder(tf.float32, [2, 1])])
        with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
            tf.stack([tf.placeholder(tf.float32, [2]), tf.placeholder(tf.float32, [3])], axis=1)
        with pytest.raises(TypeError):
            tf.stack([tf.placeholder(tf.float32), tf.placeholder(tf.int32)])
        a, b = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
        with pytest.raises(
            tf.errors.InvalidArgumentError,
            match=r"Shapes of all inputs must match: "
            r"values\[0\].shape = \[2\] != values\[1\].shape = \[3\]",
        ):
            _run(tf.stack([a, b]), {a: np.zeros(2), b: np.zeros(3)})


def test_stack_of_constants_is_const():
    with tf.Graph().as_default():
        s = tf.stack([1, 2, 3])
        assert s.op.type == "Const" and s.op.name == "stack"
        _check(_run(s), np.array([1, 2, 3], np.int32))
        s2 = tf.stack([[1.0, 2.0], [3.0, 4.0]], axis=1)
        _check(_run(s2), np.array([[1.0, 3.0], [2.0, 4.0]], np.float32))


def test_unstack_num_inference_and_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, None])
        assert len(tf.unstack(x)) == 3
        with pytest.raises(ValueError, match="Cannot infer num from shape"):
            tf.unstack(x, axis=1)
        with pytest.raises(ValueError, match="Cannot infer num from shape"):
            tf.unstack(tf.placeholder(tf.float32))
        with pytest.raises(ValueError, match=r"axis = 2 not in \[-2, 2\)"):
            tf.unstack(x, axis=2)
        parts = tf.unstack(x, num=2, axis=1)
        assert [p.shape.as_list() for p in parts] == [[3], [3]]
        with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
            tf.unstack(x, num=2)
        u = tf.placeholder(tf.float32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Input shape axis 0 must equal 2"):
            _run(tf.unstack(u, num=2), {u: np.zeros(3)})
        assert tf.unstack(tf.placeholder(tf.float32, [0, 2])) == []


# ------------------------------------------------------------------ auto-packing


def test_autopacking():
    with tf.Graph().as_default():
        t = tf.placeholder(tf.float32, [])
        s = tf.stack([t, 1.0])
        assert s.op.type == "Pack" and s.shape.as_list() == [2]
        _check(_run(s, {t: 5.0}), np.array([5.0, 1.0], np.float32))
        c = tf.convert_to_tensor([[t, 2.0], [3.0, 4.0]])
        assert c.op.type == "Pack" and c.shape.as_list() == [2, 2]
        _check(_run(c, {t: 1.0}), np.array([[1, 2], [3, 4]], np.float32))
        assert tf.convert_to_tensor([1.0, 2.0]).op.type == "Const"
        x = tf.placeholder(tf.float32, [None, 4])
        r = tf.reshape(x, [tf.shape(x)[0], -1, 2])
        _check(_run(r, {x: np.zeros((3, 4), np.float32)}), np.zeros((3, 2, 2), np.float32))
        with pytest.raises(TypeError):
            tf.convert_to_tensor([tf.placeholder(tf.int32, []), 1.5])


def test_autopacking_with_variable_and_dtype_request():
    with tf.Graph().as_default():
        v = tf.Variable(3.0)
        s = tf.convert_to_tensor([v, 1.0])
        assert s.op.type == "Pack"
        with tf.Session() as sess:
            sess.run(v.initializer)
            _check(sess.run(s), np.array([3.0, 1.0], np.float32))
        i = tf.placeholder(tf.int64, [])
        p = tf.convert_to_tensor([i, 2], dtype=tf.int64)
        assert p.dtype == tf.int64
        _check(_run(p, {i: 7}), np.array([7, 2], np.int64))


def test_static_shape_propagation_through_fill_and_zeros():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        z = tf.zeros(tf.shape(x)[1:])
        assert z.shape == TensorShape([3])
        y = tf.ones_like(x)
        assert y.shape.as_list() == [None, 3]
