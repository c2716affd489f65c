"""Clipping by value and norms (TF 1.x `clip_ops_test.py`), dense and `IndexedSlices`."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import clip_ops


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_clip_by_value():
    with tf.Graph().as_default():
        x = tf.constant([[-2.0, 0.5], [3.0, 1.0]])
        out = clip_ops.clip_by_value(x, -1.0, 2.0)
        assert out.op.name == "clip_by_value"
        np.testing.assert_array_equal(_run(out), [[-1.0, 0.5], [2.0, 1.0]])
        per_column = clip_ops.clip_by_value(x, [-1.0, 0.0], [1.0, 0.7])
        np.testing.assert_allclose(_run(per_column), [[-1.0, 0.5], [1.0, 0.7]], rtol=1e-6)
        with pytest.raises(ValueError):
            clip_ops.clip_by_value(tf.constant([1.0, 2.0]), [[0.0], [1.0]], 5.0)
        ints = clip_ops.clip_by_value(tf.constant([1, 5, 9]), 2, 7)
        assert ints.dtype == tf.int32
        np.testing.assert_array_equal(_run(ints), [2, 5, 7])


def test_clip_by_norm():
    with tf.Graph().as_default():
        x = tf.constant([[3.0, 4.0], [0.0, 0.0]])
        out = clip_ops.clip_by_norm(x, 2.5)
        assert out.op.name == "clip_by_norm"
        np.testing.assert_allclose(_run(out), [[1.5, 2.0], [0.0, 0.0]], rtol=1e-6)
        np.testing.assert_allclose(_run(clip_ops.clip_by_norm(x, 10.0)), _run(x))
        rows = clip_ops.clip_by_norm(tf.constant([[3.0, 4.0], [0.3, 0.4]]), 1.0, axes=[1])
        np.testing.assert_allclose(_run(rows), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
        zero = clip_ops.clip_by_norm(tf.zeros([3]), 1.0)
        np.testing.assert_array_equal(_run(zero), [0.0, 0.0, 0.0])


def test_clip_by_norm_gradient_of_zero_is_finite():
    with tf.Graph().as_default():
        x = tf.zeros([3])
        (grad,) = tf.gradients(tf.reduce_sum(clip_ops.clip_by_norm(x, 1.0)), [x])
        assert np.all(np.isfinite(_run(grad)))


def test_clip_by_norm_indexed_slices():
    with tf.Graph().as_default():
        slices = tf.IndexedSlices(tf.constant([[3.0, 4.0]]), tf.constant([2]), tf.constant([4, 2]))
        out = clip_ops.clip_by_norm(slices, 1.0)
        assert isinstance(out, tf.IndexedSlices)
        assert out.indices is slices.indices and out.dense_shape is slices.dense_shape
        np.testing.assert_allclose(_run(out.values), [[0.6, 0.8]], rtol=1e-6)


def test_global_norm_ignores_none_and_uses_slice_values():
    with tf.Graph().as_default():
        a = tf.constant([3.0, 4.0])
        s = tf.IndexedSlices(tf.constant([[12.0]]), tf.constant([0]))
        norm = clip_ops.global_norm([a, None, s])
        assert norm.op.name == "global_norm/global_norm"
        np.testing.assert_allclose(_run(norm), 13.0, rtol=1e-6)
        with pytest.raises(TypeError, match="t_list should be a sequence"):
            clip_ops.global_norm(a)
        with pytest.raises(TypeError, match="t_list should be a sequence"):
            clip_ops.global_norm("abc")


def test_clip_by_global_norm():
    with tf.Graph().as_default():
        a = tf.constant([3.0, 4.0])
        s = tf.IndexedSlices(tf.constant([[12.0]]), tf.constant([0]), tf.constant([5, 1]))
        clipped, norm = clip_ops.clip_by_global_norm([a, None, s], 6.5)
        assert clipped[1] is None
        assert isinstance(clipped[2], tf.IndexedSlices)
        assert clipped[2].indices is s.indices and clipped[2].dense_shape is s.dense_shape
        assert clipped[0].op.name == "clip_by_global_norm/clip_by_global_norm/_0"
        got = _run([clipped[0], clipped[2].values, norm])
        np.testing.assert_allclose(got[0], [1.5, 2.0], rtol=1e-6)
        np.testing.assert_allclose(got[1], [[6.0]], rtol=1e-6)
        np.testing.assert_allclose(got[2], 13.0, rtol=1e-6)
        unchanged, _ = clip_ops.clip_by_global_norm([a], 100.0)
        np.testing.assert_allclose(_run(unchanged[0]), [3.0, 4.0], rtol=1e-6)
        given, used = clip_ops.clip_by_global_norm([a], 1.0, use_norm=tf.constant(10.0))
        np.testing.assert_allclose(_run(given[0]), [0.3, 0.4], rtol=1e-6)
        assert _run(used) == 10.0


def test_clip_by_global_norm_with_infinite_norm_gives_nan():
    with tf.Graph().as_default():
        clipped, _ = clip_ops.clip_by_global_norm([tf.constant([np.inf, 1.0])], 1.0)
        assert np.all(np.isnan(_run(clipped[0])))


def test_clip_by_average_norm():
    with tf.Graph().as_default():
        x = tf.constant([[3.0, 4.0], [0.0, 0.0]])
        out = clip_ops.clip_by_average_norm(x, 0.5)
        assert out.op.name == "clip_by_average_norm"
        # average norm = 5 / 4 = 1.25 > 0.5: scaled by 0.5 / 1.25.
        np.testing.assert_allclose(_run(out), [[1.2, 1.6], [0.0, 0.0]], rtol=1e-6)
        np.testing.assert_allclose(_run(clip_ops.clip_by_average_norm(x, 2.0)), _run(x))
