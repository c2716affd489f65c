"""Slicing op definitions: Slice, StridedSlice and its gradient helpers.

Follows TensorFlow's `core/ops/array_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from tensorweave.framework.op_def import register_op
from tensorweave.framework.operation import Operation
from tensorweave.framework.shape_inference import (
    merge_shapes,
    op_error,
    static_shape_value,
    static_value,
    with_rank,
)
from tensorweave.framework.strided_slice import validate_strided_slice
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
_MASK_ATTRS = [f"{m}: int = 0" for m in _MASKS]


@register_op(
    "Slice",
    inputs=["input: T", "begin: Index", "size: Index"],
    outputs=["output: T"],
    attrs=["T: type", "Index: {int32, int64}"],
)
def _slice_shape(op: Operation) -> list[TensorShape]:
    value = op.inputs[0].shape
    begin_shape = with_rank(op, op.inputs[1].shape, 1)
    size_shape = with_rank(op, op.inputs[2].shape, 1)
    n = merge_shapes(op, begin_shape, size_shape).as_list()[0]
    if n is not None:
        value = with_rank(op, value, n)
    begin, sizes = static_value(op.inputs[1]), static_value(op.inputs[2])
    if sizes is None:
        return [unknown_shape(value.ndims if value.ndims is not None else n)]
    dims = value.as_list() if value.ndims is not None else [None] * sizes.size
    out: list[int | None] = []
    for i, s in enumerate(int(s) for s in sizes.reshape(-1)):
        if s < -1:
            raise op_error(op, f"Slice size must be >= -1, but got {s}")
        if s >= 0:
            out.append(s)
        elif begin is None or dims[i] is None:
            out.append(None)
        else:
            b = int(begin[i])
            if dims[i] - b < 0:
                raise op_error(
                    op, f"Negative dimension size caused by subtracting {b} from {dims[i]}"
                )
            out.append(dims[i] - b)
    return [TensorShape(out)]


def _masks_of(op: Operation) -> dict[str, int]:
    return {m: op.get_attr(m) for m in _MASKS}


@register_op(
    "StridedSlice",
    inputs=["input: T", "begin: Index", "end: Index", "strides: Index"],
    outputs=["output: T"],
    attrs=["T: type", "Index: {int32, int64}", *_MASK_ATTRS],
)
def _strided_slice_shape(op: Operation) -> list[TensorShape]:
    value = op.inputs[0].shape
    lens = [with_rank(op, t.shape, 1) for t in op.inputs[1:]]
    n = merge_shapes(op, merge_shapes(op, lens[0], lens[1]), lens[2]).as_list()[0]
    strides = static_value(op.inputs[3])
    if value.ndims is None or n is None or strides is None:
        return [unknown_shape()]
    try:
        spec = validate_strided_slice(
            value.as_list(),
            static_value(op.inputs[1]),
            static_value(op.inputs[2]),
            strides.reshape(-1),
            **_masks_of(op),
        )
    except ValueError as e:
        raise op_error(op, str(e)) from None
    return [TensorShape(list(spec.final_shape))]


register_op(
    "StridedSliceGrad",
    inputs=["shape: Index", "begin: Index", "end: Index", "strides: Index", "dy: T"],
    outputs=["output: T"],
    attrs=["T: type", "Index: {int32, int64}", *_MASK_ATTRS],
    shape_fn=lambda op: [static_shape_value(op.inputs[0])],
)
