"""NumPy kernels of `Timestamp`, `StringFormat`/`PrintV2` (TensorFlow's tensor
summaries), sparse (de)serialization, image/volume patch extraction and
`RandomIndexShuffle`."""

from __future__ import annotations

import logging
import sys
import time
import zlib
from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.tensor_util import make_ndarray, make_tensor_proto
from tensorweave.kernels.array_kernels import invalid
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel
from tensorweave.protos import tensor_pb2

register_compute("Timestamp")(lambda ctx: np.float64(time.time()))


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _scalar_str(v: Any) -> str:
    """One element as TensorFlow's SummarizeValue prints it (shortest round-trip floats)."""
    if isinstance(v, np.bool_ | bool):
        return "1" if v else "0"
    if isinstance(v, np.floating):
        digits = (6, 9) if v.dtype == np.float32 or v.dtype == np.float16 else (15, 17)
        short = f"%.{digits[0]}g" % v
        return short if type(v)(float(short)) == v else f"%.{digits[1]}g" % v
    if isinstance(v, bytes):
        return '"' + v.decode(errors="replace") + '"'
    return str(v)


def summarize(arr: np.ndarray, n: int) -> str:
    """An array as TensorFlow prints it: `[1 2 ... 9]`, nested rows on new lines."""
    arr = np.asarray(arr)
    if arr.ndim == 0:
        return _scalar_str(arr[()])

    def rows(a: np.ndarray, depth: int) -> str:
        size = a.shape[0]
        cut = 0 <= n and size > 2 * n
        idx = list(range(n)) + [-1] + list(range(size - n, size)) if cut else range(size)
        if a.ndim == 1:
            return "[" + " ".join("..." if i == -1 else _scalar_str(a[i]) for i in idx) + "]"
        sep = "\n" + " " * (depth + 1)
        return "[" + sep.join("..." if i == -1 else rows(a[i], depth + 1) for i in idx) + "]"

    return rows(arr, 0)


@register_kernel("StringFormat")
def _string_format(node: KernelNode) -> Any:
    template, placeholder = _text(node.attrs["template"]), _text(node.attrs["placeholder"])
    n = node.attrs["summarize"]
    parts = template.split(placeholder)

    def compute(ctx: Any, *inputs: Any) -> Any:
        if len(parts) - 1 != len(inputs):
            raise invalid(f"num placeholders in template and num inputs must match: "
                          f"{len(parts) - 1} vs. {len(inputs)}")
        out = parts[0]
        for value, tail in zip(inputs, parts[1:]):
            out += summarize(np.asarray(value), n) + tail
        return np.array(out.encode(), dtype=object)

    return compute


@register_kernel("PrintV2")
def _print_v2(node: KernelNode) -> Any:
    stream, end = _text(node.attrs["output_stream"]), _text(node.attrs["end"])
    levels = {"log(info)": logging.INFO, "log(warning)": logging.WARNING,
              "log(error)": logging.ERROR}

    def compute(ctx: Any, text: Any) -> None:
        message = _text(np.asarray(text, dtype=object).item()) + end
        if stream == "stdout":
            sys.stdout.write(message)
            sys.stdout.flush()
        elif stream == "stderr":
            sys.stderr.write(message)
            sys.stderr.flush()
        elif stream in levels:
            logging.getLogger("tensorweave").log(levels[stream], message.rstrip("\n"))
        elif stream.startswith("file://"):
            with open(stream[len("file://") :], "a", encoding="utf-8") as f:
                f.write(message)
        else:
            raise invalid(f"{stream} is not a valid output stream")

    return compute


def _serialize(indices: Any, values: Any, shape: Any) -> np.ndarray:
    out = np.empty(3, dtype=object)
    for i, v in enumerate((indices, values, shape)):
        arr = np.asarray(v)
        dt = dtypes.string if arr.dtype == object else dtypes.as_dtype(arr.dtype)
        out[i] = make_tensor_proto(arr, dtype=dt).SerializeToString()
    return out


@register_compute("SerializeSparse")
def _serialize_sparse(ctx: Any, indices: Any, values: Any, shape: Any) -> Any:
    return _serialize(indices, values, shape)


@register_compute("SerializeManySparse")
def _serialize_many_sparse(ctx: Any, indices: Any, values: Any, shape: Any) -> Any:
    indices, values, shape = np.asarray(indices), np.asarray(values), np.asarray(shape)
    if shape.size < 2:
        raise invalid("SparseTensor must have rank at least 2")
    rows = int(shape[0])
    out = np.empty((rows, 3), dtype=object)
    for r in range(rows):
        keep = indices[:, 0] == r
        out[r] = _serialize(indices[keep][:, 1:], values[keep], shape[1:])
    return out


def _parse(blob: Any) -> np.ndarray:
    proto = tensor_pb2.TensorProto()
    proto.ParseFromString(blob)
    return make_ndarray(proto)


@register_kernel("DeserializeManySparse")
def _deserialize_many_sparse(node: KernelNode) -> Any:
    npt = node.output_dtypes[1].as_numpy_dtype

    def compute(ctx: Any, serialized: Any) -> Any:
        serialized = np.asarray(serialized, dtype=object)
        if serialized.ndim != 2 or serialized.shape[1] != 3:
            raise invalid(f"Serialized sparse should be a matrix with 3 columns, got shape "
                          f"{list(serialized.shape)}")
        all_idx, all_val, shapes = [], [], []
        for r, (i, v, s) in enumerate(serialized):
            idx, val, shp = _parse(i), _parse(v), _parse(s)
            all_idx.append(np.concatenate([np.full((idx.shape[0], 1), r), idx], axis=1))
            all_val.append(val.astype(npt) if np.dtype(npt) != object else val)
            shapes.append(shp)
        if shapes and len({len(s) for s in shapes}) > 1:
            raise invalid("Inconsistent rank across SparseTensors")
        shape = np.max(np.stack(shapes), axis=0) if shapes else np.zeros(0, np.int64)
        indices = np.concatenate(all_idx).astype(np.int64) if all_idx else np.zeros((0, 1))
        values = np.concatenate(all_val) if all_val else np.zeros(0, npt)
        return indices, values, np.concatenate([[len(shapes)], shape]).astype(np.int64)

    return compute


def _patch_index(size: int, k: int, stride: int, rate: int, padding: str) -> tuple[Any, int]:
    """Input positions [out, k] (-1 for padding) of the patches along one dimension."""
    eff = (k - 1) * rate + 1
    if padding == "VALID":
        out, before = (size - eff) // stride + 1 if size >= eff else 0, 0
    else:
        out = -(-size // stride)
        before = max((out - 1) * stride + eff - size, 0) // 2
    pos = np.arange(out)[:, None] * stride + np.arange(k)[None, :] * rate - before
    return np.where((pos >= 0) & (pos < size), pos, -1), out


def _extract(x: np.ndarray, ks: list[int], st: list[int], rt: list[int], padding: str):
    """Patches of the spatial dims 1..-2 of x, flattened in (k..., depth) order."""
    spatial = x.shape[1:-1]
    grids = [_patch_index(n, k, s, r, padding) for n, k, s, r in zip(spatial, ks, st, rt)]
    padded = np.pad(x, [(0, 0)] + [(0, 1)] * len(spatial) + [(0, 0)])
    index: list[Any] = [slice(None)]
    m = len(grids)
    for d, (pos, _) in enumerate(grids):
        p = np.where(pos < 0, spatial[d], pos)  # -1 -> the zero padding row
        shape = [1] * (2 * m)
        shape[d], shape[m + d] = p.shape[0], p.shape[1]
        index.append(p.reshape(shape))
    patches = padded[tuple(index)]  # [batch, out..., k..., depth]
    outs = [g[1] for g in grids]
    return patches.reshape([x.shape[0], *outs, -1])


@register_kernel("ExtractImagePatches")
def _extract_image_patches(node: KernelNode) -> Any:
    ks, st, rt = node.attrs["ksizes"], node.attrs["strides"], node.attrs["rates"]
    padding = _text(node.attrs["padding"])
    if ks[0] != 1 or ks[3] != 1 or st[0] != 1 or st[3] != 1 or rt[0] != 1 or rt[3] != 1:
        raise invalid("Current implementation does not yet support strides/rates/ksizes in "
                      "the batch and depth dimensions.")
    return lambda ctx, x: _extract(np.asarray(x), ks[1:3], st[1:3], rt[1:3], padding)


@register_kernel("ExtractVolumePatches")
def _extract_volume_patches(node: KernelNode) -> Any:
    ks, st = node.attrs["ksizes"], node.attrs["strides"]
    padding = _text(node.attrs["padding"])
    if ks[0] != 1 or ks[4] != 1 or st[0] != 1 or st[4] != 1:
        raise invalid("Current implementation does not yet support strides/ksizes in the "
                      "batch and depth dimensions.")
    return lambda ctx, x: _extract(np.asarray(x), ks[1:4], st[1:4], [1, 1, 1], padding)


@register_kernel("RandomIndexShuffle")
def _random_index_shuffle(node: KernelNode) -> Any:
    npt = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, index: Any, seed: Any, max_index: Any) -> Any:
        seed = [int(s) % 2**64 for s in np.asarray(seed).reshape(-1)]
        top = int(max_index)
        if top < 0 or top >= 2**26:
            raise invalid(f"max_index must be in [0, 2**26) here, got {top}")
        key = seed + [zlib.crc32(b"RandomIndexShuffle"), node.attrs["rounds"]]
        perm = np.random.default_rng(np.random.SeedSequence(key)).permutation(top + 1)
        index = np.asarray(index)
        if index.size and (index.min() < 0 or index.max() > top):
            raise invalid(f"index must be in [0, max_index={top}]")
        return perm[index].astype(npt)

    return compute
