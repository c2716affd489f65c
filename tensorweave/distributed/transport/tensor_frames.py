"""Raw tensor frames: several named tensors in one buffer, for the same-host step streams.

Why not `TensorProto`s: a protobuf message copies a tensor's bytes into the message on
encode and again into `bytes` on serialize; here the sender hands the arrays' own memory
to `sendmsg` (scatter/gather, no copy in Python) and the receiver reads the whole frame
into one `bytearray` and takes read-only NumPy views of it (one copy, by the kernel).

Body layout (little endian): a table of the entries, then their data, each data region
starting `ALIGN`-aligned from the body start:

    u32 count, u32 table length
    table, per entry:  u32 key length, i32 dtype (TensorFlow's DataType enum; 0: the data
                       is a serialized TensorProto, used for string tensors), u32 rank,
                       u32 flags (bit 0: the value is dead, no data; TensorFlow's
                       `is_dead`), u64 data length, rank x i64 dims, key (UTF-8)
    zero padding, then per entry: data, zero padding to a multiple of `ALIGN`

A step sends the same keys, dtypes and shapes every time, so both ends cache layouts: the
sender the table and paddings by (key, dtype, shape) list, the receiver the parsed table
by its bytes.

Values come back as read-only arrays (the runtime's marker for a buffer nobody else
writes, see `codec.assemble`), each a view into the frame's buffer.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.distributed.transport import codec
from tensorweave.framework import dtypes
from tensorweave.framework.rendezvous import DEAD
from tensorweave.protos import tensor_pb2

ALIGN = 64
_HEAD = struct.Struct("<II")
_ENTRY = struct.Struct("<IiIIQ")
_PROTO = 0
_FLAG_DEAD = 1
_PAD = bytes(ALIGN)
_CACHE_SIZE = 256
_DEAD_ENTRY = np.empty((0,), object)  # NOTE: stands for a dead value in `encode`


class _Layout:
    """A parsed table: where each entry's data lies and what it is."""

    __slots__ = ("entries", "end")

    def __init__(self, entries: list[tuple[str, int, Any, int, tuple, int]], end: int):
        self.entries = entries  # (key, dtype enum, numpy dtype, offset, shape, nbytes)
        self.end = end


class LayoutCache:
    """Tables of frames seen before (a connection's: the same keys, dtypes and shapes come
    every step), so a frame's table is built or parsed once. At most `_CACHE_SIZE` of each
    kind; a full cache starts over."""

    __slots__ = ("encoded", "decoded")

    def __init__(self) -> None:
        self.encoded: dict[tuple, tuple[bytes, list[bytes]]] = {}
        self.decoded: dict[bytes, _Layout] = {}


def _remember(cache: dict, key: Any, value: Any) -> None:
    if len(cache) >= _CACHE_SIZE:
        cache.clear()
    cache[key] = value


def _pad(n: int) -> int:
    return -n % ALIGN


def _table(entries: list[tuple[bytes, int, tuple, int, int]]) -> tuple[bytes, list[bytes]]:
    """(head + table + padding, data paddings) for (key, dtype enum, shape, nbytes,
    flags)s."""
    table = b"".join(
        _ENTRY.pack(len(key), enum, len(shape), flags, nbytes)
        + struct.pack(f"<{len(shape)}q", *shape) + key
        for key, enum, shape, nbytes, flags in entries)
    prefix = _HEAD.pack(len(entries), len(table)) + table
    prefix += _PAD[:_pad(len(prefix))]
    return prefix, [_PAD[:_pad(nbytes)] for _, _, _, nbytes, _ in entries]


def encode(items: list[tuple[str, Any]],
           cache: LayoutCache | None = None) -> tuple[list[Any], int]:
    """The buffers of a frame body holding `items` ((rendezvous key, value) pairs), with
    the table from `cache` when it holds one for the same keys, dtypes and shapes.

    Returns:
      (buffers, total length in bytes): bytes objects and memoryviews of the arrays
      themselves, to be sent in order without joining.
    """
    arrays: list[Any] = []
    for _, value in items:
        if value is DEAD:
            arrays.append(_DEAD_ENTRY)
            continue
        arr = codec.as_array(value)
        if arr.dtype != object and not arr.flags.c_contiguous:
            arr = arr.copy(order="C")  # NOTE: not ascontiguousarray: it makes 0-d 1-d
        arrays.append(arr)
    signature = tuple((key, None, None) if arr is _DEAD_ENTRY else (key, arr.dtype, arr.shape)
                      for (key, _), arr in zip(items, arrays))
    cached = cache.encoded.get(signature) if cache is not None else None
    datas = []
    entries = []
    for (key, _), arr in zip(items, arrays):
        if arr is _DEAD_ENTRY:
            data: Any = b""
            if cached is None:
                entries.append((key.encode(), _PROTO, (), 0, _FLAG_DEAD))
        elif arr.dtype == object:
            data = codec.tensor_proto(arr).SerializeToString()
            entries.append((key.encode(), _PROTO, (), len(data), 0))
            cached = None  # NOTE: its length varies with the strings
        else:
            data = memoryview(arr.reshape(-1).view(np.uint8)) if arr.size else b""
            if cached is None:
                entries.append((key.encode(), dtypes.as_dtype(arr.dtype).as_datatype_enum,
                                arr.shape, arr.nbytes, 0))
        datas.append(data)
    if cached is None:
        cached = _table(entries)
        if cache is not None and all(enum != _PROTO or flags for _, enum, _, _, flags in entries):
            _remember(cache.encoded, signature, cached)
    prefix, pads = cached
    bufs: list[Any] = [prefix]
    size = len(prefix)
    for data, pad in zip(datas, pads):
        if len(data):
            bufs.append(data)
        if pad:
            bufs.append(pad)
        size += len(data) + len(pad)
    return bufs, size


def decode(body: bytearray, cache: LayoutCache | None = None) -> list[tuple[str, Any]]:
    """The (key, value) pairs of a frame body (its table parsed once per `cache`).

    Raises:
      DataLossError: if the body is malformed (sizes that do not add up, unknown dtype).
    """
    try:
        count, table_len = _HEAD.unpack_from(body, 0)
        table = bytes(body[_HEAD.size:_HEAD.size + table_len])
        layout = cache.decoded.get(table) if cache is not None else None
        if layout is None:
            layout = _parse(count, table)
            if cache is not None:
                _remember(cache.decoded, table, layout)
        if layout.end != len(body):
            raise ValueError(f"{len(body)} bytes where the table announces {layout.end}")
        out = []
        for key, enum, npt, offset, shape, nbytes in layout.entries:
            if npt is DEAD:
                value: Any = DEAD
            elif enum == _PROTO:
                proto = tensor_pb2.TensorProto.FromString(bytes(body[offset:offset + nbytes]))
                value = codec.decode(proto)
            else:
                value = np.frombuffer(body, npt, nbytes // npt.itemsize, offset).reshape(shape)
                value.flags.writeable = False
            out.append((key, value))
        return out
    except (struct.error, ValueError, TypeError, UnicodeDecodeError) as e:
        raise errors.DataLossError(None, None, f"Malformed tensor frame: {e}") from None


def _parse(count: int, table: bytes) -> _Layout:
    entries = []
    pos = 0
    offset = _HEAD.size + len(table)
    offset += _pad(offset)
    for _ in range(count):
        key_len, enum, rank, flags, nbytes = _ENTRY.unpack_from(table, pos)
        pos += _ENTRY.size
        shape = struct.unpack_from(f"<{rank}q", table, pos)
        pos += 8 * rank
        key = table[pos:pos + key_len].decode()
        pos += key_len
        npt: Any = None
        if flags & _FLAG_DEAD:
            npt = DEAD  # NOTE: the entry's value, not a dtype
            if nbytes or rank:
                raise ValueError(f"entry {key!r}: dead with {nbytes} bytes of data")
        elif enum != _PROTO:
            npt = np.dtype(dtypes.as_dtype(enum).as_numpy_dtype)
            if math.prod(shape) * npt.itemsize != nbytes:
                raise ValueError(f"entry {key!r}: {nbytes} bytes for shape {shape}")
        entries.append((key, enum, npt, offset, shape, nbytes))
        offset += nbytes + _pad(nbytes)
    if pos != len(table):
        raise ValueError(f"{len(table) - pos} trailing bytes in the table")
    return _Layout(entries, offset)
