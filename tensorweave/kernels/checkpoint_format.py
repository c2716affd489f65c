"""The tensorweave checkpoint format: TensorFlow's V2 file layout, safetensors payload.

Read and written by the `SaveV2`, `RestoreV2` and `MergeV2Checkpoints` kernels.

A checkpoint with prefix `P` is:

* `P.data-0000K-of-0000N` (K < N): one safetensors file per shard. Tensors whose dtype
  safetensors stores natively (bool, [u]int8..64, float16/32/64, complex64) are stored
  under their checkpoint key; complex128 is stored as a float64 array with a trailing
  dimension of 2 (real, imaginary). Strings cannot be stored by safetensors: they go into
  the shard's safetensors `__metadata__` under `"tensorweave.strings"`, a JSON object
  `{key: [base64 of each element, row-major]}` (the safetensors header is limited to
  100 MB, which bounds the string payload of one shard).
* Slices (`SaveV2` with a non-empty `shape_and_slices` entry, e.g. the parts of a
  partitioned variable) are stored under `<key>:slice(<slice>)` and indexed under the
  full tensor's key; see `checkpoint_slices`.
* `P.index`: UTF-8 JSON, written last::

      {"format": "tensorweave-checkpoint", "version": 1, "num_shards": N,
       "shards": [{"file": "P.data-00000-of-0000N", "bytes": 1234}, ...],
       "tensors": {key: {"shard": K, "dtype": "float32", "shape": [2, 3],
                         "storage": "safetensors" | "complex_pairs" | "metadata",
                         "crc32": 305419896}}}

  `file` is informational (the base name at write time); readers locate shard K as
  `P.data-0000K-of-0000N`, so a checkpoint can be renamed or moved as a whole. `crc32`
  is zlib's CRC-32 of the tensor's little-endian bytes (strings: of each element's 8-byte
  little-endian length followed by its bytes).

Atomicity: every file is written to a unique temporary name, fsynced and moved into place
with `os.replace`; the index is written after all data files, so a checkpoint whose index
exists is complete. A crash mid-save leaves at most orphaned data or temporary files.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import json
import os
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels import checkpoint_slices as slices

FORMAT_NAME = "tensorweave-checkpoint"
FORMAT_VERSION = 1
_STRINGS_KEY = "tensorweave.strings"
_NATIVE = frozenset(
    [
        "bool",
        "int8",
        "uint8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
    ]
)


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


# -------------------------------------------------------------------- encoding
def _crc_bytes(arr: np.ndarray) -> int:
    flat = _contiguous(arr).reshape(-1)
    return zlib.crc32(flat.view(np.uint8)) if flat.size else 0


def _crc_strings(items: Sequence[bytes]) -> int:
    crc = 0
    for s in items:
        crc = zlib.crc32(len(s).to_bytes(8, "little"), crc)
        crc = zlib.crc32(s, crc)
    return crc


def _contiguous(arr: np.ndarray) -> np.ndarray:
    # NOTE: not np.ascontiguousarray, which turns 0-d arrays into 1-d ones.
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


def _little_endian(arr: np.ndarray) -> np.ndarray:
    arr = _contiguous(arr)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr


def _encode(name: str, value: Any, body: dict, strings: dict) -> dict[str, Any]:
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind in "SU":
        items = [x if isinstance(x, bytes) else str(x).encode() for x in arr.reshape(-1)]
        strings[name] = [base64.b64encode(s).decode("ascii") for s in items]
        return _entry("string", arr.shape, "metadata", _crc_strings(items))
    try:
        dtype = dtypes.as_dtype(arr.dtype)
    except TypeError:
        dtype = None
    if dtype is None or dtype.name not in _NATIVE | {"complex128"}:
        raise errors.InvalidArgumentError(
            None, None, f"Cannot save tensor {name!r} of unsupported dtype {arr.dtype}"
        )
    arr = _little_endian(arr)
    crc = _crc_bytes(arr)
    if dtype.name == "complex128":
        body[name] = _contiguous(arr.reshape(-1).view(np.float64).reshape(arr.shape + (2,)))
        return _entry(dtype.name, arr.shape, "complex_pairs", crc)
    body[name] = arr
    return _entry(dtype.name, arr.shape, "safetensors", crc)


def _entry(dtype: str, shape: Sequence[int], storage: str, crc: int) -> dict[str, Any]:
    return {
        "shard": 0,
        "dtype": dtype,
        "shape": [int(d) for d in shape],
        "storage": storage,
        "crc32": crc,
    }


def write_checkpoint(
    prefix: str,
    names: Sequence[str],
    values: Sequence[Any],
    specs: Sequence[str] | None = None,
) -> None:
    """Writes a one-shard checkpoint: `<prefix>.data-00000-of-00001`, then `<prefix>.index`.

    Args:
      prefix: str, the checkpoint prefix.
      names: the checkpoint keys.
      values: the arrays, one per key.
      specs: `shape_and_slices` entries (default all `""`): a non-empty one saves its
        value as that slice of the full tensor `name` (several slices may share a name).

    Raises:
      InvalidArgumentError: for duplicate or reserved names, unsupported dtypes, or a
        value whose shape differs from its slice spec.
      NotFoundError, PermissionDeniedError, ResourceExhaustedError, UnknownError: from
        the file system.
    """
    from safetensors.numpy import save_file

    body: dict[str, np.ndarray] = {}
    strings: dict[str, list[str]] = {}
    tensors: dict[str, dict[str, Any]] = {}
    specs = specs if specs is not None else [""] * len(names)
    for name, value, spec in zip(names, values, specs):
        if name == "__metadata__":
            raise errors.InvalidArgumentError(
                None, None, "'__metadata__' is reserved and cannot be a checkpoint key"
            )
        if spec:
            _encode_slice(name, value, spec, tensors, body, strings)
            continue
        if name in tensors:
            raise errors.InvalidArgumentError(
                None, None, f"Duplicate tensor name {name!r} in the tensors to save"
            )
        tensors[name] = _encode(name, value, body, strings)
    make_parent_dir(prefix)
    data_file = data_path(prefix, 0, 1)
    metadata = {"format": FORMAT_NAME}
    if strings:
        metadata[_STRINGS_KEY] = json.dumps(strings, separators=(",", ":"))
    with os_errors(f"Failed to write checkpoint data file {data_file}"):
        atomic_write(data_file, lambda tmp: save_file(body, tmp, metadata=metadata))
        size = os.path.getsize(data_file)
    shards = [{"file": os.path.basename(data_file), "bytes": size}]
    write_index(prefix, shards, tensors)


def _encode_slice(name: str, value: Any, spec: str, tensors: dict, body: dict, strings: dict):
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
    text = slices.slice_str(spec)
    key = slices.storage_key(name, text)
    if key in body or key in strings or key in tensors:
        raise errors.InvalidArgumentError(
            None, None, f"Duplicate slice {text!r} of tensor {name!r} in the tensors to save"
        )
    slices.add_slice(tensors, name, full, text, _encode(key, arr, body, strings))


def write_index(prefix: str, shards: list[dict[str, Any]], tensors: dict[str, Any]) -> None:
    """Atomically writes `<prefix>.index` (the commit point of a checkpoint).

    Raises:
      OpError: from the file system, as in `write_checkpoint`.
    """
    index = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "num_shards": len(shards),
        "shards": shards,
        "tensors": tensors,
    }
    text = json.dumps(index, indent=1, sort_keys=True)

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)

    path = index_path(prefix)
    with os_errors(f"Failed to write checkpoint index {path}"):
        atomic_write(path, write)


# --------------------------------------------------------------------- reading
def read_index(prefix: str) -> dict[str, Any]:
    """Loads and validates `<prefix>.index`.

    Raises:
      NotFoundError: if the checkpoint does not exist ("Failed to find any matching files").
      DataLossError: if the index is not a readable tensorweave checkpoint index.
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
    try:
        index = json.loads(raw.decode("utf-8"))
        ok = index.get("format") == FORMAT_NAME and isinstance(index.get("tensors"), dict)
        ok = ok and len(index["shards"]) == index["num_shards"]
    except (UnicodeDecodeError, ValueError, AttributeError, KeyError, TypeError):
        ok = False
    if not ok:
        raise errors.DataLossError(
            None,
            None,
            f"Unable to read checkpoint index {path}: not a tensorweave checkpoint index "
            "(truncated or corrupt file?)",
        )
    if index.get("version", 0) > FORMAT_VERSION:
        raise errors.DataLossError(
            None,
            None,
            f"Checkpoint index {path} has format version {index['version']}; this "
            f"tensorweave reads versions <= {FORMAT_VERSION}",
        )
    return index


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
        names = [key for key, _ in items]
        entries = [entry for _, entry in items]
        by_shard: dict[int, list[int]] = {}
        for i, e in enumerate(entries):
            by_shard.setdefault(int(e["shard"]), []).append(i)
        out: list[Any] = [None] * len(names)
        for shard, positions in sorted(by_shard.items()):
            path = self._shard_path(shard)
            with self._open(path) as (handle, strings):
                for i in positions:
                    out[i] = _decode(names[i], entries[i], handle, strings, path)
        return out

    def _shard_path(self, shard: int) -> str:
        n = int(self._index["num_shards"])
        if not 0 <= shard < n:
            raise errors.DataLossError(
                None, None, f"Checkpoint {self._prefix} refers to shard {shard} of {n}"
            )
        path = data_path(self._prefix, shard, n)
        expected = int(self._index["shards"][shard]["bytes"])
        with os_errors(f"Failed to open checkpoint data file {path}"):
            size = os.path.getsize(path)
        if size != expected:
            raise errors.DataLossError(
                None,
                None,
                f"Checkpoint data file {path} is truncated or was overwritten: "
                f"expected {expected} bytes, found {size}",
            )
        return path

    @contextlib.contextmanager
    def _open(self, path: str) -> Iterator[tuple[Any, dict[str, Any]]]:
        from safetensors import SafetensorError, safe_open

        try:
            with safe_open(path, framework="np") as handle:
                meta = handle.metadata() or {}
                strings = json.loads(meta.get(_STRINGS_KEY, "{}"))
                yield handle, strings
        except (SafetensorError, ValueError) as e:
            raise errors.DataLossError(
                None, None, f"Unable to read checkpoint data file {path}: {e}"
            ) from e


def _decode(name: str, entry: dict[str, Any], handle: Any, strings: dict, path: str):
    storage = entry["storage"]
    shape = tuple(int(d) for d in entry["shape"])
    if storage == "metadata":
        if name not in strings:
            raise errors.DataLossError(None, None, f"Key {name} is missing from {path}")
        items = [base64.b64decode(s) for s in strings[name]]
        crc = _crc_strings(items)
        arr = np.empty(len(items), dtype=object)
        arr[:] = items
        arr = arr.reshape(shape)
    else:
        arr = handle.get_tensor(name)
        if storage == "complex_pairs":
            arr = _contiguous(arr).reshape(-1).view(np.complex128).reshape(shape)
        crc = _crc_bytes(arr)
    want = object if storage == "metadata" else dtypes.as_dtype(entry["dtype"]).as_numpy_dtype
    if arr.shape != shape or arr.dtype != np.dtype(want):
        raise errors.DataLossError(
            None,
            None,
            f"Key {name} in {path} is {arr.dtype} {list(arr.shape)} but the index says "
            f"{entry['dtype']} {list(shape)}",
        )
    if crc != int(entry["crc32"]):
        raise errors.DataLossError(
            None,
            None,
            f"Checksum does not match for key {name} in {path}: stored "
            f"{int(entry['crc32'])} vs. calculated on the restored bytes {crc}",
        )
    return arr


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
    shards: list[dict[str, Any]] = []
    for prefix, part in zip(prefixes, parts):
        n = int(part["num_shards"])
        for k in range(n):
            src = data_path(prefix, k, n)
            dst = data_path(destination, len(shards), offset)
            with os_errors(f"Failed to move checkpoint data file {src} to {dst}"):
                os.replace(src, dst)
            shards.append({"file": os.path.basename(dst), "bytes": part["shards"][k]["bytes"]})
    _fsync_path(os.path.dirname(destination) or ".", directory=True)
    write_index(destination, shards, tensors)
    for prefix in prefixes:
        with contextlib.suppress(OSError):
            os.remove(index_path(prefix))
        if delete_old_dirs:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.dirname(prefix) or ".")
