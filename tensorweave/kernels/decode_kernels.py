"""Kernels of `DecodeRaw`, `DecodeCSV`, `DecodeCompressed`, `DecodeBase64`, `EncodeBase64`,
`SerializeTensor`, `ParseTensor`, `ReadFile`, `WriteFile` and `MatchingFiles`
(TensorFlow's `core/kernels/decode_raw_op.cc`, `decode_csv_op.cc`, ...)."""

from __future__ import annotations

import base64
import zlib
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import dtypes, op_defs, tensor_util  # noqa: F401
from tensorweave.kernels.registry import KernelNode, register_kernel
from tensorweave.protos import tensor_pb2


def _strings(x: Any) -> np.ndarray:
    return np.asarray(x, np.object_)


def _map_strings(x: Any, fn: Any) -> np.ndarray:
    arr = _strings(x)
    out = np.empty(arr.shape, np.object_)
    flat_in, flat_out = arr.reshape(-1), out.reshape(-1)
    for i, s in enumerate(flat_in):
        flat_out[i] = fn(bytes(s))
    return out


@register_kernel("DecodeRaw")
def _decode_raw(node: KernelNode) -> Any:
    dt = np.dtype(node.attrs["out_type"].as_numpy_dtype)
    dt = dt.newbyteorder("<" if node.attrs.get("little_endian", True) else ">")

    def compute(ctx: Any, data: Any) -> np.ndarray:
        arr = _strings(data)
        flat = arr.reshape(-1)
        if flat.size == 0:
            return np.zeros(arr.shape + (0,), dt.newbyteorder("="))
        size = len(flat[0])
        for i, s in enumerate(flat):
            if len(s) != size:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    "DecodeRaw requires input strings to all be the same size, but "
                    f"element {i} has size {len(s)} != {size}",
                )
        if size % dt.itemsize:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Input to DecodeRaw has length {size} that is not a multiple of "
                f"{dt.itemsize}, the size of {node.attrs['out_type'].name}",
            )
        raw = np.frombuffer(b"".join(flat), dt).astype(dt.newbyteorder("="))
        return raw.reshape(arr.shape + (size // dt.itemsize,))

    return compute


def _csv_fields(record: str, delim: str, quote: bool, r: int) -> list[tuple[str, bool]]:
    """Splits one record into (field, was_quoted) pairs, TensorFlow's CSV rules."""
    fields: list[tuple[str, bool]] = []
    i, n = 0, len(record)
    while True:
        if quote and i < n and record[i] == '"':
            buf, i = [], i + 1
            while True:
                if i >= n:
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"Quoted field has to end with quote followed by delim or "
                        f"end in record {r}: {record}",
                    )
                if record[i] == '"':
                    if i + 1 < n and record[i + 1] == '"':
                        buf.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                buf.append(record[i])
                i += 1
            if i < n and record[i] != delim:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Quote inside a string has to be escaped by another quote in "
                    f"record {r}: {record}",
                )
            fields.append(("".join(buf), True))
        else:
            j = record.find(delim, i) if delim else -1
            j = n if j < 0 else j
            if quote and '"' in record[i:j]:
                raise errors.InvalidArgumentError(
                    None, None, f"Unquoted fields cannot have quotes inside in record {r}: {record}"
                )
            fields.append((record[i:j], False))
            i = j
        if i >= n:
            return fields
        i += 1  # the delimiter
        if i == n:
            fields.append(("", False))
            return fields


def _convert_field(
    text: str, quoted: bool, default: np.ndarray, dt: Any, na: str, col: int, r: int
) -> Any:
    if text == "" or (not quoted and text == na):
        if default.size == 0:
            raise errors.InvalidArgumentError(
                None, None, f"Field {col} is required but missing in record {r}!"
            )
        return default.reshape(-1)[0]
    if dt == dtypes.string:
        return text.encode()
    try:
        if dt in (dtypes.int32, dtypes.int64):
            value = int(text)
            info = np.iinfo(dt.as_numpy_dtype)
            if not info.min <= value <= info.max:
                raise ValueError
            return value
        return float(text)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"Field {col} in record {r} is not a valid {dt.name}: {text}"
        ) from None


@register_kernel("DecodeCSV")
def _decode_csv(node: KernelNode) -> Any:
    types = [dtypes.as_dtype(t) for t in node.attrs["OUT_TYPE"]]
    delim = node.attrs.get("field_delim", ",")
    quote = bool(node.attrs.get("use_quote_delim", True))
    na = node.attrs.get("na_value", "")
    select = list(node.attrs.get("select_cols") or [])

    def compute(ctx: Any, records: Any, *defaults: Any) -> list[np.ndarray]:
        arr = _strings(records)
        defaults = [np.asarray(d) for d in defaults]
        cols = [
            np.empty(arr.shape, np.object_ if t == dtypes.string else t.as_numpy_dtype)
            for t in types
        ]
        flat_cols = [c.reshape(-1) for c in cols]
        for r, rec in enumerate(arr.reshape(-1)):
            text = bytes(rec).decode("utf-8", "replace")
            fields = _csv_fields(text, delim, quote, r)
            if select:
                if select[-1] >= len(fields):
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"Expect {len(types)} fields but have {len(fields)} in record {r}",
                    )
                fields = [fields[c] for c in select]
            if len(fields) != len(types):
                raise errors.InvalidArgumentError(
                    None, None, f"Expect {len(types)} fields but have {len(fields)} in record {r}"
                )
            for c, (field, quoted) in enumerate(fields):
                flat_cols[c][r] = _convert_field(field, quoted, defaults[c], types[c], na, c, r)
        return cols[0] if len(cols) == 1 else cols

    return compute


@register_kernel("DecodeCompressed")
def _decode_compressed(node: KernelNode) -> Any:
    kind = node.attrs.get("compression_type", "")

    def inflate(data: bytes) -> bytes:
        try:
            if kind == "GZIP":
                import gzip  # NOTE: not at the top: few processes decode gzip (start-up)

                return gzip.decompress(data)
            if kind == "ZLIB":
                return zlib.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise errors.DataLossError(None, None, f"Corrupted {kind} data: {e}") from None
        return data

    return lambda ctx, data: _map_strings(data, inflate)


def _b64decode(data: bytes) -> bytes:
    try:
        return base64.urlsafe_b64decode(data + b"=" * (-len(data) % 4))
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"Invalid character found in base64: {data[:40]!r}"
        ) from None


@register_kernel("DecodeBase64")
def _decode_base64(node: KernelNode) -> Any:
    return lambda ctx, data: _map_strings(data, _b64decode)


@register_kernel("EncodeBase64")
def _encode_base64(node: KernelNode) -> Any:
    pad = bool(node.attrs.get("pad", False))

    def enc(data: bytes) -> bytes:
        out = base64.urlsafe_b64encode(data)
        return out if pad else out.rstrip(b"=")

    return lambda ctx, data: _map_strings(data, enc)


@register_kernel("SerializeTensor")
def _serialize_tensor(node: KernelNode) -> Any:
    dt = node.attrs["T"]

    def compute(ctx: Any, x: Any) -> Any:
        proto = tensor_util.make_tensor_proto(np.asarray(x), dtype=dt)
        return np.array(proto.SerializeToString(), np.object_)

    return compute


@register_kernel("ParseTensor")
def _parse_tensor(node: KernelNode) -> Any:
    dt = dtypes.as_dtype(node.attrs["out_type"])

    def compute(ctx: Any, data: Any) -> Any:
        proto = tensor_pb2.TensorProto()
        try:
            proto.ParseFromString(bytes(np.asarray(data).item()))
        except Exception:  # noqa: BLE001  (DecodeError)
            raise errors.InvalidArgumentError(
                None, None, "Could not parse `serialized` as TensorProto"
            ) from None
        if proto.dtype != dt.as_datatype_enum:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Type mismatch between parsed tensor ({dtypes.as_dtype(proto.dtype).name}) "
                f"and dtype ({dt.name})",
            )
        return tensor_util.make_ndarray(proto)

    return compute


@register_kernel("ReadFile")
def _read_file(node: KernelNode) -> Any:
    def compute(ctx: Any, filename: Any) -> Any:
        path = ctx.checked_path(f"{node.op} (node {node.name})",  # security: file sandbox
                                bytes(np.asarray(filename).item()).decode())
        try:
            with open(path, "rb") as f:
                return np.array(f.read(), np.object_)
        except OSError as e:
            raise errors.NotFoundError(None, None, f"{path}; {e.strerror}") from None

    return compute


@register_kernel("WriteFile")
def _write_file(node: KernelNode) -> Any:
    def compute(ctx: Any, filename: Any, contents: Any) -> None:
        path = ctx.checked_path(f"{node.op} (node {node.name})",  # security: file sandbox
                                bytes(np.asarray(filename).item()).decode())
        try:
            with open(path, "wb") as f:
                f.write(bytes(np.asarray(contents).item()))
        except OSError as e:
            raise errors.NotFoundError(None, None, f"{path}; {e.strerror}") from None

    return compute


@register_kernel("MatchingFiles")
def _matching_files(node: KernelNode) -> Any:
    def compute(ctx: Any, pattern: Any) -> Any:
        found: list[bytes] = []
        what = f"{node.op} (node {node.name})"
        import glob  # NOTE: not at the top: few processes list files (start-up)

        for p in _strings(pattern).reshape(-1):
            # security: the pattern and every match must lie in the file sandbox
            matches = sorted(glob.glob(ctx.checked_path(what, bytes(p).decode())))
            found.extend(ctx.checked_path(what, f).encode() for f in matches)
        out = np.empty(len(found), np.object_)
        out[:] = found
        return out

    return compute
