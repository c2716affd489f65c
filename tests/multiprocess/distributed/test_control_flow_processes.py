"""While loops over ps-resident variables on a cluster of `tensorweave server`
subprocesses (1 ps, 1 worker), the client and its master in the test process: a loop runs
on the worker while its body reads and updates the ps variable (the loop spans both
processes: a control loop on the ps, the predicate and values sent every iteration), a
failed step in the loop leaves the variable as it was, a gradient through the loop trains
the variable, nested loops count exactly, and a cond's branches run in two processes.

Every server process is ended by PID at teardown; ports are picked free; sessions have an
operation timeout so no step can hang the test.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port
from tensorweave.testing.cross_task_graphs import check_only_taken_branch_runs, cond_across_tasks
from tensorweave.testing.processes import ServerProcess, spec_string

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

PS = "/job:ps/replica:0/task:0"
WORKER = "/job:worker/replica:0/task:0"


@pytest.fixture
def worker_target() -> Iterator[str]:
    jobs = {"ps": [f"127.0.0.1:{pick_unused_port()}"],
            "worker": [f"127.0.0.1:{pick_unused_port()}"]}
    spec = spec_string(jobs)
    servers = [ServerProcess(spec, "ps", 0), ServerProcess(spec, "worker", 0)]
    try:
        for s in servers:
            s.wait_ready(60.0)
        yield f"grpc://{jobs['worker'][0]}"
    finally:
        for s in servers:
            s.kill()


def test_loop_over_a_ps_variable_across_processes(worker_target):
    with tf.Graph().as_default():
        with tf.device(PS):
            v = tf.Variable(np.ones(3, np.float32), name="v")
        with tf.device(WORKER):
            scale = tf.placeholder(tf.float32, [])
            k = tf.placeholder(tf.int32, [])

            def body(i, acc):
                new = tf.assign(v, v.read_value() * scale)
                # NOTE: with k == 1 the gather fails in iteration 2 (index 3 of 3).
                check = tf.gather(tf.constant([0, 0, 0]), tf.minimum(i * k + i // 2 * k, 3))
                return i + 1 + check, acc + tf.reduce_sum(new)

            i, acc = tf.while_loop(lambda i, a: i < 4, body, [tf.constant(0), tf.constant(0.0)],
                                   parallel_iterations=1)
            loss = tf.reduce_sum(tf.square(tf.while_loop(
                lambda j, h: j < 3, lambda j, h: (j + 1, h * v + 1.0),
                [tf.constant(0), tf.zeros([3])])[1] - 2.0))
            train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        config = tf.ConfigProto(operation_timeout_in_ms=60_000)
        with tf.Session(worker_target, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run([i, acc], {scale: 2.0, k: 0}) == [4, 3 * (2 + 4 + 8 + 16)]
            np.testing.assert_array_equal(sess.run(v), [16.0] * 3)
            with pytest.raises(tf.errors.InvalidArgumentError, match="Gather"):
                sess.run([i, acc], {scale: 2.0, k: 1})
            np.testing.assert_array_equal(sess.run(v), [16.0] * 3)
            sess.run(tf.assign(v, [0.5, 0.5, 0.5]))
            losses = [sess.run([loss, train])[0] for _ in range(10)]
            assert losses[-1] < losses[0]


def test_cond_with_branches_in_two_processes(worker_target):
    """Each branch of a cond runs in its own process: the untaken branch's output crosses
    as a dead flag and only the taken branch's update happens."""
    with tf.Graph().as_default():
        parts = cond_across_tasks(PS, WORKER)
        config = tf.ConfigProto(operation_timeout_in_ms=60_000)
        with tf.Session(worker_target, config=config) as sess:
            check_only_taken_branch_runs(sess, parts)


def test_loop_on_the_worker_assigns_a_ps_variable_n_times(worker_target):
    with tf.Graph().as_default():
        with tf.device(PS):
            v = tf.Variable(0.0, name="v")
        with tf.device(WORKER):
            n = tf.placeholder(tf.int32, [])

            def body(i, acc):
                return i + 1, acc + tf.assign_add(v, 1.5) * 0.0 + v.read_value() * 0.0 + 1.0

            r = tf.while_loop(lambda i, a: i < n, body, [tf.constant(0), tf.constant(0.0)])

            def inner(j):
                return j + tf.cast(tf.assign_add(v, 1.0) > -1.0, tf.int32)

            nested = tf.while_loop(lambda i: i < 3, lambda i: i + tf.while_loop(
                lambda j: j < i + 2, inner, [tf.constant(0)]) * 0 + 1, [tf.constant(0)])
        config = tf.ConfigProto(operation_timeout_in_ms=60_000)
        with tf.Session(worker_target, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            md = tf.RunMetadata()
            assert sess.run(r, {n: 20}, run_metadata=md, options=tf.RunOptions(
                trace_level=tf.RunOptions.FULL_TRACE)) == (20, 20.0)
            assert sess.run(v) == 30.0
            ran = {d.device.split("/device:")[0]: {s.node_name for s in d.node_stats}
                   for d in md.step_stats.dev_stats}
            assert "while/AssignAdd" in ran[PS] and "while/LoopCond" in ran[WORKER]
            assert sess.run(nested) == 3
            assert sess.run(v) == 30.0 + 2 + 3 + 4  # inner loops of 2, 3 and 4 iterations


def test_gradient_of_a_loop_reading_a_ps_variable_across_processes(worker_target):
    with tf.Graph().as_default():
        with tf.device(PS):
            w = tf.Variable(0.5, name="w")
        with tf.device(WORKER):
            def body(i, h):
                return i + 1, h * w.read_value() + tf.cast(i + 1, tf.float32)

            h = tf.while_loop(lambda i, h: i < 3, body, [tf.constant(0), tf.constant(0.0)])[1]
            loss = tf.square(h - 2.0)
            grad = tf.gradients(loss, w)[0]
        config = tf.ConfigProto(operation_timeout_in_ms=60_000)
        with tf.Session(worker_target, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            # h = (1 * w + 2) * w + 3; dloss/dw = 2 (h - 2) (2 w + 2).
            wv = 0.5
            hv = (1.0 * wv + 2.0) * wv + 3.0
            assert sess.run(grad) == pytest.approx(2 * (hv - 2.0) * (2 * wv + 2.0), rel=1e-5)


def test_ps_process_killed_during_a_loop_fails_the_step_without_hanging():
    """The ps dies while a loop spanning both processes runs: the step fails with an
    error (the worker's per-iteration pulls from the ps fail) well before its timeout."""
    jobs = {"ps": [f"127.0.0.1:{pick_unused_port()}"],
            "worker": [f"127.0.0.1:{pick_unused_port()}"]}
    spec = spec_string(jobs)
    servers = [ServerProcess(spec, "ps", 0), ServerProcess(spec, "worker", 0)]
    try:
        for s in servers:
            s.wait_ready(60.0)
        with tf.Graph().as_default():
            with tf.device(PS):
                v = tf.Variable(0.0, name="v")
            with tf.device(WORKER):
                r = tf.while_loop(lambda i: i < 10**9, lambda i: i + tf.cast(
                    tf.assign_add(v, 1.0) > -1.0, tf.int32), [tf.constant(0)])
            config = tf.ConfigProto(operation_timeout_in_ms=120_000)
            with tf.Session(f"grpc://{jobs['worker'][0]}", config=config) as sess:
                sess.run(tf.global_variables_initializer())
                timer = threading.Timer(2.0, servers[0].kill)
                timer.start()
                start = time.monotonic()
                with pytest.raises(tf.errors.OpError) as info:
                    sess.run(r)
                timer.join()
                elapsed = time.monotonic() - start
                assert elapsed < 60.0
                assert isinstance(info.value, (tf.errors.UnavailableError, tf.errors.AbortedError))
    finally:
        for s in servers:
            s.kill()
