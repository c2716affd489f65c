"""Exact values of the issue-12 ops against NumPy references (cases ported from
TensorFlow's segment_reduction_ops_test, scatter_nd_ops_test, sparse_ops_test,
einsum_op_test, linalg tests) and the namespaces' names."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_segment_reductions():
    d = np.array([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]], np.float64)
    ids = [0, 0, 1]
    out = _run([tf.math.segment_sum(d, ids), tf.math.segment_mean(d, ids),
                tf.math.segment_max(d, ids), tf.math.segment_min(d, ids),
                tf.math.segment_prod(d, ids)])
    np.testing.assert_array_equal(out[0], [[5, 5, 5, 5], [5, 6, 7, 8]])
    np.testing.assert_array_equal(out[1], [[2.5, 2.5, 2.5, 2.5], [5, 6, 7, 8]])
    np.testing.assert_array_equal(out[2], [[4, 3, 3, 4], [5, 6, 7, 8]])
    np.testing.assert_array_equal(out[3], [[1, 2, 2, 1], [5, 6, 7, 8]])
    np.testing.assert_array_equal(out[4], [[4, 6, 6, 4], [5, 6, 7, 8]])
    with pytest.raises(errors.InvalidArgumentError, match="not increasing"):
        _run(tf.segment_sum(d, [1, 0, 0]))


def test_unsorted_segment_reductions():
    d = np.array([1.0, 2.0, 3.0, 4.0])
    ids = [0, 1, 0, -1]
    out = _run([tf.unsorted_segment_max(d, ids, 3), tf.unsorted_segment_min(d, ids, 3),
                tf.unsorted_segment_prod(d, ids, 3), tf.math.unsorted_segment_mean(d, ids, 3),
                tf.math.unsorted_segment_sqrt_n(d, ids, 3)])
    lowest = np.finfo(np.float64).min
    np.testing.assert_array_equal(out[0], [3, 2, lowest])
    np.testing.assert_array_equal(out[1], [1, 2, -lowest])
    np.testing.assert_array_equal(out[2], [3, 2, 1])
    np.testing.assert_array_equal(out[3], [2, 2, 0])
    np.testing.assert_allclose(out[4], [4 / math.sqrt(2), 2, 0])


def test_sparse_segment_and_bincount():
    d = np.array([[1.0, 2], [3, 4], [5, 6]])
    out = _run([tf.sparse_segment_sum(d, [0, 2, 2], [0, 0, 1]),
                tf.sparse.segment_mean(d, [0, 1], [0, 0]),
                tf.math.bincount([1, 1, 3], minlength=5),
                tf.math.bincount([1, 2], weights=[0.5, 2.0])])
    np.testing.assert_array_equal(out[0], [[6, 8], [5, 6]])
    np.testing.assert_array_equal(out[1], [[2, 3]])
    np.testing.assert_array_equal(out[2], [0, 2, 0, 1, 0])
    np.testing.assert_array_equal(out[3], [0, 0.5, 2.0])


def test_gather_scatter_nd():
    p = np.arange(12).reshape(3, 2, 2)
    idx = [[0, 1], [2, 0]]
    out = _run([tf.gather_nd(p, idx), tf.scatter_nd([[1], [3], [1]], [9, 10, 11], [5]),
                tf.tensor_scatter_nd_update(np.zeros(4), [[1], [2]], [5.0, 6.0]),
                tf.tensor_scatter_nd_add(np.ones(3), [[0], [0]], [1.0, 2.0])])
    np.testing.assert_array_equal(out[0], p[[0, 2], [1, 0]])
    np.testing.assert_array_equal(out[1], [0, 20, 0, 10, 0])
    np.testing.assert_array_equal(out[2], [0, 5, 6, 0])
    np.testing.assert_array_equal(out[3], [4, 1, 1])
    with pytest.raises(errors.InvalidArgumentError, match="does not index"):
        _run(tf.gather_nd(p, [[3, 0]]))


def test_variable_scatters():
    v = tf.Variable([1.0, 2.0, 3.0, 4.0])
    m = tf.Variable(np.ones((2, 2)))
    ops = [tf.scatter_mul(v, [0, 0], [2.0, 3.0]), tf.scatter_div(v, [1], [4.0]),
           tf.scatter_max(v, [2], [10.0]), tf.scatter_min(v, [3], [-1.0])]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for op in ops:
            sess.run(op)
        np.testing.assert_array_equal(sess.run(v), [6.0, 0.5, 10.0, -1.0])
        sess.run(tf.scatter_nd_update(m, [[0, 1]], [5.0]))
        sess.run(tf.scatter_nd_add(m, [[1, 0], [1, 0]], [1.0, 2.0]))
        sess.run(tf.scatter_nd_sub(m, [[0, 0]], [1.0]))
        np.testing.assert_array_equal(sess.run(m), [[0, 5], [4, 1]])


def test_sequence_sort_and_ranges():
    x = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    out = _run([tf.sequence_mask([1, 3], 4), tf.reverse_sequence(x, [3, 1], seq_axis=1),
                tf.sort([3.0, 1.0, 2.0]), tf.sort([3, 1, 2], direction="DESCENDING"),
                tf.argsort([3.0, 1.0, 2.0]), tf.linspace(0.0, 1.0, 5), tf.lin_space(1.0, 2.0, 2),
                tf.eye(2, 3), tf.unique_with_counts([4, 1, 4, 2]),
                tf.setdiff1d([1, 2, 3, 4], [2, 4]), tf.broadcast_to([1, 2], [2, 2]),
                tf.searchsorted([[1, 3, 5]], [[3, 6]]), tf.roll([1, 2, 3], 1, 0),
                tf.repeat([1, 2], 2), tf.unravel_index([5], [2, 3])])
    np.testing.assert_array_equal(out[0], [[True, False, False, False], [True, True, True, False]])
    np.testing.assert_array_equal(out[1], [[3, 2, 1, 4], [5, 6, 7, 8]])
    np.testing.assert_array_equal(out[2], [1, 2, 3])
    np.testing.assert_array_equal(out[3], [3, 2, 1])
    np.testing.assert_array_equal(out[4], [1, 2, 0])
    np.testing.assert_allclose(out[5], np.linspace(0, 1, 5))
    np.testing.assert_allclose(out[6], [1, 2])
    np.testing.assert_array_equal(out[7], np.eye(2, 3))
    np.testing.assert_array_equal(out[8].y, [4, 1, 2])
    np.testing.assert_array_equal(out[8].idx, [0, 1, 0, 2])
    np.testing.assert_array_equal(out[8].count, [2, 1, 1])
    np.testing.assert_array_equal(out[9].out, [1, 3])
    np.testing.assert_array_equal(out[10], [[1, 2], [1, 2]])
    np.testing.assert_array_equal(out[11], [[1, 3]])
    np.testing.assert_array_equal(out[12], [3, 1, 2])
    np.testing.assert_array_equal(out[13], [1, 1, 2, 2])
    np.testing.assert_array_equal(out[14], [[1], [2]])


def test_matrix_ops_and_einsum():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3, 3)), rng.normal(size=(3, 4))
    out = _run([tf.matrix_band_part(a, 1, 0), tf.matrix_diag([[1, 2]]),
                tf.matrix_diag_part(a), tf.matrix_set_diag(a, np.zeros((2, 3))),
                tf.matrix_transpose(a), tf.trace(a), tf.diag([1, 2]), tf.diag_part(np.eye(2)),
                tf.einsum("bij,jk->bik", a, b), tf.einsum("ii", a[0]),
                tf.linalg.cross([[1.0, 0, 0]], [[0.0, 1, 0]])])
    np.testing.assert_array_equal(out[0], np.tril(a) - np.tril(a, -2))
    np.testing.assert_array_equal(out[1], [np.diag([1, 2])])
    np.testing.assert_array_equal(out[2], np.diagonal(a, axis1=1, axis2=2))
    np.testing.assert_array_equal(np.diagonal(out[3], axis1=1, axis2=2), np.zeros((2, 3)))
    np.testing.assert_array_equal(out[4], np.swapaxes(a, 1, 2))
    np.testing.assert_allclose(out[5], np.trace(a, axis1=1, axis2=2))
    np.testing.assert_array_equal(out[6], np.diag([1, 2]))
    np.testing.assert_array_equal(out[7], [1, 1])
    np.testing.assert_allclose(out[8], np.einsum("bij,jk->bik", a, b))
    np.testing.assert_allclose(out[9], np.trace(a[0]))
    np.testing.assert_array_equal(out[10], [[0, 0, 1]])


def test_linalg():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 3))
    spd = x @ x.T + 3 * np.eye(3)
    rhs = rng.normal(size=(3, 2))
    la = tf.linalg
    out = _run([la.inv(spd), la.det(spd), la.slogdet(spd), la.cholesky(spd), la.solve(spd, rhs),
                la.triangular_solve(np.tril(spd), rhs), la.qr(x), la.svd(x, compute_uv=False),
                la.eigvalsh(spd), la.norm(x), la.logdet(spd), la.lstsq(x, rhs), la.pinv(x),
                la.matrix_rank(x), la.lu(spd), la.cholesky_solve(np.linalg.cholesky(spd), rhs),
                la.expm(np.zeros((2, 2))), la.matvec(x, np.array([1.0, 0, 0]))])
    np.testing.assert_allclose(out[0], np.linalg.inv(spd))
    np.testing.assert_allclose(out[1], np.linalg.det(spd))
    np.testing.assert_allclose(out[2][1], np.linalg.slogdet(spd)[1])
    np.testing.assert_allclose(out[3], np.linalg.cholesky(spd))
    np.testing.assert_allclose(out[4], np.linalg.solve(spd, rhs))
    np.testing.assert_allclose(out[5], np.linalg.solve(np.tril(spd), rhs))
    np.testing.assert_allclose(out[6][0] @ out[6][1], x)
    np.testing.assert_allclose(out[7], np.linalg.svd(x, compute_uv=False))
    np.testing.assert_allclose(out[8], np.linalg.eigvalsh(spd))
    np.testing.assert_allclose(out[9], np.linalg.norm(x))
    np.testing.assert_allclose(out[10], np.linalg.slogdet(spd)[1])
    np.testing.assert_allclose(out[11], np.linalg.lstsq(x, rhs, rcond=None)[0], atol=1e-10)
    np.testing.assert_allclose(out[12], np.linalg.pinv(x), atol=1e-10)
    assert out[13] == 3
    lu, perm = out[14]
    low = np.tril(lu, -1) + np.eye(3)
    np.testing.assert_allclose(low @ np.triu(lu), spd[perm])
    np.testing.assert_allclose(out[15], np.linalg.solve(spd, rhs))
    np.testing.assert_allclose(out[16], np.eye(2))
    np.testing.assert_allclose(out[17], x[:, 0])


def test_special_functions_match_reference_values():
    # Values computed with TensorFlow 2.21 (float64).
    out = _run([tf.lgamma([0.5, 3.0]), tf.digamma([1.0, -2.5]), tf.erf([0.5]), tf.erfc([0.5]),
                tf.igamma(2.0, 3.0), tf.igammac(2.0, 3.0), tf.betainc(2.0, 3.0, 0.4),
                tf.zeta(3.0, 2.5), tf.polygamma(2.0, 3.3), tf.lbeta([[2.0, 3.0]]),
                tf.math.polyval([1.0, 2.0, 3.0], 2.0)])
    np.testing.assert_allclose(out[0], [math.lgamma(0.5), math.log(2)])
    np.testing.assert_allclose(out[1], [-0.5772156649015329, 1.1031566406452432], rtol=1e-6)
    np.testing.assert_allclose(out[2], [math.erf(0.5)], rtol=1e-6)
    np.testing.assert_allclose(out[3], [math.erfc(0.5)], rtol=1e-6)
    np.testing.assert_allclose(out[4], 1 - 4 * math.exp(-3), rtol=1e-6)
    np.testing.assert_allclose(out[5], 4 * math.exp(-3), rtol=1e-6)
    np.testing.assert_allclose(out[6], 0.5248, rtol=1e-6)
    np.testing.assert_allclose(out[7], 0.11810202582086368, rtol=1e-6)
    np.testing.assert_allclose(out[8], -0.12375118526494269, rtol=1e-6)
    np.testing.assert_allclose(out[9], [math.log(1 / 12)], rtol=1e-6)
    assert out[10] == 11.0


def test_sparse_ops():
    st = tf.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [3, 4])
    other = tf.SparseTensor([[0, 0], [2, 1]], [5.0, -1.0], [3, 4])
    dense = np.arange(8.0).reshape(4, 2)
    s = tf.sparse
    out = _run([s.to_dense(st), s.reduce_sum(st, 1), s.reshape(st, [2, 6]),
                s.concat(1, [st, other]), s.add(st, other), s.transpose(st),
                s.retain(st, [False, True]), s.reorder(tf.SparseTensor([[1, 0], [0, 1]], [1, 2],
                                                                       [2, 2])),
                s.fill_empty_rows(st, -1.0), s.slice(st, [1, 0], [2, 4]),
                s.split(sp_input=st, num_split=2, axis=1), s.sparse_dense_matmul(st, dense),
                s.softmax(st), s.maximum(st, other), s.minimum(st, other),
                s.to_indicator(tf.SparseTensor([[0, 0], [0, 1]], [2, 0], [1, 2]), 3),
                s.from_dense([[0, 7]]), s.reduce_max(st, 1), s.reduce_sum_sparse(st, 1)])
    np.testing.assert_array_equal(out[0], [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(out[1], [1, 2, 0])
    np.testing.assert_array_equal(out[2].indices, [[0, 0], [1, 0]])
    np.testing.assert_array_equal(out[2].dense_shape, [2, 6])
    np.testing.assert_array_equal(out[3].indices, [[0, 0], [0, 4], [1, 2], [2, 5]])
    np.testing.assert_array_equal(out[4].values, [6.0, 2.0, -1.0])
    np.testing.assert_array_equal(out[5].indices, [[0, 0], [2, 1]])
    np.testing.assert_array_equal(out[6].values, [2.0])
    np.testing.assert_array_equal(out[7].indices, [[0, 1], [1, 0]])
    filled, empty = out[8]
    np.testing.assert_array_equal(filled.values, [1.0, 2.0, -1.0])
    np.testing.assert_array_equal(empty, [False, False, True])
    np.testing.assert_array_equal(out[9].indices, [[0, 2]])
    np.testing.assert_array_equal([p.dense_shape.tolist() for p in out[10]], [[3, 2], [3, 2]])
    np.testing.assert_array_equal(out[11], out[0] @ dense)
    np.testing.assert_array_equal(out[12].values, [1.0, 1.0])
    np.testing.assert_array_equal(out[13].values, [5.0, 2.0, 0.0])
    np.testing.assert_array_equal(out[14].values, [1.0, 0.0, -1.0])
    np.testing.assert_array_equal(out[15], [[True, False, True]])
    np.testing.assert_array_equal(out[16].values, [7])
    np.testing.assert_array_equal(out[17], [1, 2, 0])
    np.testing.assert_array_equal(out[18].values, [1, 2])


def test_sparse_placeholder_feed_and_embedding_lookup_sparse():
    p = tf.sparse_placeholder(tf.float32)
    ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], np.array([1, 2, 0], np.int64), [3, 2])
    params = np.arange(6.0).reshape(3, 2)
    emb = tf.nn.embedding_lookup_sparse(params, ids, None, combiner="sum")
    value = tf.SparseTensorValue([[0, 1]], np.array([5.0], np.float32), [2, 2])
    got, e = _run([tf.sparse_tensor_to_dense(p), emb], {p: value})
    np.testing.assert_array_equal(got, [[0, 5], [0, 0]])
    np.testing.assert_array_equal(e, [[6, 8], [0, 0], [0, 1]])


def test_bitwise_and_names():
    out = _run([tf.bitwise.bitwise_and(12, 10), tf.bitwise.bitwise_or(12, 10),
                tf.bitwise.bitwise_xor(12, 10), tf.bitwise.invert(np.uint8(1)),
                tf.bitwise.left_shift(1, 3), tf.bitwise.right_shift(-8, 1)])
    assert [int(v) for v in out] == [8, 14, 6, 254, 8, -4]
    with pytest.raises(NotImplementedError, match="Generator"):
        tf.random.Generator()
    c = _run(tf.random.categorical([[0.0, -1e9]], 3))
    np.testing.assert_array_equal(c, [[0, 0, 0]])
