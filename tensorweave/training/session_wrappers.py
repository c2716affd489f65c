"""The session wrappers a `MonitoredSession` is built from.

Follows `_WrappedSession`, `_RecoverableSession`, `_CoordinatedSession`, `_HookedSession`
and `_CoordinatedSessionCreator` of TF 1.x `tensorflow/python/training/monitored_session.py`:

    _RecoverableSession      recreates the session on AbortedError/UnavailableError and
                             retries the call (also when a thread reported the error)
      _CoordinatedSession    a Coordinator and the QUEUE_RUNNERS threads; `close()` stops
                             and joins them
        _HookedSession       hook fetches, feeds and options merged into each `run`
          tf.Session         from the SessionCreator
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from tensorweave import errors
from tensorweave.ops.variables import GraphKeys
from tensorweave.protos.config_pb2 import RunMetadata, RunOptions
from tensorweave.training.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunValues,
)

_log = logging.getLogger("tensorweave.training.monitored_session")

# Errors after which the session is recreated (design.md §5); anything else ends training.
_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)
_PREEMPTION_NOTE = (
    "This may be due to a preemption in a connected worker or parameter server. The current "
    "session will be closed and a new session will be created. This error may also occur "
    "due to a gRPC failure caused by high memory or network bandwidth usage in the "
    "parameter servers. If this error occurs repeatedly, try increasing the number of "
    "parameter servers assigned to the job. Error: %s"
)


class StepContext:
    """What the `step_fn` of `MonitoredSession.run_step_fn` receives.

    Follows `MonitoredSession.StepContext`.

    Args:
      session: the raw `tf.Session`, or a function returning the current one (so that the
        context names the new session after a recovery).
      run_with_hooks_fn: runs fetches with the hooks, like `MonitoredSession.run`.
    """

    def __init__(self, session: Any, run_with_hooks_fn: Callable[..., Any]):
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self) -> Any:
        """The raw session: `run` on it bypasses the hooks."""
        return self._session() if callable(self._session) else self._session

    def run_with_hooks(self, *args: Any, **kwargs: Any) -> Any:
        """Same as `MonitoredSession.run`."""
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self) -> None:
        """Ends `step_fn` and the training loop.

        Raises:
          StopIteration: always; a `with MonitoredSession()` block ends cleanly on it.
        """
        raise StopIteration("step_fn has requested the iterations to stop.")


class _WrappedSession:
    """Delegates to `sess`; adds `should_stop()`; `close()` never raises preemptions.

    Args:
      sess: a `tf.Session` or another `_WrappedSession`.
    """

    def __init__(self, sess: Any):
        self._sess = sess
        self._wrapped_is_stoppable = isinstance(sess, _WrappedSession)

    @property
    def graph(self) -> Any:
        return self._sess.graph

    @property
    def sess_str(self) -> str:
        return self._sess.sess_str

    def should_stop(self) -> bool:
        """True if this or a wrapped session wants to stop, or after `close()`."""
        if self._check_stop():
            return True
        if self._sess:
            return self._wrapped_is_stoppable and self._sess.should_stop()
        return True

    def _check_stop(self) -> bool:
        """This wrapper's own stop condition."""
        return False

    def close(self) -> None:
        if self._sess:
            try:
                self._sess.close()
            except _PREEMPTION_ERRORS as e:
                _log.warning(
                    "An error occurred when attempting to close the session. This "
                    "may be due to a preemption in a connected worker or parameter "
                    "server. Error: %s",
                    e,
                )
            finally:
                self._sess = None

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return self._sess.run(*args, **kwargs)

    def run_step_fn(self, step_fn: Callable, raw_session: Any, run_with_hooks: Any) -> Any:
        # run_with_hooks is None unless a _RecoverableSession above passes its session's run.
        run_with_hooks = run_with_hooks or self.run
        return step_fn(StepContext(raw_session, run_with_hooks))


class _RecoverableSession(_WrappedSession):
    """Recreates its session after a preemption error, and retries the call.

    Sessions come from `sess_creator`; creation itself is retried forever.
    """

    def __init__(self, sess_creator: Any):
        self._sess_creator = sess_creator
        super().__init__(self._create_session())

    def _create_session(self) -> Any:
        while True:
            try:
                return self._sess_creator.create_session()
            except _PREEMPTION_ERRORS as e:
                _log.info(
                    "An error was raised while a session was being created. " + _PREEMPTION_NOTE, e
                )

    def _check_stop(self) -> bool:
        try:
            if self._sess:
                return self._sess._check_stop()
            return True
        except _PREEMPTION_ERRORS as e:
            _log.info(
                "An error was raised while considering whether the session is "
                "complete. " + _PREEMPTION_NOTE,
                e,
            )
            self.close()
            self._sess = self._create_session()
            return False  # a fresh session: the computation goes on
        except Exception:  # noqa: BLE001  (should_stop answers True rather than raising)
            return True

    def run(
        self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None
    ) -> Any:
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                return self._sess.run(
                    fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata
                )
            except _PREEMPTION_ERRORS as e:
                _log.info("An error was raised. " + _PREEMPTION_NOTE, e)
                self.close()
                self._sess = None

    def run_step_fn(self, step_fn: Callable, raw_session: Any, run_with_hooks: Any) -> Any:
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                return self._sess.run_step_fn(step_fn, raw_session, self._sess.run)
            except _PREEMPTION_ERRORS as e:
                _log.info("An error was raised. " + _PREEMPTION_NOTE, e)
                self.close()
                self._sess = None


class _CoordinatedSession(_WrappedSession):
    """Stops together with a `Coordinator` and its threads.

    `should_stop()` re-raises an error a thread reported, and `close()` stops the threads
    and joins them for `stop_grace_period_secs`.
    """

    def __init__(self, sess: Any, coord: Any, stop_grace_period_secs: float = 120):
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self) -> bool:
        # An error a thread reported surfaces here; a preemption lets the recoverable
        # session recreate everything.
        self._coord.raise_requested_exception()
        return self._coord.should_stop()

    def close(self) -> None:
        self._coord.request_stop()
        try:
            self._coord.join(
                stop_grace_period_secs=self._stop_grace_period_secs, ignore_live_threads=True
            )
        finally:
            try:
                super().close()
            except Exception:  # noqa: BLE001  (join() already reported the useful error)
                pass

    def run(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._sess.run(*args, **kwargs)
        except _PREEMPTION_ERRORS:
            raise
        except Exception as original:
            # A preemption a thread reported may be the root cause of this error (e.g. a
            # cancelled step): raise that one instead, so that it is recovered.
            try:
                self._coord.raise_requested_exception()
            except _PREEMPTION_ERRORS:
                raise
            except Exception:  # noqa: BLE001  (any other error: report the original)
                raise original from None
            raise


class _HookedSession(_WrappedSession):
    """Calls the hooks around each `run`.

    Merges their fetches, feeds and options into the call, hands them their results, and
    stops once a hook requested it.
    """

    def __init__(self, sess: Any, hooks: list):
        super().__init__(sess)
        self._hooks = hooks
        self._should_stop = False

    def _check_stop(self) -> bool:
        return self._should_stop

    def run(
        self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None
    ) -> Any:
        """Runs with the hooks.

        Raises:
          RuntimeError: 'Run called even after should_stop requested.'; 'Same tensor is
            fed by two hooks.' or 'Same tensor is fed by a SessionRunHook and user.'
        """
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches: dict[Any, Any] = {"caller": fetches}
        run_context = SessionRunContext(
            original_args=SessionRunArgs(fetches, feed_dict), session=self._sess
        )
        options = options or RunOptions()
        feed_dict, options = self._call_hook_before_run(
            run_context, actual_fetches, feed_dict, options
        )
        run_metadata = run_metadata or RunMetadata()
        outputs = super().run(
            fetches=actual_fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata
        )
        for hook in self._hooks:
            hook.after_run(
                run_context,
                SessionRunValues(
                    results=outputs.get(hook), options=options, run_metadata=run_metadata
                ),
            )
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]

    def _call_hook_before_run(
        self, run_context: SessionRunContext, fetch_dict: dict, user_feed_dict: Any, options: Any
    ) -> tuple[Any, Any]:
        """Adds the hooks' fetches to `fetch_dict`.

        Returns:
          (feeds, options): the caller's and hooks' feeds, and the caller's options (copied
          before merging, so the caller's proto is not changed) with the hooks' merged in.
        """
        hook_feeds: dict[Any, Any] = {}
        merged = None
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                fetch_dict[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(
                    hook_feeds, request.feed_dict, "Same tensor is fed by two hooks."
                )
                hook_feeds.update(request.feed_dict)
            if request.options:
                if merged is None:
                    merged = RunOptions()
                    merged.CopyFrom(options)
                _merge_run_options(merged, request.options)
        options = options if merged is None else merged
        if not hook_feeds:
            return user_feed_dict, options
        if not user_feed_dict:
            return hook_feeds, options
        _raise_if_feeds_intersect(
            user_feed_dict, hook_feeds, "Same tensor is fed by a SessionRunHook and user."
        )
        hook_feeds.update(user_feed_dict)
        return hook_feeds, options


def _raise_if_feeds_intersect(feeds1: dict, feeds2: dict, message: str) -> None:
    intersection = set(feeds1.keys()) & set(feeds2.keys())
    if intersection:
        raise RuntimeError(message + " Conflict(s): " + str(list(intersection)))


def _merge_run_options(options: Any, incoming: Any) -> None:
    """Merges `incoming` into `options`.

    The larger `trace_level`, `timeout_in_ms` and `inter_op_thread_pool`; the OR of the
    booleans; `incoming`'s debug watches appended.
    """
    options.trace_level = max(options.trace_level, incoming.trace_level)
    options.timeout_in_ms = max(options.timeout_in_ms, incoming.timeout_in_ms)
    options.inter_op_thread_pool = max(options.inter_op_thread_pool, incoming.inter_op_thread_pool)
    options.output_partition_graphs = (
        options.output_partition_graphs or incoming.output_partition_graphs
    )
    options.debug_options.debug_tensor_watch_opts.extend(
        incoming.debug_options.debug_tensor_watch_opts
    )
    options.debug_options.reset_disk_byte_usage = (
        options.debug_options.reset_disk_byte_usage or incoming.debug_options.reset_disk_byte_usage
    )
    options.report_tensor_allocations_upon_oom = (
        options.report_tensor_allocations_upon_oom or incoming.report_tensor_allocations_upon_oom
    )


class _CoordinatedSessionCreator:
    """Builds `_CoordinatedSession(_HookedSession(sess))` around each new raw session.

    Each creation gets a fresh `Coordinator` (no exception type counts as a clean stop),
    starts the `QUEUE_RUNNERS` of the graph and calls `hook.after_create_session`. The
    latest raw session and coordinator are kept in `tf_sess` and `coord`.
    """

    def __init__(self, session_creator: Any, hooks: list, stop_grace_period_secs: float):
        self._session_creator = session_creator
        self._hooks = hooks
        self.coord: Any = None
        self.tf_sess: Any = None
        self._stop_grace_period_secs = stop_grace_period_secs

    def create_session(self) -> _CoordinatedSession:
        from tensorweave.training import coordinator

        self.tf_sess = self._session_creator.create_session()
        self.coord = coordinator.Coordinator(clean_stop_exception_types=[])
        coordinated = _CoordinatedSession(
            _HookedSession(self.tf_sess, self._hooks), self.coord, self._stop_grace_period_secs
        )
        try:
            if self.tf_sess.graph.get_collection(GraphKeys.QUEUE_RUNNERS):
                from tensorweave.training import queue_runner

                queue_runner.start_queue_runners(sess=self.tf_sess, coord=self.coord)
            for hook in self._hooks:
                hook.after_create_session(self.tf_sess, self.coord)
        except BaseException:
            # Do not leak the threads and the (possibly remote) session when retried.
            try:
                coordinated.close()
            except Exception:  # noqa: BLE001  (the original error is the one to report)
                pass
            raise
        return coordinated
