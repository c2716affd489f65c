"""While loops that span tasks on in-process clusters (real gRPC servers): the loop runs
where it was placed (the worker) while its body reads and updates variables on ps tasks;
every partition the loop touches runs a control loop driven by the predicate sent each
iteration, and transfers inside the loop are keyed by frame and iteration
(`runtime.partition_frames`). Failed and timed-out steps inside such a loop end with their
error class, and the next step runs normally."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.cluster import create_local_cluster

PS0 = "/job:ps/task:0"
PS1 = "/job:ps/task:1"
WORKER = "/job:worker/task:0"


@pytest.fixture
def cluster():
    workers, ps = create_local_cluster(1, 2)
    yield workers[0].target
    for server in workers + ps:
        server.stop()


def _config(timeout_ms: int = 30_000):
    return tf.ConfigProto(operation_timeout_in_ms=timeout_ms)


def _traced(sess, fetches, feed=None):
    md = tf.RunMetadata()
    out = sess.run(fetches, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                   run_metadata=md)
    ran: dict[str, set[str]] = {}
    for d in md.step_stats.dev_stats:
        ran.setdefault(d.device.split("/device:")[0], set()).update(
            n.node_name for n in d.node_stats)
    return out, ran


@pytest.mark.parametrize("parallel", [1, 10])
def test_loop_on_the_worker_updates_a_ps_variable_n_times(cluster, parallel):
    with tf.Graph().as_default():
        with tf.device(PS0):
            v = tf.Variable(0.0, name="v")
        with tf.device(WORKER):
            n = tf.placeholder(tf.int32, [])
            x = tf.placeholder(tf.float32, [])

            def body(i, acc):
                return i + 1, acc + tf.assign_add(v, x) * 0.0 + v.read_value() * 0.0 + 1.0

            r = tf.while_loop(lambda i, a: i < n, body, [tf.constant(0), tf.constant(0.0)],
                              parallel_iterations=parallel)
        with tf.Session(cluster, config=_config()) as sess:
            sess.run(tf.global_variables_initializer())
            (i, acc), ran = _traced(sess, r, {n: 7, x: 0.5})
            assert (i, acc) == (7, 7.0)
            assert sess.run(v) == 3.5
            assert sess.run(r, {n: 25, x: 2.0}) == (25, 25.0)
            assert sess.run(v) == 53.5
            assert sess.run(r, {n: 0, x: 1.0}) == (0, 0.0)  # no iteration: no update
            assert sess.run(v) == 53.5
    assert "while/LoopCond" in ran["/job:worker/replica:0/task:0"]
    assert "while/AssignAdd" in ran["/job:ps/replica:0/task:0"]
    assert "while/LoopCond" not in ran["/job:ps/replica:0/task:0"]


def test_loop_body_returns_the_value_assigned_on_the_ps(cluster):
    with tf.Graph().as_default():
        with tf.device(PS0):
            v = tf.Variable(1.0, name="v")
        with tf.device(WORKER):
            def body(i, acc):
                return i + 1, acc + tf.assign_add(v, tf.cast(i, tf.float32))

            r = tf.while_loop(lambda i, a: i < 5, body, [tf.constant(0), tf.constant(0.0)],
                              parallel_iterations=1)
        with tf.Session(cluster, config=_config()) as sess:
            sess.run(tf.global_variables_initializer())
            # v: 1, 1, 2, 4, 7, 11 after iterations 0..4; acc sums the new values.
            assert sess.run(r) == (5, 1.0 + 2.0 + 4.0 + 7.0 + 11.0)
            assert sess.run(v) == 11.0


def test_loop_with_state_on_two_ps_tasks(cluster):
    """Formerly UnimplementedError (a loop's by-reference state on two devices)."""
    with tf.Graph().as_default():
        with tf.device(PS0):
            a = tf.Variable(0.0, name="a")
        with tf.device(PS1):
            b = tf.Variable(np.ones(3, np.float32), name="b")
        with tf.device(WORKER):
            def body(i):
                ua = tf.assign_add(a, 1.0)
                ub = tf.assign(b, b.read_value() * 2.0)
                with tf.control_dependencies([ua, ub]):
                    return i + 1

            # NOTE: one iteration at a time: b's read in iteration i + 1 follows its write
            # in iteration i.
            r = tf.while_loop(lambda i: i < 6, body, [tf.constant(0)], parallel_iterations=1)
        with tf.Session(cluster, config=_config()) as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(r) == 6
            assert sess.run(a) == 6.0
            np.testing.assert_array_equal(sess.run(b), [64.0] * 3)


def test_nested_loops_across_tasks(cluster):
    with tf.Graph().as_default():
        with tf.device(PS0):
            v = tf.Variable(0.0, name="v")
        with tf.device(PS1):
            w = tf.Variable(0.0, name="w")
        with tf.device(WORKER):
            def inner(j, s):
                return j + 1, s + tf.assign_add(v, 1.0)

            def outer(i, total):
                _, s = tf.while_loop(lambda j, s: j < i + 1, inner,
                                     [tf.constant(0), tf.constant(0.0)])
                with tf.control_dependencies([tf.assign_add(w, 10.0)]):
                    return i + 1, total + s

            r = tf.while_loop(lambda i, t: i < 4, outer, [tf.constant(0), tf.constant(0.0)])
        with tf.Session(cluster, config=_config()) as sess:
            sess.run(tf.global_variables_initializer())
            # Outer iteration i runs the inner loop i + 1 times: v counts 1 + 2 + 3 + 4.
            i, total = sess.run(r)
            assert i == 4
            assert sess.run(v) == 10.0
            assert sess.run(w) == 40.0
            assert total == float(sum(range(1, 11)))


@pytest.mark.parametrize("read", ["read_value", "variable"])
def test_gradient_of_a_loop_reading_a_ps_variable(cluster, read):
    """Through `w.read_value()` or the variable itself (its ref converted in the body)."""
    with tf.Graph().as_default():
        with tf.device(PS0):
            w = tf.Variable(0.5, name="w")
        with tf.device(WORKER):
            x = tf.constant([1.0, 2.0, 3.0])
            ta = tf.TensorArray(tf.float32, size=3).unstack(x)

            def body(i, h):
                return i + 1, h * (w.read_value() if read == "read_value" else w) + ta.read(i)

            h = tf.while_loop(lambda i, h: i < 3, body, [tf.constant(0), tf.constant(0.0)])[1]
            loss = tf.square(h - 2.0)
            grad = tf.gradients(loss, w)[0]
            train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        with tf.Session(cluster, config=_config()) as sess:
            sess.run(tf.global_variables_initializer())
            wv = 0.5
            hv = (1.0 * wv + 2.0) * wv + 3.0
            expected = 2 * (hv - 2.0) * (2 * 1.0 * wv + 2.0)
            assert sess.run(grad) == pytest.approx(expected, rel=1e-5)
            losses = [sess.run([loss, train])[0] for _ in range(20)]
            assert losses[-1] < losses[0]


def test_error_on_the_ps_inside_a_loop_rolls_back_and_the_next_step_works(cluster):
    with tf.Graph().as_default():
        with tf.device(PS0):
            v = tf.Variable(0.0, name="v")
            table = tf.constant([0, 0, 0])
        with tf.device(WORKER):
            k = tf.placeholder(tf.int32, [])

            def body(i):
                with tf.device(PS0):
                    bump = tf.assign_add(v, 1.0)
                    with tf.control_dependencies([bump]):
                        # NOTE: index 3 of 3 in iteration 3 when k == 1.
                        bad = tf.gather(table, tf.minimum(i * k, 3))
                return i + 1 + bad

            r = tf.while_loop(lambda i: i < 5, body, [tf.constant(0)])
        with tf.Session(cluster, config=_config()) as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="Gather|indices"):
                sess.run(r, {k: 1})
            assert sess.run(v) == 0.0  # the failed step's updates are rolled back
            assert sess.run(r, {k: 0}) == 5
            assert sess.run(v) == 5.0


def test_timeout_inside_a_long_loop_across_tasks_ends_cleanly(cluster):
    with tf.Graph().as_default():
        with tf.device(PS0):
            v = tf.Variable(0.0, name="v")
        with tf.device(WORKER):
            r = tf.while_loop(lambda i: i < 10**9, lambda i: i + tf.cast(
                tf.assign_add(v, 1.0) > -1.0, tf.int32), [tf.constant(0)])
            small = tf.while_loop(lambda i: i < 3, lambda i: i + tf.cast(
                tf.assign_add(v, 1.0) > -1.0, tf.int32), [tf.constant(0)])
        with tf.Session(cluster, config=_config()) as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(r, options=tf.RunOptions(timeout_in_ms=500))
            before = sess.run(v)
            assert sess.run(small) == 3
            assert sess.run(v) == before + 3.0


def test_cond_inside_a_spanning_loop_and_a_spanning_loop_inside_a_cond(cluster):
    with tf.Graph().as_default():
        with tf.device(PS0):
            v = tf.Variable(0.0, name="v")
        with tf.device(WORKER):
            def body(i, acc):
                def even():
                    with tf.device(PS0):
                        return tf.assign_add(v, 1.0)

                d = tf.cond(tf.equal(i % 2, 0), even, lambda: tf.constant(-1.0))
                return i + 1, acc + d

            r = tf.while_loop(lambda i, a: i < 7, body, [tf.constant(0), tf.constant(0.0)],
                              parallel_iterations=1)
            p = tf.placeholder(tf.bool, [])

            def looped():
                return tf.while_loop(lambda j: j < 3, lambda j: j + tf.cast(
                    tf.assign_add(v, 100.0) > 0, tf.int32), [tf.constant(0)])

            c = tf.cond(p, looped, lambda: tf.constant(-5))
        with tf.Session(cluster, config=_config()) as sess:
            sess.run(tf.global_variables_initializer())
            # Iterations 0, 2, 4, 6 update v to 1, 2, 3, 4; 1, 3, 5 add -1.
            assert sess.run(r) == (7, 1.0 + 2.0 + 3.0 + 4.0 - 3.0)
            assert sess.run(v) == 4.0
            assert sess.run(c, {p: False}) == -5
            assert sess.run(v) == 4.0  # the loop in the untaken branch never updated v
            assert sess.run(c, {p: True}) == 3
            assert sess.run(v) == 304.0
