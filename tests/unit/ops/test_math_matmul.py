"""MatMul, BatchMatMul and BatchMatMulV2: kernels against NumPy, static shapes, errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.framework.op_def_library import apply_op


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def _mat(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-5, 5, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _t(m, conj=False):
    m = np.swapaxes(m, -1, -2)
    return np.conj(m) if conj else m


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "float16", "complex64"])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("m,k,n", [(2, 3, 4), (1, 1, 1), (0, 3, 2), (2, 0, 3)])
def test_matmul_matches_numpy(dtype, ta, tb, m, k, n):
    a = _mat((k, m) if ta else (m, k), dtype, 1)
    b = _mat((n, k) if tb else (k, n), dtype, 2)
    with tf.Graph().as_default():
        out = tf.matmul(a, b, transpose_a=ta, transpose_b=tb)
        assert out.op.type == "MatMul" and out.dtype == tf.as_dtype(dtype)
        assert out.shape.as_list() == [m, n]
        got = _run(out)
    want = (a.T if ta else a) @ (b.T if tb else b)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(
        got,
        want,
        rtol=1e-2 if dtype == "float16" else 1e-5,
        atol=1e-2 if dtype == "float16" else 1e-6,
    )


def test_matmul_adjoint_conjugates_complex():
    a, b = _mat((3, 2), "complex128", 1), _mat((4, 3), "complex128", 2)
    with tf.Graph().as_default():
        out = tf.matmul(a, b, adjoint_a=True, adjoint_b=True)
        assert out.op.type == "MatMul"
        got = _run(out)
        with pytest.raises(ValueError, match="Only one of transpose_a and adjoint_a"):
            tf.matmul(a, b, transpose_a=True, adjoint_a=True)
    np.testing.assert_allclose(got, a.conj().T @ b.conj().T)


def test_matmul_static_shapes_and_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        w = tf.placeholder(tf.float32, [3, None])
        assert tf.matmul(x, w).shape.as_list() == [None, None]
        assert tf.matmul(x, tf.ones([3, 5])).shape.as_list() == [None, 5]
    with tf.Graph().as_default(), pytest.raises(ValueError) as info:
        tf.matmul(
            tf.constant(np.ones((2, 3), np.float32)), tf.constant(np.ones((4, 5), np.float32))
        )
    with tf.Graph().as_default():
        assert str(info.value) == (
            "Dimensions must be equal, but are 3 and 4 for 'MatMul' (op: 'MatMul') with input "
            "shapes: [2,3], [4,5]."
        )
        with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
            apply_op("MatMul", a=tf.constant([1.0]), b=tf.constant([[1.0]]))
        with pytest.raises(TypeError):
            tf.matmul(tf.constant([[1.0]]), tf.constant([[1]]))
        with pytest.raises(TypeError):
            tf.matmul(tf.constant([[True]]), tf.constant([[True]]))


def test_matmul_runtime_errors():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, None])
        b = tf.placeholder(tf.float32, [None, None])
        out = tf.matmul(a, b)
        with pytest.raises(errors.InvalidArgumentError) as info:
            _run(out, {a: np.ones((2, 3), np.float32), b: np.ones((4, 5), np.float32)})
        assert "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]" in str(info.value)
        ta = tf.matmul(a, b, transpose_a=True)
        with pytest.raises(errors.InvalidArgumentError, match="Matrix size-incompatible"):
            _run(ta, {a: np.ones((2, 3), np.float32), b: np.ones((3, 5), np.float32)})
        u = tf.placeholder(tf.float32)
        raw = apply_op("MatMul", a=u, b=u)
        with pytest.raises(errors.InvalidArgumentError, match="is not a matrix"):
            _run(raw, {u: np.ones(3, np.float32)})


@pytest.mark.parametrize(
    "sx,sy",
    [
        ((2, 3, 4), (2, 4, 5)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((3, 4), (2, 4, 5)),
        ((2, 2, 3), (3, 2)),
        ((0, 2, 3), (3, 4)),
        ((1, 2, 3), (4, 3, 1)),
    ],
)
@pytest.mark.parametrize("adj_x", [False, True])
@pytest.mark.parametrize("adj_y", [False, True])
def test_batch_matmul_v2_broadcasts(sx, sy, adj_x, adj_y):
    x = _t(_mat(sx, "float64", 1)) if adj_x else _mat(sx, "float64", 1)
    y = _t(_mat(sy, "float64", 2)) if adj_y else _mat(sy, "float64", 2)
    want = np.matmul(_mat(sx, "float64", 1), _mat(sy, "float64", 2))
    with tf.Graph().as_default():
        out = tf.matmul(x, y, adjoint_a=adj_x, adjoint_b=adj_y)
        assert out.op.type == "BatchMatMulV2"
        assert out.shape.as_list() == list(want.shape)
        got = _run(out)
    np.testing.assert_allclose(got, want)


def test_batch_matmul_transposes_and_complex():
    x, y = _mat((2, 3, 2), "complex64", 1), _mat((2, 4, 3), "complex64", 2)
    with tf.Graph().as_default():
        t = tf.matmul(x, y, transpose_a=True, transpose_b=True)
        adj = tf.matmul(x, y, adjoint_a=True, adjoint_b=True)
        got = _run([t, adj, tf.constant(_t(x)) @ _t(y), _t(x) @ tf.constant(_t(y))])
    np.testing.assert_allclose(got[0], _t(x) @ _t(y), rtol=1e-5)
    np.testing.assert_allclose(got[1], _t(x, True) @ _t(y, True), rtol=1e-5)
    np.testing.assert_allclose(got[2], _t(x) @ _t(y), rtol=1e-5)
    np.testing.assert_allclose(got[3], _t(x) @ _t(y), rtol=1e-5)
    assert got[0].dtype == np.complex64


def test_batch_matmul_static_and_runtime_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            tf.matmul(tf.constant(np.ones((2, 2, 3))), tf.constant(np.ones((2, 4, 5))))
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
            tf.matmul(tf.constant(np.ones((2, 2, 3))), tf.constant(np.ones((3, 3, 5))))
        x = tf.placeholder(tf.float64)
        y = tf.placeholder(tf.float64)
        out = tf.matmul(x, y)
        assert out.shape.ndims is None and out.op.type == "BatchMatMulV2"
        with pytest.raises(
            errors.InvalidArgumentError, match="In\\[0\\] mismatch In\\[1\\] shape: 3 vs. 4"
        ):
            _run(out, {x: np.ones((2, 2, 3)), y: np.ones((2, 4, 5))})
        with pytest.raises(errors.InvalidArgumentError, match="compatible batch dimensions"):
            _run(out, {x: np.ones((2, 2, 3)), y: np.ones((3, 3, 5))})
        with pytest.raises(errors.InvalidArgumentError, match="ndims must be >= 2"):
            _run(out, {x: np.ones(3), y: np.ones((3, 2))})
        np.testing.assert_allclose(_run(out, {x: np.ones((2, 3)), y: np.ones((3, 1))}), [[3], [3]])


def test_batch_matmul_v1_requires_equal_batches():
    with tf.Graph().as_default():
        x = tf.constant(np.ones((2, 2, 3)))
        out = apply_op("BatchMatMul", x=x, y=tf.constant(np.ones((2, 3, 4))))
        assert out.shape.as_list() == [2, 2, 4]
        np.testing.assert_allclose(_run(out), np.full((2, 2, 4), 3.0))
        with pytest.raises(ValueError):
            apply_op("BatchMatMul", x=x, y=tf.constant(np.ones((1, 3, 4))))


@pytest.mark.parametrize(
    "sa,sb,axes",
    [
        ((2, 3, 4), (4, 5), 1),
        ((2, 3, 4), (3, 4, 5), 2),
        ((3, 4), (4, 3), [[0, 1], [1, 0]]),
        ((2, 3), (4, 5), 0),
        ((2, 3, 4), (5, 2), [[0], [1]]),
        ((2, 3, 4), (4, 3), [[-1, 1], [0, 1]]),
    ],
)
def test_tensordot_matches_numpy(sa, sb, axes):
    a, b = _mat(sa, "float64", 1), _mat(sb, "float64", 2)
    with tf.Graph().as_default():
        out = tf.tensordot(a, b, axes)
        want = np.tensordot(a, b, axes)
        assert out.shape.as_list() == list(want.shape)
        pa = tf.placeholder(tf.float64, [None] * len(sa))
        dyn = tf.tensordot(pa, b, axes)
        got = _run([out, dyn], {pa: a})
    np.testing.assert_allclose(got[0], want)
    np.testing.assert_allclose(got[1], want)


def test_tensordot_errors():
    with tf.Graph().as_default():
        a = tf.constant(np.ones((2, 3)))
        with pytest.raises(ValueError, match="Different number of contraction axes"):
            tf.tensordot(a, a, [[0, 1], [0]])
        with pytest.raises(ValueError, match="known rank"):
            tf.tensordot(tf.placeholder(tf.float64), a, 1)
