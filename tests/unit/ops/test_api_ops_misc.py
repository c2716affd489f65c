"""Exact values of the miscellaneous array ops (`where_v2`, `dynamic_partition`,
space/batch/depth rearrangements, histograms, bitcast, count_up_to, ...); expected values
computed with TensorFlow 2.21's tf.compat.v1 where noted."""

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


def test_where_v2_broadcasts_and_partition():
    out = _run([tf.where_v2([[True], [False]], [1, 2, 3], 0),
                tf.where_v2([True, False, True]),
                tf.dynamic_partition([10, 20, 30, 40], [1, 0, 1, 1], 2)])
    np.testing.assert_array_equal(out[0], [[1, 2, 3], [0, 0, 0]])
    np.testing.assert_array_equal(out[1], [[0], [2]])
    np.testing.assert_array_equal(out[2][0], [20])
    np.testing.assert_array_equal(out[2][1], [10, 30, 40])
    with pytest.raises(ValueError, match="both"):
        tf.where_v2([True], [1])
    with pytest.raises(errors.InvalidArgumentError, match="outside"):
        _run(tf.dynamic_partition([1, 2], [0, 5], 2))


def test_space_depth_batch_match_tensorflow():
    out = _run([tf.space_to_depth(np.arange(16).reshape(1, 4, 4, 1), 2),
                tf.space_to_batch_nd(np.arange(6).reshape(1, 3, 2, 1), [2, 2],
                                     [[0, 1], [1, 1]]),
                tf.required_space_to_batch_paddings([5, 7], [2, 3])])
    assert out[0].tolist() == [[[[0, 1, 4, 5], [2, 3, 6, 7]], [[8, 9, 12, 13],
                                                                [10, 11, 14, 15]]]]
    assert out[1].reshape(4, -1).tolist() == [[0, 1, 0, 5], [0, 0, 4, 0], [0, 3, 0, 0],
                                              [2, 0, 0, 0]]
    np.testing.assert_array_equal(out[2][0], [[0, 1], [0, 2]])
    np.testing.assert_array_equal(out[2][1], [[0, 1], [0, 2]])
    x = np.arange(48).reshape(2, 4, 2, 3)
    back = _run([tf.depth_to_space(tf.space_to_depth(x, 2), 2),
                 tf.batch_to_space_nd(tf.space_to_batch_nd(x, [2, 1], [[0, 0], [1, 1]]),
                                      [2, 1], [[0, 0], [1, 1]]),
                 tf.batch_to_space(tf.space_to_batch(x, [[0, 0], [0, 0]], 2), [[0, 0], [0, 0]],
                                   2),
                 tf.depth_to_space(tf.space_to_depth(x.transpose(0, 3, 1, 2), 2,
                                                     data_format="NCHW"), 2,
                                   data_format="NCHW")])
    for b in back[:3]:
        np.testing.assert_array_equal(b, x)
    np.testing.assert_array_equal(back[3], x.transpose(0, 3, 1, 2))


def test_histograms_match_tensorflow():
    values = [-1.0, 0.0, 1.5, 2.0, 5.0, 15]
    out = _run([tf.histogram_fixed_width(values, [0.0, 5.0], nbins=5),
                tf.histogram_fixed_width_bins(values, [0.0, 5.0], nbins=5)])
    assert out[0].tolist() == [2, 1, 1, 0, 2]
    assert out[1].tolist() == [0, 0, 1, 2, 4, 4]


def test_bitcast_batch_gather_and_helpers():
    out = _run([tf.bitcast(tf.constant([1.0], tf.float32), tf.uint8),
                tf.bitcast(tf.constant([[0, 0, 128, 63]], tf.uint8), tf.float32),
                tf.batch_gather([[1, 2, 3], [4, 5, 6]], [[2, 0], [1, 1]]),
                tf.ensure_shape(tf.constant([1, 2]), [2]), tf.guarantee_const([3]),
                tf.sparse_matmul([[1.0, 2.0]], [[3.0], [4.0]])])
    assert out[0].tolist() == [[0, 0, 128, 63]]
    assert out[1].tolist() == [1.0]
    assert out[2].tolist() == [[3, 1], [5, 5]]
    assert out[3].tolist() == [1, 2] and out[4].tolist() == [3]
    assert out[5].tolist() == [[11.0]]
    p = tf.placeholder(tf.int32, [None])
    with pytest.raises(errors.InvalidArgumentError, match="not compatible"):
        _run(tf.ensure_shape(p, [3]), {p: [1, 2]})
    with pytest.raises(ValueError):
        tf.ensure_shape(tf.constant([1, 2]), [3])
    t = tf.constant([1, 2])
    assert tf.is_tensor(t) and not tf.is_tensor([1])
    assert tf.get_static_value(t).tolist() == [1, 2]
    assert tf.dimension_value(tf.Dimension(3)) == 3 and tf.dimension_value(None) is None
    assert tf.dimension_at_index(tf.TensorShape([2, None]), 0).value == 2
    assert isinstance(tf.convert_to_tensor_or_sparse_tensor(
        tf.SparseTensorValue([[0]], [1.0], [2])), tf.SparseTensor)
    assert tf.convert_to_tensor_or_indexed_slices(t) is t
    assert tf.is_numeric_tensor(t)


def test_count_up_to_stops_at_limit():
    v = tf.Variable(0)
    inc = tf.count_up_to(v, 2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert [int(sess.run(inc)), int(sess.run(inc))] == [0, 1]
        with pytest.raises(errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(inc)
        assert int(sess.run(v)) == 2
