"""String ops (follows `tensorflow/core/ops/string_ops.cc` and `fingerprint_ops.cc`):
`AsString`, `ReduceJoin`, `RegexReplace`, `StringSplit`, `StringStrip`, `StringToNumber`,
`StringToHashBucket(Fast|Strong)`, `Substr`,
`Fingerprint`. Strings are bytes."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_defs.array_more import broadcast_static
from tensorweave.framework.shape_inference import static_value
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape


def _same(op: Any) -> list[TensorShape]:
    return [op.inputs[0].shape]


def _reduce_join_shape(op: Any) -> list[TensorShape]:
    x, axes = op.inputs[0].shape, static_value(op.inputs[1])
    if x.ndims is None or axes is None:
        return [unknown_shape()]
    rank = x.ndims
    axes = {int(a) % rank for a in axes.reshape(-1)} if rank else set()
    if not axes and static_value(op.inputs[1]).size == 0:
        axes = set(range(rank))
    keep = op.get_attr("keep_dims")
    dims = [1 if i in axes else d for i, d in enumerate(x.as_list()) if keep or i not in axes]
    return [TensorShape(dims)]


register_op(
    "AsString",
    inputs=["input: T"],
    outputs=["output: string"],
    attrs=["T: {float, double, int32, uint8, int16, int8, int64, bool, half, complex64, "
           "complex128, uint16, uint32, uint64}",
           "precision: int = -1", "scientific: bool = false", "shortest: bool = false",
           "width: int = -1", "fill: string = ''"],
    shape_fn=_same,
)
register_op(
    "ReduceJoin",
    inputs=["inputs: string", "reduction_indices: int32"],
    outputs=["output: string"],
    attrs=["keep_dims: bool = false", "separator: string = ''"],
    shape_fn=_reduce_join_shape,
)
register_op(
    "RegexReplace",
    inputs=["input: string", "pattern: string", "rewrite: string"],
    outputs=["output: string"],
    attrs=["replace_global: bool = true"],
    shape_fn=_same,
)
register_op(
    "StringSplit",
    inputs=["input: string", "delimiter: string"],
    outputs=["indices: int64", "values: string", "shape: int64"],
    attrs=["skip_empty: bool = true"],
    shape_fn=lambda op: [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])],
)
register_op("StringStrip", inputs=["input: string"], outputs=["output: string"], shape_fn=_same)
register_op(
    "StringToNumber",
    inputs=["string_tensor: string"],
    outputs=["output: out_type"],
    attrs=["out_type: {float, double, int32, int64} = DT_FLOAT"],
    shape_fn=_same,
)
register_op(
    "StringToHashBucket",
    inputs=["string_tensor: string"],
    outputs=["output: int64"],
    attrs=["num_buckets: int >= 1"],
    shape_fn=_same,
)
register_op(
    "StringToHashBucketFast",
    inputs=["input: string"],
    outputs=["output: int64"],
    attrs=["num_buckets: int >= 1"],
    shape_fn=_same,
)
register_op(
    "StringToHashBucketStrong",
    inputs=["input: string"],
    outputs=["output: int64"],
    attrs=["num_buckets: int >= 1", "key: list(int)"],
    shape_fn=_same,
)
register_op(
    "Substr",
    inputs=["input: string", "pos: T", "len: T"],
    outputs=["output: string"],
    attrs=["T: {int32, int64}", "unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'"],
    shape_fn=lambda op: [broadcast_static(op, op.inputs[0].shape, op.inputs[1].shape)],
)
# NOTE: `EncodeBase64` / `DecodeBase64` are defined with the parsing ops (op_defs/parsing).
register_op(
    "Fingerprint",
    inputs=["data: T", "method: string"],
    outputs=["fingerprint: uint8"],
    attrs=["T: type"],
    shape_fn=lambda op: [TensorShape(
        [op.inputs[0].shape.as_list()[0] if op.inputs[0].shape.ndims else None, 8])],
)
