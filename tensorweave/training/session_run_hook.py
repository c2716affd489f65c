"""`tf.train.SessionRunHook` and the value types passed to and from hooks.

Follows TF 1.x `tensorflow/python/training/session_run_hook.py`. A `MonitoredSession` calls,
in order: `begin()` once before the graph is finalized; `after_create_session(session,
coord)` each time a session is (re)created; then around every `run()`:
`before_run(run_context)` (may return `SessionRunArgs` to add fetches, feeds and options to
that call) and `after_run(run_context, run_values)` (receives the values of the hook's own
fetches); finally `end(session)` when the monitored session closes without an error.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class SessionRunHook:
    """Hook to extend calls to `MonitoredSession.run()` (follows `tf.train.SessionRunHook`).

    Every method is optional; the defaults do nothing.
    """

    def begin(self) -> None:
        """Called once before the session is created.

        The graph may still be changed here, and no longer after this call.
        """

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Called each time a session was created and initialized, also after a recovery.

        The graph is finalized; ops may be run in `session`.

        Args:
          session: the raw `tf.Session` that was created.
          coord: the `tf.train.Coordinator` of the session's threads.
        """

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        """Called before each `run()`.

        Args:
          run_context: a `SessionRunContext` holding the caller's arguments.

        Returns:
          None, or `SessionRunArgs` whose fetches, feeds and options are added to the call.
        """
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Called after each `run()` that did not raise.

        `run_values.results` holds the values of the fetches this hook requested in
        `before_run` (None if it requested none). May call `run_context.request_stop()`.
        """

    def end(self, session: Any) -> None:
        """Called when the monitored session closes without an exception.

        Not called when an error propagates, except `OutOfRangeError` or `StopIteration`
        ending a `with` block, which count as a clean end.
        """


class SessionRunArgs(NamedTuple):
    """What a hook adds to a `run()` call (follows `tf.train.SessionRunArgs`).

    Attributes:
      fetches: anything `Session.run` accepts as fetches (nested lists, dicts...), or None.
      feed_dict: a dict of extra feeds, or None.
      options: a `RunOptions` proto merged into the call's options, or None.
    """

    fetches: Any
    feed_dict: Any = None
    options: Any = None


class SessionRunValues(NamedTuple):
    """What a hook receives after a `run()` (follows `tf.train.SessionRunValues`).

    Attributes:
      results: the values of the hook's `SessionRunArgs.fetches` (same structure), or None.
      options: the merged `RunOptions` the call used.
      run_metadata: the `RunMetadata` of the call.
    """

    results: Any
    options: Any
    run_metadata: Any


class SessionRunContext:
    """The context of one `run()` call, given to `before_run` and `after_run`.

    Follows `tf.train.SessionRunContext`.

    Args:
      original_args: the caller's `SessionRunArgs(fetches, feed_dict)`.
      session: the raw `tf.Session` the call runs in.
    """

    def __init__(self, original_args: SessionRunArgs, session: Any):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs:
        """The caller's arguments, as `SessionRunArgs`."""
        return self._original_args

    @property
    def session(self) -> Any:
        """The raw `tf.Session`; a hook may run extra ops in it."""
        return self._session

    @property
    def stop_requested(self) -> bool:
        """Whether a hook called `request_stop()` during this call."""
        return self._stop_requested

    def request_stop(self) -> None:
        """Asks the monitored session to stop: its `should_stop()` then returns True."""
        self._stop_requested = True


__all__ = ["SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues"]
