"""Tensor encoding for the wire.

* Small tensors ride inside TensorFlow's messages as `TensorProto.tensor_content` (raw
  little-endian bytes; strings use `string_val`), decoded with `np.frombuffer` (no copy,
  read-only).
* Tensors larger than `INLINE_LIMIT_BYTES` never go through protobuf: they travel as a
  `TensorStreamHeader` followed by raw chunks of `CHUNK_BYTES` (1 MiB measured fastest on
  loopback), which also lifts protobuf's 2 GiB message limit. The receiver copies each
  chunk once into a new array (`assemble`); gRPC Python itself copies every chunk a few
  more times on each side, which caps this path at a few hundred MB/s on small machines.
* Between processes of one host, tensors of at least `shm.MIN_BYTES` (not strings) go
  through `/dev/shm` files instead: one memcpy per side, only (path, dtype, shape, nbytes)
  in the message (see `shm` for when it applies, fallbacks, lifetime and security).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import dtypes, limits
from tensorweave.framework.tensor_util import decode_string_list, make_ndarray
from tensorweave.protos import tensor_pb2, transport_pb2

INLINE_LIMIT_BYTES = 1 << 20
CHUNK_BYTES = 1 << 20

_STRING = dtypes.string.as_datatype_enum


def as_array(value: Any) -> np.ndarray:
    """`value` as an ndarray (NumPy scalars become 0-d arrays)."""
    return value if type(value) is np.ndarray else np.asarray(value)


def is_inline(value: Any) -> bool:
    """True when `value` is small enough (or a string tensor) to ride inside a message."""
    arr = as_array(value)
    return arr.dtype == object or arr.nbytes <= INLINE_LIMIT_BYTES


def encode(value: Any, proto: Any) -> None:
    """Fills a `TensorProto` with `value` (dtype, shape, raw content)."""
    arr = as_array(value)
    if arr.dtype == object:
        proto.dtype = _STRING
        proto.string_val.extend(
            x if isinstance(x, bytes) else str(x).encode() for x in arr.reshape(-1)
        )
    else:
        proto.dtype = dtypes.as_dtype(arr.dtype).as_datatype_enum
        proto.tensor_content = np.ascontiguousarray(arr).tobytes()
    shape = proto.tensor_shape
    for d in arr.shape:
        shape.dim.add(size=d)


def decode(proto: Any, max_bytes: int | None = None, what: str = "TensorProto") -> np.ndarray:
    """The ndarray of a `TensorProto` (read-only view for raw content).

    Args:
      proto: the `TensorProto`.
      max_bytes: largest tensor built from values the message does not carry in full
        (None: `framework.limits` default).
      what: names the value in errors.

    Raises:
      DataLossError: if the content size does not match dtype and shape.
      ResourceExhaustedError: if padding would build more than `max_bytes`.
    """
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    if proto.dtype == _STRING and proto.tensor_content:  # TF's C++ encoding
        try:
            return decode_string_list(proto.tensor_content, math.prod(shape)).reshape(shape)
        except ValueError as e:
            raise errors.DataLossError(None, None, str(e)) from None
    if proto.dtype == _STRING:
        limits.check_tensor_size(what, shape, 8, max_bytes)
        arr = np.empty(len(proto.string_val), dtype=object)
        arr[:] = list(proto.string_val)
        return arr.reshape(shape)
    content = proto.tensor_content
    npt = dtypes.as_dtype(proto.dtype).as_numpy_dtype
    if content or not _has_typed_values(proto):
        arr = np.frombuffer(content, dtype=npt)
        if arr.size != math.prod(shape):
            raise errors.DataLossError(
                None, None, f"Tensor content of {arr.size} elements does not match shape {shape}"
            )
        return arr.reshape(shape)
    return make_ndarray(proto, max_bytes, what)


def _has_typed_values(proto: Any) -> bool:
    return any(
        len(getattr(proto, f))
        for f in ("float_val", "double_val", "int_val", "int64_val", "bool_val", "half_val",
                  "uint32_val", "uint64_val", "scomplex_val", "dcomplex_val")
    )


def tensor_proto(value: Any) -> Any:
    """A new `TensorProto` holding `value`."""
    proto = tensor_pb2.TensorProto()
    encode(value, proto)
    return proto


# ------------------------------------------------------------------ streams
def stream_messages(step_id: int, key: str, value: Any,
                    session_handle: str = "") -> Iterator[bytes]:
    """Serialized header, then raw chunks of `value`'s buffer."""
    arr = np.ascontiguousarray(as_array(value))
    header = transport_pb2.TensorStreamHeader(
        step_id=step_id, rendezvous_key=key, session_handle=session_handle,
        dtype=dtypes.as_dtype(arr.dtype).as_datatype_enum, nbytes=arr.nbytes,
    )
    for d in arr.shape:
        header.tensor_shape.dim.add(size=d)
    yield header.SerializeToString()
    flat = memoryview(arr.reshape(-1).view(np.uint8)) if arr.size else memoryview(b"")
    for start in range(0, arr.nbytes, CHUNK_BYTES):
        yield bytes(flat[start : start + CHUNK_BYTES])


def error_header(step_id: int, key: str, error: errors.OpError) -> bytes:
    """A stream header that carries only an error."""
    return transport_pb2.TensorStreamHeader(
        step_id=step_id, rendezvous_key=key, status_code=error.error_code,
        status_error_message=error.message,
    ).SerializeToString()


def assemble(messages: Iterable[bytes], writable: bool = False, max_bytes: int | None = None,
             what: str = "tensor stream",
             accept: Callable[[Any], None] | None = None) -> tuple[Any, np.ndarray]:
    """Reads a header and its chunks into a new array; returns (header, array).

    `max_bytes` bounds the announced size (None: `framework.limits` default) and
    `accept(header)` may refuse the stream (raise) before any memory is allocated.

    The array is read-only (the runtime's marker for a buffer nobody else aliases, so
    e.g. `Assign` adopts it) unless `writable`: a fetch handed to the user as is, without
    the copy `to_user` makes of read-only arrays.

    Raises:
      OpError: the error carried by the header.
      DataLossError: if the chunks do not add up to the announced size, or the size
        does not match dtype and shape.
      ResourceExhaustedError: if the announced tensor exceeds `max_bytes`.
    """
    it = iter(messages)
    first = next(it, None)
    if first is None:
        raise errors.InvalidArgumentError(None, None, f"{what}: empty stream")
    header = transport_pb2.TensorStreamHeader.FromString(first)
    if header.status_code:
        raise errors.make_error(header.status_code, header.status_error_message)
    shape = tuple(d.size for d in header.tensor_shape.dim)
    try:
        npt = dtypes.as_dtype(header.dtype).as_numpy_dtype
    except (TypeError, ValueError):
        npt = object
    if np.dtype(npt).kind == "O":  # NOTE: strings and handles never travel as raw bytes
        raise errors.InvalidArgumentError(
            None, None, f"{what}: unsupported dtype {header.dtype} for a raw stream")
    nbytes = limits.check_tensor_size(what, shape, np.dtype(npt).itemsize, max_bytes)
    if nbytes != header.nbytes:
        raise errors.DataLossError(
            None, None, f"{what}: stream announces {header.nbytes} bytes for a tensor of "
            f"shape {list(shape)} ({nbytes} bytes)")
    if accept is not None:
        accept(header)
    buf = np.empty(header.nbytes, dtype=np.uint8)
    offset = 0
    for chunk in it:
        n = len(chunk)
        if offset + n > header.nbytes:
            raise errors.DataLossError(None, None, "Tensor stream longer than announced")
        buf[offset : offset + n] = np.frombuffer(chunk, dtype=np.uint8)
        offset += n
    if offset != header.nbytes:
        raise errors.DataLossError(
            None, None, f"Tensor stream ended after {offset} of {header.nbytes} bytes"
        )
    arr = buf.view(npt).reshape(shape)
    if not writable:
        arr.flags.writeable = False
    return header, arr
