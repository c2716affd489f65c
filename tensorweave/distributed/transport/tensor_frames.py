"""Raw tensor frames: several named tensors in one buffer, for the same-host step streams.

Why not `TensorProto`s: a protobuf message copies a tensor's bytes into the message on
encode and again into `bytes` on serialize; here the sender hands the arrays' own memory
to `sendmsg` (scatter/gather, no copy in Python) and the receiver reads the whole frame
into one `bytearray` and takes read-only NumPy views of it (one copy, by the kernel).

Body layout (little endian), `count` entries back to back:

    u32 count
    per entry:  u32 key length, i32 dtype (TensorFlow's DataType enum; 0: the data is a
                serialized TensorProto, used for string tensors), u32 rank, u32 0,
                u64 data length, rank x i64 dims, key (UTF-8), zero padding up to a
                multiple of `ALIGN` bytes from the body start, data

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
from tensorweave.protos import tensor_pb2

ALIGN = 64
_COUNT = struct.Struct("<I")
_ENTRY = struct.Struct("<IiIIQ")
_PROTO = 0
_PAD = bytes(ALIGN)


def encode(items: list[tuple[str, Any]]) -> tuple[list[Any], int]:
    """The buffers of a frame body holding `items` ((rendezvous key, value) pairs).

    Returns:
      (buffers, total length in bytes): bytes objects and memoryviews of the arrays
      themselves, to be sent in order without joining.
    """
    bufs: list[Any] = [_COUNT.pack(len(items))]
    size = _COUNT.size
    for key, value in items:
        arr = codec.as_array(value)
        key_bytes = key.encode()
        if arr.dtype == object:
            data: Any = codec.tensor_proto(arr).SerializeToString()
            enum, shape = _PROTO, ()
        else:
            if not arr.flags.c_contiguous:
                arr = arr.copy(order="C")  # NOTE: not ascontiguousarray: it makes 0-d 1-d
            data = memoryview(arr.reshape(-1).view(np.uint8)) if arr.size else b""
            enum, shape = dtypes.as_dtype(arr.dtype).as_datatype_enum, arr.shape
        head = _ENTRY.pack(len(key_bytes), enum, len(shape), 0, len(data))
        head += struct.pack(f"<{len(shape)}q", *shape) + key_bytes
        size += len(head)
        pad = -size % ALIGN
        bufs.append(head + _PAD[:pad])
        size += pad
        if len(data):
            bufs.append(data)
            size += len(data)
    return bufs, size


def decode(body: bytearray) -> list[tuple[str, Any]]:
    """The (key, value) pairs of a frame body.

    Raises:
      DataLossError: if the body is malformed (sizes that do not add up, unknown dtype).
    """
    try:
        return _decode(body)
    except (struct.error, ValueError, TypeError, UnicodeDecodeError) as e:
        raise errors.DataLossError(None, None, f"Malformed tensor frame: {e}") from None


def _decode(body: bytearray) -> list[tuple[str, Any]]:
    (count,) = _COUNT.unpack_from(body, 0)
    pos = _COUNT.size
    out = []
    view = memoryview(body)
    for _ in range(count):
        key_len, enum, rank, _, nbytes = _ENTRY.unpack_from(body, pos)
        pos += _ENTRY.size
        shape = struct.unpack_from(f"<{rank}q", body, pos)
        pos += 8 * rank
        key = bytes(view[pos:pos + key_len]).decode()
        pos += key_len
        pos += -pos % ALIGN
        if pos + nbytes > len(body):
            raise ValueError(f"entry {key!r} runs past the frame end")
        if enum == _PROTO:
            proto = tensor_pb2.TensorProto.FromString(bytes(view[pos:pos + nbytes]))
            value = codec.decode(proto)
        else:
            npt = dtypes.as_dtype(enum).as_numpy_dtype
            count_el = math.prod(shape)
            if count_el * np.dtype(npt).itemsize != nbytes:
                raise ValueError(f"entry {key!r}: {nbytes} bytes for shape {shape}")
            value = np.frombuffer(body, dtype=npt, count=count_el, offset=pos).reshape(shape)
            value.flags.writeable = False
        pos += nbytes
        out.append((key, value))
    if pos != len(body):
        raise ValueError(f"{len(body) - pos} trailing bytes")
    return out
