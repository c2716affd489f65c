"""Reduction op definitions: Sum, Mean, Prod, Max, Min, All, Any, ArgMax/ArgMin, AddN, segments.

Follows TensorFlow's `core/ops/math_ops.cc`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework.op_def import NUMBER, register_op
from tensorweave.framework.shape_inference import op_error, shape_str, unchanged_shape
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.framework.tensor_util import constant_value


def _reduction_shape(op: Any) -> list[TensorShape]:
    inp, idx = op.inputs[0].shape, op.inputs[1].shape
    if idx.ndims is not None and idx.ndims > 1:
        raise op_error(op, f"Shape must be at most rank 1 but is rank {idx.ndims}")
    keep = op.get_attr("keep_dims")
    axes = constant_value(op.inputs[1])
    if axes is None or inp.ndims is None:
        if keep and inp.ndims is not None:
            return [unknown_shape(inp.ndims)]
        return [unknown_shape()]
    rank = inp.ndims
    reduced = set()
    for a in np.asarray(axes).reshape(-1).tolist():
        if not -rank <= a < rank:
            raise op_error(op, f"Invalid reduction dimension {a} for input with {rank} dimensions.")
        reduced.add(a % rank if rank else a)
    dims = []
    for i, d in enumerate(inp.as_list()):
        if i in reduced:
            if keep:
                dims.append(1)
        else:
            dims.append(d)
    return [TensorShape(dims)]


def _arg_shape(op: Any) -> list[TensorShape]:
    inp, dim_shape = op.inputs[0].shape, op.inputs[1].shape
    if dim_shape.ndims is not None and dim_shape.ndims > 0:
        raise op_error(op, f"Shape must be rank 0 but is rank {dim_shape.ndims}")
    if inp.ndims is None:
        return [unknown_shape()]
    rank = inp.ndims
    if rank <= 1:
        return [TensorShape([])]
    d = constant_value(op.inputs[1])
    if d is None:
        return [unknown_shape(rank - 1)]
    d = int(d)
    if not -rank <= d < rank:
        raise op_error(
            op,
            f"Dimension ({d}) must be in the range [{-rank}, {rank}), where {rank} is the "
            "number of dimensions in the input.",
        )
    dims = inp.as_list()
    del dims[d % rank]
    return [TensorShape(dims)]


def _add_n_shape(op: Any) -> list[TensorShape]:
    shapes = [t.shape for t in op.inputs]
    cur = shapes[-1]
    for i in range(len(shapes) - 2, -1, -1):
        try:
            cur = shapes[i].merge_with(cur)
        except ValueError:
            raise op_error(
                op,
                f"Shapes {shape_str(shapes[i])} and {shape_str(cur)} are not "
                f"compatible. From merging shape {i} with other shapes.",
            ) from None
    return [cur]


def _segment_shape(op: Any) -> list[TensorShape]:
    data, ids, num = (t.shape for t in op.inputs)
    if num.ndims not in (None, 0):
        raise op_error(op, f"Shape must be rank 0 but is rank {num.ndims}")
    if ids.ndims is None:
        return [unknown_shape()]
    if data.ndims is not None:
        if data.ndims < ids.ndims:
            raise op_error(op, f"Shape must be at least rank {ids.ndims} but is rank {data.ndims}")
        try:
            TensorShape(data.as_list()[: ids.ndims]).merge_with(ids)
        except ValueError as e:
            raise op_error(op, str(e)) from None
    n = constant_value(op.inputs[2])
    first = None if n is None else int(n)
    if data.ndims is None:
        return [TensorShape([first]).concatenate(unknown_shape())]
    return [TensorShape([first] + data.as_list()[ids.ndims :])]


for _name, _types in (
    ("Sum", NUMBER),
    ("Mean", NUMBER),
    ("Prod", NUMBER),
    ("Max", NUMBER),
    ("Min", NUMBER),
):
    register_op(
        _name,
        inputs=["input: T", "reduction_indices: Tidx"],
        outputs=["output: T"],
        attrs=["keep_dims: bool = false", f"T: {{{_types}}}", "Tidx: {int32, int64} = DT_INT32"],
        shape_fn=_reduction_shape,
    )
for _name in ("All", "Any"):
    register_op(
        _name,
        inputs=["input: bool", "reduction_indices: Tidx"],
        outputs=["output: bool"],
        attrs=["keep_dims: bool = false", "Tidx: {int32, int64} = DT_INT32"],
        shape_fn=_reduction_shape,
    )
for _name in ("ArgMax", "ArgMin"):
    register_op(
        _name,
        inputs=["input: T", "dimension: Tidx"],
        outputs=["output: output_type"],
        attrs=[
            f"T: {{{NUMBER}}}",
            "Tidx: {int32, int64} = DT_INT32",
            "output_type: {int32, int64} = DT_INT64",
        ],
        shape_fn=_arg_shape,
    )
register_op(
    "AddN",
    inputs=["inputs: N * T"],
    outputs=["sum: T"],
    attrs=["N: int >= 1", f"T: {{{NUMBER}, variant}}"],
    shape_fn=_add_n_shape,
    is_commutative=True,
)
register_op(
    "UnsortedSegmentSum",
    inputs=["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
    outputs=["output: T"],
    attrs=[
        f"T: {{{NUMBER}}}",
        "Tindices: {int32, int64}",
        "Tnumsegments: {int32, int64} = DT_INT32",
    ],
    shape_fn=_segment_shape,
)
for _name in ("Cumsum", "Cumprod"):
    register_op(
        _name,
        inputs=["x: T", "axis: Tidx"],
        outputs=["out: T"],
        attrs=[
            "exclusive: bool = false",
            "reverse: bool = false",
            f"T: {{{NUMBER}}}",
            "Tidx: {int32, int64} = DT_INT32",
        ],
        shape_fn=unchanged_shape,
    )
