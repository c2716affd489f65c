"""Staleness op definitions (tensorweave's bounded-staleness helpers).

These ops are tensorweave's own (no TensorFlow counterpart); names follow TF's conventions.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape


def _scalar(op: Any) -> list[TensorShape]:
    return [TensorShape([])]


def _no_outputs(op: Any) -> list[TensorShape]:
    return []


def _per_worker(op: Any) -> list[TensorShape]:
    clock_op = op.inputs[0].op
    n = clock_op.get_attr("num_workers") if clock_op.type == "StepClock" else None
    return [TensorShape([n])] * 3


register_op(
    "StepClock",
    outputs=["handle: resource"],
    attrs=["num_workers: int >= 1", "container: string = ''", "shared_name: string = ''"],
    is_stateful=True,
    shape_fn=_scalar,
)
register_op(
    "StepClockTick",
    inputs=["handle: resource", "worker: int32"],
    outputs=["clock: int64"],
    is_stateful=True,
    shape_fn=_scalar,
)
register_op(
    "StepClockWait",
    inputs=["handle: resource", "worker: int32", "max_staleness: int64"],
    attrs=["timeout_ms: int = -1"],
    is_stateful=True,
    shape_fn=_no_outputs,
)
register_op(
    "StepClockRetire",
    inputs=["handle: resource", "worker: int32"],
    is_stateful=True,
    shape_fn=_no_outputs,
)
register_op(
    "StepClockJoin",
    inputs=["handle: resource", "worker: int32"],
    outputs=["clock: int64"],
    is_stateful=True,
    shape_fn=_scalar,
)
register_op(
    "StepClockRead",
    inputs=["handle: resource"],
    outputs=["clocks: int64", "retired: bool", "waiting: bool"],
    is_stateful=True,
    shape_fn=_per_worker,
)
