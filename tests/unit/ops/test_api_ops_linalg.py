"""tf.linalg beyond the basics: tridiagonal ops, eigh_tridiagonal and the LinearOperator
classes (dense values from NumPy or, where noted, from TensorFlow 2.21)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

la = tf.linalg


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_tridiagonal_ops_match_tensorflow():
    compact = np.array([[1.0, 2, 0], [3, 4, 5], [0, 6, 7]])
    dense = np.array([[3.0, 1, 0], [6, 4, 2], [0, 7, 5]])
    rhs = np.array([[1.0], [2], [3]])
    out = _run([la.tridiagonal_matmul(compact, rhs),
                la.tridiagonal_matmul(dense, rhs, diagonals_format="matrix"),
                la.tridiagonal_matmul((compact[0], compact[1], compact[2]), rhs,
                                      diagonals_format="sequence"),
                la.tridiagonal_solve(compact, rhs), la.tridiagonal_solve(compact, rhs[:, 0]),
                la.eigh_tridiagonal(np.array([1.0, 2, 3]), np.array([0.5, 0.25])),
                la.eigh_tridiagonal(np.array([1.0, 2, 3]), np.array([0.5, 0.25]),
                                    select="i", select_range=[1, 2]),
                la.eigh_tridiagonal(np.array([1.0, 2, 3]), np.array([0.5, 0.25]),
                                    eigvals_only=False)])
    for got in out[:3]:
        assert got.tolist() == [[5.0], [20.0], [29.0]]  # TensorFlow's values
    np.testing.assert_allclose(out[3], np.linalg.solve(dense, rhs))
    np.testing.assert_allclose(out[4], np.linalg.solve(dense, rhs)[:, 0])
    np.testing.assert_allclose(out[5], [0.7886824011802673, 2.145188808441162,
                                        3.0661282539367676], rtol=1e-6)
    np.testing.assert_allclose(out[6], out[5][1:])
    values, vectors = out[7]
    sym = np.diag([1.0, 2, 3]) + np.diag([0.5, 0.25], 1) + np.diag([0.5, 0.25], -1)
    np.testing.assert_allclose(sym @ vectors, vectors * values, atol=1e-12)
    with pytest.raises(ValueError, match="diagonals_format"):
        la.tridiagonal_matmul(compact, rhs, diagonals_format="bands")


def test_basic_linear_operators():
    rng = np.random.default_rng(0)
    m = rng.normal(size=(3, 3)) + 3 * np.eye(3)
    x = rng.normal(size=(3, 2))
    full = la.LinearOperatorFullMatrix(m)
    diag = la.LinearOperatorDiag(np.array([1.0, 2.0, 4.0]))
    tril = la.LinearOperatorLowerTriangular(m)
    ident = la.LinearOperatorIdentity(3, dtype=tf.float64)
    scaled = la.LinearOperatorScaledIdentity(3, np.float64(2.5))
    zeros = la.LinearOperatorZeros(2, 3, dtype=tf.float64)
    comp = la.LinearOperatorComposition([full, diag])
    out = _run([full.matmul(x), full.solve(x), full.determinant(), full.log_abs_determinant(),
                full.trace(), full.adjoint().to_dense(), full.inverse().to_dense(),
                diag.matmul(x), diag.solve(x), diag.determinant(), diag.matvec([1.0, 1, 1]),
                tril.to_dense(), tril.solve(x), tril.determinant(), ident.to_dense(),
                scaled.to_dense(), zeros.to_dense(), comp.to_dense(),
                full.add_to_tensor(np.ones((3, 3))), full.inverse().matmul(x),
                la.LinearOperatorFullMatrix(m @ m.T).cholesky().to_dense(),
                diag.solvevec([1.0, 2.0, 4.0]), (full @ diag).to_dense()])
    np.testing.assert_allclose(out[0], m @ x)
    np.testing.assert_allclose(out[1], np.linalg.solve(m, x))
    np.testing.assert_allclose(out[2], np.linalg.det(m))
    np.testing.assert_allclose(out[3], np.log(abs(np.linalg.det(m))))
    np.testing.assert_allclose(out[4], np.trace(m))
    np.testing.assert_allclose(out[5], m.T)
    np.testing.assert_allclose(out[6], np.linalg.inv(m))
    np.testing.assert_allclose(out[7], np.diag([1.0, 2, 4]) @ x)
    np.testing.assert_allclose(out[8], x / np.array([[1.0], [2], [4]]))
    assert out[9] == 8.0 and out[10].tolist() == [1.0, 2.0, 4.0]
    np.testing.assert_allclose(out[11], np.tril(m))
    np.testing.assert_allclose(out[12], np.linalg.solve(np.tril(m), x))
    np.testing.assert_allclose(out[13], np.prod(np.diag(m)))
    np.testing.assert_array_equal(out[14], np.eye(3))
    np.testing.assert_array_equal(out[15], 2.5 * np.eye(3))
    np.testing.assert_array_equal(out[16], np.zeros((2, 3)))
    np.testing.assert_allclose(out[17], m @ np.diag([1.0, 2, 4]))
    np.testing.assert_allclose(out[18], m + 1)
    np.testing.assert_allclose(out[19], np.linalg.solve(m, x))
    np.testing.assert_allclose(out[20], np.linalg.cholesky(m @ m.T))
    np.testing.assert_allclose(out[21], [1.0, 1.0, 1.0])
    np.testing.assert_allclose(out[22], m @ np.diag([1.0, 2, 4]))
    assert full.shape.as_list() == [3, 3] and full.is_square
    assert full.domain_dimension.value == 3 and full.batch_shape.as_list() == []
    assert zeros.range_dimension.value == 2


def test_structured_linear_operators_match_tensorflow():
    a, b = np.array([[1.0, 2], [3, 4]]), np.array([[0.0, 1], [1, 0]])
    u = np.array([[1.0], [2.0]])
    out = _run([
        la.LinearOperatorToeplitz(col=[1.0, 2, 3], row=[1.0, 4, 5]).to_dense(),
        la.LinearOperatorCirculant(np.array([6.0, -2 + 2j, -2, -2 - 2j], np.complex64))
        .to_dense(),
        la.LinearOperatorCirculant2D(np.array([[4.0, 1], [2, 3]], np.complex64)).to_dense(),
        la.LinearOperatorPermutation([2, 0, 1]).to_dense(),
        la.LinearOperatorPermutation([2, 0, 1]).matvec([10.0, 20, 30]),
        la.LinearOperatorHouseholder([1.0, 1]).to_dense(),
        la.LinearOperatorKronecker([la.LinearOperatorFullMatrix(a),
                                    la.LinearOperatorFullMatrix(b)]).to_dense(),
        la.LinearOperatorBlockDiag([la.LinearOperatorFullMatrix(a),
                                    la.LinearOperatorDiag(np.array([5.0]))]).to_dense(),
        la.LinearOperatorBlockLowerTriangular(
            [[la.LinearOperatorFullMatrix(a)],
             [la.LinearOperatorFullMatrix(b), la.LinearOperatorFullMatrix(a)]]).to_dense(),
        la.LinearOperatorLowRankUpdate(la.LinearOperatorFullMatrix(a), u,
                                       diag_update=np.array([2.0])).to_dense(),
        la.LinearOperatorTridiag(np.array([[1.0, 2, 0], [3, 4, 5], [0, 6, 7]])).to_dense(),
        la.LinearOperatorTridiag(np.array([[1.0, 2, 0], [3, 4, 5], [0, 6, 7]]))
        .solve(np.ones((3, 1))),
        la.LinearOperatorCirculant3D(np.ones((2, 1, 2), np.complex64)).to_dense(),
        la.LinearOperatorAdjoint(la.LinearOperatorFullMatrix(a)).to_dense(),
        la.LinearOperatorInversion(la.LinearOperatorFullMatrix(a)).to_dense()])
    assert out[0].tolist() == [[1.0, 4.0, 5.0], [2.0, 1.0, 4.0], [3.0, 2.0, 1.0]]
    np.testing.assert_allclose(out[1], [[0, 3, 2, 1], [1, 0, 3, 2], [2, 1, 0, 3],
                                        [3, 2, 1, 0]], atol=1e-5)
    np.testing.assert_allclose(out[2], [[2.5, 0.5, 0, 1], [0.5, 2.5, 1, 0], [0, 1, 2.5, 0.5],
                                        [1, 0, 0.5, 2.5]], atol=1e-5)
    assert out[3].tolist() == [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert out[4].tolist() == [30.0, 10.0, 20.0]
    np.testing.assert_allclose(out[5], [[0.0, -1.0], [-1.0, 0.0]], atol=1e-6)
    np.testing.assert_array_equal(out[6], np.kron(a, b))
    np.testing.assert_array_equal(out[7], [[1, 2, 0], [3, 4, 0], [0, 0, 5]])
    np.testing.assert_array_equal(out[8], np.block([[a, np.zeros((2, 2))], [b, a]]))
    np.testing.assert_array_equal(out[9], a + 2 * u @ u.T)
    dense = np.array([[3.0, 1, 0], [6, 4, 2], [0, 7, 5]])
    np.testing.assert_array_equal(out[10], dense)
    np.testing.assert_allclose(out[11], np.linalg.solve(dense, np.ones((3, 1))))
    np.testing.assert_allclose(out[12], np.eye(4), atol=1e-6)  # flat spectrum: identity
    np.testing.assert_array_equal(out[13], a.T)
    np.testing.assert_allclose(out[14], np.linalg.inv(a))
