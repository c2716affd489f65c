"""Kernels of the checkpoint ops and of `StringJoin`.

Ops: `SaveV2`, `RestoreV2`, `MergeV2Checkpoints`, `ShardedFilename`, `ShardedFilespec`.

`SaveV2` entries with a `shape_and_slices` spec save slices of a full tensor (the parts of a
partitioned variable); `RestoreV2` assembles any requested slice from whatever slices were
saved (see `checkpoint_slices`).

They do their file I/O in the process that runs them, i.e. on the task the op is placed on
(a parameter server writes the shard of its own variables). The file format lives in
`tensorweave.kernels.checkpoint_format`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels import checkpoint_format as fmt
from tensorweave.kernels.registry import KernelNode, has_kernel, register_kernel


def _scalar_str(value: Any, what: str) -> str:
    arr = np.asarray(value)
    if arr.size != 1:
        raise errors.InvalidArgumentError(
            None, None, f"Input '{what}' must be a scalar string, got shape {list(arr.shape)}"
        )
    item = arr.reshape(-1)[0]
    return item.decode("utf-8") if isinstance(item, bytes) else str(item)


def _str_list(value: Any, n: int, what: str) -> list[str]:
    arr = np.asarray(value, dtype=object).reshape(-1)
    if arr.size != n:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Input '{what}' must have {n} elements (one per tensor) but has {arr.size}",
        )
    return [x.decode("utf-8") if isinstance(x, bytes) else str(x) for x in arr]


def _checked_prefix(ctx: Any, node: KernelNode, prefix: str) -> str:
    """Checks a checkpoint prefix and the files named after it against the sandbox."""
    what = f"{node.op} (node {node.name})"
    for path in (prefix, fmt.index_path(prefix), fmt.data_path(prefix, 0, 1)):
        ctx.checked_path(what, path)
    return prefix


@register_kernel("SaveV2")
def _save_v2(node: KernelNode) -> Any:
    def compute(
        ctx: Any, prefix: Any, tensor_names: Any, shape_and_slices: Any, *tensors: Any
    ) -> None:
        path = _checked_prefix(ctx, node, _scalar_str(prefix, "prefix"))
        names = _str_list(tensor_names, len(tensors), "tensor_names")
        specs = _str_list(shape_and_slices, len(tensors), "shape_and_slices")
        fmt.write_checkpoint(path, names, tensors, specs)

    return compute


@register_kernel("RestoreV2")
def _restore_v2(node: KernelNode) -> Any:
    wanted = [d.base_dtype for d in node.output_dtypes]

    def compute(ctx: Any, prefix: Any, tensor_names: Any, shape_and_slices: Any) -> Any:
        path = _checked_prefix(ctx, node, _scalar_str(prefix, "prefix"))
        names = _str_list(tensor_names, len(wanted), "tensor_names")
        specs = _str_list(shape_and_slices, len(wanted), "shape_and_slices")
        reader = fmt.CheckpointReader(path)
        indices = []
        for name, dtype, spec in zip(names, wanted, specs):
            entry = reader.entry(name)
            if entry["dtype"] != dtype.name:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"tensor_name = {name}; expected dtype {dtype.name} does not "
                    f"equal original dtype {entry['dtype']}",
                )
            indices.append(_check_spec(name, spec, entry["shape"]) if spec else None)
        out = [_restored(v) for v in reader.read_slices(names, indices)]
        return out if len(out) != 1 else out[0]

    return compute


def _check_spec(name: str, spec: str, saved_shape: list[int]) -> tuple[slice, ...]:
    """The NumPy index of `spec`, checked against the saved full shape."""
    full, index = fmt.parse_shape_and_slice(spec)
    if tuple(full) != tuple(saved_shape):
        raise errors.InvalidArgumentError(
            None,
            None,
            f"tensor_name = {name}; shape in shape_and_slice spec "
            f"{shape_str(full)} does not match the shape stored in checkpoint: "
            f"{shape_str(saved_shape)}",
        )
    return index


def _restored(value: np.ndarray) -> np.ndarray:
    # NOTE: read-only, so Assign can keep the array without copying it again.
    value.flags.writeable = False
    return value


@register_kernel("MergeV2Checkpoints")
def _merge_v2(node: KernelNode) -> Any:
    delete_old_dirs = bool(node.attrs.get("delete_old_dirs", True))

    def compute(ctx: Any, checkpoint_prefixes: Any, destination_prefix: Any) -> None:
        prefixes = [
            x.decode("utf-8") if isinstance(x, bytes) else str(x)
            for x in np.asarray(checkpoint_prefixes, dtype=object).reshape(-1)
        ]
        dest = _checked_prefix(ctx, node, _scalar_str(destination_prefix,
                                                      "destination_prefix"))
        for part in prefixes:
            _checked_prefix(ctx, node, part)
        fmt.merge_checkpoints(prefixes, dest, delete_old_dirs)

    return compute


@register_kernel("ShardedFilename")
def _sharded_filename(node: KernelNode) -> Any:
    def compute(ctx: Any, basename: Any, shard: Any, num_shards: Any) -> Any:
        base = _scalar_str(basename, "basename")
        name = f"{base}-{int(shard):05d}-of-{int(num_shards):05d}"
        return np.array(name.encode("utf-8"), dtype=object)

    return compute


@register_kernel("ShardedFilespec")
def _sharded_filespec(node: KernelNode) -> Any:
    def compute(ctx: Any, basename: Any, num_shards: Any) -> Any:
        base = _scalar_str(basename, "basename")
        spec = f"{base}-?????-of-{int(num_shards):05d}"
        return np.array(spec.encode("utf-8"), dtype=object)

    return compute


def _string_join(node: KernelNode) -> Any:
    sep = node.attrs.get("separator", "")
    sep = sep.encode("utf-8") if isinstance(sep, str) else bytes(sep)

    def compute(ctx: Any, *inputs: Any) -> Any:
        arrays = [np.asarray(x, dtype=object) for x in inputs]
        if not arrays:
            return np.array(b"", dtype=object)
        shapes = {a.shape for a in arrays if a.ndim}
        if len(shapes) > 1:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"StringJoin: non-scalar inputs must have the same shape, got {sorted(shapes)}",
            )
        shape = shapes.pop() if shapes else ()
        cols = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
        out = np.empty(int(np.prod(shape, dtype=np.int64)), dtype=object)
        for i in range(out.size):
            out[i] = sep.join(c[i] for c in cols)
        return out.reshape(shape)

    return compute


if not has_kernel("StringJoin"):
    register_kernel("StringJoin")(_string_join)
