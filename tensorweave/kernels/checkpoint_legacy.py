"""Reading checkpoints in tensorweave 0.1's own format (JSON index, safetensors shards).

tensorweave 0.1 wrote `P.index` as UTF-8 JSON and each `P.data-0000K-of-0000N` as a
safetensors file; checkpoints are now written in TensorFlow's V2 format (`tensor_bundle`),
and this module keeps the old ones readable. The old index::

    {"format": "tensorweave-checkpoint", "version": 1, "num_shards": N,
     "shards": [{"file": "P.data-00000-of-0000N", "bytes": 1234}, ...],
     "tensors": {key: {"shard": K, "dtype": "float32", "shape": [2, 3],
                       "storage": "safetensors" | "complex_pairs" | "metadata",
                       "crc32": 305419896}}}

Tensors are stored under their key in the shard's safetensors file (complex128 as float64
pairs; strings base64-encoded in the safetensors metadata under `"tensorweave.strings"`);
`crc32` is zlib's CRC-32 of the little-endian bytes (strings: each element's 8-byte length,
then its bytes). Slices of a partitioned variable sit under `<key>:slice(<slice>)`.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import dtypes

FORMAT_NAME = "tensorweave-checkpoint"
FORMAT_VERSION = 1
STRINGS_KEY = "tensorweave.strings"


def is_legacy_index(raw: bytes) -> bool:
    """True for a JSON index (a V2 index is a binary table)."""
    return raw[:1] == b"{"


def parse_index(raw: bytes, path: str) -> dict[str, Any]:
    """The validated JSON index.

    Raises:
      DataLossError: naming `path`, if it is not a readable tensorweave 0.1 index.
    """
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
            f"Unable to read checkpoint index {path}: not a checkpoint index "
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


def check_shard_size(index: dict[str, Any], shard: int, path: str) -> None:
    """Raises DataLossError if data file `path` is not the size the index recorded."""
    expected = int(index["shards"][shard]["bytes"])
    size = os.path.getsize(path)
    if size != expected:
        raise errors.DataLossError(
            None,
            None,
            f"Checkpoint data file {path} is truncated or was overwritten: "
            f"expected {expected} bytes, found {size}",
        )


@contextlib.contextmanager
def open_shard(path: str) -> Iterator[tuple[Any, dict[str, Any]]]:
    """The open safetensors file of a shard and its string table.

    Raises:
      DataLossError: for a file safetensors cannot read.
    """
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(path, framework="np") as handle:
            meta = handle.metadata() or {}
            strings = json.loads(meta.get(STRINGS_KEY, "{}"))
            yield handle, strings
    except (SafetensorError, ValueError) as e:
        raise errors.DataLossError(
            None, None, f"Unable to read checkpoint data file {path}: {e}"
        ) from e


def _crc_bytes(arr: np.ndarray) -> int:
    flat = np.ascontiguousarray(arr).reshape(-1)
    return zlib.crc32(flat.view(np.uint8)) if flat.size else 0


def _crc_strings(items: Sequence[bytes]) -> int:
    crc = 0
    for s in items:
        crc = zlib.crc32(len(s).to_bytes(8, "little"), crc)
        crc = zlib.crc32(s, crc)
    return crc


def decode(name: str, entry: dict[str, Any], handle: Any, strings: dict, path: str) -> np.ndarray:
    """The value of data key `name` (described by `entry`) from an open shard.

    Raises:
      DataLossError: for a missing key, a dtype/shape mismatch or a bad checksum.
    """
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
            arr = np.ascontiguousarray(arr).reshape(-1).view(np.complex128).reshape(shape)
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
