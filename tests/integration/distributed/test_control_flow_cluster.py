"""While loops and conds on a 1-worker / 1-ps in-process cluster: a loop whose body
updates a ps variable runs on the worker with the update on the ps (the loop spans both
partitions, see `runtime.partition_frames`), failed and timed-out steps inside a loop end
cleanly, and gradients of a loop over ps variables train."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.cluster import create_local_cluster

PS = "/job:ps/task:0"
WORKER = "/job:worker/task:0"


@pytest.fixture
def target():
    workers, ps = create_local_cluster(1, 1)
    yield workers[0].target
    for server in workers + ps:
        server.stop()


def _config():
    return tf.ConfigProto(operation_timeout_in_ms=30_000)


def _trace_devices(sess, fetches, feed=None):
    md = tf.RunMetadata()
    out = sess.run(fetches, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                   run_metadata=md)
    return out, {d.device: {n.node_name for n in d.node_stats} for d in md.step_stats.dev_stats}


def test_loop_updating_a_ps_variable(target):
    with tf.Graph().as_default():
        with tf.device(PS):
            v = tf.Variable(1.0, name="v")
        with tf.device(WORKER):
            x = tf.placeholder(tf.float32, [])

            def body(i, acc):
                return i + 1, acc + tf.assign_add(v, x)

            r = tf.while_loop(lambda i, a: i < 5, body, [tf.constant(0), tf.constant(0.0)],
                              parallel_iterations=1)
            doubled = r[1] * 2.0
        with tf.Session(target, config=_config()) as sess:
            sess.run(tf.global_variables_initializer())
            (i, acc, d), ran = _trace_devices(sess, [r[0], r[1], doubled], {x: 1.0})
            assert (i, acc, d) == (5, 20.0, 40.0)
            assert sess.run(v) == 6.0
            ps_nodes = next(nodes for dev, nodes in ran.items() if "/job:ps/" in dev)
            worker_nodes = next(nodes for dev, nodes in ran.items() if "/job:worker/" in dev)
            assert "while/AssignAdd" in ps_nodes and "while/LoopCond" in worker_nodes
            assert "while/LoopCond" not in ps_nodes


def test_loop_reading_a_ps_variable_and_cond_on_the_worker(target):
    with tf.Graph().as_default():
        with tf.device(PS):
            w = tf.Variable([1.0, 2.0], name="w")
        with tf.device(WORKER):
            p = tf.placeholder(tf.bool, [])

            def body(i, acc):
                return i + 1, acc * 0.5 + w.read_value()

            r = tf.while_loop(lambda i, a: i < 3, body, [tf.constant(0), tf.zeros([2])])[1]
            out = tf.cond(p, lambda: tf.reduce_sum(r), lambda: tf.reduce_sum(w) * 10.0)
        with tf.Session(target, config=_config()) as sess:
            sess.run(tf.global_variables_initializer())
            ref = np.zeros(2)
            for _ in range(3):
                ref = ref * 0.5 + np.array([1.0, 2.0])
            assert sess.run(out, {p: True}) == pytest.approx(ref.sum())
            assert sess.run(out, {p: False}) == pytest.approx(30.0)


def test_failed_step_inside_a_loop_rolls_back_and_the_next_step_works(target):
    with tf.Graph().as_default():
        with tf.device(PS):
            v = tf.Variable(0.0, name="v")
        with tf.device(WORKER):
            k = tf.placeholder(tf.int32, [])

            def body(i):
                bump = tf.assign_add(v, 1.0)
                with tf.control_dependencies([bump]):
                    # NOTE: fails in iteration 3 when k == 3 (index out of range).
                    bad = tf.gather(tf.constant([0, 0, 0]), tf.minimum(i * k, 3 * k) // 3)
                return i + 1 + bad

            r = tf.while_loop(lambda i: i < 5, body, [tf.constant(0)], parallel_iterations=1)
        with tf.Session(target, config=_config()) as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="Gather"):
                sess.run(r, {k: 3})
            assert sess.run(v) == 0.0  # the failed step's updates are rolled back
            assert sess.run(r, {k: 0}) == 5
            assert sess.run(v) == 5.0


def test_step_timeout_inside_a_long_loop_ends_cleanly(target):
    with tf.Graph().as_default():
        with tf.device(PS):
            v = tf.Variable(0.0, name="v")
        with tf.device(WORKER):
            r = tf.while_loop(lambda i: i < 10**9, lambda i: i + tf.cast(
                tf.assign_add(v, 1.0) > -1.0, tf.int32), [tf.constant(0)])
            small = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])
        with tf.Session(target, config=_config()) as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(r, options=tf.RunOptions(timeout_in_ms=300))
            assert sess.run(small) == 3
