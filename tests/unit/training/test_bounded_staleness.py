"""Bounded staleness without a cluster: the StepClock resource driven directly (callbacks,
cancellation, timeouts), its ops in one local session, and the optimizer wrapper's API and
graph."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.cancellation import CancellationManager
from tensorweave.kernels import staleness_kernels  # noqa: F401  (registers the kernels)
from tensorweave.kernels.staleness_kernels import StepClockResource
from tensorweave.ops.staleness_ops import StepClock
from tensorweave.training.bounded_staleness import BoundedStalenessOptimizer
from tensorweave.training.gradient_descent import GradientDescentOptimizer

BOUND_S = 10.0  # bound of waits for a timer thread


class _Done:
    """A completion callback recording its single call."""

    def __init__(self):
        self.calls = []
        self.event = threading.Event()

    def __call__(self, outputs=None, error=None):
        self.calls.append((outputs, error))
        self.event.set()

    @property
    def finished(self):
        return bool(self.calls)

    @property
    def error(self):
        assert len(self.calls) == 1, self.calls
        return self.calls[0][1]


def _ancestors(op):
    """Every op `op` depends on, through data and control edges."""
    seen, stack = {}, [op]
    while stack:
        cur = stack.pop()
        for dep in [t.op for t in cur.inputs] + list(cur.control_inputs):
            if dep.name not in seen:
                seen[dep.name] = dep
                stack.append(dep)
    return list(seen.values())


def _ticks(clock, *workers):
    for worker in workers:
        clock.tick(worker)


# ------------------------------------------------------------------ StepClockResource
def test_wait_passes_within_the_bound_and_blocks_beyond():
    clock = StepClockResource("c", 2)
    clock.tick(0)
    ok = _Done()
    clock.wait(0, 1, ok)  # 1 ahead, 1 allowed
    assert ok.finished and ok.error is None
    assert clock.tick(0) == 2
    blocked = _Done()
    clock.wait(0, 1, blocked)
    assert not blocked.finished
    assert clock.snapshot()[2].tolist() == [True, False]
    assert clock.tick(1) == 1  # the slow worker's tick releases it
    assert blocked.finished and blocked.error is None
    assert [a.tolist() for a in clock.snapshot()] == [[2, 1], [False, False], [False, False]]


def test_zero_staleness_is_lock_step():
    clock = StepClockResource("c", 3)
    done = [_Done() for _ in range(3)]
    for w in (0, 1):
        clock.tick(w)
        clock.wait(w, 0, done[w])
    assert not done[0].finished and not done[1].finished
    clock.tick(2)
    clock.wait(2, 0, done[2])
    assert all(d.finished and d.error is None for d in done)


def test_waits_of_different_workers_do_not_queue_behind_each_other():
    clock = StepClockResource("c", 3)
    _ticks(clock, 0, 0, 1)
    far, near = _Done(), _Done()
    clock.wait(0, 0, far)  # needs min >= 2
    clock.wait(1, 0, near)  # needs min >= 1
    clock.tick(2)
    assert near.finished and not far.finished
    _ticks(clock, 1, 2)
    assert far.finished


def test_retire_releases_the_others_and_fails_the_retired_workers_wait():
    clock = StepClockResource("c", 3)
    clock.tick(0)
    clock.tick(2)
    held, own = _Done(), _Done()
    clock.wait(0, 0, held)
    clock.wait(2, 0, own)
    clock.retire(1)  # the slowest worker leaves: the others are level
    assert held.finished and held.error is None
    assert own.finished and own.error is None
    clock.tick(0)
    mine = _Done()
    clock.wait(0, 0, mine)
    assert not mine.finished
    clock.retire(0)
    assert isinstance(mine.error, tf.errors.FailedPreconditionError)
    with pytest.raises(tf.errors.FailedPreconditionError, match="Worker 0 .* is retired"):
        clock.tick(0)
    late = _Done()
    clock.wait(0, 5, late)
    assert isinstance(late.error, tf.errors.FailedPreconditionError)


def test_no_active_worker_never_blocks():
    clock = StepClockResource("c", 2)
    clock.retire(1)
    for _ in range(3):
        clock.tick(0)
    clock.retire(0)
    assert clock.join(0) == 3  # nobody active: it keeps its clock
    done = _Done()
    clock.wait(0, 0, done)
    assert done.finished and done.error is None


def test_join_enters_a_retired_worker_at_the_slowest_active_clock():
    clock = StepClockResource("c", 3)
    for w, n in ((0, 5), (1, 3), (2, 1)):
        for _ in range(n):
            clock.tick(w)
    clock.retire(2)
    assert clock.join(2) == 3
    assert clock.join(1) == 3  # active: unchanged
    assert clock.snapshot()[1].tolist() == [False, False, False]


def test_untick_takes_a_step_back():
    clock = StepClockResource("c", 2)
    _ticks(clock, 0, 0)
    clock.untick(0)
    assert clock.snapshot()[0].tolist() == [1, 0]


def test_cancellation_ends_a_wait_and_leaves_nothing_pending():
    clock = StepClockResource("c", 2)
    clock.tick(0)
    cm = CancellationManager()
    done = _Done()
    clock.wait(0, 0, done, cm)
    cm.start_cancel(tf.errors.CancelledError(None, None, "Session::Close"))
    assert isinstance(done.error, tf.errors.CancelledError)
    assert clock.snapshot()[2].tolist() == [False, False]
    clock.tick(1)
    assert len(done.calls) == 1
    already = _Done()
    clock.wait(0, 0, already, cm)  # a cancelled step never waits
    assert isinstance(already.error, tf.errors.CancelledError)


def test_timeout_names_the_clock_and_the_laggards():
    clock = StepClockResource("bounded_staleness/step_clock", 3)
    _ticks(clock, 0, 0, 2, 2)
    done = _Done()
    clock.wait(0, 1, done, None, 0.05)
    assert done.event.wait(BOUND_S)
    error = done.error
    assert isinstance(error, tf.errors.DeadlineExceededError)
    assert "StepClock 'bounded_staleness/step_clock'" in error.message
    assert "worker 0 (clock 2) may run at most 1 step(s) ahead" in error.message
    assert "waits for worker(s) [1]" in error.message
    assert clock.snapshot()[2].tolist() == [False, False, False]


def test_a_satisfied_wait_arms_no_timer():
    clock = StepClockResource("c", 1)
    done = _Done()
    clock.wait(0, 0, done, None, 0.01)
    assert done.error is None
    assert done.event.wait(0.05) and len(done.calls) == 1


def test_delete_aborts_pending_waits():
    clock = StepClockResource("c", 2)
    clock.tick(0)
    done = _Done()
    clock.wait(0, 0, done)
    clock.close_on_delete()
    assert isinstance(done.error, tf.errors.AbortedError)


def test_argument_errors():
    clock = StepClockResource("c", 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Worker 2 is out of range"):
        clock.tick(2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_staleness must be >= 0"):
        clock.wait(0, -1, _Done())
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        clock.retire(-1)


# ---------------------------------------------------------------- ops, local session
def test_ops_in_one_session():
    with tf.Graph().as_default():
        clock = StepClock(2, shared_name="shared_clock")
        same = StepClock(2, shared_name="shared_clock", name="again")
        clocks, retired, waiting = clock.read()
        assert clocks.shape.as_list() == [2] and waiting.dtype == tf.bool
        tick0, tick1 = clock.tick(0), same.tick(1)
        wait0 = clock.wait(0, 0)
        wait0_timed = clock.wait(0, 0, timeout_ms=50)
        with tf.Session() as sess:
            assert sess.run(tick0) == 1
            with pytest.raises(tf.errors.DeadlineExceededError, match="waits for worker"):
                sess.run(wait0_timed)
            with pytest.raises(tf.errors.DeadlineExceededError, match="step_clock"):
                sess.run(wait0, options=tf.RunOptions(timeout_in_ms=100))
            assert sess.run(tick1) == 1  # the same shared clock
            sess.run(wait0)
            np.testing.assert_array_equal(sess.run(clocks), [1, 1])
            sess.run(clock.retire(1))
            assert sess.run(retired).tolist() == [False, True]
            with pytest.raises(tf.errors.FailedPreconditionError, match="retired"):
                sess.run(tick1)
            assert sess.run(clock.join(1)) == 1


def test_shared_clock_with_another_worker_count_is_refused():
    with tf.Graph().as_default():
        a = StepClock(2, shared_name="clock")
        b = StepClock(3, shared_name="clock")
        with tf.Session() as sess:
            sess.run(a.read())
            with pytest.raises(tf.errors.InvalidArgumentError, match="has 2 workers"):
                sess.run(b.read())


def test_failed_step_takes_its_tick_back():
    """The update is rolled back when the wait times out; so is the tick."""
    with tf.Graph().as_default():
        gstep = tf.train.get_or_create_global_step()
        v = tf.Variable(1.0, name="v")
        ops = []
        for worker in (0, 1):
            opt = BoundedStalenessOptimizer(GradientDescentOptimizer(0.5), 0, 2, worker)
            ops.append(opt.apply_gradients([(tf.constant(1.0), v)], global_step=gstep))
        clocks = opt.step_clock.read()[0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            start = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError, match="step_clock"):
                sess.run(ops[0], options=tf.RunOptions(timeout_in_ms=200))
            assert time.monotonic() - start < BOUND_S
            assert sess.run([gstep, v]) == [0, 1.0]
            assert sess.run(clocks).tolist() == [0, 0]
            sess.run(opt.step_clock.retire(1))  # worker 1 leaves: worker 0 runs alone
            sess.run(ops[0])
            assert sess.run([gstep, v]) == [1, 0.5]
            assert sess.run(clocks).tolist() == [1, 0]


# ------------------------------------------------------------------ optimizer API
def test_constructor_validation():
    sgd = GradientDescentOptimizer(0.1)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="max_staleness must be None or an int >= 0"):
            BoundedStalenessOptimizer(sgd, bad, 2, 0)
    with pytest.raises(ValueError, match="num_workers must be at least 1"):
        BoundedStalenessOptimizer(sgd, 0, 0, 0)
    with pytest.raises(ValueError, match=r"worker_index must be in \[0, 2\)"):
        BoundedStalenessOptimizer(sgd, 0, 2, 2)


def test_hook_and_accessors_need_apply_gradients():
    with tf.Graph().as_default():
        opt = BoundedStalenessOptimizer(GradientDescentOptimizer(0.1), 1, 2, 0)
        hook = opt.make_session_run_hook()
        with pytest.raises(ValueError, match="apply_gradients should be called before"):
            hook.begin()
        for accessor in (lambda: opt.step_clock, opt.get_join_op, opt.get_retire_op):
            with pytest.raises(ValueError, match="should be called after apply_gradients"):
                accessor()
        v = tf.Variable([0.0])
        opt.minimize(v, global_step=tf.train.get_or_create_global_step())
        hook.begin()  # created before minimize: fine


def test_graph_structure():
    with tf.Graph().as_default() as g:
        with tf.device("/job:ps/task:1"):
            gstep = tf.train.get_or_create_global_step()
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="v")
        with tf.device("/job:worker/task:1"):
            opt = BoundedStalenessOptimizer(GradientDescentOptimizer(0.1), 2, 3, 1)
            train_op = opt.minimize(v * v, global_step=gstep)
        assert opt.variables() == [] and opt.get_slot_names() == []
        clock_op = opt.step_clock.handle.op
        assert clock_op.name == "bounded_staleness/step_clock"
        assert clock_op.get_attr("shared_name") == b"bounded_staleness/step_clock"
        assert clock_op.get_attr("num_workers") == 3
        assert clock_op.device == "/job:ps/task:1" == gstep.device
        assert train_op.type == "StepClockWait"
        assert train_op.name == "bounded_staleness/step_clock_Wait"
        assert train_op.device == "/job:ps/task:1"
        # The worker index and staleness constants sit with the clock: no transfer.
        assert {t.op.device for t in train_op.inputs} == {"/job:ps/task:1"}
        (tick,) = [op for op in _ancestors(train_op) if op.type == "StepClockTick"]
        assert {t.op.device for t in tick.inputs} == {tick.device} == {"/job:ps/task:1"}
        assert "GradientDescent/update_v/ApplyGradientDescent" in {
            op.name for op in _ancestors(tick)
        }
        assert "AssignAdd" in {op.type for op in _ancestors(tick)}
        assert opt.get_retire_op().type == "StepClockRetire"
        assert opt.get_join_op().type == "StepClockJoin"
        assert opt.get_retire_op().control_inputs == []
        assert not [op for op in g.get_operations() if op.type == "StepClockRead"]


def test_unbounded_only_counts_steps():
    with tf.Graph().as_default() as g:
        v = tf.Variable(1.0, name="v")
        opt = BoundedStalenessOptimizer(GradientDescentOptimizer(0.1), None, 2, 0)
        train_op = opt.minimize(v * v)  # no global step: the clock sits with `v`
        assert train_op.type == "StepClockTick"
        assert not [op for op in g.get_operations() if op.type == "StepClockWait"]
        clocks = opt.step_clock.read()[0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):  # worker 1 never steps: no wait ever
                sess.run(train_op)
            assert sess.run(clocks).tolist() == [5, 0]
