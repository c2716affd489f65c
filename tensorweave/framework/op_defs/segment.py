"""Segment reductions, sparse segment reductions and `Bincount`.

Follows `tensorflow/core/ops/math_ops.cc`: `SegmentSum|Mean|Prod|Max|Min` (sorted ids,
one output row per id up to the largest), `UnsortedSegmentMax|Min|Prod` (`num_segments`
rows), `SparseSegmentSum|Mean|SqrtN` (rows picked by `indices` first) and `Bincount`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_defs._types import NUMBER, REAL_NUMBER
from tensorweave.framework.shape_inference import (
    merge_shapes,
    op_error,
    static_int,
    with_rank,
)
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape


def _segment_shape(op: Any) -> list[TensorShape]:
    data = op.inputs[0].shape
    with_rank(op, op.inputs[1].shape, 1)
    if data.ndims is None:
        return [unknown_shape()]
    if data.ndims < 1:
        raise op_error(op, "Shape must be at least rank 1 but is rank 0")
    # As in TensorFlow, a mismatch of data's first dimension and the ids is a run-time error.
    return [TensorShape([None] + data.as_list()[1:])]


def _unsorted_segment_shape(op: Any) -> list[TensorShape]:
    data, ids = op.inputs[0].shape, op.inputs[1].shape
    with_rank(op, op.inputs[2].shape, 0)
    if ids.ndims is None or data.ndims is None:
        return [unknown_shape()]
    if data.ndims < ids.ndims:
        raise op_error(op, f"Shape must be at least rank {ids.ndims} but is rank {data.ndims}")
    merge_shapes(op, TensorShape(data.as_list()[: ids.ndims]), ids)
    return [TensorShape([static_int(op.inputs[2])] + data.as_list()[ids.ndims :])]


def _sparse_segment_shape(op: Any) -> list[TensorShape]:
    data = op.inputs[0].shape
    with_rank(op, op.inputs[1].shape, 1)
    with_rank(op, op.inputs[2].shape, 1)
    if data.ndims is None:
        return [unknown_shape()]
    return [TensorShape([None] + data.as_list()[1:])]


for _name, _types in (
    ("SegmentSum", NUMBER),
    ("SegmentMean", NUMBER),
    ("SegmentProd", NUMBER),
    ("SegmentMax", REAL_NUMBER),
    ("SegmentMin", REAL_NUMBER),
):
    register_op(
        _name,
        inputs=["data: T", "segment_ids: Tindices"],
        outputs=["output: T"],
        attrs=[f"T: {{{_types}}}", "Tindices: {int32, int64}"],
        shape_fn=_segment_shape,
    )
for _name, _types in (
    ("UnsortedSegmentMax", REAL_NUMBER),
    ("UnsortedSegmentMin", REAL_NUMBER),
    ("UnsortedSegmentProd", NUMBER),
):
    register_op(
        _name,
        inputs=["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
        outputs=["output: T"],
        attrs=[
            f"T: {{{_types}}}",
            "Tindices: {int32, int64}",
            "Tnumsegments: {int32, int64} = DT_INT32",
        ],
        shape_fn=_unsorted_segment_shape,
    )
for _name, _types in (
    ("SparseSegmentSum", REAL_NUMBER),
    ("SparseSegmentMean", "half, float, double"),
    ("SparseSegmentSqrtN", "half, float, double"),
):
    register_op(
        _name,
        inputs=["data: T", "indices: Tidx", "segment_ids: Tsegmentids"],
        outputs=["output: T"],
        attrs=[
            f"T: {{{_types}}}",
            "Tidx: {int32, int64} = DT_INT32",
            "Tsegmentids: {int32, int64} = DT_INT32",
        ],
        shape_fn=_sparse_segment_shape,
    )
register_op(
    "Bincount",
    inputs=["arr: int32", "size: int32", "weights: T"],
    outputs=["bins: T"],
    attrs=["T: {int32, int64, float, double}"],
    shape_fn=lambda op: [TensorShape([static_int(op.inputs[1])])],
)
