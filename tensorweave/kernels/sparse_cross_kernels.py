"""NumPy kernels of `SparseCross` and `SparseCrossV2`: per batch row, the cartesian
product of the features of every input (sparse rows or dense rows), the last input varying
fastest; crosses are joined strings or TensorFlow's `FingerprintCat64` hash chain."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from tensorweave.kernels.array_kernels import invalid
from tensorweave.kernels.registry import KernelNode, register_kernel
from tensorweave.kernels.string_hashing import fingerprint64

_MASK = (1 << 64) - 1
_KMUL = 0xC6A4A7935BD1E995


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TensorFlow's `FingerprintCat64`: combines two 64-bit fingerprints."""
    result = fp1 ^ _KMUL
    result ^= (_shift_mix((fp2 * _KMUL) & _MASK) * _KMUL) & _MASK
    result = (result * _KMUL) & _MASK
    result = (_shift_mix(result) * _KMUL) & _MASK
    return _shift_mix(result)


def _rows(n_sparse: int, args: list[Any]) -> tuple[int, list[list[list[Any]]]]:
    """(batch size, per input: per row: its features)."""
    indices, values, shapes = args[:n_sparse], args[n_sparse : 2 * n_sparse], \
        args[2 * n_sparse : 3 * n_sparse]
    dense = args[3 * n_sparse :]
    batch = None
    columns = []
    for idx, val, shp in zip(indices, values, shapes):
        rows = int(np.asarray(shp)[0])
        per: list[list[Any]] = [[] for _ in range(rows)]
        for (r, *_), v in zip(np.asarray(idx).tolist(), np.asarray(val).tolist()):
            per[r].append(v)
        columns.append(per)
        batch = rows if batch is None else batch
    for d in dense:
        d = np.asarray(d)
        columns.append([list(row) for row in d.reshape(d.shape[0], -1)])
        batch = d.shape[0] if batch is None else batch
    if any(len(c) != batch for c in columns):
        raise invalid("Expected batch size of every input to match")
    return batch or 0, columns


def _as_text(v: Any) -> bytes:
    return v if isinstance(v, bytes) else str(int(v)).encode()


def _cross(n_sparse: int, args: list[Any], combine: Any, out_dtype: Any) -> Any:
    batch, columns = _rows(n_sparse, args)
    indices, values, width = [], [], 0
    for b in range(batch):
        crosses = list(itertools.product(*[c[b] for c in columns])) if columns else []
        for j, features in enumerate(crosses):
            indices.append((b, j))
            values.append(combine(features))
        width = max(width, len(crosses))
    vals = np.empty(len(values), dtype=out_dtype)
    vals[:] = values
    return (np.array(indices, np.int64).reshape(-1, 2), vals,
            np.array([batch, width], np.int64))


@register_kernel("SparseCross")
def _sparse_cross(node: KernelNode) -> Any:
    n = node.attrs["N"]
    hashed, buckets = node.attrs["hashed_output"], node.attrs["num_buckets"]
    key = node.attrs["hash_key"] % (1 << 64)

    def hash_cross(features: Any) -> int:
        out = key
        for f in features:
            out = fingerprint_cat64(out, fingerprint64(f) if isinstance(f, bytes)
                                    else int(f) & _MASK)
        return out % buckets if buckets > 0 else out % (2**63 - 1)

    def compute(ctx: Any, *args: Any) -> Any:
        if hashed:
            return _cross(n, list(args), hash_cross, np.int64)
        return _cross(n, list(args), lambda fs: b"_X_".join(_as_text(f) for f in fs), object)

    return compute


@register_kernel("SparseCrossV2")
def _sparse_cross_v2(node: KernelNode) -> Any:
    n = node.attrs["N"]

    def compute(ctx: Any, *args: Any) -> Any:
        sep = np.asarray(args[-1], dtype=object).item()
        sep = sep if isinstance(sep, bytes) else str(sep).encode()
        return _cross(n, list(args[:-1]), lambda fs: sep.join(_as_text(f) for f in fs), object)

    return compute
