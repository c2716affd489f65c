"""Gather-family op definitions: Gather, OneHot, Select, Where, Range, DynamicStitch, ...

Follows TensorFlow's `core/ops/array_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from tensorweave.framework.op_def import register_op
from tensorweave.framework.operation import Operation
from tensorweave.framework.shape_inference import (
    merge_shapes,
    op_error,
    static_int,
    static_value,
    with_rank,
    with_rank_at_least,
)
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape


@register_op(
    "GatherV2",
    inputs=["params: Tparams", "indices: Tindices", "axis: Taxis"],
    outputs=["output: Tparams"],
    attrs=[
        "batch_dims: int = 0",
        "Tparams: type",
        "Tindices: {int32, int64}",
        "Taxis: {int32, int64}",
    ],
)
def _gather_shape(op: Operation) -> list[TensorShape]:
    params = with_rank_at_least(op, op.inputs[0].shape, 1)
    indices = op.inputs[1].shape
    with_rank(op, op.inputs[2].shape, 0)
    axis = static_int(op.inputs[2])
    if axis is None:
        if params.ndims is not None and indices.ndims is not None:
            return [unknown_shape(params.ndims + indices.ndims - 1)]
        return [unknown_shape()]
    with_rank_at_least(op, params, -axis if axis < 0 else axis + 1)
    batch_dims = op.get_attr("batch_dims")
    with_rank_at_least(op, indices, abs(batch_dims))
    if params.ndims is None or indices.ndims is None:
        return [unknown_shape()]
    if batch_dims < 0:
        batch_dims += indices.ndims
    with_rank_at_least(op, params, batch_dims + 1)
    p, i = params.as_list(), indices.as_list()
    a = axis + len(p) if axis < 0 else axis
    return [TensorShape(p[:a] + i[batch_dims:] + p[a + 1 :])]


@register_op(
    "OneHot",
    inputs=["indices: TI", "depth: int32", "on_value: T", "off_value: T"],
    outputs=["output: T"],
    attrs=["axis: int = -1", "T: type", "TI: {uint8, int32, int64} = DT_INT64"],
)
def _one_hot_shape(op: Operation) -> list[TensorShape]:
    axis = op.get_attr("axis")
    if axis < -1:
        raise op_error(op, "axis must be >= -1")
    with_rank(op, op.inputs[1].shape, 0)
    depth = static_int(op.inputs[1])
    if depth is not None and depth < 0:
        raise op_error(op, f"Dimension size, given by scalar input {depth}, must be non-negative")
    indices = op.inputs[0].shape
    if indices.ndims is None:
        return [unknown_shape()]
    new_rank = indices.ndims + 1
    at = (axis + new_rank) % new_rank
    dims = indices.as_list()
    return [TensorShape(dims[:at] + [depth] + dims[at:])]


@register_op(
    "Select",
    inputs=["condition: bool", "t: T", "e: T"],
    outputs=["output: T"],
    attrs=["T: type"],
)
def _select_shape(op: Operation) -> list[TensorShape]:
    data = merge_shapes(op, op.inputs[1].shape, op.inputs[2].shape)
    cond = op.inputs[0].shape
    if cond.ndims is None or data.ndims is None or cond.ndims == 0:
        return [data]
    if cond.ndims != 1 or data.ndims == 0:
        return [merge_shapes(op, data, cond)]
    merge_shapes(op, cond, TensorShape([data.as_list()[0]]))
    return [data]


register_op(
    "Where",
    inputs=["input: T"],
    outputs=["index: int64"],
    attrs=[
        "T: {float, double, int32, uint8, int16, int8, complex64, int64, half, uint32, "
        "uint64, uint16, complex128, bool} = DT_BOOL"
    ],
    shape_fn=lambda op: [TensorShape([None, op.inputs[0].shape.ndims])],
)


def range_size(start: Any, limit: Any, delta: Any) -> int:
    """The number of elements of `Range(start, limit, delta)`.

    Raises:
      ValueError: with TensorFlow's messages for a zero `delta` or a wrong direction.
    """
    if delta == 0:
        raise ValueError(f"Requires delta != 0: {delta}")
    if delta > 0 and start > limit:
        raise ValueError(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if (
        isinstance(start, int | np.integer)
        and isinstance(delta, int | np.integer)
        and isinstance(limit, int | np.integer)
    ):
        return (abs(int(limit) - int(start)) + abs(int(delta)) - 1) // abs(int(delta))
    return int(np.ceil(abs((float(limit) - float(start)) / float(delta))))


@register_op(
    "Range",
    inputs=["start: Tidx", "limit: Tidx", "delta: Tidx"],
    outputs=["output: Tidx"],
    attrs=["Tidx: {half, float, double, int8, int16, int32, int64, uint16, uint32} = DT_INT32"],
)
def _range_shape(op: Operation) -> list[TensorShape]:
    for t in op.inputs:
        with_rank(op, t.shape, 0)
    vals = [static_value(t) for t in op.inputs]
    if any(v is None for v in vals):
        return [TensorShape([None])]
    try:
        return [TensorShape([range_size(*(v.reshape(()).item() for v in vals))])]
    except ValueError as e:
        raise op_error(op, str(e)) from None


@register_op(
    "DynamicStitch",
    inputs=["indices: N * int32", "data: N * T"],
    outputs=["merged: T"],
    attrs=["N: int >= 1", "T: type"],
)
def _dynamic_stitch_shape(op: Operation) -> list[TensorShape]:
    n = op.get_attr("N")
    all_constant = True
    max_index = -1
    extra = unknown_shape()
    for i in builtins.range(n):
        idx_t, data_t = op.inputs[i], op.inputs[n + i]
        value = static_value(idx_t)
        if value is None:
            all_constant = False
        elif value.size:
            max_index = max(max_index, int(value.max()))
        ind, data = idx_t.shape, data_t.shape
        if ind.ndims is None:
            continue
        data = with_rank_at_least(op, data, ind.ndims)
        if data.ndims is None:
            continue
        merge_shapes(op, TensorShape(data.as_list()[: ind.ndims]), ind)
        extra = merge_shapes(op, extra, TensorShape(data.as_list()[ind.ndims :]))
    first = TensorShape([max_index + 1 if all_constant else None])
    return [first.concatenate(extra)]
