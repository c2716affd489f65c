"""Checkpoint and file op definitions: SaveV2, RestoreV2, MergeV2Checkpoints, ...

Follows TensorFlow's `core/ops/io_ops.cc` (op types, input/attr names and defaults);
`StringJoin` (from `string_ops.cc`) unless another module defined it.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import op_def_registry, register_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.framework.tensor_util import constant_value


def _check_rank(op: Any, index: int, rank: int) -> TensorShape:
    shape = op.inputs[index].shape
    if shape.ndims is not None and shape.ndims != rank:
        given = ", ".join(str(t.shape) for t in op.inputs)
        raise ValueError(
            f"Shape must be rank {rank} but is rank {shape.ndims} for '{op.name}' "
            f"(op: '{op.type}') with input shapes: {given}."
        )
    return shape


def _check_length(op: Any, index: int, n: int, what: str) -> None:
    shape = _check_rank(op, index, 1)
    if shape.ndims == 1 and shape[0].value is not None and shape[0].value != n:
        raise ValueError(
            f"Dimension 0 of input '{what}' must be {n} (the number of tensors) but is "
            f"{shape[0].value} for '{op.name}' (op: '{op.type}')."
        )


def _save_v2_shape(op: Any) -> list[Any]:
    n = len(op.inputs) - 3
    _check_rank(op, 0, 0)
    _check_length(op, 1, n, "tensor_names")
    _check_length(op, 2, n, "shape_and_slices")
    return []


def slice_shape_of_spec(spec: str) -> TensorShape:
    """The shape of the tensor a `shape_and_slices` entry asks for.

    `""` means the whole saved tensor (shape unknown statically); otherwise the entry is
    `"dim0 ... dimN-1 slice0:...:sliceN-1"` where a slice is `-` (the whole dimension) or
    `start,length` (TensorFlow's `TensorSlice` syntax).

    Raises:
      ValueError: for a malformed entry.
    """
    if not spec:
        return unknown_shape()
    parts = spec.split(" ")
    try:
        full = [int(d) for d in parts[:-1]]
        slices = parts[-1].split(":") if full else []
    except ValueError:
        raise ValueError(f"Malformed shape_and_slice spec {spec!r}") from None
    if len(slices) != len(full) or any(d < 0 for d in full):
        raise ValueError(f"Malformed shape_and_slice spec {spec!r}")
    dims = []
    for d, s in zip(full, slices):
        if s == "-":
            dims.append(d)
            continue
        try:
            _, length = (int(x) for x in s.split(","))
        except ValueError:
            raise ValueError(f"Malformed slice {s!r} in shape_and_slice spec {spec!r}") from None
        dims.append(length)
    return TensorShape(dims)


def _restore_v2_shape(op: Any) -> list[Any]:
    n = len(op.outputs)
    _check_rank(op, 0, 0)
    _check_length(op, 1, n, "tensor_names")
    _check_length(op, 2, n, "shape_and_slices")
    specs = constant_value(op.inputs[2])
    if specs is None:
        return [unknown_shape() for _ in range(n)]
    return [slice_shape_of_spec(_as_str(s)) for s in specs.reshape(-1)]


def _merge_shape(op: Any) -> list[Any]:
    _check_rank(op, 0, 1)
    _check_rank(op, 1, 0)
    return []


def _scalars_shape(op: Any) -> list[Any]:
    for i in range(len(op.inputs)):
        _check_rank(op, i, 0)
    return [TensorShape([])]


def _string_join_shape(op: Any) -> list[Any]:
    out = TensorShape([])
    for t in op.inputs:
        if t.shape.ndims == 0:
            continue
        if out.ndims == 0:
            out = t.shape
            continue
        if not out.is_compatible_with(t.shape):
            raise ValueError(
                f"Non-scalar inputs of '{op.name}' (op: 'StringJoin') must have the same "
                f"shape, got {out} and {t.shape}."
            )
        out = out.merge_with(t.shape)
    return [out]


def _as_str(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


register_op(
    "SaveV2",
    inputs=[
        "prefix: string",
        "tensor_names: string",
        "shape_and_slices: string",
        "tensors: dtypes",
    ],
    attrs=["dtypes: list(type)"],
    is_stateful=True,
    shape_fn=_save_v2_shape,
)
register_op(
    "RestoreV2",
    inputs=["prefix: string", "tensor_names: string", "shape_and_slices: string"],
    outputs=["tensors: dtypes"],
    attrs=["dtypes: list(type) >= 1"],
    is_stateful=True,
    shape_fn=_restore_v2_shape,
)
register_op(
    "MergeV2Checkpoints",
    inputs=["checkpoint_prefixes: string", "destination_prefix: string"],
    attrs=["delete_old_dirs: bool = true"],
    is_stateful=True,
    shape_fn=_merge_shape,
)
register_op(
    "ShardedFilename",
    inputs=["basename: string", "shard: int32", "num_shards: int32"],
    outputs=["filename: string"],
    shape_fn=_scalars_shape,
)
register_op(
    "ShardedFilespec",
    inputs=["basename: string", "num_shards: int32"],
    outputs=["filename: string"],
    shape_fn=_scalars_shape,
)
if "StringJoin" not in op_def_registry:
    register_op(
        "StringJoin",
        inputs=["inputs: N * string"],
        outputs=["output: string"],
        attrs=["N: int >= 0", "separator: string = ''"],
        shape_fn=_string_join_shape,
    )
