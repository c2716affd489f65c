"""`tf.train.CheckpointSaverHook` and `tf.train.CheckpointSaverListener`.

Follows TF 1.x `tensorflow/python/training/basic_session_run_hooks.py`. The hook saves when
a session is created (the state at the current global step: 0 on a fresh start, the
restored step after a recovery), then whenever its `SecondOrStepTimer` fires on the
re-read global step, and once more in `end()` unless that step was just saved.

In a cluster the save ops run where the `Saver` placed them (a sharded saver, the
`Scaffold` default, writes one shard per variable device), so `checkpoint_dir` must be
visible to those tasks; the `checkpoint` state file is written by this process.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.ops.variables import GraphKeys
from tensorweave.protos.event_pb2 import SessionLog
from tensorweave.training.hook_timers import SecondOrStepTimer, require_global_step_read
from tensorweave.training.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from tensorweave.training.summary_io import FileWriterCache

_log = logging.getLogger(__name__)


class CheckpointSaverListener:
    """Callbacks around the saves of a `CheckpointSaverHook`.

    Follows `tf.train.CheckpointSaverListener`; `after_save` returning True requests a stop
    of the training.
    """

    def begin(self) -> None:
        """Called from the hook's `begin()`; may add ops to the graph."""

    def before_save(self, session: Any, global_step_value: int) -> None:
        """Called before each save."""

    def after_save(self, session: Any, global_step_value: int) -> bool | None:
        """Called after each save; return True to stop training."""
        return None

    def end(self, session: Any, global_step_value: int) -> None:
        """Called from the hook's `end()`, after its last save."""


class CheckpointSaverHook(SessionRunHook):
    """Saves checkpoints at session creation, every N seconds or steps, and at the end.

    Follows `tf.train.CheckpointSaverHook`. Files: `<checkpoint_dir>/graph.pbtxt`, the
    checkpoints `<checkpoint_basename>-<step>`, and graph, meta-graph and CHECKPOINT
    session-log events in the directory's shared `FileWriter`.

    Args:
      checkpoint_dir: directory of the checkpoints.
      save_secs: save at most every this many seconds.
      save_steps: save every this many global steps.
      saver: the `Saver`; default: the scaffold's, else the single `SAVERS` item.
      checkpoint_basename: checkpoint file prefix inside `checkpoint_dir`.
      scaffold: a `Scaffold` whose saver is used.
      listeners: `CheckpointSaverListener`s called around each save.

    Raises:
      ValueError: if both `saver` and `scaffold` are given, or neither or both of
        `save_secs` and `save_steps`.
      RuntimeError: in `begin()` without a global step; when saving without a saver ("No
        items in collection savers") or with several ("More than one item in collection
        savers").
    """

    def __init__(
        self,
        checkpoint_dir: str,
        save_secs: float | None = None,
        save_steps: int | None = None,
        saver: Any = None,
        checkpoint_basename: str = "model.ckpt",
        scaffold: Any = None,
        listeners: list[CheckpointSaverListener] | None = None,
    ):
        _log.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = os.fspath(checkpoint_dir)
        self._save_path = os.path.join(self._checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._steps_per_run = 1

    def _set_steps_per_run(self, steps_per_run: int) -> None:
        self._steps_per_run = steps_per_run

    def begin(self) -> None:
        """Opens the directory's `FileWriter` and finds the global step."""
        self._summary_writer = FileWriterCache.get(self._checkpoint_dir)
        self._global_step_tensor = require_global_step_read("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Writes the graph and meta graph, and saves the state at the current step."""
        from tensorweave.framework.graph_io import write_graph
        from tensorweave.training import meta_graph

        global_step = int(session.run(self._global_step_tensor))
        # Written here rather than in begin(): other hooks may add ops in their begin().
        graph = session.graph
        write_graph(graph.as_graph_def(add_shapes=True), self._checkpoint_dir, "graph.pbtxt")
        saver = self._get_saver()
        meta_graph_def = meta_graph.create_meta_graph_def(
            graph_def=graph.as_graph_def(add_shapes=True),
            saver_def=saver.saver_def,
            graph=graph,
        )
        self._summary_writer.add_graph(graph)
        self._summary_writer.add_meta_graph(meta_graph_def)
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        """Fetches the global step."""
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Saves if the timer fires on the re-read global step."""
        stale_global_step = run_values.results
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session: Any) -> None:
        """Saves the last step unless it was just saved."""
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _save(self, session: Any, step: int) -> bool:
        """Saves at `step`; returns whether a listener asked to stop."""
        _log.info("Saving checkpoints for %d into %s.", step, self._save_path)
        for listener in self._listeners:
            listener.before_save(session, step)
        self._get_saver().save(session, self._save_path, global_step=step)
        self._summary_writer.add_session_log(
            SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step
        )
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                _log.info(
                    "A CheckpointSaverListener requested that training be stopped. listener: %s",
                    listener,
                )
                should_stop = True
        return should_stop

    def _get_saver(self) -> Any:
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = graph_mod.get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(
                f"No items in collection {GraphKeys.SAVERS}. Please add a saver to the "
                "collection or provide a saver or scaffold."
            )
        if len(savers) > 1:
            raise RuntimeError(
                f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which "
                "one to use by passing it to the constructor."
            )
        self._saver = savers[0]
        return self._saver


__all__ = ["CheckpointSaverHook", "CheckpointSaverListener"]
