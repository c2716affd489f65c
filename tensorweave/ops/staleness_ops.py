"""Step clocks: the shared state of bounded-staleness (SSP) training. New in tensorweave.

A step clock counts, for each of `num_workers` workers, the training steps it has
completed (`clock[w]`, int64, starting at 0). It lives in a resource manager like a queue
(put it on the global step's device, e.g. a ps); every worker's graph creates it with the
same `shared_name` and so shares it. Ops (all colocated with the clock):

* `StepClockTick(handle, worker)`: `clock[worker] += 1`, returns the new value. If the
  step running it fails (e.g. a later wait reaches the deadline), the tick is taken back
  with the step's variable updates, which tensorweave rolls back.
* `StepClockWait(handle, worker, max_staleness)`: blocks until
  `min(clock[v] for active v) >= clock[worker] - max_staleness`. Retired workers are not
  active; with no active worker the wait passes. Like a queue dequeue it is an
  asynchronous kernel: it holds no thread while blocked, wakes on the tick or retire that
  satisfies it, fails with `CancelledError` when its step is cancelled (Session.close), and
  with `DeadlineExceededError` at the step deadline (`RunOptions.timeout_in_ms`,
  `ConfigProto.operation_timeout_in_ms`) or after its own `timeout_ms`. Its deadline
  message names the clock, the waiting worker and the workers it waits for.
* `StepClockRetire(handle, worker)`: the worker leaves; it no longer holds the others
  back (their waits re-check at once).
* `StepClockJoin(handle, worker)`: a retired worker takes part again, entering at the
  smallest clock of the active workers (or keeping its own if larger); a no-op for an
  active worker. Returns its clock.
* `StepClockRead(handle)`: `(clocks int64 [n], retired bool [n], waiting bool [n])`, where
  `waiting[w]` says that a wait of worker `w` is blocked right now.

Errors at run time: a worker index outside `[0, num_workers)` or a negative
`max_staleness` is `InvalidArgumentError`; a tick or wait of a retired worker is
`FailedPreconditionError` (join first); two graphs asking for one shared clock with
different `num_workers` get `InvalidArgumentError`. Resetting the clock's container
(`Session.reset`) fails pending waits with `AbortedError`.

`BoundedStalenessOptimizer` (`tensorweave/training/bounded_staleness.py`) builds the
training loop on these ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.cwise_ops import cast
from tensorweave.ops.gradient_registry import no_gradient

for _name in (
    "StepClock",
    "StepClockTick",
    "StepClockWait",
    "StepClockRetire",
    "StepClockJoin",
    "StepClockRead",
):
    no_gradient(_name)


def _as_int(value: Any, dtype: dtypes.DType) -> Any:
    """`value` as an integer Tensor of `dtype` (Python ints directly, Tensors cast)."""
    if isinstance(value, int | np.integer):
        return convert_to_tensor(value, dtype=dtype)
    t = convert_to_tensor(value)
    return t if t.dtype.base_dtype == dtype else cast(t, dtype)


def _clock_op(op_type: str, handle: Any, ints: dict[str, tuple[Any, Any]], **kwargs: Any):
    """`apply_op` for an op on a clock, colocated with the clock.

    `ints` maps input names to `(value, dtype)`; they are converted inside the colocation
    scope, so that their constants sit with the clock instead of adding a transfer (and a
    cross-device control edge) from the caller's device.
    """
    graph = handle.graph
    with graph.as_default(), graph.colocate_with(handle):
        inputs = {k: _as_int(value, dtype) for k, (value, dtype) in ints.items()}
        return apply_op(op_type, handle=handle, **inputs, **kwargs)


class StepClock:
    """A step clock shared by `num_workers` workers (see the module docstring).

    Created like `tf.FIFOQueue`: place it with `tf.device` (the global step's device) and
    share it with `shared_name`. Creation ignores the surrounding control dependencies.

    Args:
      num_workers: int >= 1, the number of workers counted.
      shared_name: if set, every session and graph of the task using this name shares the
        clock (needed for between-graph replication).
      name: the op name (default "step_clock").

    Raises:
      ValueError: if `num_workers < 1`.
    """

    def __init__(self, num_workers: int, shared_name: str | None = None, name: str = "step_clock"):
        if num_workers < 1:
            raise ValueError(f"num_workers must be at least 1, got {num_workers}")
        self._num_workers = int(num_workers)
        g = graph_mod.get_default_graph()
        with g.control_dependencies(None):
            self._handle = apply_op(
                "StepClock",
                num_workers=self._num_workers,
                shared_name=shared_name or "",
                name=name,
            )
        self._name = self._handle.op.name.split("/")[-1]

    @property
    def handle(self) -> Any:
        """The clock's `resource` handle Tensor."""
        return self._handle

    @property
    def name(self) -> str:
        """The name of the clock op."""
        return self._handle.op.name

    @property
    def num_workers(self) -> int:
        """The number of workers counted."""
        return self._num_workers

    @property
    def device(self) -> str:
        """The device of the clock op."""
        return self._handle.op.device

    def tick(self, worker: Any, name: str | None = None) -> Any:
        """An int64 scalar Tensor: `clock[worker] += 1`, the new value.

        `worker` is an int32 scalar (Python int or Tensor).
        """
        return _clock_op(
            "StepClockTick",
            self._handle,
            {"worker": (worker, dtypes.int32)},
            name=name or f"{self._name}_Tick",
        )

    def wait(
        self, worker: Any, max_staleness: Any, timeout_ms: int = -1, name: str | None = None
    ) -> Any:
        """An op blocking until `worker` is at most `max_staleness` steps ahead.

        It passes once `min(clock of active workers) >= clock[worker] - max_staleness`.

        Args:
          worker: int32 scalar, the waiting worker.
          max_staleness: int64 scalar >= 0.
          timeout_ms: the op's own timeout (negative: none); the step deadline applies too.
          name: op name (default `<clock>_Wait`).

        Returns:
          The wait `Operation`.
        """
        return _clock_op(
            "StepClockWait",
            self._handle,
            {"worker": (worker, dtypes.int32), "max_staleness": (max_staleness, dtypes.int64)},
            timeout_ms=timeout_ms,
            name=name or f"{self._name}_Wait",
        )

    def retire(self, worker: Any, name: str | None = None) -> Any:
        """An op retiring `worker`: it stops holding the others back."""
        return _clock_op(
            "StepClockRetire",
            self._handle,
            {"worker": (worker, dtypes.int32)},
            name=name or f"{self._name}_Retire",
        )

    def join(self, worker: Any, name: str | None = None) -> Any:
        """An int64 scalar Tensor: un-retires `worker` (at the active minimum), its clock."""
        return _clock_op(
            "StepClockJoin",
            self._handle,
            {"worker": (worker, dtypes.int32)},
            name=name or f"{self._name}_Join",
        )

    def read(self, name: str | None = None) -> tuple[Any, Any, Any]:
        """`(clocks int64 [n], retired bool [n], waiting bool [n])` Tensors."""
        clocks, retired, waiting = _clock_op(
            "StepClockRead", self._handle, {}, name=name or f"{self._name}_Read"
        )
        return clocks, retired, waiting


__all__ = ["StepClock"]
