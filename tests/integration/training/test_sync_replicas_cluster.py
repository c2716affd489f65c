"""SyncReplicasOptimizer on an in-process gRPC cluster (mirrors TensorFlow's
`sync_replicas_optimizer_test.py`), plus the step deadline of a worker waiting for a token.

Where TensorFlow sleeps until the global step moves, these tests watch the token queue and
the gradient accumulators through probe ops (built before the graph is finalized), each wait
bounded by a deadline.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.cluster import create_local_cluster
from tensorweave.testing.threads import wait_until
from tensorweave.training.gradient_descent import GradientDescentOptimizer
from tensorweave.training.monitored_session import MonitoredTrainingSession
from tensorweave.training.session_run_hook import SessionRunArgs, SessionRunHook
from tensorweave.training.summary_io import FileWriterCache
from tensorweave.training.sync_replicas_optimizer import SyncReplicasOptimizer

WAIT_S = 30.0  # bound of every wait for another thread's progress
# The chief's sync thread blocks in take_grad between steps; closing the chief waits this
# long for it, then cancels it by closing the session (TensorFlow's default is 120 s).
GRACE_S = 0.5

# Non-chief workers poll for the chief's initialization this often (TF: every 30 s).
POLL_S = 0.05


@pytest.fixture
def servers():
    started = []

    def start(num_workers):
        workers, ps = create_local_cluster(num_workers=num_workers, num_ps=2)
        started.extend(workers + ps)
        return workers

    yield start
    for server in started:
        server.stop()
    FileWriterCache.clear()


class _StepTimeout(SessionRunHook):
    """Gives every run a deadline through the RunOptions that MonitoredSession merges."""

    def __init__(self, timeout_in_ms):
        self._options = tf.RunOptions(timeout_in_ms=timeout_in_ms)

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, options=self._options)


class _Worker:
    """One worker's graph, monitored session, train op and probes."""

    def __init__(self, graph, session, train_op, probes):
        self.graph, self.session, self.train_op, self.probes = graph, session, train_op, probes

    def run(self, what):
        with self.graph.as_default():
            return self.session.run(what)

    def step(self):
        return self.run(self.train_op)

    def probe(self, name):
        return self.run(self.probes[name])

    def close(self):
        with self.graph.as_default():
            self.session.close()


def get_workers(
    num_workers, replicas_to_aggregate, workers, num_tokens=None, hooks=None, config=None
):
    """TensorFlow's `get_workers`: each worker's graph and MonitoredTrainingSession.

    `hooks` and `config` are given to the non-chief workers only.
    """
    out = []
    for worker_id in range(num_workers):
        graph = tf.Graph()
        is_chief = worker_id == 0
        with graph.as_default():
            with tf.device("/job:ps/task:0"):
                global_step = tf.Variable(0, name="global_step", trainable=False)
                var_0 = tf.Variable(0.0, name="v0")
            with tf.device("/job:ps/task:1"):
                var_1 = tf.Variable(1.0, name="v1")
                var_sparse = tf.Variable([[3.0], [4.0]], name="v_sparse")
            with tf.device(f"/job:worker/task:{worker_id}"):
                grads_0 = tf.constant(0.1 + worker_id * 0.2)
                grads_1 = tf.constant(0.9 + worker_id * 0.2)
                grads_sparse = tf.IndexedSlices(
                    tf.constant([0.1 + worker_id * 0.2], shape=[1, 1]),
                    tf.constant([1]),
                    tf.constant([2, 1]),
                )
                sgd_opt = GradientDescentOptimizer(2.0)
                sync_rep_opt = SyncReplicasOptimizer(
                    sgd_opt,
                    replicas_to_aggregate=replicas_to_aggregate,
                    total_num_replicas=num_workers,
                )
                train_op = [
                    sync_rep_opt.apply_gradients(
                        zip([grads_0, grads_1, grads_sparse], [var_0, var_1, var_sparse]),
                        global_step=global_step,
                    )
                ]
                sync_replicas_hook = sync_rep_opt.make_session_run_hook(
                    is_chief, num_tokens=num_workers if num_tokens is None else num_tokens
                )
            probes = {
                "tokens": sync_rep_opt._sync_token_queue.size(),
                "accumulated": [a.num_accumulated() for a, _ in sync_rep_opt._accumulator_list],
            }
            session = MonitoredTrainingSession(
                recovery_wait_secs=POLL_S,
                master=workers[worker_id].target,
                is_chief=is_chief,
                hooks=[sync_replicas_hook] + ([] if is_chief else list(hooks or [])),
                config=None if is_chief else config,
                stop_grace_period_secs=GRACE_S,
            )
        out.append(_Worker(graph, session, train_op, probes))
    return out


def _close_all(workers):
    for w in reversed(workers):  # the chief last: its sync thread is the one left blocked
        w.close()


def _tensor(worker, name):
    return worker.graph.get_tensor_by_name(name)


def _wait_until(condition, what):
    """Polls `condition()` (each poll a session run) until true; fails after WAIT_S."""
    wait_until(condition, WAIT_S, poll_s=0, what=what)


class _StepThread(threading.Thread):
    """Runs one step of a worker; keeps its error for the main thread."""

    def __init__(self, worker):
        super().__init__(daemon=True)
        self.worker = worker
        self.error = None

    def run(self):
        try:
            self.worker.step()
        except BaseException as e:  # noqa: BLE001  (reported by finish())
            self.error = e

    def finish(self):
        self.join(WAIT_S)
        assert not self.is_alive(), "the step never finished"
        if self.error is not None:
            raise self.error


def test2Workers(servers):  # noqa: N802  (TensorFlow's test name)
    ws = get_workers(2, 2, servers(2))
    try:
        # The chief initialized every variable.
        v0_g0, v1_g0 = _tensor(ws[0], "v0:0"), _tensor(ws[0], "v1:0")
        local_step_0 = _tensor(ws[0], "sync_rep_local_step:0")
        assert ws[0].run(v0_g0) == 0.0
        assert ws[0].run(v1_g0) == 1.0
        assert ws[0].run(local_step_0) == 0

        # Worker 1 is used to check the variables from now on.
        v0, v1 = _tensor(ws[1], "v0:0"), _tensor(ws[1], "v1:0")
        v_sparse = _tensor(ws[1], "v_sparse:0")
        local_step_1 = _tensor(ws[1], "sync_rep_local_step:0")
        global_step = _tensor(ws[1], "global_step:0")
        assert ws[1].run(global_step) == 0
        assert ws[1].run(local_step_1) == 0
        np.testing.assert_allclose(ws[1].run(v_sparse), [[3.0], [4.0]])
        assert ws[1].probe("tokens") == 2  # the chief's initial tokens

        # The initial tokens let the workers step one after the other once.
        ws[0].step()
        ws[1].step()
        _wait_until(lambda: ws[1].run(global_step) == 1, "the chief applied the update")
        np.testing.assert_allclose(ws[1].run(v0), 0 - (0.1 + 0.3) / 2 * 2.0, rtol=1e-6)
        np.testing.assert_allclose(ws[1].run(v1), 1 - (0.9 + 1.1) / 2 * 2.0, rtol=1e-6)
        np.testing.assert_allclose(
            ws[1].run(v_sparse), [[3.0], [4.0 - (0.1 + 0.3) / 2 * 2.0]], rtol=1e-6
        )
        _wait_until(lambda: ws[1].probe("tokens") == 2, "the update's tokens were enqueued")

        # The initial tokens carried global step 0: the next gradients are stale, dropped
        # once; the local steps become 1.
        assert ws[0].run(local_step_0) == 0
        assert ws[1].run(local_step_1) == 0
        ws[0].step()
        ws[1].step()
        assert ws[1].run(global_step) == 1
        assert ws[0].run(local_step_0) == 1
        assert ws[1].run(local_step_1) == 1
        assert ws[1].probe("accumulated") == [0, 0, 0]  # both stale gradients were dropped
        assert ws[1].probe("tokens") == 0
        np.testing.assert_allclose(ws[1].run(v0), 0 - (0.1 + 0.3) / 2 * 2.0, rtol=1e-6)
        np.testing.assert_allclose(ws[1].run(v1), 1 - (0.9 + 1.1) / 2 * 2.0, rtol=1e-6)

        # No token is left: the two workers must step together.
        threads = [_StepThread(ws[0]), _StepThread(ws[1])]
        for t in threads:
            t.start()
        for t in threads:
            t.finish()
        assert ws[1].run(global_step) == 2
        np.testing.assert_allclose(ws[1].run(v0), 0 - 2 * (0.1 + 0.3) / 2 * 2.0, rtol=1e-6)
        np.testing.assert_allclose(ws[1].run(v1), 1 - 2 * (0.9 + 1.1) / 2 * 2.0, rtol=1e-6)
    finally:
        _close_all(ws)


def test3Workers1Backup(servers):  # noqa: N802  (TensorFlow's test name)
    ws = get_workers(3, 2, servers(3))
    try:
        v0, v1 = _tensor(ws[1], "v0:0"), _tensor(ws[1], "v1:0")
        local_step_1 = _tensor(ws[1], "sync_rep_local_step:0")
        global_step = _tensor(ws[1], "global_step:0")
        assert ws[1].run(global_step) == 0
        assert ws[1].run(local_step_1) == 0

        # Workers 0 and 2 finish first: two gradients are enough for an update.
        ws[0].step()
        ws[2].step()
        _wait_until(lambda: ws[1].run(global_step) == 1, "the chief applied the update")
        np.testing.assert_allclose(ws[1].run(v0), 0 - (0.1 + 0.5) / 2 * 2.0, rtol=1e-6)
        np.testing.assert_allclose(ws[1].run(v1), 1 - (0.9 + 1.3) / 2 * 2.0, rtol=1e-6)

        # Worker 1, the backup, is late: its gradient is stale and dropped.
        ws[1].step()
        assert ws[1].probe("accumulated") == [0, 0, 0]

        # Every local step is still 0: one more round is dropped.
        ws[0].step()
        ws[1].step()
        ws[2].step()
        assert ws[1].run(global_step) == 1
        assert ws[1].run(local_step_1) == 1
        assert ws[1].probe("accumulated") == [0, 0, 0]
        assert ws[1].probe("tokens") == 0

        # Worker 0 alone blocks: its gradients wait in the accumulators, with no token.
        thread_0, thread_1 = _StepThread(ws[0]), _StepThread(ws[1])
        thread_0.start()
        _wait_until(lambda: ws[1].probe("accumulated") == [1, 1, 1], "worker 0's gradients arrived")
        assert ws[1].probe("tokens") == 0
        assert ws[1].run(global_step) == 1
        assert thread_0.is_alive()

        # Worker 1 joins: the update happens and both get a token.
        thread_1.start()
        thread_1.finish()
        thread_0.finish()
        assert ws[1].run(global_step) == 2
        np.testing.assert_allclose(ws[1].run(v0), -0.6 - (0.1 + 0.3) / 2 * 2.0, rtol=1e-6)
        np.testing.assert_allclose(ws[1].run(v1), -1.2 - (0.9 + 1.1) / 2 * 2.0, rtol=1e-6)
    finally:
        _close_all(ws)


@pytest.mark.parametrize("how", ["run_options", "operation_timeout"])
def test_worker_waiting_for_a_token_gets_deadline_exceeded(servers, how):
    """A worker whose gradients cannot make a step fails at its step deadline, naming the
    token queue, instead of hanging; once the other replica arrives, training goes on."""
    timeout_ms = 300
    if how == "run_options":
        kwargs = {"hooks": [_StepTimeout(timeout_ms)]}
    else:
        kwargs = {"config": tf.ConfigProto(operation_timeout_in_ms=timeout_ms)}
    ws = get_workers(2, 2, servers(2), num_tokens=0, **kwargs)
    try:
        global_step = _tensor(ws[1], "global_step:0")
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError, match="sync_token_q_Dequeue"):
            ws[1].step()
        assert timeout_ms / 1000 <= time.monotonic() - start < WAIT_S
        # Its gradients stayed in the accumulators; the chief's completes the step.
        assert ws[1].probe("accumulated") == [1, 1, 1]
        ws[0].step()
        _wait_until(lambda: ws[1].run(global_step) == 1, "the chief applied the update")
        np.testing.assert_allclose(ws[1].run(_tensor(ws[1], "v0:0")), -0.4, rtol=1e-6)
        ws[1].step()  # a stale gradient, and a token: no wait
        assert ws[1].run(_tensor(ws[1], "sync_rep_local_step:0")) == 1
    finally:
        _close_all(ws)
