"""Miscellaneous ops (follows `tensorflow/core/ops`): `Timestamp`, `SerializeSparse`,
`SerializeManySparse`, `DeserializeManySparse`, `ExtractImagePatches`, `ExtractVolumePatches`,
`RandomIndexShuffle`."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_REAL = ("T: {float, double, int32, uint8, int16, int8, int64, uint16, half, uint32, uint64, "
         "complex64, complex128, bool}")


def _patches_shape(op: Any, rank: int) -> list[TensorShape]:
    x = op.inputs[0].shape
    return [unknown_shape(rank) if x.ndims in (None, rank) else unknown_shape()]


register_op("Timestamp", outputs=["ts: double"], is_stateful=True,
            shape_fn=lambda op: [TensorShape([])])
register_op(
    "SerializeSparse",
    inputs=["sparse_indices: int64", "sparse_values: T", "sparse_shape: int64"],
    outputs=["serialized_sparse: out_type"],
    attrs=["T: type", "out_type: {string, variant} = DT_STRING"],
    shape_fn=lambda op: [TensorShape([3])],
)
register_op(
    "SerializeManySparse",
    inputs=["sparse_indices: int64", "sparse_values: T", "sparse_shape: int64"],
    outputs=["serialized_sparse: out_type"],
    attrs=["T: type", "out_type: {string, variant} = DT_STRING"],
    shape_fn=lambda op: [TensorShape([None, 3])],
)
register_op(
    "DeserializeManySparse",
    inputs=["serialized_sparse: string"],
    outputs=["sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64"],
    attrs=["dtype: type"],
    shape_fn=lambda op: [TensorShape([None, None]), TensorShape([None]), TensorShape([None])],
)
register_op(
    "ExtractImagePatches",
    inputs=["images: T"],
    outputs=["patches: T"],
    attrs=["ksizes: list(int) >= 4", "strides: list(int) >= 4", "rates: list(int) >= 4",
           _REAL, "padding: {'SAME', 'VALID'}"],
    shape_fn=lambda op: _patches_shape(op, 4),
)
register_op(
    "ExtractVolumePatches",
    inputs=["input: T"],
    outputs=["patches: T"],
    attrs=["ksizes: list(int) >= 5", "strides: list(int) >= 5", _REAL.replace(", bool", ""),
           "padding: {'SAME', 'VALID'}"],
    shape_fn=lambda op: _patches_shape(op, 5),
)
register_op(
    "RandomIndexShuffle",
    inputs=["index: dtype", "seed: Tseed", "max_index: dtype"],
    outputs=["output: dtype"],
    attrs=["rounds: int = 4", "dtype: {int32, uint32, int64, uint64}",
           "Tseed: {int32, uint32, int64, uint64}"],
    shape_fn=lambda op: [op.inputs[0].shape],
)
