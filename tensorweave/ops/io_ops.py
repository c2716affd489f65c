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
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.gradient_registry import gradient_registry, no_gradient

for _op_type in ("MergeV2Checkpoints", "RestoreV2", "SaveV2", "ShardedFilename", "ShardedFilespec"):
    no_gradient(_op_type)
if "StringJoin" not in gradient_registry:  # unless a string-ops module declared it
    no_gradient("StringJoin")


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
