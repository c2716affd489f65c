"""`tf.train.SessionManager`: create sessions that are initialized, restored or ready.

Follows TF 1.x `tensorflow/python/training/session_manager.py`. The chief calls
`prepare_session` (restore the latest checkpoint, else run the init op / init fn; then the
local init op; then check `ready_op`). Other workers call `wait_for_session`, which polls a
fresh session every `recovery_wait_secs` until the model is ready (that is polling an
external condition, the chief's progress, with a bounded interval).

Readiness: `ready_op` (usually `report_uninitialized_variables()`) must return an empty 1-D
tensor (or None, or any int32 tensor, for backward compatibility); otherwise its strings
name what is missing.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import graph as graph_mod
from tensorweave.training import checkpoint_management

_log = logging.getLogger(__name__)


def _op_name(op: Any) -> str:
    return "None" if op is None else getattr(op, "name", str(op))


class SessionManager:
    """Restores or initializes models, and waits for them to be ready.

    Follows `tf.train.SessionManager`.

    Args:
      local_init_op: op run after every session creation once `ready_for_local_init_op`
        passes (local variables, tables), or None.
      ready_op: 1-D `string` tensor naming what is not initialized; None skips the check.
      ready_for_local_init_op: same check, gating `local_init_op` (usually on the global
        variables only); None runs `local_init_op` unconditionally.
      graph: the graph the sessions run (default: the default graph).
      recovery_wait_secs: seconds between two readiness (or checkpoint) checks.
      local_init_run_options: `RunOptions` for running `local_init_op`.
      local_init_feed_dict: feeds for running `local_init_op`.
      restore_over_ready_model: tensorweave option. False (the default): a chief whose
        new session on a cluster finds the model already initialized there (the ps kept
        it while the chief restarted: `ready_for_local_init_op`, else `ready_op`, passes)
        neither restores a checkpoint nor runs the init ops, so no training is lost. True
        restores (or initializes) anyway, as TensorFlow does, rewinding the model to the
        last checkpoint.

    Raises:
      ValueError: if `ready_for_local_init_op` is given without `local_init_op`.
    """

    def __init__(
        self,
        local_init_op: Any = None,
        ready_op: Any = None,
        ready_for_local_init_op: Any = None,
        graph: Any = None,
        recovery_wait_secs: float = 30,
        local_init_run_options: Any = None,
        local_init_feed_dict: dict | None = None,
        restore_over_ready_model: bool = False,
    ):
        if graph is None:
            graph = graph_mod.get_default_graph()
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph
        self._recovery_wait_secs = recovery_wait_secs
        self._target: str | None = None
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        self._restore_over_ready_model = restore_over_ready_model
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError(
                "If you pass a ready_for_local_init_op you must also pass a local_init_op , "
                f"ready_for_local_init_op [{ready_for_local_init_op}]"
            )

    # ----------------------------------------------------------------- restore
    def _restore_checkpoint(
        self,
        master: str,
        saver: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        config: Any = None,
    ) -> tuple[Any, bool]:
        """Creates a session on `master` and restores a checkpoint into it if there is one.

        Returns:
          (session, whether a checkpoint was restored).

        Raises:
          ValueError: if both `checkpoint_dir` and `checkpoint_filename_with_path` are given.
        """
        from tensorweave.client.session import Session

        self._target = master
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError(
                "Can not provide both checkpoint_dir and checkpoint_filename_with_path."
            )
        sess = Session(master, graph=self._graph, config=config)
        with self._closing_on_error(sess):
            if self._already_ready(master, sess):
                return sess, True
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        with self._closing_on_error(sess):
            if checkpoint_filename_with_path:
                saver.restore(sess, checkpoint_filename_with_path)
                return sess, True
            ckpt = self._wait_for_checkpoint_state(
                checkpoint_dir, wait_for_checkpoint, max_wait_secs
            )
            if ckpt is None:
                return sess, False
            saver.restore(sess, ckpt.model_checkpoint_path)
            saver.recover_last_checkpoints(list(ckpt.all_model_checkpoint_paths))
            return sess, True

    def _already_ready(self, master: str, sess: Any) -> bool:
        """True when a cluster session finds the global model initialized already (see
        `restore_over_ready_model`); in-process sessions always start empty."""
        op = self._ready_for_local_init_op
        if op is None:
            op = self._ready_op
        if self._restore_over_ready_model or not master or op is None:
            return False
        ready, _ = self._ready(op, sess, "Model not ready")
        if ready:
            _log.info("The model on %s is already initialized: not restoring a checkpoint or "
                      "running the init ops (restore_over_ready_model=False)", master)
        return ready

    def _wait_for_checkpoint_state(
        self, checkpoint_dir: str, wait: bool, max_wait_secs: float
    ) -> Any:
        """The `CheckpointState` of `checkpoint_dir`, or None if there is none.

        With `wait`, polls every `recovery_wait_secs` for up to `max_wait_secs` seconds.
        """
        wait_time = 0.0
        ckpt = checkpoint_management.get_checkpoint_state(checkpoint_dir)
        while not ckpt or not ckpt.model_checkpoint_path:
            if not wait or wait_time >= max_wait_secs:
                return None
            _log.info("Waiting for checkpoint to be available.")
            time.sleep(self._recovery_wait_secs)
            wait_time += self._recovery_wait_secs
            ckpt = checkpoint_management.get_checkpoint_state(checkpoint_dir)
        return ckpt

    # ------------------------------------------------------------------ chief
    def prepare_session(
        self,
        master: str,
        init_op: Any = None,
        saver: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        config: Any = None,
        init_feed_dict: dict | None = None,
        init_fn: Any = None,
    ) -> Any:
        """Creates a session on `master` and makes the model ready.

        Follows `SessionManager.prepare_session`.

        Restores the latest checkpoint of `checkpoint_dir` (or
        `checkpoint_filename_with_path`) with `saver`, waiting for one up to
        `max_wait_secs` if `wait_for_checkpoint`. Without a checkpoint it runs `init_op`
        (fed `init_feed_dict`) and then `init_fn(sess)`. Then it runs `local_init_op` if
        `ready_for_local_init_op` passes, and checks `ready_op`.

        Returns:
          A ready `tf.Session`.

        Raises:
          RuntimeError: "Model is not initialized and no init_op or init_fn or
            local_init_op was given" when nothing can initialize an unrestored model; "Init
            operations did not make model ready for local_init..." or "Init operations did
            not make model ready..." when the checks fail afterwards.
          ValueError: if both checkpoint arguments are given.
          OpError: from the session, the restore or the init ops.
        """
        sess, restored = self._restore_checkpoint(
            master,
            saver,
            checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint,
            max_wait_secs=max_wait_secs,
            config=config,
        )
        with self._closing_on_error(sess):
            if not restored:
                if init_op is None and not init_fn and self._local_init_op is None:
                    raise RuntimeError(
                        "Model is not initialized and no init_op or init_fn or "
                        "local_init_op was given"
                    )
                if init_op is not None:
                    sess.run(init_op, feed_dict=init_feed_dict)
                if init_fn:
                    init_fn(sess)
            ok, msg = self._try_run_local_init_op(sess)
            if not ok:
                raise RuntimeError(
                    "Init operations did not make model ready for local_init.  "
                    f"Init op: {_op_name(init_op)}, init fn: {init_fn}, error: {msg}"
                )
            ready, msg = self._model_ready(sess)
            if not ready:
                raise RuntimeError(
                    "Init operations did not make model ready.  "
                    f"Init op: {_op_name(init_op)}, init fn: {init_fn}, "
                    f"local_init_op: {self._local_init_op}, error: {msg}"
                )
        return sess

    def recover_session(
        self,
        master: str,
        saver: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        config: Any = None,
    ) -> tuple[Any, bool]:
        """Creates a session, restoring the latest checkpoint if possible.

        Follows `SessionManager.recover_session`; `local_init_op` is always tried once.

        Returns:
          (session, True) if a checkpoint was restored and the model is ready, else
          (session, False).

        Raises:
          ValueError: if both checkpoint arguments are given.
          OpError: from the session or the restore.
        """
        sess, restored = self._restore_checkpoint(
            master,
            saver,
            checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint,
            max_wait_secs=max_wait_secs,
            config=config,
        )
        local_init_ok, msg = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        where = checkpoint_dir or checkpoint_filename_with_path
        if not local_init_ok:
            _log.info(
                "Restoring model from %s did not make model ready for local init: %s", where, msg
            )
            return sess, False
        ready, msg = self._model_ready(sess)
        if not ready:
            _log.info("Restoring model from %s did not make model ready: %s", where, msg)
            return sess, False
        _log.info("Restored model from %s", where)
        return sess, True

    # -------------------------------------------------------------- non-chief
    def wait_for_session(
        self, master: str, config: Any = None, max_wait_secs: float = float("Inf")
    ) -> Any:
        """Creates sessions on `master` until the model is ready.

        Follows `SessionManager.wait_for_session`.

        Each attempt creates a session, runs `local_init_op` if `ready_for_local_init_op`
        passes, and returns the session if `ready_op` then passes; otherwise it closes it,
        logs "Waiting for model to be ready..." and sleeps `recovery_wait_secs`.

        Args:
          master: the session target.
          config: `ConfigProto` for the sessions.
          max_wait_secs: give up when less than `recovery_wait_secs` of this many seconds
            would remain after the next sleep (None: wait forever).

        Returns:
          A ready `tf.Session`.

        Raises:
          DeadlineExceededError: "Session was not ready after waiting %d secs."
          OpError: from the session or the ready ops (other than "uninitialized" ones).
        """
        from tensorweave.client.session import Session

        self._target = master
        if max_wait_secs is None:
            max_wait_secs = float("Inf")
        deadline = time.monotonic() + max_wait_secs
        while True:
            sess = Session(master, graph=self._graph, config=config)
            not_ready_msg = None
            local_init_ok, not_ready_local_msg = self._try_run_local_init_op(sess)
            if local_init_ok:
                ready, not_ready_msg = self._model_ready(sess)
                if ready:
                    return sess
            self._safe_close(sess)
            remaining = max(0.0, deadline - time.monotonic())
            if remaining - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None, f"Session was not ready after waiting {int(max_wait_secs)} secs."
                )
            _log.info(
                "Waiting for model to be ready.  Ready_for_local_init_op:  %s, ready: %s",
                not_ready_local_msg,
                not_ready_msg,
            )
            time.sleep(self._recovery_wait_secs)

    # ---------------------------------------------------------------- checks
    @staticmethod
    @contextlib.contextmanager
    def _closing_on_error(sess: Any) -> Iterator[None]:
        """Closes `sess` if the block raises (TF leaks it, and it lingers on a master)."""
        try:
            yield
        except BaseException:
            SessionManager._safe_close(sess)
            raise

    @staticmethod
    def _safe_close(sess: Any) -> None:
        """Closes `sess`, ignoring errors (the session is being discarded)."""
        try:
            sess.close()
        except Exception:  # noqa: BLE001  (a failing close is of no interest here)
            pass

    @staticmethod
    def _ready(op: Any, sess: Any, msg: str) -> tuple[bool, str | None]:
        """Whether `op` reports the model ready.

        Returns:
          (True, None) if `op` is None or returns an empty (or int32) value, else (False,
          reason). A FailedPreconditionError about an uninitialized value is not ready.

        Raises:
          OpError: any other error of running `op`.
        """
        if op is None:
            return True, None
        try:
            value = sess.run(op)
        except errors.FailedPreconditionError as e:
            if "uninitialized" not in str(e):
                _log.warning("%s : error [%s]", msg, e)
                raise
            return False, str(e)
        if value is None or getattr(value, "dtype", None) == np.int32 or np.size(value) == 0:
            return True, None
        names = ", ".join(
            v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in np.ravel(value)
        )
        return False, "Variables not initialized: " + names

    def _model_ready(self, sess: Any) -> tuple[bool, str | None]:
        return self._ready(self._ready_op, sess, "Model not ready")

    def _model_ready_for_local_init(self, sess: Any) -> tuple[bool, str | None]:
        return self._ready(self._ready_for_local_init_op, sess, "Model not ready for local init")

    def _try_run_local_init_op(self, sess: Any) -> tuple[bool, str | None]:
        """Runs `local_init_op` if there is one and the model is ready for it.

        Returns:
          (True, None) if it ran or there is none; (False, reason) otherwise.
        """
        if self._local_init_op is None:
            return True, None
        ready, msg = self._model_ready_for_local_init(sess)
        if not ready:
            return False, msg
        _log.info("Running local_init_op.")
        sess.run(
            self._local_init_op,
            feed_dict=self._local_init_feed_dict,
            options=self._local_init_run_options,
        )
        _log.info("Done running local_init_op.")
        return True, None


__all__ = ["SessionManager"]
