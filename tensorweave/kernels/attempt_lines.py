"""Attempt lines: the blocking-request machinery shared by queues, accumulators, step clocks.

Split out of `queue_resources` (its first user); follows the attempt lines of TensorFlow's
`QueueBase`.

Framework-free: NumPy arrays in, NumPy arrays out, completion through callbacks. A blocking
request is an *attempt* appended to one of a resource's lines (a queue's enqueue or dequeue
line, an accumulator's take line); attempts are served strictly in order (an attempt that
cannot progress holds back the ones behind it), so requests are served first come, first
served, as in TensorFlow.

Every attempt completes exactly once through `done(outputs)` / `done(error=e)`: when it is
satisfied, when the resource is closed, when its step is cancelled (the
`CancellationManager` callback), when its `timeout_ms` passes, or when the resource is
deleted. Cancellation removes the attempt *before* it consumes anything: what a partially
served attempt holds is given back (each resource's `_give_back`).
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.kernels.registry import invalid

# Results of one try of an attempt (TensorFlow's RunResult).
NO_PROGRESS, PROGRESS, COMPLETE = 0, 1, 2

Done = Callable[..., None]


def _as_op_error(e: Exception) -> errors.OpError:
    if isinstance(e, errors.OpError):
        return e
    if isinstance(e, ValueError | TypeError | IndexError):
        return invalid(f"{type(e).__name__}: {e}")
    return errors.InternalError(None, None, f"{type(e).__name__}: {e}")


class Attempt:
    """One blocked request: how to try it, and how to report its end."""

    __slots__ = (
        "run",
        "done",
        "requested",
        "taken",
        "result",
        "error",
        "finished",
        "cm",
        "token",
        "timer",
        "what",
    )

    def __init__(self, run: Callable[[Attempt], int], done: Done, requested: int, what: str):
        self.run = run
        self.done = done
        self.requested = requested
        self.taken: list[tuple[np.ndarray, ...]] = []
        self.result: Any = None
        self.error: errors.OpError | None = None
        self.finished = False
        self.cm: Any = None
        self.token: Any = None
        self.timer: threading.Timer | None = None
        self.what = what

    def finish(self) -> None:
        """Stops the timer, forgets the cancellation callback and reports (outside locks)."""
        if self.timer is not None:
            self.timer.cancel()
        if self.cm is not None:
            self.cm.deregister(self.token)
        if self.error is not None:
            self.done(error=self.error)
        else:
            self.done(self.result)


class AttemptLines:
    """Lines of attempts with cancellation, timeouts and deletion (queues, accumulators)."""

    kind = "Resource"

    def __init__(self, name: str):
        self.name = name
        self._lock = threading.Lock()
        self._lines: tuple[collections.deque[Attempt], ...] = ()
        self._deleted = False

    def _try_line(self, line: collections.deque[Attempt], finished: list[Attempt]) -> bool:
        progress = False
        while line:
            attempt = line[0]
            try:
                state = attempt.run(attempt)
            except Exception as e:  # noqa: BLE001  (fail this request, keep serving others)
                self._give_back(attempt)
                attempt.error = _as_op_error(e)
                state = COMPLETE
            if state == NO_PROGRESS:
                break
            progress = True
            if state == PROGRESS:
                break
            line.popleft()
            attempt.finished = True
            finished.append(attempt)
        return progress

    def _flush(self) -> None:
        """Serves every line until none can progress, then reports the finished attempts."""
        finished: list[Attempt] = []
        with self._lock:
            changed = True
            while changed:
                changed = False
                for line in self._lines:
                    changed = self._try_line(line, finished) or changed
        for attempt in finished:
            attempt.finish()

    def _add(
        self, line: collections.deque[Attempt], attempt: Attempt, cm: Any, timeout_s: float | None
    ) -> None:
        """Appends `attempt` to `line` (registered with `cm`) and serves the lines.

        `timeout_s` starts a timer once the attempt is found blocked.
        """
        with self._lock:
            if self._deleted:
                attempt.error = self._deleted_error()
            elif cm is not None:
                token = cm.register(lambda err: self._abandon(line, attempt, err))
                if token is None:
                    attempt.error = cm.error or errors.CancelledError(
                        None, None, f"{attempt.what} operation was cancelled"
                    )
                else:
                    attempt.cm, attempt.token = cm, token
            if attempt.error is None:
                line.append(attempt)
        if attempt.error is not None:
            attempt.done(error=attempt.error)
            return
        self._flush()
        if timeout_s is not None:
            self._start_timer(line, attempt, timeout_s)

    def _start_timer(
        self, line: collections.deque[Attempt], attempt: Attempt, timeout_s: float
    ) -> None:
        error = errors.DeadlineExceededError(
            None,
            None,
            f"Timed out after {timeout_s * 1000:.0f} ms waiting for the "
            f"{attempt.what.lower()} on {self.kind} '{self.name}' (timeout_ms)",
        )
        with self._lock:
            if attempt.finished:
                return
            attempt.timer = threading.Timer(timeout_s, self._abandon, (line, attempt, error))
            attempt.timer.daemon = True
            attempt.timer.start()

    def _abandon(
        self, line: collections.deque[Attempt], attempt: Attempt, error: errors.OpError
    ) -> None:
        """Ends a pending attempt with `error`, returning what it holds (cancel, timeout)."""
        with self._lock:
            if attempt.finished:
                return
            attempt.finished = True
            attempt.error = error
            self._give_back(attempt)
            try:
                line.remove(attempt)
            except ValueError:
                pass
        attempt.finish()
        self._flush()

    def _give_back(self, attempt: Attempt) -> None:
        """Returns what a partially served attempt holds (under the lock)."""

    def _deleted_error(self) -> errors.OpError:
        return errors.AbortedError(
            None, None, f"{self.kind} '{self.name}' was deleted (its container was reset)"
        )

    def close_on_delete(self) -> None:
        """Called when the resource manager drops this resource (`Session.reset`).

        Every pending attempt fails with AbortedError, and so do later ones.
        """
        with self._lock:
            self._deleted = True
            pending = [a for line in self._lines for a in line]
            for line in self._lines:
                line.clear()
            for attempt in pending:
                attempt.finished = True
                attempt.error = self._deleted_error()
                self._give_back(attempt)
        for attempt in pending:
            attempt.finish()

    def pending(self, line_index: int) -> int:
        """The number of attempts waiting in a line (for tests and diagnostics)."""
        with self._lock:
            return len(self._lines[line_index])
