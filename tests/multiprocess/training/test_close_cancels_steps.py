"""Regression test: closing a session whose step spans the client's task
and a remote `tensorweave server` task makes the blocked `run` raise `AbortedError` ("Step
N was aborted by the master") instead of `CancelledError`.

Within one process, and for a step that runs only on the remote task, the run gets
`CancelledError: Step was cancelled by an explicit call to Session::Close()` (as in
TensorFlow). Aborted is a preemption error for `MonitoredSession` (retry with a new
session), so the wrong class matters; it is what the chief's `SyncReplicasOptimizer` queue
runner thread prints at the end of every `examples/trainer.py --sync` run (its `take_grad`
on the ps is cancelled by the close).
"""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port
from tensorweave.testing.processes import ServerProcess, spec_string
from tensorweave.testing.threads import Runner, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]

_WAIT_S = 20.0


@pytest.fixture
def cluster():
    spec = {
        "ps": [f"localhost:{pick_unused_port()}"],
        "worker": [f"localhost:{pick_unused_port()}"],
    }
    with ServerProcess(spec_string(spec), "ps", 0) as ps:  # killed by PID on exit
        ps.wait_ready()
        worker = tf.train.Server(spec, job_name="worker", task_index=0)
        try:
            yield worker
        finally:
            worker.stop()


def _blocked_run_error(worker, fetch_on_worker: bool):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            queue = tf.FIFOQueue(1, tf.float32, shapes=[])
            # The step enqueues a marker right before its dequeue blocks, so the test can
            # see (from a second session) that the step is running on the ps.
            marker = tf.FIFOQueue(1, tf.float32, shapes=[])
            started, marker_size = marker.enqueue(0.0), marker.size()
            with tf.control_dependencies([started]):
                value = queue.dequeue()
        with tf.device("/job:worker/task:0"):
            fetch = tf.identity(value) if fetch_on_worker else value
        config = tf.ConfigProto(operation_timeout_in_ms=int(_WAIT_S * 1000))
        sess = tf.Session(worker.target, config=config)
        with tf.Session(worker.target, config=config) as observer:
            runner = Runner(sess, fetch)
            wait_until(lambda: observer.run(marker_size) == 1, timeout=_WAIT_S)
            sess.close()
            runner.join(_WAIT_S)
        assert runner.error is not None, runner.result
        return runner.error


def test_close_cancels_a_step_on_the_remote_task_only(cluster):
    error = _blocked_run_error(cluster, fetch_on_worker=False)
    assert isinstance(error, tf.errors.CancelledError), repr(error)


def test_close_cancels_a_step_spanning_the_client_task_and_a_remote_task(cluster):
    error = _blocked_run_error(cluster, fetch_on_worker=True)
    assert isinstance(error, tf.errors.CancelledError), repr(error)
