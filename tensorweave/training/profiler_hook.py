"""`tf.train.ProfilerHook` (follows `basic_session_run_hooks.ProfilerHook`) and
`tf.train.checkpoints_iterator` (follows `checkpoint_utils.checkpoints_iterator`)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from tensorweave import gfile
from tensorweave.client.timeline import Timeline
from tensorweave.protos.config_pb2 import RunOptions
from tensorweave.training import checkpoint_management
from tensorweave.training.hook_timers import SecondOrStepTimer, require_global_step_read
from tensorweave.training.session_run_hook import SessionRunArgs, SessionRunHook
from tensorweave.training.summary_io import FileWriterCache

_log = logging.getLogger(__name__)


class ProfilerHook(SessionRunHook):
    """Traces a step every `save_steps` steps or `save_secs` seconds and writes its Chrome
    trace to `output_dir/timeline-<global step>.json`, and its `RunMetadata` to the
    event file there (tag `step_<global step>`).

    Args:
      save_steps: global steps between traces (exactly one of this and `save_secs`).
      save_secs: seconds between traces.
      output_dir: directory of the traces and events.
      show_dataflow: draw flow arrows between ops.
      show_memory: add memory events.

    Raises:
      ValueError: unless exactly one of `save_steps` and `save_secs` is given.
      RuntimeError: (at `begin`) the graph has no global step.
    """

    def __init__(self, save_steps: int | None = None, save_secs: float | None = None,
                 output_dir: str = "", show_dataflow: bool = True, show_memory: bool = False):
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._output_dir = output_dir
        self._file_writer: Any = None
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._next_step: int | None = None
        self._request_summary = False

    def begin(self) -> None:
        """Finds the global step and the event writer."""
        self._next_step = None
        self._global_step_tensor = require_global_step_read("ProfilerHook")
        self._file_writer = FileWriterCache.get(self._output_dir)

    def before_run(self, run_context: Any) -> SessionRunArgs:
        """Asks for a full trace when the timer is due."""
        self._request_summary = (self._next_step is not None
                                 and self._timer.should_trigger_for_step(self._next_step))
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if self._request_summary else None
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=options)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        """Writes the trace of a traced step."""
        stale_step = int(run_values.results["global_step"])
        if self._next_step is None:
            self._timer.update_last_triggered_step(stale_step)
        step = stale_step + 1
        if self._request_summary:
            step = int(run_context.session.run(self._global_step_tensor))
            self._timer.update_last_triggered_step(step)
            self._save(self._output_file.format(step), run_values.run_metadata.step_stats)
            self._file_writer.add_run_metadata(run_values.run_metadata, f"step_{step}")
        self._next_step = step + 1

    def _save(self, path: str, step_stats: Any) -> None:
        _log.info("Saving timeline for %s into '%s'.", self._next_step, path)
        with gfile.GFile(path, "w") as f:
            f.write(Timeline(step_stats).generate_chrome_trace_format(
                show_dataflow=self._show_dataflow, show_memory=self._show_memory))


def wait_for_new_checkpoint(checkpoint_dir: str, last_checkpoint: str | None = None,
                            seconds_to_sleep: float = 1, timeout: float | None = None
                            ) -> str | None:
    """The latest checkpoint of `checkpoint_dir` once it differs from `last_checkpoint`,
    polling every `seconds_to_sleep`; None after `timeout` seconds."""
    _log.info("Waiting for new checkpoint at %s", checkpoint_dir)
    stop_time = time.time() + timeout if timeout is not None else None
    while True:
        path = checkpoint_management.latest_checkpoint(checkpoint_dir)
        if path is not None and path != last_checkpoint:
            _log.info("Found new checkpoint at %s", path)
            return path
        if stop_time is not None and time.time() + seconds_to_sleep > stop_time:
            return None
        time.sleep(seconds_to_sleep)


def checkpoints_iterator(checkpoint_dir: str, min_interval_secs: float = 0,
                         timeout: float | None = None,
                         timeout_fn: Callable[[], bool] | None = None) -> Iterator[str]:
    """Yields each new checkpoint path of `checkpoint_dir` as it appears, at most one per
    `min_interval_secs` (follows `tf.train.checkpoints_iterator`).

    Waiting more than `timeout` seconds for the next one ends the iteration, unless
    `timeout_fn` is given and returns False (then the wait starts over).
    """
    path = None
    while True:
        new_path = wait_for_new_checkpoint(checkpoint_dir, path, timeout=timeout)
        if new_path is None:
            if not timeout_fn:
                _log.info("Timed-out waiting for a checkpoint.")
                return
            if timeout_fn():
                return
            continue
        start = time.time()
        path = new_path
        yield path
        remaining = start + min_interval_secs - time.time()
        if remaining > 0:
            time.sleep(remaining)
