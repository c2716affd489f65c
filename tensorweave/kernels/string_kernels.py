"""NumPy kernels of the string ops (object arrays of bytes)."""

from __future__ import annotations

import re
import struct
from typing import Any

import numpy as np

from tensorweave.kernels.array_kernels import invalid
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel
from tensorweave.kernels.string_hashing import fingerprint64, legacy_hash64, siphash24


def _as_bytes(v: Any) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode()


def _map(fn: Any, x: Any, otype: Any = object) -> np.ndarray:
    x = np.asarray(x, dtype=object)
    out = np.empty(x.shape, dtype=otype)
    for i, v in np.ndenumerate(x):
        out[i] = fn(_as_bytes(v))
    return out


def _text(s: Any) -> str:
    return s.decode() if isinstance(s, bytes) else s


@register_kernel("AsString")
def _as_string(node: KernelNode) -> Any:
    precision, width = node.attrs["precision"], node.attrs["width"]
    scientific, shortest = node.attrs["scientific"], node.attrs["shortest"]
    fill = _text(node.attrs["fill"])
    if len(fill) > 1:
        raise invalid(f"Fill string must be one or fewer characters, got {fill!r}")
    flags = "0" if fill == "0" else ""
    pad = width if width > -1 else ""
    prec = f".{precision}" if precision > -1 else ""

    def fmt(v: Any) -> str:
        if isinstance(v, np.bool_ | bool):
            return "true" if v else "false"
        if isinstance(v, np.integer):
            return f"%{flags}{pad}d" % int(v)
        conv = "e" if scientific else ("g" if shortest else "f")
        if isinstance(v, np.complexfloating):
            return (f"(%{prec}{conv},%{prec}{conv})") % (v.real, v.imag)
        return f"%{flags}{pad}{prec}{conv}" % float(v)

    def compute(ctx: Any, x: Any) -> Any:
        x = np.asarray(x)
        out = np.empty(x.shape, dtype=object)
        for i, v in np.ndenumerate(x):
            text = fmt(v)
            if fill and fill != "0" and width > len(text):
                text = fill * (width - len(text)) + text
            out[i] = text.encode()
        return out

    return compute


@register_kernel("ReduceJoin")
def _reduce_join(node: KernelNode) -> Any:
    keep, sep = node.attrs["keep_dims"], _as_bytes(node.attrs["separator"])

    def compute(ctx: Any, x: Any, axes: Any) -> Any:
        x = np.asarray(x, dtype=object)
        axes = np.asarray(axes).reshape(-1)
        rank = x.ndim
        bad = axes[(axes < -rank) | (axes >= rank)]
        if bad.size:
            raise invalid(f"Invalid reduction dimension {int(bad[0])} for input with {rank} "
                          "dimensions.")
        reduced = sorted({int(a) % rank for a in axes}) if axes.size else list(range(rank))
        kept = [i for i in range(rank) if i not in reduced]
        moved = np.transpose(x, kept + reduced)
        outer = moved.shape[: len(kept)]
        flat = moved.reshape(outer + (-1,)) if moved.size else np.empty(outer + (0,), object)
        out = np.empty(outer, dtype=object)
        for i in np.ndindex(*outer):
            out[i] = sep.join(_as_bytes(v) for v in flat[i])
        if keep:
            out = out.reshape([1 if i in reduced else x.shape[i] for i in range(rank)])
        return out

    return compute


def _rewrite(rewrite: str) -> str:
    r"""RE2 rewrite (`\1`) to the replacement syntax of Python's `re` (`\g<1>`)."""
    return re.sub(r"\\(\d)", r"\\g<\1>", rewrite)


@register_kernel("RegexReplace")
def _regex_replace(node: KernelNode) -> Any:
    count = 0 if node.attrs["replace_global"] else 1

    def compute(ctx: Any, x: Any, pattern: Any, rewrite: Any) -> Any:
        try:
            regex = re.compile(_as_bytes(np.asarray(pattern, object).item()))
        except re.error as e:
            raise invalid(f"Invalid pattern: {e}") from None
        repl = _rewrite(_as_bytes(np.asarray(rewrite, object).item()).decode()).encode()
        return _map(lambda s: regex.sub(repl, s, count=count), x)

    return compute


@register_kernel("StringSplit")
def _string_split(node: KernelNode) -> Any:
    skip_empty = node.attrs["skip_empty"]

    def compute(ctx: Any, x: Any, delimiter: Any) -> Any:
        x = np.asarray(x, dtype=object)
        if x.ndim != 1:
            raise invalid(f"input must be a vector, got shape: {list(x.shape)}")
        delim = _as_bytes(np.asarray(delimiter, object).item())
        indices, values, width = [], [], 0
        for row, s in enumerate(x):
            s = _as_bytes(s)
            if not delim:
                parts = [bytes([c]) for c in s]
            else:
                parts = re.split(b"[" + re.escape(delim) + b"]", s)
            if skip_empty:
                parts = [p for p in parts if p]
            for col, part in enumerate(parts):
                indices.append((row, col))
                values.append(part)
            width = max(width, len(parts))
        idx = np.array(indices, np.int64).reshape(-1, 2)
        vals = np.empty(len(values), dtype=object)
        vals[:] = values
        return idx, vals, np.array([x.shape[0], width], np.int64)

    return compute


register_compute("StringStrip")(lambda ctx, x: _map(bytes.strip, x))


@register_kernel("StringToNumber")
def _string_to_number(node: KernelNode) -> Any:
    out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

    def parse(s: bytes) -> Any:
        try:
            return int(s) if out.kind == "i" else float(s)
        except ValueError:
            raise invalid(f'StringToNumberOp could not correctly convert string: '
                          f'{s.decode(errors="replace")}') from None

    def compute(ctx: Any, x: Any) -> Any:
        values = _map(parse, x)
        if out.kind == "i":
            info = np.iinfo(out)
            for v in values.reshape(-1):
                if not info.min <= v <= info.max:
                    raise invalid(f"StringToNumberOp could not correctly convert string: {v}")
        return values.astype(out)

    return compute


@register_kernel("StringToHashBucket")
def _to_hash_bucket(node: KernelNode) -> Any:
    n = node.attrs["num_buckets"]
    return lambda ctx, x: _map(lambda s: legacy_hash64(s) % n, x, np.int64)


@register_kernel("StringToHashBucketFast")
def _to_hash_bucket_fast(node: KernelNode) -> Any:
    n = node.attrs["num_buckets"]
    return lambda ctx, x: _map(lambda s: fingerprint64(s) % n, x, np.int64)


@register_kernel("StringToHashBucketStrong")
def _to_hash_bucket_strong(node: KernelNode) -> Any:
    n, key = node.attrs["num_buckets"], list(node.attrs["key"])
    if len(key) != 2:
        raise invalid(f"Key must have 2 elements, got {len(key)}")
    k0, k1 = (int(k) % 2**64 for k in key)
    return lambda ctx, x: _map(lambda s: siphash24(k0, k1, s) % n, x, np.int64)


@register_kernel("Substr")
def _substr(node: KernelNode) -> Any:
    unit = _text(node.attrs["unit"])

    def cut(s: bytes, pos: int, length: int) -> bytes:
        seq: Any = s.decode() if unit == "UTF8_CHAR" else s
        n = len(seq)
        if pos < -n or pos > n:
            raise invalid(f"pos {pos} out of range for string b'{s.decode(errors='replace')}' "
                          f"at index 0")
        start = pos + n if pos < 0 else pos
        piece = seq[start : start + max(length, 0)]
        return piece.encode() if unit == "UTF8_CHAR" else piece

    def compute(ctx: Any, x: Any, pos: Any, length: Any) -> Any:
        x, pos, length = np.broadcast_arrays(np.asarray(x, object), np.asarray(pos),
                                             np.asarray(length))
        out = np.empty(x.shape, dtype=object)
        for i in np.ndindex(*x.shape):
            out[i] = cut(_as_bytes(x[i]), int(pos[i]), int(length[i]))
        return out

    return compute


# NOTE: the base64 kernels are in decode_kernels (with the parsing ops).


@register_compute("Fingerprint")
def _fingerprint(ctx: Any, data: Any, method: Any) -> Any:
    method = _as_bytes(np.asarray(method, object).item())
    if method != b"farmhash64":
        raise invalid(f"Unsupported fingerprint method: {method.decode()}")
    data = np.asarray(data)
    if data.ndim < 1:
        raise invalid("data must have rank at least one")
    rows = data.reshape(data.shape[0], -1) if data.shape[0] else data.reshape(0, 0)
    out = np.zeros((data.shape[0], 8), np.uint8)
    for i, row in enumerate(rows):
        if data.dtype == object:
            prints = [fingerprint64(_as_bytes(v)) for v in row]
            value = prints[0] if len(prints) == 1 else fingerprint64(
                b"".join(struct.pack("<Q", p) for p in prints))
        else:
            value = fingerprint64(np.ascontiguousarray(row).tobytes())
        out[i] = np.frombuffer(struct.pack("<Q", value), np.uint8)
    return out
