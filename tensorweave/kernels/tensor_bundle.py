"""TensorFlow's V2 checkpoint format (the "tensor bundle"), byte for byte.

A checkpoint with prefix `P` is `P.index`, a table (`sstable`) whose key `""` holds a
`BundleHeaderProto` and whose other keys hold `BundleEntryProto`s, and data files
`P.data-0000K-of-0000N` holding the tensors' bytes back to back, as TensorFlow's
`tensor_bundle.cc` writes them:

* numeric tensors: their little-endian bytes; the entry's `crc32c` is the masked CRC32C of
  those bytes;
* string tensors: every element's length as a varint64, the masked CRC32C of the lengths
  (each as a little-endian uint32, or uint64 past 4 GiB), then the elements' bytes; the
  entry's `crc32c` covers the lengths (as above), the length checksum and the bytes;
* a tensor saved as slices (a partitioned variable) has an entry with its full shape and the
  `slices` (`TensorSliceProto`) but no data; each slice is an ordinary entry under the key
  TensorFlow's `checkpoint::EncodeTensorNameSlice` makes (`OrderedCode`: 0, the name, the
  rank, then per dimension the start and the length, -1 for a whole dimension).

Entries are translated to and from the dict form `checkpoint_slices` works on (`"storage":
"bundle"`, with `offset`, `size` and `crc32c`).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import google_crc32c
import numpy as np

from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.framework.varint import get_varint, put_varint
from tensorweave.kernels import sstable
from tensorweave.protos import tensor_bundle_pb2, tensor_shape_pb2, tensor_slice_pb2

STORAGE = "bundle"
HEADER_KEY = b""
_UINT32_MAX = 0xFFFFFFFF


# ----------------------------------------------------------------- slice keys
def _num_increasing(out: bytearray, value: int) -> None:
    body = value.to_bytes(8, "big").lstrip(b"\x00")
    out.append(len(body))
    out += body


def _signed_increasing(out: bytearray, value: int) -> None:
    x = ~value if value < 0 else value
    if x < 64:
        out.append((0x80 ^ value) & 0xFF)
        return
    length = x.bit_length() // 7 + 1  # n bytes hold 7n - 1 payload bits and a sign
    body = bytearray((value & ((1 << 80) - 1)).to_bytes(10, "big")[10 - length :])
    header = _HEADER_BITS[length]
    body[0] ^= header[0]
    body[1] ^= header[1]
    out += body


# Header bits of a signed OrderedCode number of each length (TF's kLengthToHeaderBits).
_HEADER_BITS = {
    2: (0xC0, 0), 3: (0xE0, 0), 4: (0xF0, 0), 5: (0xF8, 0), 6: (0xFC, 0), 7: (0xFE, 0),
    8: (0xFF, 0), 9: (0xFF, 0x80), 10: (0xFF, 0xC0),
}


def _ordered_string(out: bytearray, text: bytes) -> None:
    out += text.replace(b"\xff", b"\xff\x00").replace(b"\x00", b"\x00\xff")
    out += b"\x00\x01"


def slice_key(name: str, text: str) -> str:
    """The table key of slice `text` (`"0,5:-"`) of tensor `name`, as a latin-1 str."""
    extents = _extents(text)
    out = bytearray()
    _num_increasing(out, 0)
    _ordered_string(out, name.encode())
    _num_increasing(out, len(extents))
    for start, length in extents:
        _signed_increasing(out, start)
        _signed_increasing(out, length)
    return out.decode("latin-1")


def _extents(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(":") if text else []:
        if part == "-":
            out.append((0, -1))
        else:
            start, length = (int(x) for x in part.split(","))
            out.append((start, length))
    return out


def _slice_proto(text: str) -> tensor_slice_pb2.TensorSliceProto:
    proto = tensor_slice_pb2.TensorSliceProto()
    for start, length in _extents(text):
        extent = proto.extent.add()
        if length >= 0:
            extent.start = start
            extent.length = length
    return proto


def _slice_text(proto: tensor_slice_pb2.TensorSliceProto) -> str:
    parts = []
    for extent in proto.extent:
        has = extent.WhichOneof("has_length") is not None
        parts.append(f"{extent.start},{extent.length}" if has else "-")
    return ":".join(parts)


# ----------------------------------------------------------------- tensor bytes
def encode(name: str, value: Any) -> tuple[dict[str, Any], list[bytes]]:
    """The entry fields (`dtype`, `shape`, `size`, `crc32c`) and data bytes of one tensor.

    Raises:
      InvalidArgumentError: for a dtype a checkpoint cannot hold, naming `name`.
    """
    arr = np.asarray(value)
    shape = [int(d) for d in arr.shape]
    if arr.dtype == object or arr.dtype.kind in "SU":
        items = [x if isinstance(x, bytes) else str(x).encode() for x in arr.reshape(-1)]
        return _encode_strings(shape, items)
    try:
        dtype = dtypes.as_dtype(arr.dtype)
    except TypeError:
        dtype = None
    if dtype is None:
        raise errors.InvalidArgumentError(
            None, None, f"Cannot save tensor {name!r} of unsupported dtype {arr.dtype}"
        )
    arr = np.ascontiguousarray(arr.reshape(-1)).astype(arr.dtype.newbyteorder("<"), copy=False)
    data = arr.tobytes()
    crc = sstable.mask(google_crc32c.value(data))
    return {"dtype": dtype.name, "shape": shape, "size": len(data), "crc32c": crc}, [data]


def _encode_strings(shape: list[int], items: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    lengths = bytearray()
    crc = 0
    for s in items:
        put_varint(lengths, len(s))
        fmt = "<I" if len(s) <= _UINT32_MAX else "<Q"
        crc = google_crc32c.extend(crc, struct.pack(fmt, len(s)))
    length_crc = struct.pack("<I", sstable.mask(crc))
    crc = google_crc32c.extend(crc, length_crc)
    for s in items:
        crc = google_crc32c.extend(crc, s)
    chunks = [bytes(lengths), length_crc, *items]
    size = sum(len(c) for c in chunks)
    entry = {"dtype": "string", "shape": shape, "size": size, "crc32c": sstable.mask(crc)}
    return entry, chunks


def decode(name: str, entry: dict[str, Any], data: bytes, path: str) -> np.ndarray:
    """The tensor of `entry` from its data bytes (strings: an object array of bytes).

    Raises:
      DataLossError: naming `name` and `path`, for a size or checksum mismatch.
    """
    shape = tuple(int(d) for d in entry["shape"])
    if len(data) != int(entry["size"]):
        raise _loss(name, path, f"expected {entry['size']} bytes, found {len(data)}")
    if entry["dtype"] == "string":
        arr, crc = _decode_strings(name, shape, data, path)
    else:
        np_dtype = np.dtype(dtypes.as_dtype(entry["dtype"]).as_numpy_dtype).newbyteorder("<")
        count = int(np.prod(shape, dtype=np.int64))
        if count * np_dtype.itemsize != len(data):
            raise _loss(name, path, f"{len(data)} bytes do not hold {entry['dtype']} {list(shape)}")
        crc = google_crc32c.value(data)
        arr = np.frombuffer(data, dtype=np_dtype).astype(np_dtype.newbyteorder("="))
        arr = arr.reshape(shape)
    if sstable.mask(crc) != int(entry["crc32c"]):
        raise _loss(
            name,
            path,
            f"Checksum does not match: stored {sstable.unmask(int(entry['crc32c'])):08d} vs. "
            f"calculated on the restored bytes {crc:08d}",
        )
    return arr


def _decode_strings(name: str, shape: tuple, data: bytes, path: str) -> tuple[np.ndarray, int]:
    count = int(np.prod(shape, dtype=np.int64))
    lengths, pos, crc = [], 0, 0
    try:
        for _ in range(count):
            n, pos = get_varint(data, pos)
            lengths.append(n)
            crc = google_crc32c.extend(crc, struct.pack("<I" if n <= _UINT32_MAX else "<Q", n))
    except ValueError:
        raise _loss(name, path, "truncated string lengths") from None
    stored = data[pos : pos + 4]
    if len(stored) != 4 or sstable.unmask(struct.unpack("<I", stored)[0]) != crc:
        raise _loss(name, path, "the string lengths' checksum does not match")
    crc = google_crc32c.extend(crc, stored)
    pos += 4
    items = []
    for n in lengths:
        item = data[pos : pos + n]
        if len(item) != n:
            raise _loss(name, path, "truncated string bytes")
        crc = google_crc32c.extend(crc, item)
        items.append(item)
        pos += n
    arr = np.empty(count, dtype=object)
    arr[:] = items
    return arr.reshape(shape), crc


def _loss(name: str, path: str, why: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, f"Checkpoint key {name} in {path}: {why}")


# ------------------------------------------------------------------ the index
def _entry_proto(entry: dict[str, Any]) -> tensor_bundle_pb2.BundleEntryProto:
    proto = tensor_bundle_pb2.BundleEntryProto(
        dtype=dtypes.as_dtype(entry["dtype"]).as_datatype_enum,
        shape=tensor_shape_pb2.TensorShapeProto(
            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in entry["shape"]]
        ),
    )
    if "slices" in entry:
        proto.slices.extend(_slice_proto(s["slice"]) for s in entry["slices"])
        return proto
    proto.shard_id = int(entry["shard"])
    proto.offset = int(entry["offset"])
    proto.size = int(entry["size"])
    proto.crc32c = int(entry["crc32c"])
    return proto


def index_bytes(num_shards: int, tensors: dict[str, dict[str, Any]]) -> bytes:
    """The `.index` table of a checkpoint with `num_shards` data files and `tensors`.

    Raises:
      InvalidArgumentError: if an entry uses a storage other than the bundle's.
    """
    header = tensor_bundle_pb2.BundleHeaderProto(num_shards=num_shards)
    header.version.producer = 1
    items = {HEADER_KEY: header.SerializeToString()}
    for name, entry in tensors.items():
        items[name.encode()] = _entry_proto(entry).SerializeToString()
        for sub in entry.get("slices", []):
            if sub.get("storage") != STORAGE:
                raise errors.InvalidArgumentError(
                    None, None, f"Slice {sub['slice']} of {name!r} is not in the V2 format"
                )
            sub_entry = dict(sub, shape=_slice_shape(entry["shape"], sub["slice"]))
            items[sub["key"].encode("latin-1")] = _entry_proto(sub_entry).SerializeToString()
        if "slices" not in entry and entry.get("storage") != STORAGE:
            raise errors.InvalidArgumentError(
                None, None, f"Tensor {name!r} is not in the V2 format"
            )
    return sstable.build_table(sorted(items.items()))


def _slice_shape(full: Sequence[int], text: str) -> list[int]:
    return [d if length < 0 else length for d, (_, length) in zip(full, _extents(text))]


def parse_index(buf: bytes, path: str) -> dict[str, Any]:
    """The dict form of a V2 `.index` table: `num_shards` and `tensors`.

    Raises:
      DataLossError: naming `path`, for a corrupt table or unparseable entries.
    """
    raw = dict(sstable.read_table(buf, path))
    header = tensor_bundle_pb2.BundleHeaderProto()
    try:
        header.ParseFromString(raw.pop(HEADER_KEY))
    except Exception:  # noqa: BLE001  (KeyError or a protobuf DecodeError)
        raise errors.DataLossError(None, None, f"Checkpoint index {path} has no header") from None
    if header.endianness != tensor_bundle_pb2.BundleHeaderProto.LITTLE:
        raise errors.UnimplementedError(
            None, None, f"Checkpoint {path} was written big-endian; only little-endian is read"
        )
    entries = {k: _parse_entry(k, v, path) for k, v in raw.items()}
    tensors: dict[str, dict[str, Any]] = {}
    for key, entry in entries.items():
        if key.startswith(b"\x00"):
            continue  # a slice's data entry; reached from its tensor's `slices`
        name = key.decode()
        if "slices" in entry:
            entry["slices"] = [_slice_entry(name, text, entries, path) for text in entry["slices"]]
        tensors[name] = entry
    return {"num_shards": header.num_shards, "tensors": tensors}


def _parse_entry(key: bytes, value: bytes, path: str) -> dict[str, Any]:
    proto = tensor_bundle_pb2.BundleEntryProto()
    try:
        proto.ParseFromString(value)
        dtype = dtypes.as_dtype(proto.dtype).name
    except Exception:  # noqa: BLE001
        raise errors.DataLossError(
            None, None, f"Entry for key {key!r} in {path} not parseable"
        ) from None
    entry: dict[str, Any] = {"dtype": dtype, "shape": [d.size for d in proto.shape.dim]}
    if proto.slices:
        entry["slices"] = [_slice_text(s) for s in proto.slices]
        return entry
    entry.update(
        storage=STORAGE, shard=proto.shard_id, offset=proto.offset, size=proto.size,
        crc32c=proto.crc32c,
    )
    return entry


def _slice_entry(name: str, text: str, entries: dict, path: str) -> dict[str, Any]:
    key = slice_key(name, text)
    sub = entries.get(key.encode("latin-1"))
    if sub is None or "slices" in sub:
        raise errors.DataLossError(
            None, None, f"Checkpoint {path} lists slice {text} of {name} but holds no data for it"
        )
    return dict(sub, slice=text, key=key)
