"""NumPy kernels of `Timestamp` (TensorFlow's tensor
summaries), sparse (de)serialization, image/volume patch extraction and
`RandomIndexShuffle`."""

from __future__ import annotations

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
