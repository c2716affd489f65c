"""tf.train.batch_join, shuffle_batch_join and the maybe_* variants: the queue each builds,
filled by running its runner's enqueue ops by hand (no threads), and the batches."""

import numpy as np
import pytest

import tensorweave as tf


def _runner():
    runners = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    assert len(runners) == 1
    return runners[0]


def test_batch_join_one_enqueue_per_list_and_structure():
    with tf.Graph().as_default():
        a = {"x": tf.constant([1.0, 2.0]), "y": tf.constant(1)}
        b = {"x": tf.constant([3.0, 4.0]), "y": tf.constant(2)}
        out = tf.train.batch_join([a, b], batch_size=4, capacity=8)
        assert sorted(out) == ["x", "y"] and out["x"].shape.as_list() == [4, 2]
        runner = _runner()
        assert len(runner.enqueue_ops) == 2
        with tf.Session() as s:
            for op in [runner.enqueue_ops[0], runner.enqueue_ops[1]] * 2:
                s.run(op)
            got = s.run(out)
    np.testing.assert_array_equal(got["y"], [1, 2, 1, 2])
    np.testing.assert_array_equal(got["x"][:, 0], [1.0, 3.0, 1.0, 3.0])


def test_shuffle_batch_join_keeps_every_element():
    with tf.Graph().as_default():
        lists = [[tf.constant(i)] for i in range(3)]
        (out,) = tf.train.shuffle_batch_join(
            lists, batch_size=6, capacity=10, min_after_dequeue=0, seed=3
        )
        runner = _runner()
        with tf.Session() as s:
            for op in runner.enqueue_ops * 2:
                s.run(op)
            got = s.run(out)
    assert sorted(got.tolist()) == [0, 0, 1, 1, 2, 2]


def test_maybe_batch_scalar_and_vector_keep_input():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [])
        keep = tf.placeholder(tf.bool, [])
        (out,) = tf.train.maybe_batch([x], keep, batch_size=2)
        runner = _runner()
        with tf.Session() as s:
            for value, flag in [(1, True), (2, False), (3, True)]:
                s.run(runner.enqueue_ops[0], {x: value, keep: flag})
            np.testing.assert_array_equal(s.run(out), [1, 3])
    with tf.Graph().as_default():
        xs = tf.constant([10, 20, 30, 40])
        (out,) = tf.train.maybe_batch_join([[xs]], [True, False, False, True], 2, enqueue_many=True)
        with tf.Session() as s:
            s.run(_runner().enqueue_ops[0])
            np.testing.assert_array_equal(s.run(out), [10, 40])


def test_maybe_shuffle_batch_variants():
    with tf.Graph().as_default():
        xs = tf.constant([1, 2, 3, 4])
        (out,) = tf.train.maybe_shuffle_batch(
            [xs], 2, 10, 0, [False, True, True, False], enqueue_many=True, seed=1
        )
        with tf.Session() as s:
            s.run(_runner().enqueue_ops[0])
            assert sorted(s.run(out).tolist()) == [2, 3]
    with tf.Graph().as_default():
        (out,) = tf.train.maybe_shuffle_batch_join(
            [[tf.constant(5)], [tf.constant(6)]], 2, 10, 0, tf.constant(True), seed=1
        )
        with tf.Session() as s:
            for op in _runner().enqueue_ops:
                s.run(op)
            assert sorted(s.run(out).tolist()) == [5, 6]


def test_bad_input():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="at least one input"):
            tf.train.batch_join([], 2)
        with pytest.raises(ValueError, match="cannot be a vector"):
            tf.train.maybe_batch([tf.constant(1)], [True], 2)
        with pytest.raises(NotImplementedError, match="dynamic_pad"):
            tf.train.batch_join([[tf.constant(1)]], 2, dynamic_pad=True)
