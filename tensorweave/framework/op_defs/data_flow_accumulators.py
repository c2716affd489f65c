"""Accumulator op definitions: ConditionalAccumulator and SparseConditionalAccumulator ops.

Follows TensorFlow's `core/ops/data_flow_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

# TensorFlow's `numbertype` (without the quantized types and bfloat16).
_NUMBER_TYPES = (
    "{float, double, int32, uint8, int16, int8, complex64, int64, uint16, complex128, half, "
    "uint32, uint64}"
)


def _handle_shape(op: Any) -> list[TensorShape]:
    return [TensorShape([2])]


def _no_outputs(op: Any) -> list[TensorShape]:
    return []


for _name in ("ConditionalAccumulator", "SparseConditionalAccumulator"):
    register_op(
        _name,
        outputs=["handle: Ref(string)"],
        attrs=[
            f"dtype: {_NUMBER_TYPES}",
            "shape: shape",
            "container: string = ''",
            "shared_name: string = ''",
            "reduction_type: {'MEAN', 'SUM'} = 'MEAN'",
        ],
        is_stateful=True,
        shape_fn=_handle_shape,
    )
register_op(
    "AccumulatorNumAccumulated",
    inputs=["handle: Ref(string)"],
    outputs=["num_accumulated: int32"],
    shape_fn=lambda op: [TensorShape([])],
)
register_op(
    "AccumulatorSetGlobalStep",
    inputs=["handle: Ref(string)", "new_global_step: int64"],
    shape_fn=_no_outputs,
)
register_op(
    "AccumulatorApplyGradient",
    inputs=["handle: Ref(string)", "local_step: int64", "gradient: dtype"],
    attrs=[f"dtype: {_NUMBER_TYPES}"],
    shape_fn=_no_outputs,
)
register_op(
    "AccumulatorTakeGradient",
    inputs=["handle: Ref(string)", "num_required: int32"],
    outputs=["average: dtype"],
    attrs=[f"dtype: {_NUMBER_TYPES}"],
    shape_fn=lambda op: [unknown_shape()],
)
register_op(
    "SparseAccumulatorApplyGradient",
    inputs=[
        "handle: Ref(string)",
        "local_step: int64",
        "gradient_indices: int64",
        "gradient_values: dtype",
        "gradient_shape: int64",
    ],
    attrs=[f"dtype: {_NUMBER_TYPES}", "has_known_shape: bool"],
    shape_fn=_no_outputs,
)
register_op(
    "SparseAccumulatorTakeGradient",
    inputs=["handle: Ref(string)", "num_required: int32"],
    outputs=["indices: int64", "values: dtype", "shape: int64"],
    attrs=[f"dtype: {_NUMBER_TYPES}"],
    shape_fn=lambda op: [TensorShape([None]), unknown_shape(), TensorShape([None])],
)
