"""`tf.train.MonitoredSession`, `SingularMonitoredSession` and `MonitoredTrainingSession`.

Follows TF 1.x `tensorflow/python/training/monitored_session.py`. A monitored session is a
stack of wrappers around a raw `tf.Session`:

    _RecoverableSession            recreates the session on AbortedError/UnavailableError
      _CoordinatedSession          a Coordinator and the QUEUE_RUNNERS threads
        _HookedSession             before_run/after_run of the hooks around each run
          tf.Session               from the SessionCreator (chief: init or restore;
                                   worker: wait until ready)

Construction calls every `hook.begin()`, then creates the first session (the creator
finalizes the scaffold, hence the graph), starts the queue runners and calls
`hook.after_create_session`. `close()` (or leaving a `with` block) calls `hook.end` unless
an error is propagating, stops and joins the threads, closes the session, and un-finalizes
the graph unless it was finalized before. Leaving a `with` block by `OutOfRangeError` or
`StopIteration` is a clean end (the error is swallowed).

Deviation: `run_step_fn`'s `step_context.session` is always the current raw session, also
after a recovery replaced it (TF keeps handing out the closed one).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from tensorweave import errors
from tensorweave.framework import graph as graph_mod
from tensorweave.training import basic_session_run_hooks as hooks_lib
from tensorweave.training.scaffold import Scaffold
from tensorweave.training.session_creators import (
    ChiefSessionCreator,
    SessionCreator,
    WorkerSessionCreator,
)
from tensorweave.training.session_wrappers import (  # noqa: F401  (TF's test names)
    _PREEMPTION_ERRORS,
    StepContext,
    _CoordinatedSession,
    _CoordinatedSessionCreator,
    _HookedSession,
    _RecoverableSession,
    _WrappedSession,
)

USE_DEFAULT = object()
"""Marks a `MonitoredTrainingSession` argument left at its default."""


def _resolve_intervals(
    steps: Any, secs: Any, default_steps: Any, default_secs: Any
) -> tuple[Any, Any]:
    """(steps, secs): both USE_DEFAULT gives the defaults, one USE_DEFAULT gives None."""
    if steps is USE_DEFAULT and secs is USE_DEFAULT:
        return default_steps, default_secs
    return (None if steps is USE_DEFAULT else steps), (None if secs is USE_DEFAULT else secs)


def _positive_or_none(value: Any) -> Any:
    return value if value and value > 0 else None


def _chief_saving_hooks(
    scaffold: Scaffold,
    checkpoint_dir: str | None,
    summary_dir: str | None,
    log_step_count_steps: int | None,
    summaries: tuple[Any, Any],
    checkpoints: tuple[Any, Any],
) -> list:
    """The chief's StepCounter, SummarySaver and CheckpointSaver hooks, in that order.

    `summaries` and `checkpoints` are (steps, secs) intervals; a hook is added only for a
    positive interval and a directory.
    """
    hooks: list = []
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            hooks.append(
                hooks_lib.StepCounterHook(
                    output_dir=summary_dir, every_n_steps=log_step_count_steps
                )
            )
        steps, secs = summaries
        if (steps and steps > 0) or (secs and secs > 0):
            hooks.append(
                hooks_lib.SummarySaverHook(
                    scaffold=scaffold, save_steps=steps, save_secs=secs, output_dir=summary_dir
                )
            )
    steps, secs = checkpoints
    if checkpoint_dir and (steps or secs):
        hooks.append(
            hooks_lib.CheckpointSaverHook(
                checkpoint_dir, save_steps=steps, save_secs=secs, scaffold=scaffold
            )
        )
    return hooks


def MonitoredTrainingSession(  # noqa: N802  (TensorFlow's name)
    master: str = "",
    is_chief: bool = True,
    checkpoint_dir: str | None = None,
    scaffold: Scaffold | None = None,
    hooks: list | None = None,
    chief_only_hooks: list | None = None,
    save_checkpoint_secs: Any = USE_DEFAULT,
    save_summaries_steps: Any = USE_DEFAULT,
    save_summaries_secs: Any = USE_DEFAULT,
    config: Any = None,
    stop_grace_period_secs: float = 120,
    log_step_count_steps: int | None = 100,
    max_wait_secs: float = 7200,
    save_checkpoint_steps: Any = USE_DEFAULT,
    summary_dir: str | None = None,
    recovery_wait_secs: float = 30,
) -> MonitoredSession:
    """A `MonitoredSession` set up for training (follows `tf.train.MonitoredTrainingSession`).

    The chief uses a `ChiefSessionCreator` (restore from `checkpoint_dir`, else initialize)
    and the hooks, in order: `chief_only_hooks`; if `summary_dir or checkpoint_dir`, a
    `StepCounterHook(every_n_steps=log_step_count_steps)` (when > 0) and a
    `SummarySaverHook` (when an interval > 0); if `checkpoint_dir`, a `CheckpointSaverHook`
    (when an interval > 0); then `hooks`. Other workers use a `WorkerSessionCreator`
    (wait up to `max_wait_secs` for the chief) and only `hooks`.

    Args:
      master: the session target.
      is_chief: whether this task initializes, restores and saves.
      checkpoint_dir: where checkpoints are restored from and saved to.
      scaffold: the `Scaffold` (default: a new one).
      hooks: `SessionRunHook`s for every task.
      chief_only_hooks: `SessionRunHook`s used only when `is_chief`.
      save_checkpoint_secs: checkpoint interval in seconds; default 600 when neither
        checkpoint interval is given; None or 0 disables. Wins over
        `save_checkpoint_steps` when both are given.
      save_summaries_steps: summary interval in global steps; default 100 when neither
        summary interval is given.
      save_summaries_secs: summary interval in seconds.
      config: `ConfigProto` for the session.
      stop_grace_period_secs: seconds given to threads to stop in `close()`.
      log_step_count_steps: global steps between `global_step/sec` records.
      max_wait_secs: seconds a non-chief waits for the model to be ready.
      save_checkpoint_steps: checkpoint interval in global steps (seconds win if both).
      summary_dir: directory of the summaries (default: `checkpoint_dir`).
      recovery_wait_secs: seconds between a session creator's readiness checks (a
        non-chief polls the chief's initialization this often; tensorweave extension,
        TensorFlow fixes it at 30).

    Returns:
      A `MonitoredSession`.
    """
    save_summaries_steps, save_summaries_secs = _resolve_intervals(
        save_summaries_steps, save_summaries_secs, 100, None
    )
    save_checkpoint_steps, save_checkpoint_secs = _resolve_intervals(
        save_checkpoint_steps, save_checkpoint_secs, None, 600
    )
    save_checkpoint_secs = _positive_or_none(save_checkpoint_secs)
    save_checkpoint_steps = _positive_or_none(save_checkpoint_steps)
    if save_checkpoint_secs is not None:
        save_checkpoint_steps = None  # documented: seconds win (TF's timer raises instead)
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(
            scaffold=scaffold, master=master, config=config, max_wait_secs=max_wait_secs,
            recovery_wait_secs=recovery_wait_secs,
        )
        return MonitoredSession(
            session_creator=creator,
            hooks=hooks or [],
            stop_grace_period_secs=stop_grace_period_secs,
        )
    creator = ChiefSessionCreator(
        scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master, config=config,
        recovery_wait_secs=recovery_wait_secs,
    )
    all_hooks = list(chief_only_hooks or [])
    all_hooks += _chief_saving_hooks(
        scaffold,
        checkpoint_dir,
        summary_dir or checkpoint_dir,
        log_step_count_steps,
        (save_summaries_steps, save_summaries_secs),
        (save_checkpoint_steps, save_checkpoint_secs),
    )
    all_hooks.extend(hooks or [])
    return MonitoredSession(
        session_creator=creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs
    )


class _MonitoredSession:
    """Implementation of `MonitoredSession` and `SingularMonitoredSession`."""

    StepContext = StepContext

    def __init__(
        self,
        session_creator: SessionCreator | None,
        hooks: list | None,
        should_recover: bool,
        stop_grace_period_secs: float = 120,
    ):
        self._graph = graph_mod.get_default_graph()
        self._graph_was_finalized = self._graph.finalized
        self._hooks = list(hooks or [])
        for h in self._hooks:
            h.begin()
        self._coordinated_creator = _CoordinatedSessionCreator(
            session_creator=session_creator or ChiefSessionCreator(),
            hooks=self._hooks,
            stop_grace_period_secs=stop_grace_period_secs,
        )
        try:
            if should_recover:
                self._sess: Any = _RecoverableSession(self._coordinated_creator)
            else:
                self._sess = self._coordinated_creator.create_session()
        except BaseException:
            self._restore_graph_state()
            raise

    @property
    def graph(self) -> Any:
        """The graph launched in this session, or None once closed."""
        sess = self._tf_sess()
        return None if sess is None else sess.graph

    def run(
        self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None
    ) -> Any:
        """Runs `fetches` with the hooks (same arguments and result as `Session.run`).

        Raises:
          RuntimeError: 'Run called even after should_stop requested.'; or from hooks.
          OpError: from the step, except recovered preemptions.
        """
        if self._sess is None:
            raise RuntimeError("Session is already closed.")
        return self._sess.run(
            fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata
        )

    def run_step_fn(self, step_fn: Callable[[StepContext], Any]) -> Any:
        """Calls `step_fn(step_context)` and returns its result.

        Follows `MonitoredSession.run_step_fn`. A preemption inside it recreates the
        session and calls `step_fn` again.

        Raises:
          ValueError: unless `step_fn` takes exactly `step_context` (or `self,
            step_context`).
          StopIteration: if `step_fn` called `step_context.request_stop()`.
        """
        args = _fn_args(step_fn)
        if args not in (("step_context",), ("self", "step_context")):
            raise ValueError(
                "`step_fn` may either have one `step_context` argument, or `self` and "
                f"`step_context` arguments if it's an instance method. Got {args} instead."
            )
        if self._sess is None:
            raise RuntimeError("Session is already closed.")
        return self._sess.run_step_fn(step_fn, self._tf_sess, run_with_hooks=None)

    def should_stop(self) -> bool:
        """True once a hook or the coordinator asked to stop, or after `close()`.

        A preemption error reported by a coordinated thread makes `MonitoredSession` create
        a new session (and answer False); any other reported error makes it answer True,
        and `close()` raises that error.

        Raises:
          Exception: (`SingularMonitoredSession` only) an error a coordinated thread
            reported.
        """
        return self._sess is None or self._sess.should_stop()

    def close(self) -> None:
        """Calls `hook.end`, stops the threads and closes the session.

        Raises:
          RuntimeError: 'Session is already closed.' on a second call.
        """
        self._close_internal()

    def __enter__(self) -> _MonitoredSession:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        if exc_type is not None and issubclass(exc_type, errors.OutOfRangeError | StopIteration):
            exc_type = None
        self._close_internal(exc_type)
        return exc_type is None

    def _close_internal(self, exception_type: Any = None) -> None:
        try:
            if not exception_type:
                for h in self._hooks:
                    h.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                self._restore_graph_state()

    def _restore_graph_state(self) -> None:
        if not self._graph_was_finalized:
            self._graph._unsafe_unfinalize()

    def _is_closed(self) -> bool:
        """Whether the session is closed (for tests)."""
        return self._coordinated_creator.tf_sess is None

    def _tf_sess(self) -> Any:
        """The current raw `tf.Session` (tests and `SingularMonitoredSession`)."""
        return self._coordinated_creator.tf_sess


class MonitoredSession(_MonitoredSession):
    """A session that initializes or restores, runs hooks, and recovers from preemptions.

    Follows `tf.train.MonitoredSession`: after `AbortedError` or `UnavailableError` it
    creates a new session through the creator and retries the call.

    Args:
      session_creator: a `SessionCreator` (default `ChiefSessionCreator()`).
      hooks: `SessionRunHook`s.
      stop_grace_period_secs: seconds given to coordinated threads to stop in `close()`.
    """

    def __init__(
        self,
        session_creator: SessionCreator | None = None,
        hooks: list | None = None,
        stop_grace_period_secs: float = 120,
    ):
        super().__init__(
            session_creator,
            hooks,
            should_recover=True,
            stop_grace_period_secs=stop_grace_period_secs,
        )


class SingularMonitoredSession(_MonitoredSession):
    """A chief `MonitoredSession` without recovery, exposing its raw session.

    Follows `tf.train.SingularMonitoredSession`.

    Args:
      hooks: `SessionRunHook`s.
      scaffold: the `Scaffold` (default: a new one).
      master: the session target.
      config: `ConfigProto` for the session.
      checkpoint_dir: directory whose latest checkpoint is restored.
      stop_grace_period_secs: seconds given to coordinated threads to stop.
      checkpoint_filename_with_path: a checkpoint prefix to restore instead.
    """

    def __init__(
        self,
        hooks: list | None = None,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: Any = None,
        checkpoint_dir: str | None = None,
        stop_grace_period_secs: float = 120,
        checkpoint_filename_with_path: str | None = None,
    ):
        creator = ChiefSessionCreator(
            scaffold=scaffold,
            master=master,
            config=config,
            checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
        )
        super().__init__(
            creator, hooks, should_recover=False, stop_grace_period_secs=stop_grace_period_secs
        )

    def raw_session(self) -> Any:
        """The underlying `tf.Session`."""
        return self._tf_sess()


def _fn_args(fn: Any) -> tuple[str, ...]:
    """The names of `fn`'s positional parameters (a bound method's `self` excluded)."""
    params = inspect.signature(fn).parameters.values()
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return tuple(p.name for p in params if p.kind in kinds)


__all__ = [
    "ChiefSessionCreator",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "Scaffold",
    "SessionCreator",
    "SingularMonitoredSession",
    "USE_DEFAULT",
    "WorkerSessionCreator",
]
