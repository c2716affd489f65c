"""Session factories for `MonitoredSession`: chief (init or restore) and workers (wait).

Follows `SessionCreator`, `ChiefSessionCreator` and `WorkerSessionCreator` of TF 1.x
`tensorflow/python/training/monitored_session.py`. Both creators finalize their `Scaffold`
(and so the default graph) on first use and build a `SessionManager` from its ops.
"""

from __future__ import annotations

import abc
from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.training.scaffold import Scaffold
from tensorweave.training.session_manager import SessionManager


class SessionCreator(abc.ABC):
    """A factory of `tf.Session`s (follows `tf.train.SessionCreator`)."""

    @abc.abstractmethod
    def create_session(self) -> Any:
        """A new, ready session."""
        raise NotImplementedError(f"create_session is not implemented for {self}.")


class _ScaffoldedCreator(SessionCreator):
    """A creator whose session manager is built from a finalized scaffold."""

    # tensorweave option, set by `ChiefSessionCreator` (see `SessionManager`).
    _restore_over_ready_model = False

    def __init__(self, scaffold: Scaffold | None, master: str, config: Any,
                 recovery_wait_secs: float):
        self._scaffold = scaffold or Scaffold()
        self._session_manager: SessionManager | None = None
        self._master = master
        self._config = config
        self._recovery_wait_secs = recovery_wait_secs

    def _get_session_manager(self) -> SessionManager:
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op,
                local_init_feed_dict=self._scaffold.local_init_feed_dict,
                ready_op=self._scaffold.ready_op,
                ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=graph_mod.get_default_graph(),
                recovery_wait_secs=self._recovery_wait_secs,
                restore_over_ready_model=self._restore_over_ready_model,
            )
        return self._session_manager


class ChiefSessionCreator(_ScaffoldedCreator):
    """Creates sessions for the chief: restore the latest checkpoint, else initialize.

    Follows `tf.train.ChiefSessionCreator`.

    Args:
      scaffold: the `Scaffold` (default: a new one).
      master: the session target (`""` for in-process, `grpc://host:port`).
      config: `ConfigProto` for the session.
      checkpoint_dir: directory whose latest checkpoint is restored, if any.
      checkpoint_filename_with_path: a checkpoint prefix to restore instead.
      recovery_wait_secs: seconds between two readiness checks of the session manager
        (tensorweave extension; TensorFlow fixes it at `SessionManager`'s default, 30).
      restore_over_ready_model: tensorweave option (see `SessionManager`): True restores
        even when the cluster still holds an initialized model (TensorFlow's behaviour).
    """

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
        recovery_wait_secs: float = 30,
        restore_over_ready_model: bool = False,
    ):
        super().__init__(scaffold, master, config, recovery_wait_secs)
        self._restore_over_ready_model = restore_over_ready_model
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self) -> Any:
        """Finalizes the scaffold and returns `SessionManager.prepare_session(...)`.

        Raises:
          RuntimeError/ValueError/OpError: as `SessionManager.prepare_session`.
        """
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master,
            saver=self._scaffold.saver,
            checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config,
            init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict,
            init_fn=self._scaffold.init_fn,
        )


class WorkerSessionCreator(_ScaffoldedCreator):
    """Creates sessions for non-chief workers: wait until the chief made the model ready.

    Follows `tf.train.WorkerSessionCreator`; each session also runs the local init op.

    Args:
      scaffold: the `Scaffold` (default: a new one).
      master: the session target.
      config: `ConfigProto` for the session.
      max_wait_secs: how long to wait for the model to become ready (seconds).
      recovery_wait_secs: seconds between two checks whether the chief made the model
        ready (tensorweave extension; TensorFlow fixes it at 30).
    """

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: Any = None,
        max_wait_secs: float = 30 * 60,
        recovery_wait_secs: float = 30,
    ):
        super().__init__(scaffold, master, config, recovery_wait_secs)
        self._max_wait_secs = max_wait_secs

    def create_session(self) -> Any:
        """Finalizes the scaffold and returns `SessionManager.wait_for_session(...)`.

        Raises:
          DeadlineExceededError: if the model is not ready within `max_wait_secs`.
        """
        self._scaffold.finalize()
        return self._get_session_manager().wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs
        )


__all__ = ["ChiefSessionCreator", "SessionCreator", "WorkerSessionCreator"]
