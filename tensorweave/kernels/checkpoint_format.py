"""Checkpoint files: TensorFlow's V2 format, written and read; tensorweave 0.1's, read.

Read and written by the `SaveV2`, `RestoreV2` and `MergeV2Checkpoints` kernels, and by
`tf.train.NewCheckpointReader` / `load_checkpoint`. A checkpoint with prefix `P` is
`P.index` and `P.data-0000K-of-0000N` (K < N), in TensorFlow's tensor-bundle format
(`tensor_bundle`, `sstable`): checkpoints move between tensorweave and TensorFlow both ways,
partitioned variables (slices) included. Checkpoints written by tensorweave 0.1 (a JSON
index and safetensors shards, `checkpoint_legacy`) are still read.

Atomicity: every file is written to a unique temporary name, fsynced and moved into place
with `os.replace`; the index is written after all data files, so a checkpoint whose index
exists is complete. A crash mid-save leaves at most orphaned data or temporary files.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels import checkpoint_legacy as legacy
from tensorweave.kernels import checkpoint_slices as slices
from tensorweave.kernels import tensor_bundle as bundle


def index_path(prefix: str) -> str:
    """`<prefix>.index`."""
    return prefix + ".index"


def data_path(prefix: str, shard: int, num_shards: int) -> str:
    """`<prefix>.data-<shard:05d>-of-<num_shards:05d>`."""
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


# ------------------------------------------------------------------ file system
@contextlib.contextmanager
def os_errors(what: str) -> Iterator[None]:
    """Converts `OSError`s raised inside into the matching `OpError` naming `what`."""
    try:
        yield
    except OSError as e:
        msg = f"{what}: {e.strerror or e}"
        if isinstance(e, FileNotFoundError):
            raise errors.NotFoundError(None, None, msg) from e
        if isinstance(e, PermissionError):
            raise errors.PermissionDeniedError(None, None, msg) from e
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise errors.ResourceExhaustedError(None, None, msg) from e
        if isinstance(e, NotADirectoryError | IsADirectoryError | FileExistsError):
            raise errors.FailedPreconditionError(None, None, msg) from e
        raise errors.UnknownError(None, None, msg) from e


def _fsync_path(path: str, directory: bool = False) -> None:
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        if directory:  # NOTE: some platforms cannot open directories; best effort.
            return
        raise
    try:
        os.fsync(fd)
    except OSError:
        if not directory:
            raise
    finally:
        os.close(fd)


def atomic_write(path: str, writer: Callable[[str], None]) -> None:
    """Writes `path` atomically: `writer(tmp_path)`, fsync, `os.replace`, fsync of the dir.

    Readers see the old file or the complete new one, never a partial one.

    Raises:
      OSError: from the file system; the temporary file is removed.
    """
    import uuid  # NOTE: not at the top: only processes that save load it (start-up)

    tmp = f"{path}.tmp-{uuid.uuid4().hex}"
    try:
        writer(tmp)
        _fsync_path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    _fsync_path(os.path.dirname(path) or ".", directory=True)


def make_parent_dir(prefix: str) -> None:
    """Creates the directory of `prefix` and its parents if missing.

    TensorFlow 1.x's `BundleWriter` creates only the last level.

    Raises:
      OpError: from the file system (e.g. `PermissionDeniedError`).
    """
    parent = os.path.dirname(prefix)
    if parent and not os.path.isdir(parent):
        with os_errors(f"Failed to create a directory: {parent}"):
            os.makedirs(parent, exist_ok=True)


# ---------------------------------------------------------------------- writing
def write_checkpoint(
    prefix: str,
    names: Sequence[str],
    values: Sequence[Any],
    specs: Sequence[str] | None = None,
) -> None:
    """Writes a one-shard checkpoint: `<prefix>.data-00000-of-00001`, then `<prefix>.index`.

    Follows TensorFlow's `BundleWriter` (`Add` / `AddSlice` / `Finish`).

    Args:
      prefix: str, the checkpoint prefix.
      names: the checkpoint keys.
      values: the arrays, one per key.
      specs: `shape_and_slices` entries (default all `""`): a non-empty one saves its
        value as that slice of the full tensor `name` (several slices may share a name).

    Raises:
      InvalidArgumentError: for duplicate names, unsupported dtypes, or a value whose
        shape differs from its slice spec.
      NotFoundError, PermissionDeniedError, ResourceExhaustedError, UnknownError: from
        the file system.
    """
    chunks: list[bytes] = []
    tensors: dict[str, dict[str, Any]] = {}
    offset = 0
    specs = specs if specs is not None else [""] * len(names)
    for name, value, spec in zip(names, values, specs):
        # NOTE: as TF's AddSlice, a slice covering the whole tensor is saved as a plain entry.
        sliced = _checked_slice(name, value, spec) if spec else None
        if sliced is None and name in tensors:
            raise errors.InvalidArgumentError(
                None, None, f"Duplicate tensor name {name!r} in the tensors to save"
            )
        fields, data = bundle.encode(name, value)
        fields.update(storage=bundle.STORAGE, shard=0, offset=offset)
        chunks.extend(data)
        offset += fields["size"]
        if sliced is not None:
            slices.add_slice(tensors, name, sliced[1], sliced[0], fields)
        else:
            tensors[name] = fields
    make_parent_dir(prefix)
    data_file = data_path(prefix, 0, 1)

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            for chunk in chunks:
                f.write(chunk)

    with os_errors(f"Failed to write checkpoint data file {data_file}"):
        atomic_write(data_file, write)
    write_index(prefix, 1, tensors)


def _checked_slice(name: str, value: Any, spec: str) -> tuple[str, tuple[int, ...]] | None:
    """(slice text, full shape) of a partial slice; None for one covering the whole tensor."""
    full, index = parse_shape_and_slice(spec)
    want = tuple(len(range(*s.indices(d))) for s, d in zip(index, full))
    arr = np.asarray(value)
    if arr.shape != want:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Shape in shape_and_slice spec {spec!r} does not match the shape of tensor "
            f"{name}: {shape_str(arr.shape)}",
        )
    return None if want == full else (slices.slice_str(spec), full)


def write_index(prefix: str, num_shards: int, tensors: dict[str, Any]) -> None:
    """Atomically writes `<prefix>.index` (the commit point of a checkpoint).

    Raises:
      OpError: from the file system, as in `write_checkpoint`.
    """
    table = bundle.index_bytes(num_shards, tensors)

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(table)

    path = index_path(prefix)
    with os_errors(f"Failed to write checkpoint index {path}"):
        atomic_write(path, write)


# --------------------------------------------------------------------- reading
def read_index(prefix: str) -> dict[str, Any]:
    """Loads `<prefix>.index` (V2 or tensorweave 0.1): `num_shards` and `tensors`.

    Raises:
      NotFoundError: if the checkpoint does not exist ("Failed to find any matching files").
      DataLossError: if the index is not a readable checkpoint index.
    """
    path = index_path(prefix)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(
            None,
            None,
            f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files "
            f"for {prefix}",
        ) from None
    except OSError as e:
        with os_errors(f"Failed to read checkpoint index {path}"):
            raise e
    if legacy.is_legacy_index(raw):
        return legacy.parse_index(raw, path)
    return bundle.parse_index(raw, path)


def parse_shape_and_slice(spec: str) -> tuple[tuple[int, ...], tuple[slice, ...]]:
    """Parses `"d0 .. dk s0:..:sk"` into the full shape and NumPy slices.

    The slice part is TensorFlow's `TensorSlice` syntax: `-` for a whole dimension,
    `start,length` otherwise.

    Raises:
      InvalidArgumentError: for a malformed spec or a slice outside the full shape.
    """
    parts = spec.split(" ")
    try:
        full = tuple(int(d) for d in parts[:-1])
        specs = parts[-1].split(":") if full else []
        if len(specs) != len(full) or any(d < 0 for d in full):
            raise ValueError(spec)
        index = []
        for d, s in zip(full, specs):
            if s == "-":
                index.append(slice(None))
                continue
            start, length = (int(x) for x in s.split(","))
            if start < 0 or length < 0 or start + length > d:
                raise ValueError(s)
            index.append(slice(start, start + length))
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"Malformed or out-of-range shape_and_slice spec {spec!r}"
        ) from None
    return full, tuple(index)


class CheckpointReader:
    """Reads tensors from a checkpoint (follows TensorFlow's `CheckpointReader`).

    Args:
      prefix: the checkpoint prefix (`<dir>/model.ckpt-100`).

    Raises:
      NotFoundError: if the checkpoint does not exist.
      DataLossError: if its index is corrupt.
    """

    def __init__(self, prefix: str):
        self._prefix = prefix
        self._index = read_index(prefix)
        self._tensors: dict[str, dict[str, Any]] = self._index["tensors"]

    @property
    def prefix(self) -> str:
        """The checkpoint prefix."""
        return self._prefix

    def has_tensor(self, name: str) -> bool:
        """True if `name` is a key of the checkpoint."""
        return name in self._tensors

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        """Key -> saved shape."""
        return {k: list(e["shape"]) for k, e in self._tensors.items()}

    def get_variable_to_dtype_map(self) -> dict[str, dtypes.DType]:
        """Key -> saved dtype."""
        return {k: dtypes.as_dtype(e["dtype"]) for k, e in self._tensors.items()}

    def entry(self, name: str) -> dict[str, Any]:
        """The index entry of `name`.

        Raises:
          NotFoundError: "Key <name> not found in checkpoint".
        """
        entry = self._tensors.get(name)
        if entry is None:
            raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint")
        return entry

    def get_tensor(self, name: str) -> np.ndarray:
        """The saved value of `name` (strings as an object array of bytes).

        Raises:
          NotFoundError: for a missing key or data file.
          DataLossError: for a truncated or corrupt data file.
        """
        return self.read([name])[0]

    def read(self, names: Sequence[str]) -> list[np.ndarray]:
        """The saved values of `names` (slices assembled), reading each shard file once.

        Raises:
          As `get_tensor`; InvalidArgumentError if the saved slices of a key do not
          cover the whole tensor.
        """
        return self.read_slices(names, [None] * len(names))

    def read_slices(
        self, names: Sequence[str], indices: Sequence[Sequence[slice] | None]
    ) -> list[np.ndarray]:
        """The regions `indices` of `names`, assembled from whatever slices were saved.

        `indices` are NumPy slices of the full tensor (from `parse_shape_and_slice`), or
        None for the whole tensor.

        Raises:
          As `read`.
        """
        entries = [self.entry(n) for n in names]
        regions = [slices.region_of(e["shape"], i) for e, i in zip(entries, indices)]
        return slices.read_regions(names, entries, regions, self._read_encoded)

    def _read_encoded(self, items: Sequence[tuple[str, dict]]) -> list[np.ndarray]:
        by_shard: dict[int, list[int]] = {}
        for i, (_, e) in enumerate(items):
            by_shard.setdefault(int(e["shard"]), []).append(i)
        out: list[Any] = [None] * len(items)
        for shard, positions in sorted(by_shard.items()):
            path = self._shard_path(shard)
            if "shards" in self._index:  # tensorweave 0.1
                with legacy.open_shard(path) as (handle, strings):
                    for i in positions:
                        key, entry = items[i]
                        out[i] = legacy.decode(key, entry, handle, strings, path)
                continue
            with os_errors(f"Failed to read checkpoint data file {path}"), open(path, "rb") as f:
                for i in sorted(positions, key=lambda i: int(items[i][1]["offset"])):
                    key, entry = items[i]
                    f.seek(int(entry["offset"]))
                    out[i] = bundle.decode(key, entry, f.read(int(entry["size"])), path)
        return out

    def _shard_path(self, shard: int) -> str:
        n = int(self._index["num_shards"])
        if not 0 <= shard < n:
            raise errors.DataLossError(
                None, None, f"Checkpoint {self._prefix} refers to shard {shard} of {n}"
            )
        path = data_path(self._prefix, shard, n)
        with os_errors(f"Failed to open checkpoint data file {path}"):
            if "shards" in self._index:
                legacy.check_shard_size(self._index, shard, path)
            elif not os.path.exists(path):
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        return path


# --------------------------------------------------------------------- merging
def merge_checkpoints(prefixes: Sequence[str], destination: str, delete_old_dirs: bool) -> None:
    """Merges part checkpoints into one (follows TensorFlow's `MergeBundles`).

    Moves the data files of `prefixes` to `<destination>.data-0000K-of-0000N` (in order),
    writes `<destination>.index` last, then removes the parts' index files and, if
    `delete_old_dirs`, their directories.

    Raises:
      NotFoundError: if a part is missing.
      InvalidArgumentError: if two parts hold the same key.
      DataLossError: for a corrupt part index.
    """
    parts = [read_index(p) for p in prefixes]
    tensors: dict[str, dict[str, Any]] = {}
    offset = 0
    for prefix, part in zip(prefixes, parts):
        for name, entry in part["tensors"].items():
            try:
                slices.merge_entry(tensors, name, entry, offset)
            except errors.InvalidArgumentError as e:
                raise errors.InvalidArgumentError(
                    None, None, f"{e.message} (found again in {prefix})"
                ) from None
        offset += int(part["num_shards"])
    make_parent_dir(destination)
    moved = 0
    for prefix, part in zip(prefixes, parts):
        n = int(part["num_shards"])
        for k in range(n):
            src = data_path(prefix, k, n)
            dst = data_path(destination, moved, offset)
            with os_errors(f"Failed to move checkpoint data file {src} to {dst}"):
                os.replace(src, dst)
            moved += 1
    _fsync_path(os.path.dirname(destination) or ".", directory=True)
    write_index(destination, offset, tensors)
    for prefix in prefixes:
        with contextlib.suppress(OSError):
            os.remove(index_path(prefix))
        if delete_old_dirs:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.dirname(prefix) or ".")
