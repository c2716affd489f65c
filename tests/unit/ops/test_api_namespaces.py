"""Every name of tf.math, tf.linalg, tf.sparse and tf.bitwise, and the top-level aliases of
the new ops, called once against a NumPy reference (names with richer tests elsewhere are
still called here through the namespace)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tf

_X = np.array([0.2, 0.5, 0.9])
_Y = np.array([0.3, 0.7, 1.5])
_vec = np.vectorize

UNARY = {
    "abs": np.abs, "acos": np.arccos, "asin": np.arcsin, "asinh": np.arcsinh,
    "atan": np.arctan, "atanh": np.arctanh, "ceil": np.ceil, "cos": np.cos, "cosh": np.cosh,
    "erf": _vec(math.erf), "erfc": _vec(math.erfc), "exp": np.exp, "expm1": np.expm1,
    "floor": np.floor, "is_finite": np.isfinite, "is_inf": np.isinf, "is_nan": np.isnan,
    "lgamma": _vec(math.lgamma), "log": np.log, "log1p": np.log1p,
    "log_sigmoid": lambda x: -np.log1p(np.exp(-x)), "negative": np.negative,
    "reciprocal": np.reciprocal, "reciprocal_no_nan": np.reciprocal, "rint": np.rint,
    "round": np.round, "rsqrt": lambda x: 1 / np.sqrt(x), "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "sign": np.sign, "sin": np.sin, "sinh": np.sinh, "softplus": lambda x: np.log1p(np.exp(x)),
    "softsign": lambda x: x / (1 + np.abs(x)), "sqrt": np.sqrt, "square": np.square,
    "tan": np.tan, "tanh": np.tanh, "conj": np.conj, "real": np.real,
    "imag": np.imag, "angle": np.angle, "bessel_i0": np.i0,
    "bessel_i0e": lambda x: np.i0(x) * np.exp(-np.abs(x)),
    # Values computed with TensorFlow 2.21 (float64).
    "digamma": lambda x: np.array([-5.289039896592188, -1.9635100260214227,
                                   -0.7549269499470515]),
    "erfinv": lambda x: np.array([0.17914345462129164, 0.4769362762044699,
                                  1.1630871536766738]),
    "ndtri": lambda x: np.array([-0.8416212335729142, 0.0, 1.2815515655446004]),
    "erfcinv": lambda x: np.array([0.9061938024368232, 0.4769362762044699,
                                   0.08885599049425769]),
    "bessel_i1": lambda x: np.array([0.10050083402812506, 0.2578943053908962,
                                     0.4971264481609643]),
    "bessel_i1e": lambda x: np.array([0.10050083402812506, 0.2578943053908962,
                                      0.4971264481609643]) * np.exp(-x),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    with tf.Graph().as_default():
        got = tf.Session().run(getattr(tf.math, name)(_X))
    np.testing.assert_allclose(got, UNARY[name](_X), rtol=1e-9, atol=1e-12)


def test_acosh():
    with tf.Graph().as_default():
        got = tf.Session().run(tf.math.acosh(_X + 1))
    np.testing.assert_allclose(got, np.arccosh(_X + 1))


BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "truediv": np.divide, "div_no_nan": np.divide, "divide_no_nan": np.divide,
    "floordiv": np.floor_divide, "floormod": np.mod, "mod": np.mod, "pow": np.power,
    "maximum": np.maximum, "minimum": np.minimum,
    "squared_difference": lambda x, y: (x - y) ** 2, "atan2": np.arctan2, "equal": np.equal,
    "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
    "xlogy": lambda x, y: x * np.log(y), "xlog1py": lambda x, y: x * np.log1p(y),
    "xdivy": np.divide, "multiply_no_nan": np.multiply, "nextafter": np.nextafter,
    # igamma values computed with TensorFlow 2.21; zeta is NaN for x < 1.
    "igamma": lambda a, x: np.array([0.8165267943336528, 0.7632764293621426,
                                     0.8081778415035622]),
    "igammac": lambda a, x: 1 - np.array([0.8165267943336528, 0.7632764293621426,
                                          0.8081778415035622]),
    "zeta": lambda x, q: np.array([math.nan, math.nan, math.nan]),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    with tf.Graph().as_default():
        got = tf.Session().run(getattr(tf.math, name)(_X, _Y))
    np.testing.assert_allclose(got, BINARY[name](_X, _Y), rtol=1e-9)


def test_logical_and_other_binary():
    a, b = np.array([True, True, False]), np.array([True, False, False])
    with tf.Graph().as_default():
        out = tf.Session().run([tf.math.logical_and(a, b), tf.math.logical_or(a, b),
                                tf.math.logical_xor(a, b), tf.math.logical_not(a),
                                tf.math.scalar_mul(2.0, tf.constant(_X)),
                                tf.math.polygamma(np.array([1.0]), np.array([1.0])),
                                tf.math.zeta(np.array([2.0]), np.array([1.0])),
                                tf.math.betainc(np.array([1.0]), np.array([1.0]),
                                                np.array([0.25]))])
    assert out[0].tolist() == [True, False, False] and out[1].tolist() == [True, True, False]
    assert out[2].tolist() == [False, True, False] and out[3].tolist() == [False, False, True]
    np.testing.assert_allclose(out[4], 2 * _X)
    np.testing.assert_allclose(out[5], [math.pi**2 / 6])
    np.testing.assert_allclose(out[6], [math.pi**2 / 6])
    np.testing.assert_allclose(out[7], [0.25])


_M = np.array([[1.0, 4.0, 2.0], [3.0, 0.5, 6.0]])
REDUCE = {
    "reduce_sum": np.sum, "reduce_mean": np.mean, "reduce_max": np.max, "reduce_min": np.min,
    "reduce_prod": np.prod, "reduce_std": np.std, "reduce_variance": np.var,
    "reduce_euclidean_norm": lambda m, axis: np.sqrt(np.sum(m * m, axis=axis)),
    "reduce_logsumexp": lambda m, axis: np.log(np.sum(np.exp(m), axis=axis)),
    "argmax": np.argmax, "argmin": np.argmin,
    "count_nonzero": lambda m, axis: np.count_nonzero(m, axis=axis),
    "cumsum": np.cumsum, "cumprod": np.cumprod,
    "cumulative_logsumexp": lambda m, axis: np.log(np.cumsum(np.exp(m), axis=axis)),
}


@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reductions(name):
    with tf.Graph().as_default():
        got = tf.Session().run(getattr(tf.math, name)(_M, axis=1))
    np.testing.assert_allclose(got, REDUCE[name](_M, axis=1), rtol=1e-9)


def test_other_math_names():
    b = np.array([[True, False], [True, True]])
    logits = np.array([[1.0, 3.0, 2.0]])
    m = tf.math
    with tf.Graph().as_default():
        out = tf.Session().run([
            m.reduce_all(b, axis=1), m.reduce_any(b, axis=1), m.add_n([_X, _Y]),
            m.accumulate_n([_X, _Y]), m.bincount([1, 1, 2]),
            m.confusion_matrix([0, 1], [1, 1]), m.in_top_k(logits, [1], 1),
            m.invert_permutation([2, 0, 1]), m.is_non_decreasing([1, 1, 2]),
            m.is_strictly_increasing([1, 1, 2]), m.l2_normalize(np.array([3.0, 4.0]), 0),
            m.lbeta(np.array([[1.0, 1.0]])), m.log_softmax(logits), m.softmax(logits),
            m.polyval([2.0, 1.0], 3.0), m.segment_sum(_X, [0, 0, 1]),
            m.segment_mean(_X, [0, 0, 1]), m.segment_max(_X, [0, 0, 1]),
            m.segment_min(_X, [0, 0, 1]), m.segment_prod(_X, [0, 0, 1]),
            m.unsorted_segment_sum(_X, [1, 0, 1], 2), m.unsorted_segment_max(_X, [1, 0, 1], 2),
            m.unsorted_segment_min(_X, [1, 0, 1], 2), m.unsorted_segment_prod(_X, [1, 0, 1], 2),
            m.unsorted_segment_mean(_X, [1, 0, 1], 2),
            m.unsorted_segment_sqrt_n(_X, [1, 0, 1], 2), m.top_k(logits, 2),
            m.zero_fraction(np.array([0.0, 1.0])), m.approx_max_k(logits, 1),
            m.approx_min_k(logits, 1)])
    assert out[0].tolist() == [False, True] and out[1].tolist() == [True, True]
    np.testing.assert_allclose(out[2], _X + _Y)
    np.testing.assert_allclose(out[3], _X + _Y)
    assert out[4].tolist() == [0, 2, 1] and out[5].tolist() == [[0, 1], [0, 1]]
    assert out[6].tolist() == [True] and out[7].tolist() == [1, 2, 0]
    assert out[8] and not out[9]
    np.testing.assert_allclose(out[10], [0.6, 0.8])
    np.testing.assert_allclose(out[11], [0.0], atol=1e-12)
    np.testing.assert_allclose(np.exp(out[12]), out[13])
    assert out[14] == 7.0
    np.testing.assert_allclose(out[15], [0.7, 0.9])
    np.testing.assert_allclose(out[16], [0.35, 0.9])
    np.testing.assert_allclose(out[17], [0.5, 0.9])
    np.testing.assert_allclose(out[18], [0.2, 0.9])
    np.testing.assert_allclose(out[19], [0.1, 0.9])
    np.testing.assert_allclose(out[20], [0.5, 1.1])
    np.testing.assert_allclose(out[21], [0.5, 0.9])
    np.testing.assert_allclose(out[22], [0.5, 0.2])
    np.testing.assert_allclose(out[23], [0.5, 0.18])
    np.testing.assert_allclose(out[24], [0.5, 0.55])
    np.testing.assert_allclose(out[25], [0.5, 1.1 / math.sqrt(2)])
    assert out[26][1].tolist() == [[1, 2]] and out[27] == 0.5
    assert out[28][1].tolist() == [[1]] and out[29][1].tolist() == [[0]]


def test_linalg_names():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(3, 3))
    spd = a @ a.T + 3 * np.eye(3)
    rhs = rng.normal(size=(3, 2))
    la = tf.linalg
    chol = np.linalg.cholesky(spd)
    with tf.Graph().as_default():
        lu, perm = la.lu(spd)
        out = tf.Session().run([
            la.adjoint(a), la.band_part(a, 0, 0), la.cholesky_solve(chol, rhs), la.det(spd),
            la.diag([1.0, 2.0]), la.diag_part(a), la.eigh(spd)[0], la.eigvalsh(spd),
            la.einsum("ij->j", a), la.expm(np.zeros((2, 2))), la.eye(2), la.global_norm([a]),
            la.inv(spd), la.l2_normalize(np.array([3.0, 4.0]), 0), la.logdet(spd),
            la.logm(np.eye(2, dtype=np.complex128)), la.lstsq(a, rhs),
            la.lu_matrix_inverse(lu, perm), la.lu_reconstruct(lu, perm), la.lu_solve(lu, perm, rhs),
            la.matmul(a, a), la.matrix_rank(a), la.matrix_transpose(a),
            la.matvec(a, np.ones(3)), la.norm(a), la.normalize(np.array([3.0, 4.0]))[0],
            la.pinv(a), la.qr(a)[1], la.set_diag(a, np.zeros(3)), la.slogdet(spd)[1],
            la.solve(spd, rhs), la.sqrtm(spd), la.svd(a, compute_uv=False),
            la.tensor_diag([1.0, 2.0]), la.tensor_diag_part(np.eye(2)), la.tensordot(a, a, 1),
            la.trace(a), la.transpose(a), la.triangular_solve(chol, rhs), la.cross(
                np.array([1.0, 0, 0]), np.array([0.0, 1, 0])),
            la.tridiagonal_matmul(np.ones((3, 3)), rhs), la.tridiagonal_solve(
                np.array([[1.0, 1, 0], [4, 4, 4], [0, 1, 1]]), rhs),
            la.eigh_tridiagonal(np.array([1.0, 2.0]), np.array([0.0]))])
    np.testing.assert_allclose(out[0], a.T)
    np.testing.assert_allclose(out[1], np.diag(np.diag(a)))
    np.testing.assert_allclose(out[2], np.linalg.solve(spd, rhs))
    np.testing.assert_allclose(out[3], np.linalg.det(spd))
    np.testing.assert_allclose(out[4], np.diag([1.0, 2.0]))
    np.testing.assert_allclose(out[5], np.diag(a))
    np.testing.assert_allclose(out[6], np.linalg.eigvalsh(spd))
    np.testing.assert_allclose(out[7], np.linalg.eigvalsh(spd))
    np.testing.assert_allclose(out[8], a.sum(0))
    np.testing.assert_allclose(out[9], np.eye(2))
    np.testing.assert_allclose(out[10], np.eye(2))
    np.testing.assert_allclose(out[11], np.linalg.norm(a))
    np.testing.assert_allclose(out[12], np.linalg.inv(spd))
    np.testing.assert_allclose(out[13], [0.6, 0.8])
    np.testing.assert_allclose(out[14], np.linalg.slogdet(spd)[1])
    np.testing.assert_allclose(out[15], np.zeros((2, 2)), atol=1e-12)
    np.testing.assert_allclose(out[16], np.linalg.lstsq(a, rhs, rcond=None)[0], atol=1e-9)
    np.testing.assert_allclose(out[17], np.linalg.inv(spd))
    np.testing.assert_allclose(out[18], spd)
    np.testing.assert_allclose(out[19], np.linalg.solve(spd, rhs))
    np.testing.assert_allclose(out[20], a @ a)
    assert out[21] == 3
    np.testing.assert_allclose(out[22], a.T)
    np.testing.assert_allclose(out[23], a.sum(1))
    np.testing.assert_allclose(out[24], np.linalg.norm(a))
    np.testing.assert_allclose(out[25], [0.6, 0.8])
    np.testing.assert_allclose(out[26], np.linalg.pinv(a), atol=1e-9)
    np.testing.assert_allclose(np.abs(out[27]), np.abs(np.linalg.qr(a)[1]))
    np.testing.assert_allclose(np.diag(out[28]), np.zeros(3))
    np.testing.assert_allclose(out[29], np.linalg.slogdet(spd)[1])
    np.testing.assert_allclose(out[30], np.linalg.solve(spd, rhs))
    np.testing.assert_allclose(out[31] @ out[31], spd, atol=1e-9)
    np.testing.assert_allclose(out[32], np.linalg.svd(a, compute_uv=False))
    np.testing.assert_allclose(out[33], np.diag([1.0, 2.0]))
    np.testing.assert_allclose(out[34], [1.0, 1.0])
    np.testing.assert_allclose(out[35], a @ a)
    np.testing.assert_allclose(out[36], np.trace(a))
    np.testing.assert_allclose(out[37], a.T)
    np.testing.assert_allclose(out[38], np.linalg.solve(chol, rhs))
    np.testing.assert_allclose(out[39], [0.0, 0.0, 1.0])
    dense = np.array([[1.0, 1, 0], [1, 1, 1], [0, 1, 1]])
    np.testing.assert_allclose(out[40], dense @ rhs)
    np.testing.assert_allclose(out[41], np.linalg.solve(
        np.array([[4.0, 1, 0], [1, 4, 1], [0, 1, 4]]), rhs))
    np.testing.assert_allclose(out[42], [1.0, 2.0])


def test_sparse_names():
    s = tf.sparse
    with tf.Graph().as_default():
        st = s.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
        ph = s.placeholder(tf.float32, shape=[2, 2])
        acc = s.SparseConditionalAccumulator(tf.float32, shape=[2])
        out = tf.Session().run([
            s.to_dense(st), s.from_dense([[0.0, 3.0]]), s.fill_empty_rows(st, 0.0)[1],
            s.mask(tf.IndexedSlices(tf.constant([[1.0], [2.0]]), tf.constant([0, 1])),
                   [1]).values, s.matmul(st, np.eye(2, dtype=np.float32)),
            s.sparse_dense_matmul(st, np.eye(2, dtype=np.float32)),
            s.reduce_max_sparse(st, 1), s.reduce_sum(st), s.reorder(st), s.reset_shape(st),
            s.retain(st, [False, True]), s.segment_sum(np.ones((2, 2)), [0, 1], [0, 0]),
            s.segment_mean(np.ones((2, 2)), [0, 1], [0, 0]),
            s.segment_sqrt_n(np.ones((2, 2)), [0, 1], [0, 0]),
            s.to_dense(ph), acc.num_accumulated()],
            {ph: tf.SparseTensorValue([[1, 1]], np.array([7.0], np.float32), [2, 2])})
    assert out[0].tolist() == [[0.0, 1.0], [2.0, 0.0]]
    assert out[1].values.tolist() == [3.0] and out[2].tolist() == [False, False]
    assert out[3].tolist() == [[1.0]]
    assert out[4].tolist() == out[5].tolist() == [[0.0, 1.0], [2.0, 0.0]]
    assert out[6].values.tolist() == [1.0, 2.0] and out[7] == 3.0
    assert out[8].indices.tolist() == [[0, 1], [1, 0]] and out[9].dense_shape.tolist() == [2, 2]
    assert out[10].values.tolist() == [2.0]
    assert out[11].tolist() == [[2.0, 2.0]] and out[12].tolist() == [[1.0, 1.0]]
    np.testing.assert_allclose(out[13], [[math.sqrt(2)] * 2])
    assert out[14].tolist() == [[0.0, 0.0], [0.0, 7.0]] and out[15] == 0


def test_top_level_aliases_of_new_ops():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 3))
    spd = a @ a.T + 3 * np.eye(3)
    rhs = rng.normal(size=(3, 2))
    with tf.Graph().as_default():
        st = tf.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
        other = tf.SparseTensor([[0, 1]], [5.0], [2, 2])
        out = tf.Session().run([
            tf.broadcast_dynamic_shape([2, 1], [1, 3]), tf.identity_n([1, 2]),
            tf.meshgrid([1, 2], [3, 4, 5]), tf.parallel_stack([1, 2]), tf.shape_n([_X, _M]),
            tf.cholesky(spd), tf.cholesky_solve(np.linalg.cholesky(spd), rhs),
            tf.matrix_determinant(spd), tf.matrix_inverse(spd), tf.matrix_solve(spd, rhs),
            tf.matrix_solve_ls(a, rhs), tf.matrix_square_root(spd),
            tf.matrix_triangular_solve(np.tril(spd), rhs), tf.norm(a), tf.qr(a)[1],
            tf.self_adjoint_eig(spd)[0], tf.self_adjoint_eigvals(spd), tf.svd(a)[0],
            tf.cross([1.0, 0, 0], [0.0, 1, 0]), tf.tensor_scatter_add([1, 1], [[0]], [2]),
            tf.tensor_scatter_nd_max([1, 5], [[0], [1]], [3, 3]),
            tf.tensor_scatter_nd_min([1, 5], [[0], [1]], [3, 3]),
            tf.tensor_scatter_nd_sub([1, 1], [[1]], [2]), tf.tensor_scatter_sub([1, 1], [[1]], [2]),
            tf.tensor_scatter_update([1, 1], [[1]], [7]), tf.bincount([0, 2]),
            tf.segment_prod(_X, [0, 0, 1]),
            tf.sparse_segment_mean(np.ones((2, 2)), [0, 1], [0, 0]),
            tf.sparse_segment_sqrt_n(np.ones((2, 2)), [0, 1], [0, 0]),
            tf.unsorted_segment_mean(_X, [0, 0, 1], 2),
            tf.unsorted_segment_sqrt_n(_X, [0, 0, 1], 2),
            tf.sparse_add(st, other), tf.sparse_concat(0, [st, other]),
            tf.sparse_maximum(st, other), tf.sparse_minimum(st, other),
            tf.sparse_reduce_max(st), tf.sparse_reduce_max_sparse(st, 0),
            tf.sparse_reduce_sum_sparse(st, 0), tf.sparse_reshape(st, [4]),
            tf.sparse_slice(st, [0, 0], [1, 2]), tf.sparse_softmax(st),
            tf.sparse_split(sp_input=st, num_split=2, axis=0),
            tf.sparse_to_indicator(tf.SparseTensor([[0, 0]], np.array([1], np.int64), [1, 1]), 2),
            tf.sparse_transpose(st), tf.math.bessel_i0([0.0]), tf.math.bessel_i0e([0.0]),
            tf.math.bessel_i1([0.0]), tf.math.bessel_i1e([0.0]), tf.math.erfinv([0.0]),
            tf.is_non_decreasing([1, 2]), tf.is_strictly_increasing([2, 1]),
            tf.log_sigmoid([0.0]), tf.math.polyval([1.0], 2.0)])
    assert out[0].tolist() == [2, 3] and [int(v) for v in out[1]] == [1, 2]
    assert out[2][0].shape == (3, 2) and out[3].tolist() == [1, 2]
    assert [o.tolist() for o in out[4]] == [[3], [2, 3]]
    np.testing.assert_allclose(out[5], np.linalg.cholesky(spd))
    np.testing.assert_allclose(out[6], np.linalg.solve(spd, rhs))
    np.testing.assert_allclose(out[7], np.linalg.det(spd))
    np.testing.assert_allclose(out[8], np.linalg.inv(spd))
    np.testing.assert_allclose(out[9], np.linalg.solve(spd, rhs))
    np.testing.assert_allclose(out[10], np.linalg.solve(a, rhs), atol=1e-9)
    np.testing.assert_allclose(out[11] @ out[11], spd, atol=1e-9)
    np.testing.assert_allclose(out[12], np.linalg.solve(np.tril(spd), rhs))
    np.testing.assert_allclose(out[13], np.linalg.norm(a))
    np.testing.assert_allclose(np.abs(out[14]), np.abs(np.linalg.qr(a)[1]))
    np.testing.assert_allclose(out[15], np.linalg.eigvalsh(spd))
    np.testing.assert_allclose(out[16], np.linalg.eigvalsh(spd))
    np.testing.assert_allclose(out[17], np.linalg.svd(a, compute_uv=False))
    assert out[18].tolist() == [0.0, 0.0, 1.0] and out[19].tolist() == [3, 1]
    assert out[20].tolist() == [3, 5] and out[21].tolist() == [1, 3]
    assert out[22].tolist() == [1, -1] and out[23].tolist() == [1, -1]
    assert out[24].tolist() == [1, 7] and out[25].tolist() == [1, 0, 1]
    np.testing.assert_allclose(out[26], [0.1, 0.9])
    assert out[27].tolist() == [[1.0, 1.0]]
    np.testing.assert_allclose(out[28], [[math.sqrt(2)] * 2])
    np.testing.assert_allclose(out[29], [0.35, 0.9])
    np.testing.assert_allclose(out[30], [0.7 / math.sqrt(2), 0.9])
    assert out[31].values.tolist() == [6.0, 2.0] and out[32].dense_shape.tolist() == [4, 2]
    assert out[33].values.tolist() == [5.0, 2.0] and out[34].values.tolist() == [1.0, 0.0]
    assert out[35] == 2.0 and out[36].values.tolist() == [2.0, 1.0]
    assert out[37].values.tolist() == [2.0, 1.0] and out[38].dense_shape.tolist() == [4]
    assert out[39].values.tolist() == [1.0] and out[40].values.tolist() == [1.0, 1.0]
    assert [p.dense_shape.tolist() for p in out[41]] == [[1, 2], [1, 2]]
    assert out[42].tolist() == [[False, True]]
    assert out[43].indices.tolist() == [[0, 1], [1, 0]]
    assert out[44].tolist() == [1.0] and out[45].tolist() == [1.0]
    assert out[46].tolist() == [0.0] and out[47].tolist() == [0.0] and out[48].tolist() == [0.0]
    assert out[49] and not out[50]
    np.testing.assert_allclose(out[51], [-math.log(2)])
    assert out[52] == 1.0
    shape = tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3]))
    assert shape.as_list() == [2, 3]
