"""How a multi-partition step ends on its workers: its undo log lives until the master
commits it (with the next call) or rolls it back, never by a clock; a log over the cap fails
the step cleanly; the root error is chosen by structure (errors a cancellation created are
marked so), not by message text."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.distributed.master_session import _Step
from tensorweave.distributed.process_runtime import ProcessRuntime
from tensorweave.framework.cancellation import derived, is_derived
from tensorweave.testing.cluster import create_local_cluster


def _graph(n: int):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(tf.zeros([n]), name="v")
        with tf.device("/job:worker/task:0"):
            p = tf.placeholder(tf.float32, [n])
            doubled = tf.identity(p) * 2.0
        assign_across = v.assign(doubled)  # on the ps, fed from the worker: 2 partitions
        with tf.device("/job:ps/task:0"):
            bump = v.assign_add(tf.ones([n]))
    return g, v, p, assign_across, bump


@pytest.fixture
def small_cap_cluster():
    runtime = ProcessRuntime(undo_log_cap_bytes=6000)
    workers, ps = create_local_cluster(1, 1, runtime=runtime)
    yield workers[0], ps[0], runtime
    for s in workers + ps:
        s.stop()


def test_undo_log_lives_until_the_master_ends_the_step(small_cap_cluster):
    worker, ps, runtime = small_cap_cluster
    g, v, p, assign_across, bump = _graph(1000)  # 4000 bytes of old values per step
    with tf.Session(worker.target, graph=g, runtime=runtime) as sess:
        sess.run(v.initializer)
        sess.run(assign_across.op, {p: np.ones(1000, np.float32)})
        assert len(ps.worker._undo) == 1  # the master has not told the ps yet
        # The next step to the ps carries the commit: the first log goes, its own stays.
        sess.run(assign_across.op, {p: np.full(1000, 2.0, np.float32)})
        assert len(ps.worker._undo) == 1
        sess.run(bump.op)  # one partition: commits, keeps nothing
        assert len(ps.worker._undo) == 0
        np.testing.assert_array_equal(sess.run(v), np.full(1000, 5.0, np.float32))


def test_a_log_over_the_cap_fails_the_step_cleanly(small_cap_cluster):
    worker, ps, runtime = small_cap_cluster
    g, v, p, assign_across, bump = _graph(2000)  # 8000 bytes > the 6000-byte cap
    with tf.Session(worker.target, graph=g, runtime=runtime) as sess:
        sess.run(v.initializer)
        sess.run(bump.op)
        with pytest.raises(errors.ResourceExhaustedError, match="undo log"):
            sess.run(assign_across.op, {p: np.ones(2000, np.float32)})
        np.testing.assert_array_equal(sess.run(v), np.ones(2000, np.float32))  # rolled back
        assert len(ps.worker._undo) == 0


def test_root_error_skips_errors_derived_from_the_cancellation():
    step = _Step(3)
    part = type("P", (), {})
    first, second, third = part(), part(), part()
    first.task, second.task, third.task = "a", "b", "c"
    aborted = derived(errors.AbortedError(None, None, "Step 7 was aborted by the master"))
    root = errors.InvalidArgumentError(None, None, "bad targets")
    step.done_fn(first)(None, aborted)  # reported first, yet only a consequence
    step.done_fn(second)(None, root)
    step.done_fn(third)(None, errors.CancelledError(None, None, "waiting"))
    assert step.root_error() is root
    # An error whose message merely mentions cancelling is not derived.
    text_only = errors.UnknownError(None, None, "user op says: was aborted by the master")
    assert not is_derived(text_only)
    wrapped = errors.UnavailableError(None, None, "peer gone")
    wrapped.__cause__ = aborted
    assert is_derived(wrapped)
