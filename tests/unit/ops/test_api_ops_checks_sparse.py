"""The extra check ops and sparse functions (edit_distance, sparse eye/expand_dims/
bincount/merge); expected values from TensorFlow 2.21 where noted."""

from __future__ import annotations

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


def test_assert_family():
    x = tf.constant([1.0, 2.0])
    _run([tf.assert_near(x, x + 1e-7, atol=1e-6), tf.assert_rank_in(x, [1, 2]),
          tf.assert_integer(tf.constant([1]))])
    with pytest.raises(errors.InvalidArgumentError, match="tolerance"):
        _run(tf.assert_near(x, x + 1.0))
    p = tf.placeholder(tf.float32)
    with pytest.raises(errors.InvalidArgumentError, match="must have rank in"):
        _run(tf.assert_rank_in(p, [2, 3]), {p: [1.0]})
    with pytest.raises(ValueError, match="must have rank in"):
        tf.assert_rank_in(x, [0, 2])
    with pytest.raises(TypeError, match="integer"):
        tf.assert_integer(x)
    assert tf.assert_scalar(tf.constant(1.0)).shape.ndims == 0
    with pytest.raises(ValueError, match="scalar"):
        tf.assert_scalar(x)
    tf.assert_proper_iterable([1, 2])
    for bad in ("ab", np.ones(2), x, 3):
        with pytest.raises(TypeError):
            tf.assert_proper_iterable(bad)
    assert tf.assert_same_float_dtype([x, x]) == tf.float32
    assert tf.assert_same_float_dtype(None) == tf.float32
    with pytest.raises(ValueError):
        tf.assert_same_float_dtype([x, tf.constant([1.0], tf.float64)])
    with pytest.raises(ValueError):
        tf.assert_same_float_dtype([tf.constant([1])])


def test_variables_initialized_and_numerics_checks():
    v = tf.Variable(1.0)
    check = tf.assert_variables_initialized()
    bad = tf.constant([np.nan]) * 1.0
    verify = tf.verify_tensor_all_finite(bad, "found NaN")
    numerics = tf.add_check_numerics_ops()
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="Not all variables"):
            sess.run(check)
        sess.run(v.initializer)
        sess.run(check)
        with pytest.raises(errors.InvalidArgumentError, match="found NaN"):
            sess.run(verify)
        with pytest.raises(errors.InvalidArgumentError, match="NaN"):
            sess.run(numerics)


def test_edit_distance_matches_tensorflow():
    hyp = tf.SparseTensor([[0, 0, 0], [1, 0, 0]], ["a", "b"], [2, 1, 1])
    truth = tf.SparseTensor([[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]],
                            ["a", "b", "c", "a"], [2, 2, 2])
    out = _run([tf.edit_distance(hyp, truth), tf.edit_distance(hyp, truth, normalize=False)])
    assert out[0].tolist() == [[np.inf, 1.0], [0.5, 1.0]]
    assert out[1].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    words = tf.SparseTensor([[0, 0], [0, 1], [0, 2]], ["k", "i", "t"], [1, 3])
    other = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [0, 3]], ["s", "i", "t", "s"], [1, 4])
    assert _run(tf.edit_distance(words, other, normalize=False)).tolist() == [2.0]


def test_sparse_eye_expand_dims_bincount_merge_match_tensorflow():
    ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], np.array([3, 1, 2], np.int64), [2, 2])
    vals = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, 0.25, 1.0], [2, 2])
    out = _run([tf.sparse.eye(2, 3),
                tf.sparse.expand_dims(tf.SparseTensor([[0, 1]], [5], [2, 3]), 1),
                tf.sparse.bincount(tf.constant([[1, 1, 3], [2, 2, 2]]), axis=-1),
                tf.sparse.bincount(tf.constant([1, 1, 3]), weights=[1.0, 2, 3]),
                tf.sparse_merge(ids, vals, 4), tf.sparse.merge(ids, vals, 4),
                tf.sparse.bincount(tf.constant([1, 1, 3]), binary_output=True)])
    assert out[0].indices.tolist() == [[0, 0], [1, 1]] and out[0].dense_shape.tolist() == [2, 3]
    assert out[1].indices.tolist() == [[0, 0, 1]] and out[1].dense_shape.tolist() == [2, 1, 3]
    assert out[2].indices.tolist() == [[0, 1], [0, 3], [1, 2]]
    assert out[2].values.tolist() == [2, 1, 3] and out[2].dense_shape.tolist() == [2, 4]
    assert out[3].indices.tolist() == [[1], [3]] and out[3].values.tolist() == [3.0, 3.0]
    for merged in out[4:6]:
        assert merged.indices.tolist() == [[0, 1], [0, 3], [1, 2]]
        assert merged.values.tolist() == [0.25, 0.5, 1.0]
        assert merged.dense_shape.tolist() == [2, 4]
    assert out[6].values.tolist() == [1, 1]


def test_sparse_cross_matches_tensorflow():
    a = tf.sparse.from_dense(tf.constant([["a", "b"], ["c", ""]]))
    b = tf.constant([["x"], ["y"]])
    c = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], tf.constant([1, 2, 3], tf.int64), [2, 2])
    out = _run([tf.sparse.cross([a, b]), tf.sparse.cross([a, c], separator="|"),
                tf.sparse.cross_hashed([a, b], num_buckets=1000), tf.sparse.cross_hashed([a, c]),
                tf.sparse.cross_hashed([a, b], num_buckets=1000, hash_key=7),
                tf.sparse.cross_hashed([c]),
                tf.sparse.cross([tf.constant([["a", "b"]]), tf.constant([["x", "y"]])])])
    assert out[0].indices.tolist() == [[0, 0], [0, 1], [1, 0]]
    assert out[0].values.tolist() == [b"a_X_x", b"b_X_x", b"c_X_y"]
    assert out[0].dense_shape.tolist() == [2, 2]
    assert out[1].values.tolist() == [b"a|1", b"b|1", b"c|2", b"c|3"]
    # Hashes computed with TensorFlow 2.21 (FingerprintCat64 over Fingerprint64).
    assert out[2].values.tolist() == [892, 4, 360]
    assert out[3].values.tolist() == [2928842892298887678, 5354134812324246176,
                                      8046540229177717716, 4384133765619275694]
    assert out[4].values.tolist() == [108, 715, 791]
    assert out[5].values.tolist() == [5199413699614396413, 5167850198417433268,
                                      1424184489956106035]
    assert out[6].values.tolist() == [b"a_X_x", b"a_X_y", b"b_X_x", b"b_X_y"]
    with pytest.raises(TypeError, match="list"):
        tf.sparse.cross(a)
