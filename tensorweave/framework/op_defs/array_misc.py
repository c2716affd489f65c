"""Miscellaneous array ops: `SelectV2`, `DynamicPartition`, `EnsureShape`, `Bitcast`,
`GuaranteeConst`, `CountUpTo`, `HistogramFixedWidth` and the space/batch/depth
rearrangements (follows `tensorflow/core/ops/array_ops.cc`, `state_ops.cc`,
`math_ops.cc`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_defs.array_more import broadcast_static
from tensorweave.framework.shape_inference import op_error, static_value
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_FORMATS = "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"


def _select_v2_shape(op: Any) -> list[TensorShape]:
    values = broadcast_static(op, op.inputs[1].shape, op.inputs[2].shape)
    return [broadcast_static(op, op.inputs[0].shape, values)]


def _partition_shape(op: Any) -> list[TensorShape]:
    data, parts = op.inputs[0].shape, op.inputs[1].shape
    n = op.get_attr("num_partitions")
    if data.ndims is None or parts.ndims is None:
        return [unknown_shape()] * n
    return [TensorShape([None] + data.as_list()[parts.ndims :])] * n


def _ensure_shape_shape(op: Any) -> list[TensorShape]:
    want = TensorShape(op.get_attr("shape"))
    try:
        return [op.inputs[0].shape.merge_with(want)]
    except ValueError:
        raise op_error(
            op, f"Shape of tensor {op.inputs[0].name} {op.inputs[0].shape} is not "
            f"compatible with expected shape {want}"
        ) from None


def _depth_shape(op: Any, to_depth: bool) -> list[TensorShape]:
    x = op.inputs[0].shape
    if x.ndims is None:
        return [unknown_shape(4)]
    if x.ndims != 4:
        raise op_error(op, f"Shape must be rank 4 but is rank {x.ndims}")
    b = op.get_attr("block_size")
    fmt = op.get_attr("data_format")
    fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
    n, h, w, c = x.as_list() if fmt == "NHWC" else [x.as_list()[i] for i in (0, 2, 3, 1)]

    def scale(d: int | None, up: bool) -> int | None:
        if d is None:
            return None
        if not up and d % b:
            raise op_error(op, f"Dimension size must be evenly divisible by {b} but is {d}")
        return d * b if up else d // b

    if to_depth:
        h, w = scale(h, False), scale(w, False)
        c = None if c is None else c * b * b
    else:
        h, w = scale(h, True), scale(w, True)
        if c is not None and c % (b * b):
            raise op_error(op, f"Dimension size must be evenly divisible by {b * b} but is {c}")
        c = None if c is None else c // (b * b)
    dims = [n, h, w, c] if fmt == "NHWC" else [n, c, h, w]
    return [TensorShape(dims)]


def _space_batch_shape(op: Any, to_batch: bool, nd: bool) -> list[TensorShape]:
    x = op.inputs[0].shape
    if nd:
        block = static_value(op.inputs[1])
        amounts = static_value(op.inputs[2])
    else:
        b = op.get_attr("block_size")
        block = None if x.ndims is None else [b, b]
        amounts = static_value(op.inputs[1])
    if x.ndims is None or block is None or amounts is None:
        return [unknown_shape(x.ndims)]
    dims = x.as_list()
    m = len(block)
    prod = 1
    for k in block:
        prod *= int(k)
    out = list(dims)
    for i in range(m):
        d = dims[1 + i]
        if d is None:
            continue
        if to_batch:
            padded = d + int(amounts[i][0]) + int(amounts[i][1])
            if padded % int(block[i]):
                raise op_error(op, f"padded_shape[{i}]={padded} is not divisible by "
                               f"block_shape[{i}]={int(block[i])}")
            out[1 + i] = padded // int(block[i])
        else:
            out[1 + i] = d * int(block[i]) - int(amounts[i][0]) - int(amounts[i][1])
    if dims[0] is not None:
        out[0] = dims[0] * prod if to_batch else dims[0] // prod
    return [TensorShape(out)]


register_op(
    "SelectV2",
    inputs=["condition: bool", "t: T", "e: T"],
    outputs=["output: T"],
    attrs=["T: type"],
    shape_fn=_select_v2_shape,
)
register_op(
    "DynamicPartition",
    inputs=["data: T", "partitions: int32"],
    outputs=["outputs: num_partitions * T"],
    attrs=["num_partitions: int >= 1", "T: type"],
    shape_fn=_partition_shape,
)
register_op(
    "EnsureShape",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["shape: shape", "T: type"],
    shape_fn=_ensure_shape_shape,
)
register_op(
    "Bitcast",
    inputs=["input: T"],
    outputs=["output: type"],
    attrs=["T: {half, float, double, int64, int32, uint8, uint16, uint32, uint64, int8, "
           "int16, complex64, complex128}",
           "type: {half, float, double, int64, int32, uint8, uint16, uint32, uint64, int8, "
           "int16, complex64, complex128}"],
    shape_fn=lambda op: [unknown_shape()],
)
register_op(
    "GuaranteeConst",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type"],
    shape_fn=lambda op: [op.inputs[0].shape],
)
register_op(
    "CountUpTo",
    inputs=["ref: Ref(T)"],
    outputs=["output: T"],
    attrs=["limit: int", "T: {int32, int64}"],
    shape_fn=lambda op: [op.inputs[0].shape],
)
register_op(
    "HistogramFixedWidth",
    inputs=["values: T", "value_range: T", "nbins: int32"],
    outputs=["out: dtype"],
    attrs=["T: {int32, int64, float, double}", "dtype: {int32, int64} = DT_INT32"],
    shape_fn=lambda op: [TensorShape([None if static_value(op.inputs[2]) is None
                                      else int(static_value(op.inputs[2]))])],
)
# NOTE: SpaceToDepth, DepthToSpace, SpaceToBatchND and BatchToSpaceND are in op_defs/nn_misc.
register_op(
    "SpaceToBatch",
    inputs=["input: T", "paddings: Tpaddings"],
    outputs=["output: T"],
    attrs=["T: type", "Tpaddings: {int32, int64} = DT_INT32", "block_size: int >= 2"],
    shape_fn=lambda op: _space_batch_shape(op, True, False),
)
register_op(
    "BatchToSpace",
    inputs=["input: T", "crops: Tidx"],
    outputs=["output: T"],
    attrs=["T: type", "block_size: int >= 2", "Tidx: {int32, int64} = DT_INT32"],
    shape_fn=lambda op: _space_batch_shape(op, False, False),
)
register_op(
    "IdentityN",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: list(type) >= 1"],
    shape_fn=lambda op: [t.shape for t in op.inputs],
)
