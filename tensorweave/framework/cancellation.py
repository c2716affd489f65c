"""Step cancellation: callbacks run once when a step is cancelled.

Follows TensorFlow's `CancellationManager`.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

from tensorweave import errors


class CancellationManager:
    """Collects callbacks to run when `start_cancel` is called (at most once)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._callbacks: dict[int, Callable[[errors.OpError], None]] = {}
        self._tokens = itertools.count()
        self._error: errors.OpError | None = None

    @property
    def is_cancelled(self) -> bool:
        """True once cancelled."""
        return self._error is not None

    @property
    def error(self) -> errors.OpError | None:
        """The cancellation error, or None."""
        return self._error

    def register(self, callback: Callable[[errors.OpError], None]) -> int | None:
        """Registers `callback(error)` to run when the step is cancelled.

        Args:
          callback: called once with the cancelling `OpError`.

        Returns:
          A token for `deregister`, or None (and `callback` is never called) when the
          step is already cancelled.
        """
        with self._lock:
            if self._error is not None:
                return None
            token = next(self._tokens)
            self._callbacks[token] = callback
            return token

    def deregister(self, token: int | None) -> None:
        """Forgets a callback (no-op for None or an unknown token)."""
        if token is None:
            return
        with self._lock:
            self._callbacks.pop(token, None)

    def start_cancel(self, error: errors.OpError | None = None) -> None:
        """Cancels: records `error` (default CancelledError) and runs every callback once."""
        with self._lock:
            if self._error is not None:
                return
            self._error = error or errors.CancelledError(None, None, "Step was cancelled")
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        for cb in callbacks:
            cb(self._error)

    def check(self) -> None:
        """Raises the cancellation error if cancelled."""
        if self._error is not None:
            raise self._error


def chain(parent: CancellationManager, child: CancellationManager) -> Any:
    """Cancels `child` when `parent` is cancelled; returns the token to deregister."""
    return parent.register(child.start_cancel)


def derived(error: errors.OpError) -> errors.OpError:
    """Marks `error` as created only because a step was cancelled (TensorFlow's "derived"
    status: it says nothing about why the step failed); returns it."""
    error.derived_from_cancellation = True
    return error


def is_derived(error: BaseException | None) -> bool:
    """True when `error`, or an error in its cause chain, was marked by `derived`, or it is
    a `CancelledError` (what waits report when their step is cancelled)."""
    seen = 0
    while error is not None and seen < 16:
        if isinstance(error, errors.CancelledError) or vars(error).get(
                "derived_from_cancellation", False):
            return True
        error, seen = error.__cause__, seen + 1
    return False
