"""BoundedStalenessOptimizer on an in-process gRPC cluster: two workers in threads, one
of them slow (it steps only when the test releases it). The step clock, read through an
observer session, shows how far the fast worker gets; every wait is bounded."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import staleness_kernels  # noqa: F401  (registers the kernels)
from tensorweave.ops.staleness_ops import StepClock
from tensorweave.testing.cluster import create_local_cluster
from tensorweave.testing.threads import wait_until
from tensorweave.training import training_util
from tensorweave.training.bounded_staleness import BoundedStalenessOptimizer
from tensorweave.training.gradient_descent import GradientDescentOptimizer
from tensorweave.training.monitored_session import MonitoredTrainingSession
from tensorweave.training.session_run_hook import SessionRunArgs, SessionRunHook
from tensorweave.training.summary_io import FileWriterCache

WAIT_S = 30.0  # bound of every wait for another thread's progress
FAST, SLOW = 0, 1

# Non-chief workers poll for the chief's initialization this often (TF: every 30 s).
POLL_S = 0.05


@pytest.fixture
def cluster():
    workers, ps = create_local_cluster(num_workers=2, num_ps=1)
    yield workers
    for server in workers + ps:
        server.stop()
    FileWriterCache.clear()


class _StepTimeout(SessionRunHook):
    def __init__(self, timeout_in_ms):
        self._options = tf.RunOptions(timeout_in_ms=timeout_in_ms)

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, options=self._options)


class _Worker:
    """One worker: its graph (v -= 1 per step) and MonitoredTrainingSession."""

    def __init__(self, target, index, max_staleness, hooks=(), config=None):
        self.graph = tf.Graph()
        with self.graph.as_default():
            with tf.device("/job:ps/task:0"):
                self.global_step = training_util.get_or_create_global_step()
                self.v = tf.Variable(0.0, name="v")
            with tf.device(f"/job:worker/task:{index}"):
                opt = BoundedStalenessOptimizer(
                    GradientDescentOptimizer(1.0),
                    max_staleness,
                    num_workers=2,
                    worker_index=index,
                )
                self.train_op = opt.apply_gradients(
                    [(tf.constant(1.0), self.v)], global_step=self.global_step
                )
            self.session = MonitoredTrainingSession(
                recovery_wait_secs=POLL_S,
                master=target,
                is_chief=index == 0,
                hooks=[opt.make_session_run_hook(), *hooks],
                config=config,
            )

    def run(self, fetches):
        with self.graph.as_default():
            return self.session.run(fetches)

    def step(self):
        return self.run(self.train_op)

    def close(self):
        with self.graph.as_default():
            self.session.close()


class _Observer:
    """A raw session on the shared clock: reads it, and retires workers."""

    def __init__(self, target):
        self.graph = tf.Graph()
        with self.graph.as_default(), tf.device("/job:ps/task:0"):
            clock = StepClock(2, shared_name="bounded_staleness/step_clock")
            self._read = clock.read()
            self._retire = [clock.retire(w) for w in range(2)]
        self.session = tf.Session(target, graph=self.graph)

    def clock(self):
        clocks, retired, waiting = self.session.run(self._read)
        return clocks.tolist(), retired.tolist(), waiting.tolist()

    def retire(self, worker):
        self.session.run(self._retire[worker])

    def wait_until(self, condition, what):
        """Polls the clock (each poll a session run) until `condition(clocks, retired,
        waiting)`; fails after WAIT_S."""
        states = [self.clock()]

        def poll() -> bool:
            if condition(*states[-1]):
                return True
            states.append(self.clock())
            return False

        wait_until(poll, WAIT_S, poll_s=0, what=lambda: f"{what}; clock {states[-1]}")
        return states[-1]


class _Loop(threading.Thread):
    """Runs `steps` steps of a worker; with a `gate`, each step waits for one release."""

    def __init__(self, worker, steps, gate=None, before_step=None):
        super().__init__(daemon=True)
        self.worker, self.steps, self.gate, self.before_step = worker, steps, gate, before_step
        self.returned = 0  # steps whose run returned
        self.step_returned = threading.Semaphore(0)  # released after each step
        self.error = None
        self.stop = threading.Event()

    def run(self):
        try:
            for _ in range(self.steps):
                if self.gate is not None and not self.gate.acquire(timeout=WAIT_S):
                    raise TimeoutError("the slow worker was never released")
                if self.stop.is_set():
                    return
                if self.before_step is not None:
                    self.before_step(self.returned)
                self.worker.step()
                self.returned += 1
                self.step_returned.release()
        except BaseException as e:  # noqa: BLE001  (reported by finish())
            self.error = e

    def finish(self):
        self.join(WAIT_S)
        assert not self.is_alive(), "the worker's loop never ended"
        if self.error is not None:
            raise self.error


def _start(cluster, max_staleness, slow_hooks=(), fast_hooks=()):
    fast = _Worker(cluster[FAST].target, FAST, max_staleness, fast_hooks)  # the chief
    slow = _Worker(cluster[SLOW].target, SLOW, max_staleness, slow_hooks)
    return fast, slow, _Observer(cluster[FAST].target)


@pytest.mark.parametrize("s", [0, 1, 3])
def test_fast_worker_is_held_at_max_staleness(cluster, s):
    fast, slow, observer = _start(cluster, s)
    gate = threading.Semaphore(0)
    fast_loop, slow_loop = _Loop(fast, 100), _Loop(slow, 100, gate=gate)
    fast_loop.start()
    slow_loop.start()
    try:
        for slow_steps in range(3):
            # The fast worker's run of step s + slow_steps has applied its update and
            # ticked (s + 1 ahead), and waits: its started steps are exactly s ahead.
            clocks, _, waiting = observer.wait_until(
                lambda c, r, w, n=slow_steps: c == [n + s + 1, n] and w[FAST],
                f"the fast worker waits {s + 1} ticks ahead of {slow_steps}",
            )
            assert fast_loop.returned == slow_steps + s
            assert not waiting[SLOW] and slow_loop.returned == slow_steps
            gate.release()  # one slow step lets the fast worker do one more
            assert slow_loop.step_returned.acquire(timeout=WAIT_S), "the slow step hung"
        observer.wait_until(
            lambda c, r, w: c == [3 + s + 1, 3] and w[FAST], "the fast worker waits again"
        )
        assert fast.run(fast.global_step) == 3 + (3 + s + 1)
        # The slow worker finishes: its hook retires it and the fast one runs freely.
        fast_loop.stop.set()
        slow_loop.stop.set()
        gate.release()
        slow_loop.finish()
        slow.close()
        fast_loop.finish()
        clocks, retired, waiting = observer.clock()
        assert retired == [False, True] and waiting == [False, False]
        assert clocks[FAST] == fast_loop.returned >= 3 + s + 1
    finally:
        for loop in (fast_loop, slow_loop):
            loop.stop.set()
        for worker in (SLOW, FAST):
            observer.retire(worker)
        fast.close()


@pytest.mark.parametrize("s", [0, 2])
def test_free_running_workers_respect_the_bound(cluster, s):
    """Both workers run 8 steps freely; before each step a worker checks that every
    worker completed at least (its completed steps - s)."""
    fast, slow, observer = _start(cluster, s)
    lock = threading.Lock()
    violations = []

    def check(completed):
        with lock:
            clocks = observer.clock()[0]
        if min(clocks) < completed - s:
            violations.append((completed, clocks))

    loops = [_Loop(w, 8, before_step=check) for w in (fast, slow)]
    for loop in loops:
        loop.start()
    for loop in loops:
        loop.finish()
    assert violations == []
    assert observer.clock()[0] == [8, 8]
    assert fast.run([fast.global_step, fast.v]) == [16, -16.0]
    slow.close()
    fast.close()
    assert observer.clock()[1] == [True, True]


def test_unbounded_never_blocks(cluster):
    fast, slow, observer = _start(cluster, None)
    try:
        for _ in range(10):
            fast.step()
        assert observer.clock() == ([10, 0], [False, False], [False, False])
        slow.step()
        assert fast.run(fast.v) == -11.0
    finally:
        slow.close()
        fast.close()


def test_retiring_a_dead_worker_releases_the_others(cluster):
    fast, slow, observer = _start(cluster, 1)
    fast_loop = _Loop(fast, 5)
    fast_loop.start()
    try:
        observer.wait_until(lambda c, r, w: c == [2, 0] and w[FAST], "the fast worker waits")
        observer.retire(SLOW)  # e.g. the operator declares the slow worker dead
        fast_loop.finish()
        assert fast_loop.returned == 5
        assert observer.clock() == ([5, 0], [False, True], [False, False])
        with pytest.raises(tf.errors.FailedPreconditionError, match="Worker 1 .* is retired"):
            slow.step()
    finally:
        fast_loop.stop.set()
        observer.retire(FAST)
        fast.close()
        slow.close()


@pytest.mark.parametrize("how", ["run_options", "operation_timeout"])
def test_deadline_names_the_clock(cluster, how):
    """A worker held by a slow (or dead) one fails at its step deadline instead of hanging;
    the failed step is undone (update and tick), so retrying later is consistent."""
    timeout_ms = 300
    fast = _Worker(cluster[FAST].target, FAST, 1)
    if how == "run_options":
        slow = _Worker(cluster[SLOW].target, SLOW, 1, hooks=[_StepTimeout(timeout_ms)])
    else:
        config = tf.ConfigProto(operation_timeout_in_ms=timeout_ms)
        slow = _Worker(cluster[SLOW].target, SLOW, 1, config=config)
    observer = _Observer(cluster[FAST].target)
    try:
        # Here worker 1 is the one ahead: worker 0 stops after its first step.
        fast.step()
        slow.step()
        slow.step()
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError) as info:
            slow.step()
        assert timeout_ms / 1000 * 0.8 <= time.monotonic() - start < WAIT_S
        message = info.value.message
        assert "bounded_staleness/step_clock" in message
        if "StepClockWait" in message:  # the wait's own message, unless the executor's won
            assert "worker 1 (clock 3) may run at most 1 step(s) ahead" in message
            assert "waits for worker(s) [0]" in message
        else:
            assert "Timed out waiting for bounded_staleness/step_clock_Wait" in message
        assert observer.clock() == ([1, 2], [False, False], [False, False])
        assert slow.run([slow.global_step, slow.v]) == [3, -3.0]
        fast.step()
        slow.step()  # now within the bound
        assert observer.clock()[0] == [2, 3]
        np.testing.assert_allclose(slow.run(slow.v), -5.0)
    finally:
        slow.close()
        fast.close()
