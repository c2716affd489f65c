"""`tf.train.ProfilerHook` (follows TF 1.x `basic_session_run_hooks.ProfilerHook`): every
N steps or seconds, trace one step (`RunOptions.FULL_TRACE`) and write its Chrome trace to
`<output_dir>/timeline-<global step>.json` and its run metadata to the summary writer."""

from __future__ import annotations

import logging
import os
from typing import Any

from tensorweave.client.timeline import Timeline
from tensorweave.protos.config_pb2 import RunOptions
from tensorweave.training.hook_timers import SecondOrStepTimer, require_global_step_read
from tensorweave.training.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from tensorweave.training.summary_io import FileWriterCache

_log = logging.getLogger("tensorweave.training")


class ProfilerHook(SessionRunHook):
    """Captures Chrome traces of steps (follows `tf.train.ProfilerHook`).

    Args:
      save_steps: trace every this many global steps.
      save_secs: trace at most every this many seconds.
      output_dir: the directory of the `timeline-<step>.json` files and of the summary
        writer that receives the run metadata.
      show_dataflow: draw arrows between producers and consumers.
      show_memory: add tensor lifetimes and memory counters.

    Raises:
      ValueError: unless exactly one of `save_steps` and `save_secs` is given.
      RuntimeError: in `begin()`, without a global step.
    """

    def __init__(
        self,
        save_steps: int | None = None,
        save_secs: float | None = None,
        output_dir: str = "",
        show_dataflow: bool = True,
        show_memory: bool = False,
    ):
        if (save_steps is None) == (save_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._output_dir = output_dir
        self._file_writer: Any = None
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._next_step: int | None = None
        self._request_summary = False

    def begin(self) -> None:
        """Finds the global step and opens the summary writer."""
        self._next_step = None
        self._global_step_tensor = require_global_step_read("ProfilerHook")
        if self._output_dir:
            self._file_writer = FileWriterCache.get(self._output_dir)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        """Asks for a full trace when the timer fires."""
        self._request_summary = self._next_step is not None and (
            self._timer.should_trigger_for_step(self._next_step)
        )
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if self._request_summary else None
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=options)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Writes the trace of a traced step."""
        stale = int(run_values.results["global_step"])
        if self._next_step is None:
            self._timer.update_last_triggered_step(stale)
        global_step = stale + 1
        if self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
            self._timer.update_last_triggered_step(global_step)
            metadata = run_values.run_metadata
            self._save(global_step, self._output_file.format(global_step), metadata.step_stats)
            if self._file_writer is not None:
                self._file_writer.add_run_metadata(metadata, f"step_{global_step}")
        self._next_step = global_step + 1

    def _save(self, step: int, path: str, step_stats: Any) -> None:
        _log.info("Saving timeline for %d into '%s'.", step, path)
        trace = Timeline(step_stats).generate_chrome_trace_format(
            show_dataflow=self._show_dataflow, show_memory=self._show_memory
        )
        with open(path, "w", encoding="utf-8") as f:
            f.write(trace)


__all__ = ["ProfilerHook"]
