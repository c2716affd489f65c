"""Thread helpers for tests of blocking ops: poll observable state with a bound, and run a
blocking `sess.run` on a thread (no sleeps standing in for synchronisation)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

_TICK = threading.Event()  # never set: a bounded pause between polls of observable state


def wait_until(
    predicate: Callable[[], Any],
    timeout: float = 10.0,
    poll_s: float = 0.001,
    what: str | Callable[[], str] = "condition",
) -> Any:
    """Polls `predicate` every `poll_s` seconds until it returns a truthy value; returns it.

    Args:
      predicate: called with no arguments; may be a step of work (a session run) whose
        result says whether to stop.
      timeout: seconds before giving up.
      poll_s: pause between calls.
      what: what is awaited, for the failure message (or a function describing the state).

    Raises:
      AssertionError: if it is still false after `timeout` seconds.
    """
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() >= deadline:
            described = what() if callable(what) else what
            raise AssertionError(f"timed out after {timeout} s waiting for {described}")
        _TICK.wait(poll_s)
    return value


class Runner:
    """Runs `sess.run(fetch, **kwargs)` on a thread and keeps its `result` or `error`."""

    def __init__(self, sess: Any, fetch: Any, **kwargs: Any):
        self.result = self.error = None
        self.thread = threading.Thread(target=self._run, args=(sess, fetch, kwargs))
        self.thread.start()

    def _run(self, sess: Any, fetch: Any, kwargs: dict) -> None:
        try:
            self.result = sess.run(fetch, **kwargs)
        except Exception as e:  # noqa: BLE001  (kept for the test to check)
            self.error = e

    def join(self, timeout: float = 10.0) -> Runner:
        """Waits up to `timeout` seconds for the step.

        Raises:
          AssertionError: if the step did not finish in time.
        """
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the step did not finish"
        return self
