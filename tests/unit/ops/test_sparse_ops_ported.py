"""Cases ported from TensorFlow's sparse_ops_test.py (and sparse add/concat/reorder/split
tests) on its 5x6 fixture; expected values computed with TensorFlow 2.21."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors

_IND = [[0, 0], [1, 0], [1, 3], [1, 4], [3, 2], [3, 3]]
_VAL = [0, 10, 13, 14, 32, 33]


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def _sp(dtype=np.int32):
    return tf.SparseTensor(_IND, np.array(_VAL, dtype), [5, 6])


def _ab():
    a = tf.SparseTensor([[0, 1], [1, 0], [1, 2]], [1.0, 2.0, 3.0], [2, 3])
    b = tf.SparseTensor([[0, 1], [1, 2]], [-1.0, 0.5], [2, 3])
    return a, b


def test_fill_empty_rows_retain_reset_shape():
    filled, empty = tf.sparse_fill_empty_rows(_sp(), -1)
    out = _run([filled, empty, tf.sparse_retain(_sp(), [True, False, False, True, False, True]),
                tf.sparse_reset_shape(_sp()), tf.sparse_reset_shape(_sp(), [7, 8])])
    assert out[0].indices.tolist() == [[0, 0], [1, 0], [1, 3], [1, 4], [2, 0], [3, 2], [3, 3],
                                       [4, 0]]
    assert out[0].values.tolist() == [0, 10, 13, 14, -1, 32, 33, -1]
    assert out[1].tolist() == [False, False, True, False, True]
    assert out[2].indices.tolist() == [[0, 0], [1, 4], [3, 3]]
    assert out[2].values.tolist() == [0, 14, 33]
    assert out[3].dense_shape.tolist() == [4, 5] and out[4].dense_shape.tolist() == [7, 8]


def test_slice_split_reshape_transpose():
    out = _run([tf.sparse.slice(_sp(), [1, 2], [3, 3]),
                tf.sparse.split(sp_input=_sp(), num_split=2, axis=1),
                tf.sparse.split(sp_input=_sp(), num_split=3, axis=0),
                tf.sparse.reshape(_sp(), [-1, 10]),
                tf.sparse.transpose(_sp(np.float32), [1, 0])])
    assert out[0].indices.tolist() == [[0, 1], [0, 2], [2, 0], [2, 1]]
    assert out[0].values.tolist() == [13, 14, 32, 33] and out[0].dense_shape.tolist() == [3, 3]
    assert [(p.indices.tolist(), p.values.tolist(), p.dense_shape.tolist()) for p in out[1]] == [
        ([[0, 0], [1, 0], [3, 2]], [0, 10, 32], [5, 3]),
        ([[1, 0], [1, 1], [3, 0]], [13, 14, 33], [5, 3])]
    assert [(p.indices.tolist(), p.values.tolist(), p.dense_shape.tolist()) for p in out[2]] == [
        ([[0, 0], [1, 0], [1, 3], [1, 4]], [0, 10, 13, 14], [2, 6]),
        ([[1, 2], [1, 3]], [32, 33], [2, 6]),
        ([], [], [1, 6])]
    assert out[3].indices.tolist() == [[0, 0], [0, 6], [0, 9], [1, 0], [2, 0], [2, 1]]
    assert out[3].dense_shape.tolist() == [3, 10]
    assert out[4].indices.tolist() == [[0, 0], [0, 1], [2, 3], [3, 1], [3, 3], [4, 1]]
    assert out[4].values.tolist() == [0.0, 10.0, 32.0, 13.0, 33.0, 14.0]
    assert out[4].dense_shape.tolist() == [6, 5]
    with pytest.raises(errors.InvalidArgumentError, match="only one output dimension"):
        _run(tf.sparse.reshape(_sp(), [-1, -1]))
    with pytest.raises(errors.InvalidArgumentError, match="multiple of 7"):
        _run(tf.sparse.reshape(_sp(), [-1, 7]))


def test_reductions_softmax_matmul_indicator():
    sp = _sp(np.float32)
    out = _run([tf.sparse.reduce_sum(sp, [1], keepdims=True), tf.sparse.reduce_max(sp, [0]),
                tf.sparse.softmax(sp), tf.sparse_tensor_dense_matmul(
                    sp, np.arange(12.0, dtype=np.float32).reshape(6, 2)),
                tf.sparse.to_indicator(tf.SparseTensor([[0, 0], [0, 1], [1, 0]],
                                                       np.array([0, 3, 2], np.int64), [2, 2]), 4),
                tf.sparse_reduce_sum(sp), tf.sparse.reduce_sum_sparse(sp, 1)])
    assert out[0].tolist() == [[0.0], [37.0], [0.0], [65.0], [0.0]]
    assert out[1].tolist() == [10.0, 0.0, 32.0, 33.0, 14.0, 0.0]
    np.testing.assert_allclose(out[2].values, [1.0, 0.013213000260293484, 0.26538801193237305,
                                               0.7213990092277527, 0.2689409852027893,
                                               0.7310590147972107], rtol=1e-5)
    # (TensorFlow's float32 arithmetic; ours is the float64 value rounded once.)
    assert out[3].tolist() == [[0.0, 0.0], [190.0, 227.0], [0.0, 0.0], [326.0, 391.0],
                               [0.0, 0.0]]
    assert out[4].tolist() == [[True, False, False, True], [False, False, True, False]]
    assert out[5] == 102.0
    assert out[6].indices.tolist() == [[0], [1], [3]] and out[6].values.tolist() == [0, 37, 65]


def test_add_maximum_minimum_concat_reorder():
    a, b = _ab()
    out = _run([tf.sparse.add(a, b, threshold=0.5), tf.sparse.add(a, b),
                tf.sparse.maximum(a, b), tf.sparse.minimum(a, b), tf.sparse.concat(0, [a, b]),
                tf.sparse.concat(1, [a, b]),
                tf.sparse_reorder(tf.SparseTensor([[1, 0], [0, 2], [0, 1]], [1, 2, 3], [2, 3]))])
    assert out[0].indices.tolist() == [[1, 0], [1, 2]] and out[0].values.tolist() == [2.0, 3.5]
    assert out[1].indices.tolist() == [[0, 1], [1, 0], [1, 2]]
    assert out[1].values.tolist() == [0.0, 2.0, 3.5]
    assert out[2].indices.tolist() == [[0, 1], [1, 0], [1, 2]]
    assert out[2].values.tolist() == [1.0, 2.0, 3.0]
    assert out[3].values.tolist() == [-1.0, 0.0, 0.5]
    assert out[4].indices.tolist() == [[0, 1], [1, 0], [1, 2], [2, 1], [3, 2]]
    assert out[4].dense_shape.tolist() == [4, 3]
    assert out[5].indices.tolist() == [[0, 1], [0, 4], [1, 0], [1, 2], [1, 5]]
    assert out[5].values.tolist() == [1.0, -1.0, 2.0, 3.0, 0.5]
    assert out[5].dense_shape.tolist() == [2, 6]
    assert out[6].indices.tolist() == [[0, 1], [0, 2], [1, 0]]
    assert out[6].values.tolist() == [3, 2, 1]
    with pytest.raises(errors.InvalidArgumentError, match="same ranks or shapes"):
        _run(tf.sparse.add(a, tf.SparseTensor([[0, 0]], [1.0], [3, 3])))


def test_sparse_to_dense_validation_and_mask():
    with pytest.raises(errors.InvalidArgumentError, match="is out of order"):
        _run(tf.sparse_to_dense([[1], [0]], [3], [1, 2]))
    with pytest.raises(errors.InvalidArgumentError, match="is repeated"):
        _run(tf.sparse_to_dense([[1], [1]], [3], [1, 2]))
    with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
        _run(tf.sparse_to_dense([[3]], [3], [1]))
    assert _run(tf.sparse_to_dense([[1], [0]], [3], [1, 2], validate_indices=False)).tolist() \
        == [2, 1, 0]
    assert _run(tf.sparse_to_dense([0, 2], [4], 7, default_value=1)).tolist() == [7, 1, 7, 1]
    slices = tf.IndexedSlices(tf.constant([[1.0, 2], [3, 4], [5, 6]]), tf.constant([0, 4, 7]))
    masked = tf.sparse_mask(slices, [4])
    values, indices = _run([masked.values, masked.indices])
    assert values.tolist() == [[1.0, 2.0], [5.0, 6.0]] and indices.tolist() == [0, 7]
