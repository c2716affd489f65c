"""Checkpoint I/O ops (follows TensorFlow's `core/ops/io_ops.cc`) and `StringJoin`.

Ops: `SaveV2`, `RestoreV2`, `MergeV2Checkpoints`, `ShardedFilename`, `ShardedFilespec`.

The ops run where they are placed: in a cluster each parameter server writes (and reads)
the shard of the variables it holds. The file format is described in
`tensorweave.kernels.checkpoint_format`.

`StringJoin` belongs to TensorFlow's `string_ops`; it is registered here (only when no other
module did) because sharded saves build their temporary prefix with it, as TensorFlow's
Saver does.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework.op_def import op_def_registry, register_op
from tensorweave.framework.op_def_library import apply_op
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


def save_v2(
    prefix: Any, tensor_names: Any, shape_and_slices: Any, tensors: Any, name: str | None = None
) -> Any:
    """Writes `tensors` to the V2 checkpoint `prefix` (follows `gen_io_ops.save_v2`).

    Args:
      prefix: string scalar; writes `<prefix>.data-00000-of-00001` and `<prefix>.index`.
      tensor_names: string `[N]` (or a list of N names), the keys in the checkpoint.
      shape_and_slices: string `[N]`; `""` saves a whole tensor, `"d0 .. dk s0:..:sk"`
        saves the tensor as that slice of the full tensor `tensor_names[i]` (several
        slices may share one name: the parts of a partitioned variable).
      tensors: N tensors of any dtype and shape.
      name: op name.

    Returns:
      The `SaveV2` Operation (no outputs).

    Raises:
      ValueError: if the lengths are statically inconsistent.
      errors.OpError: at run time, `NotFoundError`/`PermissionDeniedError` for unwritable
        paths, `InvalidArgumentError` for a tensor whose shape differs from its slice.
    """
    return apply_op(
        "SaveV2",
        prefix=prefix,
        tensor_names=tensor_names,
        shape_and_slices=shape_and_slices,
        tensors=list(tensors),
        name=name,
    )


def restore_v2(
    prefix: Any, tensor_names: Any, shape_and_slices: Any, dtypes: Any, name: str | None = None
) -> list[Any]:
    """Reads tensors from the V2 checkpoint `prefix` (follows `gen_io_ops.restore_v2`).

    Args:
      prefix: string scalar.
      tensor_names: string `[N]`, the keys to read.
      shape_and_slices: string `[N]`; `""` reads a whole tensor, `"d0 .. dk s0:..:sk"`
        checks the saved shape is `[d0..dk]` and reads that slice.
      dtypes: N dtypes, the expected dtypes of the saved tensors.
      name: op name.

    Returns:
      A list of N tensors.

    Raises:
      errors.NotFoundError: at run time, for a missing checkpoint or key.
      errors.InvalidArgumentError: at run time, for a dtype or shape mismatch.
      errors.DataLossError: at run time, for corrupt or truncated files.
    """
    types = [dtypes_lib.as_dtype(d).base_dtype for d in dtypes]
    out = apply_op(
        "RestoreV2",
        prefix=prefix,
        tensor_names=tensor_names,
        shape_and_slices=shape_and_slices,
        dtypes=types,
        name=name,
    )
    return list(out[0])


def merge_v2_checkpoints(
    checkpoint_prefixes: Any,
    destination_prefix: Any,
    delete_old_dirs: bool = True,
    name: str | None = None,
) -> Any:
    """Merges V2 checkpoints into one (follows `gen_io_ops.merge_v2_checkpoints`).

    Args:
      checkpoint_prefixes: string `[K]`, the prefixes of the part checkpoints.
      destination_prefix: string scalar, the merged checkpoint's prefix.
      delete_old_dirs: remove the (then empty) directories of the parts.
      name: op name.

    Returns:
      The `MergeV2Checkpoints` Operation; its data files are moved, never copied, and the
      merged index is written last.
    """
    return apply_op(
        "MergeV2Checkpoints",
        checkpoint_prefixes=checkpoint_prefixes,
        destination_prefix=destination_prefix,
        delete_old_dirs=delete_old_dirs,
        name=name,
    )


def sharded_filename(basename: Any, shard: Any, num_shards: Any, name: str | None = None):
    """`"%s-%05d-of-%05d" % (basename, shard, num_shards)` (`gen_io_ops.sharded_filename`)."""
    return apply_op(
        "ShardedFilename", basename=basename, shard=shard, num_shards=num_shards, name=name
    )


def sharded_filespec(basename: Any, num_shards: Any, name: str | None = None) -> Any:
    """`"%s-?????-of-%05d" % (basename, num_shards)` (`gen_io_ops.sharded_filespec`)."""
    return apply_op("ShardedFilespec", basename=basename, num_shards=num_shards, name=name)


def string_join(inputs: Any, separator: str = "", name: str | None = None) -> Any:
    """Concatenates string tensors element-wise, scalars broadcast (`tf.strings.join`)."""
    return apply_op("StringJoin", inputs=list(inputs), separator=separator, name=name)


__all__: list[str] = []
