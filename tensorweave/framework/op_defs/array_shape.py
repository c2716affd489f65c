"""Shape op definitions: Shape, Size, Rank, Reshape, ExpandDims, Squeeze, Transpose, Fill, ...

Follows TensorFlow's `core/ops/array_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

import numpy as np

from tensorweave.framework.op_def import register_op
from tensorweave.framework.operation import Operation
from tensorweave.framework.shape_inference import (
    op_error,
    shape_str,
    static_shape_value,
    static_value,
    unchanged_shape,
    with_rank,
)
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_INDEX = "{int32, int64} = DT_INT32"


def _shape_shape(op: Operation) -> list[TensorShape]:
    return [TensorShape([op.inputs[0].shape.ndims])]


def _scalar_shape(op: Operation) -> list[TensorShape]:
    return [TensorShape([])]


register_op(
    "Shape",
    inputs=["input: T"],
    outputs=["output: out_type"],
    attrs=["T: type", f"out_type: {_INDEX}"],
    shape_fn=_shape_shape,
)
register_op(
    "Size",
    inputs=["input: T"],
    outputs=["output: out_type"],
    attrs=["T: type", f"out_type: {_INDEX}"],
    shape_fn=_scalar_shape,
)
register_op(
    "Rank",
    inputs=["input: T"],
    outputs=["output: int32"],
    attrs=["T: type"],
    shape_fn=_scalar_shape,
)


@register_op(
    "Reshape",
    inputs=["tensor: T", "shape: Tshape"],
    outputs=["output: T"],
    attrs=["T: type", f"Tshape: {_INDEX}"],
)
def _reshape_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[1].shape, 1)
    try:
        out = static_shape_value(op.inputs[1])
    except ValueError as e:
        raise op_error(op, str(e)) from None
    in_shape = op.inputs[0].shape
    if out.ndims is None or in_shape.ndims is None:
        return [out]
    out_dims = out.as_list()
    in_dims = in_shape.as_list()
    out_unknown = [i for i, d in enumerate(out_dims) if d is None]
    in_unknown = [i for i, d in enumerate(in_dims) if d is None]
    if len(out_unknown) > 1 or len(in_unknown) > 1:
        return [out]
    out_known = int(np.prod([d for d in out_dims if d is not None], dtype=np.int64))
    in_known = int(np.prod([d for d in in_dims if d is not None], dtype=np.int64))
    if not in_unknown and not out_unknown:
        if in_known != out_known:
            raise op_error(
                op,
                f"Cannot reshape a tensor with {in_known} elements to shape {shape_str(out)} "
                f"({out_known} elements)",
            )
    elif not in_unknown and out_known > 0:
        if in_known % out_known:
            raise op_error(
                op, f"Dimension size must be evenly divisible by {out_known} but is {in_known}"
            )
        out_dims[out_unknown[0]] = in_known // out_known
    elif not out_unknown and in_unknown and in_known != 0:
        if out_known % in_known:
            raise op_error(
                op, f"Dimension size must be evenly divisible by {in_known} but is {out_known}"
            )
    return [TensorShape(out_dims)]


@register_op(
    "ExpandDims",
    inputs=["input: T", "dim: Tdim"],
    outputs=["output: T"],
    attrs=["T: type", f"Tdim: {_INDEX}"],
)
def _expand_dims_shape(op: Operation) -> list[TensorShape]:
    dim_value = static_value(op.inputs[1])
    if dim_value is not None and dim_value.size != 1:
        raise op_error(op, "'dim' input must be a tensor with a single value")
    in_shape = op.inputs[0].shape
    if dim_value is None or in_shape.ndims is None:
        return [unknown_shape()]
    dim = int(dim_value.reshape(-1)[0])
    rank = in_shape.ndims
    if dim < -rank - 1 or dim > rank:
        raise op_error(op, f"dim {dim} not in the interval [{-rank - 1}, {rank}].")
    if dim < 0:
        dim += rank + 1
    dims = in_shape.as_list()
    return [TensorShape(dims[:dim] + [1] + dims[dim:])]


@register_op(
    "Squeeze",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type", "squeeze_dims: list(int) >= 0 = []"],
)
def _squeeze_shape(op: Operation) -> list[TensorShape]:
    in_shape = op.inputs[0].shape
    if in_shape.ndims is None:
        return [unknown_shape()]
    rank = in_shape.ndims
    wanted = []
    for i, d in enumerate(op.get_attr("squeeze_dims")):
        if d < -rank or d >= rank:
            raise op_error(op, f"squeeze_dims[{i}] not in [{-rank},{rank}).")
        wanted.append(d + rank if d < 0 else d)
    result = []
    for i, d in enumerate(in_shape.as_list()):
        explicit = i in wanted
        if d is None:
            if explicit:
                continue
            if not wanted:
                return [unknown_shape()]
        elif d == 1:
            if explicit or not wanted:
                continue
        elif explicit:
            raise op_error(op, f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
        result.append(d)
    return [TensorShape(result)]


@register_op(
    "Transpose",
    inputs=["x: T", "perm: Tperm"],
    outputs=["y: T"],
    attrs=["T: type", f"Tperm: {_INDEX}"],
)
def _transpose_shape(op: Operation) -> list[TensorShape]:
    in_shape = op.inputs[0].shape
    perm_shape = op.inputs[1].shape
    perm = static_value(op.inputs[1])
    perm_elems = perm_shape.num_elements()
    if in_shape.ndims is None and perm_elems is None and perm is None:
        return [unknown_shape()]
    if in_shape.ndims is not None:
        rank = in_shape.ndims
    elif perm_elems is not None:
        rank = perm_elems
    else:
        rank = perm.size
    if in_shape.ndims is None and rank < 2:
        return [in_shape]
    with_rank(op, in_shape, rank)
    with_rank(op, perm_shape, 1)
    if perm_elems is not None and perm_elems != rank:
        raise op_error(op, f"Dimension must be {rank} but is {perm_elems}")
    if perm is None:
        return [unknown_shape(rank)]
    dims = in_shape.as_list() if in_shape.ndims is not None else [None] * rank
    out = []
    for p in perm.reshape(-1):
        p = int(p)
        if p >= rank or p < -rank:
            raise op_error(op, f"perm dim {p} is out of range of input rank {rank}")
        out.append(dims[p])
    return [TensorShape(out)]


register_op(
    "InvertPermutation",
    inputs=["x: T"],
    outputs=["y: T"],
    attrs=[f"T: {_INDEX}"],
    shape_fn=lambda op: [with_rank(op, op.inputs[0].shape, 1)],
)


@register_op(
    "Fill",
    inputs=["dims: index_type", "value: T"],
    outputs=["output: T"],
    attrs=["T: type", f"index_type: {_INDEX}"],
)
def _fill_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[0].shape, 1)
    with_rank(op, op.inputs[1].shape, 0)
    value = static_value(op.inputs[0])
    if value is not None and np.any(value < 0):
        raise op_error(op, "Fill dimensions must be >= 0")
    return [static_shape_value(op.inputs[0])]


register_op(
    "ZerosLike", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"], shape_fn=unchanged_shape
)
register_op(
    "OnesLike",
    inputs=["x: T"],
    outputs=["y: T"],
    attrs=[
        "T: {half, float, double, int8, uint8, int16, uint16, int32, int64, complex64, "
        "complex128, bool}"
    ],
    shape_fn=unchanged_shape,
)
