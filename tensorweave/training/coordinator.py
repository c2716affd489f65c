"""`tf.train.Coordinator` and `tf.train.LooperThread`: stop a group of threads together.

The Coordinator reports the first error of the group (follows TF 1.x
`python/training/coordinator.py`).

Differences from TensorFlow, both deliberate:
* `request_stop(ex)` with an exception *instance* records that exception and its own
  traceback, so it works outside an `except` block (TensorFlow records `sys.exc_info()` and
  reports a ValueError when there is no current exception).
* `join` wakes up as soon as every thread has ended or a stop is requested (TensorFlow polls
  once a second), and the grace period is spent in `Thread.join` rather than in sleeps.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from tensorweave import errors

_log = logging.getLogger("tensorweave.coordinator")
_POLL_S = 0.05  # how often `join` re-checks its threads while no stop is requested

ExcInfo = tuple[type[BaseException], BaseException, Any]


class Coordinator:
    """A coordinator for threads that must stop together (follows `tf.train.Coordinator`).

    Threads loop `while not coord.should_stop(): ...`; any of them may call
    `coord.request_stop(ex)` (or run inside `with coord.stop_on_exception():`) and the
    main thread calls `coord.join(threads)`, which re-raises the first reported exception.

    Args:
      clean_stop_exception_types: exception types that request a stop without being
        reported by `join` (default `(errors.OutOfRangeError,)`: an input queue that ran out
        of data is a normal end of training).
    """

    def __init__(self, clean_stop_exception_types: Iterable[type[BaseException]] | None = None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise: ExcInfo | None = None
        self._joined = False
        self._registered_threads: set[threading.Thread] = set()

    # ----------------------------------------------------------------- stopping
    def _as_exc_info(self, ex: Any) -> ExcInfo | None:
        """`ex` as an exc_info triple, or None when it is absent or a clean stop."""
        if ex is None:
            return None
        if isinstance(ex, tuple):
            if len(ex) != 3 or ex[1] is None:
                value = ValueError(f"ex must be a tuple (type, value, traceback): {ex!r}")
                return (ValueError, value, None)
            info = ex
        elif isinstance(ex, BaseException):
            info = (type(ex), ex, ex.__traceback__)
        else:
            value = ValueError(f"ex must be an exception or an exc_info tuple: {ex!r}")
            return (ValueError, value, None)
        if isinstance(info[1], self._clean_stop_exception_types):
            return None
        return info

    def request_stop(self, ex: Any = None) -> None:
        """Asks every thread to stop; the first non-clean exception reported is kept.

        Args:
          ex: None, an exception, or an exc_info tuple `(type, value, traceback)`.
            Exceptions of `clean_stop_exception_types` count as None.

        Raises:
          The exception `ex` itself, if `join` has already run (it could never be reported
          otherwise).
        """
        with self._lock:
            info = self._as_exc_info(ex)
            if self._joined and info is not None:
                raise info[1].with_traceback(info[2])
            if self._stop_event.is_set():
                return
            if info is not None and self._exc_info_to_raise is None:
                _log.info("Error reported to Coordinator: %s: %s", info[0].__name__, info[1])
                self._exc_info_to_raise = info
            self._stop_event.set()

    def clear_stop(self) -> None:
        """Forgets a stop request and its exception, so the threads may be restarted."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        """True once a stop was requested."""
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self) -> Iterator[None]:
        """Context manager: an exception raised inside requests a stop, and is swallowed.

        `join` reports the exception unless it is a clean stop.
        """
        try:
            yield
        except BaseException as e:  # noqa: BLE001  (every error stops the group, as TF)
            self.request_stop(e)

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        """Blocks until a stop is requested or `timeout` seconds pass; True if stopped."""
        return self._stop_event.wait(timeout)

    def raise_requested_exception(self) -> None:
        """Re-raises the exception given to `request_stop`, if any."""
        with self._lock:
            info = self._exc_info_to_raise
        if info is not None:
            raise info[1].with_traceback(info[2])

    # ------------------------------------------------------------------ joining
    def register_thread(self, thread: threading.Thread) -> None:
        """Adds a thread that `join` waits for even when not passed to it."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(
        self,
        threads: Iterable[threading.Thread] | None = None,
        stop_grace_period_secs: float = 120,
        ignore_live_threads: bool = False,
    ) -> None:
        """Waits for the threads; after a stop request, gives them a grace period to end.

        Args:
          threads: threads to wait for, in addition to the registered ones.
          stop_grace_period_secs: seconds the threads get to end after a stop request.
          ignore_live_threads: only log threads still alive after the grace period.

        Raises:
          The first exception given to `request_stop` (with its traceback), if any.
          RuntimeError: naming the threads still alive after the grace period, unless
            `ignore_live_threads`.
        """
        with self._lock:
            group = list(self._registered_threads.union(threads or ()))
        while not self._stop_event.is_set():
            alive = [t for t in group if t.is_alive()]
            if not alive:
                break
            alive[0].join(_POLL_S)
        deadline = time.monotonic() + max(stop_grace_period_secs, 0.0)
        for t in group:
            t.join(max(deadline - time.monotonic(), 0.0))
        stragglers = [t.name for t in group if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            info = self._exc_info_to_raise
        if info is not None:
            raise info[1].with_traceback(info[2])
        if stragglers:
            message = "Coordinator stopped with threads still running: " + " ".join(stragglers)
            if not ignore_live_threads:
                raise RuntimeError(message)
            _log.info(message)

    @property
    def joined(self) -> bool:
        """True once `join` has returned (until `clear_stop`)."""
        return self._joined


class LooperThread(threading.Thread):
    """A daemon thread calling `run_loop` (or `target`) until the coordinator stops.

    Follows `tf.train.LooperThread`.

    Args:
      coord: the Coordinator; the thread registers itself with it.
      timer_interval_secs: seconds between calls, or None to call back to back.
      target: a callable to run each time (default: the `run_loop` method).
      args: positional arguments of `target`.
      kwargs: keyword arguments of `target`.

    Raises:
      ValueError: if `coord` is not a Coordinator, or `args`/`kwargs` come without
        `target`.
    """

    def __init__(
        self,
        coord: Coordinator,
        timer_interval_secs: float | None,
        target: Callable[..., Any] | None = None,
        args: Any = None,
        kwargs: dict[str, Any] | None = None,
    ):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord!r}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._loop_target = target
        if target is None and (args or kwargs):
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        self._loop_args = tuple(args or ())
        self._loop_kwargs = dict(kwargs or {})
        coord.register_thread(self)

    @staticmethod
    def loop(
        coord: Coordinator,
        timer_interval_secs: float | None,
        target: Callable[..., Any],
        args: Any = None,
        kwargs: dict[str, Any] | None = None,
    ) -> LooperThread:
        """Starts and returns a LooperThread calling `target(*args, **kwargs)`."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def run(self) -> None:
        """Calls `start_loop`, then `run_loop` until a stop, then `stop_loop`.

        An exception requests a stop on the coordinator.
        """
        with self._coord.stop_on_exception():
            self.start_loop()
            interval = self._timer_interval_secs
            if interval is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.monotonic()
                while not self._coord.wait_for_stop(max(next_time - time.monotonic(), 0.0)):
                    next_time += interval
                    self.run_loop()
            self.stop_loop()

    def start_loop(self) -> None:
        """Called once before the first `run_loop`."""

    def stop_loop(self) -> None:
        """Called once after the coordinator stopped."""

    def run_loop(self) -> None:
        """One iteration: calls `target` (override in subclasses without a target)."""
        if self._loop_target is not None:
            self._loop_target(*self._loop_args, **self._loop_kwargs)


__all__ = ["Coordinator", "LooperThread"]
