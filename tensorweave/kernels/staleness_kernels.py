"""Kernels of the step-clock ops (`StepClock`, `StepClockWait`, ...). New in tensorweave.

The clock itself (`StepClockResource`) is framework-free like the queue resources and
reuses their attempt lines: one line of pending waits per worker, so a wait that cannot
pass never holds back another worker's wait that can. A wait is woken by the tick, retire
or join that satisfies it (no polling), and ends exactly once: satisfied, cancelled with
its step, timed out, or failed because its worker was retired or the clock was deleted.

Atomic steps: a tick is recorded in the step's undo log, so a step that fails after it
(e.g. its wait reached the deadline) takes the tick back together with its variable updates
and counts as not done, consistently with the executor's rollback.

Deadlines: `StepClockWait` arms its own timer for the earlier of its `timeout_ms` and the
step deadline. It fires a moment (at most 20 ms, 10% of the time left) before the step
deadline, so that its message, which says which workers it waits for, reaches the caller
rather than the executor's generic "Timed out waiting for <node>".
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.kernels.attempt_lines import COMPLETE, NO_PROGRESS, Attempt, AttemptLines
from tensorweave.kernels.registry import AsyncKernel, KernelNode, invalid, register_kernel

_DEADLINE_LEAD_S = 0.02


class StepClockResource(AttemptLines):
    """Per-worker step counters with blocking staleness waits.

    Args:
      name: the resource name used in messages (shared_name, else the node name).
      num_workers: the number of workers counted.
    """

    kind = "StepClock"

    def __init__(self, name: str, num_workers: int):
        super().__init__(name)
        self.num_workers = num_workers
        self.clocks = [0] * num_workers
        self.retired = [False] * num_workers
        self._lines = tuple(collections.deque() for _ in range(num_workers))

    # ------------------------------------------------------------------ helpers
    def _check_worker(self, worker: int) -> int:
        if not 0 <= worker < self.num_workers:
            raise invalid(
                f"Worker {worker} is out of range for StepClock '{self.name}' with "
                f"{self.num_workers} workers"
            )
        return worker

    def _retired_error(self, worker: int) -> errors.OpError:
        return errors.FailedPreconditionError(
            None,
            None,
            f"Worker {worker} of StepClock '{self.name}' is retired; run its join op "
            "(the bounded-staleness hook does when a session is created) to take part again",
        )

    def _min_active(self) -> int | None:
        """The smallest clock of the active workers, or None (under the lock)."""
        active = [c for c, r in zip(self.clocks, self.retired) if not r]
        return min(active) if active else None

    def _line_index(self, line: collections.deque) -> int:
        return next(i for i, candidate in enumerate(self._lines) if candidate is line)

    # ----------------------------------------------------------------- requests
    def tick(self, worker: int) -> int:
        """`clock[worker] += 1`; returns the new value.

        Raises:
          InvalidArgumentError: for a worker out of range.
          FailedPreconditionError: if the worker is retired.
        """
        with self._lock:
            self._check_worker(worker)
            if self.retired[worker]:
                raise self._retired_error(worker)
            self.clocks[worker] += 1
            clock = self.clocks[worker]
        self._flush()
        return clock

    def untick(self, worker: int) -> None:
        """Takes back a tick of `worker` (its step failed and was rolled back)."""
        with self._lock:
            self.clocks[worker] = max(self.clocks[worker] - 1, 0)
        self._flush()

    def wait(
        self,
        worker: int,
        max_staleness: int,
        done: Callable[..., None],
        cm: Any = None,
        timeout_s: float | None = None,
    ) -> None:
        """Completes `done(None)` once `min(active clocks) >= clock[worker] - max_staleness`.

        Completes with FailedPreconditionError if the worker is (or gets) retired,
        DeadlineExceededError after `timeout_s`, the cancellation error of `cm`.

        Raises:
          InvalidArgumentError: for a worker out of range or a negative `max_staleness`.
        """
        self._check_worker(worker)
        if max_staleness < 0:
            raise invalid(f"max_staleness must be >= 0, got {max_staleness}")

        def run(attempt: Attempt) -> int:
            if self.retired[worker]:
                attempt.error = self._retired_error(worker)
                return COMPLETE
            low = self._min_active()
            if low is None or low >= self.clocks[worker] - max_staleness:
                return COMPLETE
            return NO_PROGRESS

        attempt = Attempt(run, done, max_staleness, "Wait")
        self._add(self._lines[worker], attempt, cm, timeout_s)

    def retire(self, worker: int) -> None:
        """Retires `worker`; the waits it held back re-check, its own pending waits fail.

        Raises:
          InvalidArgumentError: for a worker out of range.
        """
        with self._lock:
            self._check_worker(worker)
            self.retired[worker] = True
        self._flush()

    def join(self, worker: int) -> int:
        """Un-retires `worker` at `max(its clock, min of the active clocks)`; its clock.

        A no-op for an active worker.

        Raises:
          InvalidArgumentError: for a worker out of range.
        """
        with self._lock:
            self._check_worker(worker)
            if self.retired[worker]:
                low = self._min_active()
                if low is not None:
                    self.clocks[worker] = max(self.clocks[worker], low)
                self.retired[worker] = False
            clock = self.clocks[worker]
        self._flush()
        return clock

    def snapshot(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`(clocks int64, retired bool, waiting bool)`, one entry per worker."""
        with self._lock:
            return (
                np.array(self.clocks, dtype=np.int64),
                np.array(self.retired, dtype=np.bool_),
                np.array([len(line) > 0 for line in self._lines], dtype=np.bool_),
            )

    # ---------------------------------------------------------------- deadlines
    def _start_timer(self, line: collections.deque, attempt: Attempt, timeout_s: float) -> None:
        with self._lock:
            if attempt.finished:
                return
            attempt.timer = threading.Timer(timeout_s, self._expire, (line, attempt, timeout_s))
            attempt.timer.daemon = True
            attempt.timer.start()

    def _expire(self, line: collections.deque, attempt: Attempt, timeout_s: float) -> None:
        with self._lock:
            worker = self._line_index(line)
            clock, staleness = self.clocks[worker], attempt.requested
            behind = [
                v
                for v, (c, r) in enumerate(zip(self.clocks, self.retired))
                if not r and c < clock - staleness
            ]
            state = f"clocks {self.clocks}, retired {self.retired}"
        error = errors.DeadlineExceededError(
            None,
            None,
            f"Timed out after {timeout_s * 1000:.0f} ms in StepClockWait on StepClock "
            f"'{self.name}': worker {worker} (clock {clock}) may run at most {staleness} "
            f"step(s) ahead of the slowest active worker and waits for worker(s) {behind} "
            f"({state}). A worker that stopped without retiring holds the others until it "
            "is retired.",
        )
        self._abandon(line, attempt, error)


class _TickRecord:
    """The undo-log entry of a tick: rolling its step back takes the tick back.

    Duck-types the `(var, old, new)` entries of `StepContext.undo_log`, which the executor
    (failed step) and the worker (step failed in another partition) roll back by setting
    `var.value = old` under `var.lock` while `var.value is new`.
    """

    TICKED, UNDONE = object(), object()

    def __init__(self, clock: StepClockResource, worker: int):
        self.lock = threading.Lock()
        self._clock = clock
        self._worker = worker
        self._state = self.TICKED

    @property
    def value(self) -> object:
        """`TICKED` until rolled back, then `UNDONE`."""
        return self._state

    @value.setter
    def value(self, state: object) -> None:
        if self._state is self.TICKED and state is self.UNDONE:
            self._clock.untick(self._worker)
        self._state = state


# ------------------------------------------------------------------------ kernels
def _clock(handle: Any) -> StepClockResource:
    if not isinstance(handle, StepClockResource):
        raise invalid(f"Expected a StepClock handle, got {handle!r}")
    return handle


def _scalar(value: Any, what: str) -> int:
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise invalid(f"Argument {what} must be scalar, but had bad shape {list(arr.shape)}")
    return int(arr)


@register_kernel("StepClock")
def _step_clock(node: KernelNode) -> Any:
    container = node.attrs.get("container", "") or ""
    name = node.attrs.get("shared_name") or node.name
    num_workers = int(node.attrs["num_workers"])
    cache: list[Any] = [None, -1, None]  # resource manager, its generation, the clock

    def compute(ctx: Any) -> Any:
        rm = ctx.resource_mgr
        if cache[0] is rm and cache[1] == rm.generation:
            return cache[2]
        generation = rm.generation
        clock = rm.lookup_or_create(container, name, lambda: StepClockResource(name, num_workers))
        if not isinstance(clock, StepClockResource):
            raise invalid(f"Resource {name} exists and is not a StepClock")
        if clock.num_workers != num_workers:
            raise invalid(
                f"Shared StepClock '{name}' has {clock.num_workers} workers but node "
                f"{node.name} requested {num_workers}"
            )
        cache[:] = [rm, generation, clock]
        return clock

    return compute


@register_kernel("StepClockTick")
def _tick(node: KernelNode) -> Any:
    def compute(ctx: Any, handle: Any, worker: Any) -> np.int64:
        clock, index = _clock(handle), _scalar(worker, "worker")
        value = clock.tick(index)
        # A failed step rolls its variable updates back; the tick that counted it goes too.
        ctx.undo_log.append((_TickRecord(clock, index), _TickRecord.UNDONE, _TickRecord.TICKED))
        return np.int64(value)

    return compute


@register_kernel("StepClockRetire")
def _retire(node: KernelNode) -> Any:
    def compute(ctx: Any, handle: Any, worker: Any) -> None:
        _clock(handle).retire(_scalar(worker, "worker"))

    return compute


@register_kernel("StepClockJoin")
def _join(node: KernelNode) -> Any:
    def compute(ctx: Any, handle: Any, worker: Any) -> np.int64:
        return np.int64(_clock(handle).join(_scalar(worker, "worker")))

    return compute


@register_kernel("StepClockRead")
def _read(node: KernelNode) -> Any:
    def compute(ctx: Any, handle: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return _clock(handle).snapshot()

    return compute


class _WaitKernel(AsyncKernel):
    """`StepClockWait`: registers with the step's cancellation and deadline."""

    def __init__(self, node: KernelNode):
        ms = int(node.attrs.get("timeout_ms", -1))
        self.timeout_s = None if ms < 0 else ms / 1000.0

    def start(self, ctx: Any, inputs: list[Any], done: Callable[..., None]) -> None:
        """Starts the wait; argument errors complete `done` at once."""
        try:
            clock = _clock(inputs[0])
            worker = _scalar(inputs[1], "worker")
            staleness = _scalar(inputs[2], "max_staleness")
            clock.wait(worker, staleness, done, ctx.cancellation, self._timeout(ctx))
        except Exception as e:  # noqa: BLE001  (the executor converts it to an OpError)
            done(error=e)

    def _timeout(self, ctx: Any) -> float | None:
        remaining = ctx.remaining_s()
        if remaining is None:
            return self.timeout_s
        remaining = max(remaining, 0.0)
        before_deadline = remaining - min(_DEADLINE_LEAD_S, remaining * 0.1)
        return before_deadline if self.timeout_s is None else min(self.timeout_s, before_deadline)


register_kernel("StepClockWait")(_WaitKernel)
