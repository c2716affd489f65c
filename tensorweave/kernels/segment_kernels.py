"""NumPy kernels of the segment reductions, sparse segment reductions and `Bincount`.

Empty segments give 0 (sum, mean), 1 (prod), and the lowest/highest value of the dtype
(unsorted max/min; finite for floats), as TensorFlow's kernels do; sorted `SegmentMax|Min` give 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.kernels.array_kernels import invalid
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel

_UFUNC = {"Sum": np.add, "Prod": np.multiply, "Max": np.maximum, "Min": np.minimum}


def _identity(kind: str, dtype: Any) -> Any:
    dtype = np.dtype(dtype)
    if kind in ("Sum", "Mean", "SqrtN"):
        return np.zeros((), dtype)
    if kind == "Prod":
        return np.ones((), dtype)
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return np.array(info.min if kind == "Max" else info.max, dtype)


def _reduce(kind: str, data: np.ndarray, ids: np.ndarray, num: int) -> np.ndarray:
    """Rows of `data` reduced into `num` segments by `ids` (ids < 0 are dropped)."""
    flat_ids = ids.reshape(-1)
    rows = data.reshape((flat_ids.size,) + data.shape[ids.ndim :])
    keep = flat_ids >= 0
    flat_ids, rows = flat_ids[keep], rows[keep]
    ufunc = _UFUNC["Sum" if kind in ("Mean", "SqrtN") else kind]
    out = np.empty((num,) + rows.shape[1:], dtype=data.dtype)
    out[...] = _identity(kind, data.dtype)
    ufunc.at(out, flat_ids, rows)
    if kind in ("Mean", "SqrtN"):
        counts = np.bincount(flat_ids, minlength=num).astype(np.float64)
        denom = np.sqrt(counts) if kind == "SqrtN" else counts
        denom = np.maximum(denom, 1).reshape((num,) + (1,) * (out.ndim - 1))
        if out.dtype.kind in "iu":
            out = (out // denom.astype(out.dtype)).astype(data.dtype)
        else:
            out = (out / denom).astype(data.dtype)
    return out


def _check_sorted(ids: np.ndarray) -> int:
    """The number of output rows, `ids[-1] + 1`, after TensorFlow's checks in its order.

    Raises:
      InvalidArgumentError: "segment ids must be >= 0" for a negative last id; at each
        segment boundary "segment ids are not increasing", then "Segment id ... out of
        range", as TensorFlow's kernel reports them.
    """
    if not ids.size:
        return 0
    last = int(ids[-1])
    if last < 0:
        raise invalid("segment ids must be >= 0")
    rows = last + 1
    starts = np.flatnonzero(np.diff(ids)) + 1
    for b in np.concatenate([[0], starts]).tolist():
        cur = int(ids[b])
        end = np.searchsorted(starts, b, side="right")
        if end < starts.size and int(ids[starts[end]]) < cur:
            raise invalid("segment ids are not increasing")
        if not 0 <= cur < rows:
            raise invalid(f"Segment id {cur} out of range [0, {rows}), possibly because "
                          "'segment_ids' input is not sorted.")
    return rows


def _check_size(rows: int, data: np.ndarray, ids: np.ndarray) -> None:
    inner = int(np.prod(data.shape[ids.ndim :], dtype=np.int64))
    if rows * max(inner, 1) > 2**31 - 1:
        raise invalid(f"segment output of {rows} rows of {inner} elements is too large")


def _sorted_kernel(kind: str) -> Any:
    def compute(ctx: Any, data: Any, ids: Any) -> Any:
        data, ids = np.asarray(data), np.asarray(ids)
        if ids.ndim != 1 or data.ndim < 1 or data.shape[0] != ids.size:
            raise invalid(
                f"segment_ids should be the same size as dimension 0 of input; "
                f"data.shape = {list(data.shape)}, segment_ids.shape = {list(ids.shape)}"
            )
        num = _check_sorted(ids)
        _check_size(num, data, ids)
        out = _reduce(kind, data, ids, num)
        if kind in ("Max", "Min") and num:
            present = np.zeros(num, bool)
            present[ids] = True
            out[~present] = 0
        return out

    return compute


def _unsorted_kernel(kind: str) -> Any:
    def compute(ctx: Any, data: Any, ids: Any, num_segments: Any) -> Any:
        data, ids = np.asarray(data), np.asarray(ids)
        num = int(num_segments)
        if data.shape[: ids.ndim] != ids.shape:
            raise invalid(
                f"data.shape = {list(data.shape)} does not start with segment_ids.shape = "
                f"{list(ids.shape)}"
            )
        _check_size(num, data, ids)
        if ids.size and int(ids.max()) >= num:
            bad = int(ids.max())
            raise invalid(f"segment_ids[...] = {bad} is out of range [0, {num})")
        return _reduce(kind, data, ids, num)

    return compute


for _kind in ("Sum", "Mean", "Prod", "Max", "Min"):
    register_compute(f"Segment{_kind}")(_sorted_kernel(_kind))
for _kind in ("Max", "Min", "Prod"):
    register_compute(f"UnsortedSegment{_kind}")(_unsorted_kernel(_kind))


def _sparse_segment_kernel(kind: str) -> Any:
    def compute(ctx: Any, data: Any, indices: Any, ids: Any) -> Any:
        data, indices, ids = np.asarray(data), np.asarray(indices), np.asarray(ids)
        if indices.shape != ids.shape:
            raise invalid("segment_ids and indices should have same size.")
        if indices.size and (indices.min() < 0 or indices.max() >= data.shape[0]):
            raise invalid(f"Bad: indices out of range [0, {data.shape[0]})")
        num = _check_sorted(ids)
        _check_size(num, data, ids)
        return _reduce(kind, data[indices], ids, num)

    return compute


for _kind in ("Sum", "Mean", "SqrtN"):
    register_compute(f"SparseSegment{_kind}")(_sparse_segment_kernel(_kind))


@register_kernel("Bincount")
def _bincount(node: KernelNode) -> Any:
    out_dtype = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, arr: Any, size: Any, weights: Any) -> Any:
        arr, size, weights = np.asarray(arr), int(size), np.asarray(weights)
        if size < 0:
            raise invalid(f"size ({size}) must be non-negative")
        if arr.size and arr.min() < 0:
            raise invalid("Input arr must be non-negative!")
        flat = arr.reshape(-1)
        keep = flat < size
        w = None if weights.size == 0 else weights.reshape(-1)[keep]
        return np.bincount(flat[keep], weights=w, minlength=size)[:size].astype(out_dtype)

    return compute
