"""Summary op definitions: ScalarSummary, HistogramSummary, MergeSummary, ...

Follows TensorFlow's `core/ops/logging_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape

# TensorFlow's `realnumbertype` (without bfloat16, which tensorweave lacks).
_REAL_NUMBER_TYPES = (
    "{float, double, int32, uint8, int16, int8, int64, uint16, half, uint32, uint64}"
)


def _scalar_shape(op: Any) -> list[TensorShape]:
    return [TensorShape([])]


register_op(
    "ScalarSummary",
    inputs=["tags: string", "values: T"],
    outputs=["summary: string"],
    attrs=[f"T: {_REAL_NUMBER_TYPES}"],
    shape_fn=_scalar_shape,
)
register_op(
    "HistogramSummary",
    inputs=["tag: string", "values: T"],
    outputs=["summary: string"],
    attrs=[f"T: {_REAL_NUMBER_TYPES} = DT_FLOAT"],
    shape_fn=_scalar_shape,
)
register_op(
    "TensorSummaryV2",
    inputs=["tag: string", "tensor: T", "serialized_summary_metadata: string"],
    outputs=["summary: string"],
    attrs=["T: type"],
    shape_fn=_scalar_shape,
)
register_op(
    "MergeSummary",
    inputs=["inputs: N * string"],
    outputs=["summary: string"],
    attrs=["N: int >= 1"],
    shape_fn=_scalar_shape,
)
