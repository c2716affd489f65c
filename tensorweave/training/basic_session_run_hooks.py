"""The standard `SessionRunHook`s: stopping, checkpoints, summaries, step rate, logging.

Follows TF 1.x `tensorflow/python/training/basic_session_run_hooks.py` (no ProfilerHook).
The timers live in `hook_timers` and the checkpoint hook in `checkpoint_saver_hook`; both
are re-exported here. Hooks that need the global step find it in `begin()` and fetch one
shared read of it (`training_util._get_or_create_global_step_read`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import graph as graph_mod
from tensorweave.protos.event_pb2 import SessionLog
from tensorweave.protos.summary_pb2 import Summary
from tensorweave.training import training_util
from tensorweave.training.checkpoint_saver_hook import (
    CheckpointSaverHook,
    CheckpointSaverListener,
)
from tensorweave.training.hook_timers import (
    HookTimer,
    NeverTriggerTimer,
    SecondOrStepTimer,
    require_global_step_read,
)
from tensorweave.training.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from tensorweave.training.summary_io import FileWriterCache

_log = logging.getLogger(__name__)


def _as_graph_element(obj: Any) -> Any:
    """`obj` (a Tensor, or a tensor or op name) as an element of the default graph.

    Raises:
      ValueError: for an element of another graph, or an op name with several outputs.
    """
    graph = graph_mod.get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError(
                f"Passed {obj} should have graph attribute that is equal to current graph {graph}."
            )
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError(
        f"Name {obj} is ambiguous, as this `Operation` has multiple outputs (at least 2)."
    )


class LoggingTensorHook(SessionRunHook):
    """Logs tensor values (INFO) every N local steps, every N seconds and/or at the end.

    Follows `tf.train.LoggingTensorHook`.

    Args:
      tensors: a dict tag -> Tensor or tensor name (logged in sorted tag order), or a list
        of tensors or names (logged in list order, each its own tag).
      every_n_iter: log every N `run` calls of this session.
      every_n_secs: log at most every N seconds.
      at_end: also log in `end()` (which runs the tensors once more).
      formatter: a function dict(tag -> value) -> str replacing the default format.

    Raises:
      ValueError: unless `at_end` or exactly one of `every_n_iter` and `every_n_secs` is
        given, or for `every_n_iter <= 0`.
    """

    def __init__(
        self,
        tensors: Any,
        every_n_iter: int | None = None,
        every_n_secs: float | None = None,
        at_end: bool = False,
        formatter: Callable[[dict], str] | None = None,
    ):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError(
                "either at_end and/or exactly one of every_n_iter and every_n_secs must be "
                "provided."
            )
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors.keys())
        else:
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        self._tensors = tensors
        self._formatter = formatter
        self._timer: HookTimer = (
            NeverTriggerTimer()
            if only_log_at_end
            else SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter)
        )
        self._log_at_end = at_end
        self._should_trigger = False

    def begin(self) -> None:
        """Resolves the tensors in the default graph."""
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        """Fetches the tensors when the timer fires."""
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, tensor_values: dict) -> None:
        elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
        if self._formatter:
            _log.info(self._formatter(tensor_values))
            return
        with np.printoptions(suppress=True):
            stats = ", ".join(f"{tag} = {tensor_values[tag]}" for tag in self._tag_order)
        if elapsed_secs is not None:
            _log.info("%s (%.3f sec)", stats, elapsed_secs)
        else:
            _log.info("%s", stats)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Logs the fetched values."""
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session: Any) -> None:
        """Logs once more with `at_end`."""
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class StopAtStepHook(SessionRunHook):
    """Requests a stop at global step `last_step`, or `num_steps` steps after creation.

    Follows `tf.train.StopAtStepHook`: with `num_steps`, the last step is the global step
    when the session is created plus `num_steps`.

    Raises:
      ValueError: if neither or both of `num_steps` and `last_step` are given.
      RuntimeError: in `begin()`, "Global step should be created to use StopAtStepHook."
    """

    def __init__(self, num_steps: int | None = None, last_step: int | None = None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self) -> None:
        """Finds the global step."""
        self._global_step_tensor = require_global_step_read("StopAtStepHook")

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Fixes the last step from `num_steps`."""
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        """Fetches the global step."""
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Requests a stop once the re-read global step reached the last step."""
        # The fetched value may predate this step's increment; re-read before stopping.
        if run_values.results + 1 >= self._last_step:
            step = run_context.session.run(self._global_step_tensor)
            if step >= self._last_step:
                run_context.request_stop()


class StepCounterHook(SessionRunHook):
    """Logs and records global steps per second, as summary `<global step name>/sec`.

    Follows `tf.train.StepCounterHook`; with the usual global step the tag is
    `global_step/sec`.

    Args:
      every_n_steps: measure every this many global steps.
      every_n_secs: measure at most every this many seconds.
      output_dir: directory of the shared `FileWriter`, used without `summary_writer`.
      summary_writer: the `FileWriter` to write to.

    Raises:
      ValueError: unless exactly one of `every_n_steps` and `every_n_secs` is given.
      RuntimeError: in `begin()`, without a global step.
    """

    def __init__(
        self,
        every_n_steps: int | None = 100,
        every_n_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
    ):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step: int | None = None
        self._global_step_check_count = 0
        self._steps_per_run = 1

    def _set_steps_per_run(self, steps_per_run: int) -> None:
        self._steps_per_run = steps_per_run

    def begin(self) -> None:
        """Opens the `FileWriter` and finds the global step."""
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step_tensor = require_global_step_read("StepCounterHook")
        self._summary_tag = training_util.get_global_step().op.name + "/sec"

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        """Fetches the global step."""
        return SessionRunArgs(self._global_step_tensor)

    def _log_and_record(self, elapsed_steps: int, elapsed_time: float, global_step: int):
        steps_per_sec = elapsed_steps / elapsed_time if elapsed_time > 0 else float("inf")
        if self._summary_writer is not None:
            summary = Summary(
                value=[Summary.Value(tag=self._summary_tag, simple_value=steps_per_sec)]
            )
            self._summary_writer.add_summary(summary, global_step)
        _log.info("%s: %g", self._summary_tag, steps_per_sec)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Records the rate when the timer fires; warns if the step stops moving."""
        stale_global_step = int(run_values.results)
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time is not None:
                    self._log_and_record(elapsed_steps, elapsed_time, global_step)
        if stale_global_step == self._last_global_step:
            # Some optimizers (SyncReplicasOptimizer on workers) do not bump it every run.
            self._global_step_check_count += 1
            if self._global_step_check_count % 20 == 0:
                self._global_step_check_count = 0
                _log.warning(
                    "It seems that global step (tf.train.get_global_step) has not been "
                    "increased. Current value (could be stable): %s vs previous value: %s. "
                    "You could increase the global step by passing tf.train.get_global_step() "
                    "to Optimizer.apply_gradients or Optimizer.minimize.",
                    stale_global_step,
                    self._last_global_step,
                )
        else:
            self._global_step_check_count = 0
        self._last_global_step = stale_global_step


class NanLossDuringTrainingError(RuntimeError):
    """Raised by `NanTensorHook` (follows `tf.train.NanLossDuringTrainingError`)."""

    def __str__(self) -> str:
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Stops training when the loss is NaN (follows `tf.train.NanTensorHook`).

    Args:
      loss_tensor: the scalar loss Tensor, fetched every step.
      fail_on_nan_loss: raise `NanLossDuringTrainingError` on NaN; otherwise log a warning
        and request a stop.
    """

    def __init__(self, loss_tensor: Any, fail_on_nan_loss: bool = True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        """Fetches the loss."""
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Checks the loss for NaN.

        Raises:
          NanLossDuringTrainingError: for a NaN loss with `fail_on_nan_loss`.
        """
        if np.isnan(run_values.results):
            failure_message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                _log.error(failure_message)
                raise NanLossDuringTrainingError
            _log.warning(failure_message)
            run_context.request_stop()


class SummarySaverHook(SessionRunHook):
    """Writes the summary op's value every N global steps or seconds.

    Follows `tf.train.SummarySaverHook`; the first `run` also writes a START session log.

    Args:
      save_steps: write every this many global steps.
      save_secs: write at most every this many seconds.
      output_dir: directory of the shared `FileWriter`, used without `summary_writer`.
      summary_writer: the `FileWriter` to write to.
      scaffold: a `Scaffold` whose `summary_op` is used.
      summary_op: a scalar `string` Tensor holding a serialized `Summary`, or a list.

    Raises:
      ValueError: unless exactly one of `scaffold` and `summary_op`, and exactly one of
        `save_steps` and `save_secs`, is given.
      RuntimeError: in `begin()`, without a global step.
    """

    def __init__(
        self,
        save_steps: int | None = None,
        save_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
        scaffold: Any = None,
        summary_op: Any = None,
    ):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        """Opens the `FileWriter` and finds the global step."""
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._next_step: int | None = None
        self._global_step_tensor = require_global_step_read("SummarySaverHook")

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        """Fetches the global step, and the summaries when the timer fires."""
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(
            self._next_step
        )
        requests: dict[str, Any] = {"global_step": self._global_step_tensor}
        if self._request_summary:
            summary_op = self._get_summary_op()
            if summary_op is not None:
                requests["summary"] = summary_op
        return SessionRunArgs(requests)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Writes the fetched summaries at the re-read global step."""
        if not self._summary_writer:
            return
        global_step = int(run_values.results["global_step"]) + 1
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", []):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session: Any = None) -> None:
        """Flushes the writer."""
        if self._summary_writer:
            self._summary_writer.flush()

    def _get_summary_op(self) -> list[Any] | None:
        summary_op = self._summary_op
        if summary_op is None:
            summary_op = self._scaffold.summary_op
        if summary_op is None:
            return None
        return summary_op if isinstance(summary_op, list) else [summary_op]


class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first `run` until the global step reaches `wait_until_step`.

    Follows `tf.train.GlobalStepWaiterHook`: it polls the global step every
    `poll_interval_secs` (0.5 s), e.g. to start workers gradually with
    `wait_until_step=int(K * log(task_id + 1))`.

    Raises:
      RuntimeError: in `begin()`, without a global step.
    """

    poll_interval_secs = 0.5

    def __init__(self, wait_until_step: int):
        self._wait_until_step = wait_until_step
        self._sleep = time.sleep

    def begin(self) -> None:
        """Finds the global step."""
        self._worker_is_started = False
        self._global_step_tensor = require_global_step_read("_GlobalStepWaiterHook")

    def before_run(self, run_context: SessionRunContext) -> None:
        """Blocks the first run until the global step is reached."""
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        _log.info("Waiting for global step %d before starting training.", self._wait_until_step)
        last_logged_step = 0
        while True:
            current_step = run_context.session.run(self._global_step_tensor)
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                _log.info(
                    "Waiting for global step %d before starting training. Current step is %d.",
                    self._wait_until_step,
                    current_step,
                )
                last_logged_step = current_step
            self._sleep(self.poll_interval_secs)


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` in `end()` (follows `tf.train.FinalOpsHook`).

    Args:
      final_ops: a Tensor, a list of Tensors or a dict of them.
      final_ops_feed_dict: feeds for running them.
    """

    def __init__(self, final_ops: Any, final_ops_feed_dict: dict | None = None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self) -> Any:
        """The values of `final_ops` fetched in `end()`, or None before."""
        return self._final_ops_values

    def end(self, session: Any) -> None:
        """Runs the final ops.

        Raises:
          OutOfRangeError/StopIteration: if the final ops read from exhausted input.
        """
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(
                self._final_ops, feed_dict=self._final_ops_feed_dict
            )
        except (errors.OutOfRangeError, StopIteration):
            _log.warning(
                "An OutOfRangeError or StopIteration exception is raised by the code in "
                "FinalOpsHook. The final ops should only read variables, not consume input."
            )
            raise


class FeedFnHook(SessionRunHook):
    """Feeds `feed_fn()` into every `run` (follows `tf.train.FeedFnHook`).

    Args:
      feed_fn: a function of no arguments returning a dict Tensor -> value.
    """

    def __init__(self, feed_fn: Callable[[], dict]):
        self.feed_fn = feed_fn

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        """Adds `feed_fn()` to the feeds."""
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


__all__ = [
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "FeedFnHook",
    "FinalOpsHook",
    "GlobalStepWaiterHook",
    "LoggingTensorHook",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "NeverTriggerTimer",
    "SecondOrStepTimer",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
]
