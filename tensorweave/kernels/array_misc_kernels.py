"""NumPy kernels of `SelectV2`, `DynamicPartition`, `EnsureShape`, `Bitcast`,
`GuaranteeConst`, `CountUpTo`, `HistogramFixedWidth` and the space/batch/depth
rearrangements."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.resource_mgr import Var
from tensorweave.kernels.array_kernels import invalid
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel


@register_compute("SelectV2")
def _select_v2(ctx: Any, cond: Any, t: Any, e: Any) -> Any:
    try:
        return np.where(cond, t, e)
    except ValueError:
        raise invalid(f"Incompatible shapes: {list(np.shape(cond))} vs. {list(np.shape(t))} "
                      f"vs. {list(np.shape(e))}") from None


@register_kernel("DynamicPartition")
def _dynamic_partition(node: KernelNode) -> Any:
    n = node.attrs["num_partitions"]

    def compute(ctx: Any, data: Any, partitions: Any) -> Any:
        data, partitions = np.asarray(data), np.asarray(partitions)
        if data.shape[: partitions.ndim] != partitions.shape:
            raise invalid(f"data.shape must start with partitions.shape, got data.shape = "
                          f"{list(data.shape)}, partitions.shape = {list(partitions.shape)}")
        bad = partitions[(partitions < 0) | (partitions >= n)]
        if bad.size:
            raise invalid(f"partitions has value {int(bad[0])} outside [0, {n})")
        flat = partitions.reshape(-1)
        rows = data.reshape((flat.size,) + data.shape[partitions.ndim :])
        return [rows[flat == i] for i in range(n)]

    return compute


@register_kernel("EnsureShape")
def _ensure_shape(node: KernelNode) -> Any:
    want = node.attrs["shape"]
    dims = None if want.ndims is None else want.as_list()

    def compute(ctx: Any, x: Any) -> Any:
        shape = np.shape(x)
        if dims is not None and (len(dims) != len(shape) or any(
                d is not None and d != s for d, s in zip(dims, shape))):
            shown = "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"
            raise invalid(f"Shape of tensor x [{','.join(map(str, shape))}] is not compatible "
                          f"with expected shape {shown}.")
        return x

    return compute


@register_kernel("Bitcast")
def _bitcast(node: KernelNode) -> Any:
    out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

    def compute(ctx: Any, x: Any) -> Any:
        x = np.ascontiguousarray(x)
        size_in, size_out = x.dtype.itemsize, out.itemsize
        if size_in == size_out:
            return x.view(out)
        if size_in > size_out:
            return x.reshape(-1).view(out).reshape(x.shape + (size_in // size_out,))
        if not x.shape or x.shape[-1] != size_out // size_in:
            raise invalid(f"Cannot bitcast from {x.dtype} to {out}: shape {list(x.shape)}")
        return x.reshape(-1).view(out).reshape(x.shape[:-1])

    return compute


register_compute("GuaranteeConst")(lambda ctx, x: x)


@register_kernel("CountUpTo")
def _count_up_to(node: KernelNode) -> Any:
    limit = node.attrs["limit"]

    def compute(ctx: Any, var: Var, *unused: Any) -> Any:
        seen = []

        def fn(old: Any) -> Any:
            if int(old) >= limit:
                raise errors.OutOfRangeError(None, None, f"Reached limit of {limit}")
            seen.append(np.array(old).copy())
            return old + 1

        ctx.update(var, fn)
        return seen[0]

    return compute


@register_kernel("HistogramFixedWidth")
def _histogram_fixed_width(node: KernelNode) -> Any:
    out = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, values: Any, value_range: Any, nbins: Any) -> Any:
        lo, hi = (float(v) for v in np.asarray(value_range))
        n = int(nbins)
        if n <= 0:
            raise invalid(f"nbins should be a positive number, but got '{n}'")
        if lo >= hi:
            raise invalid(f"value_range should satisfy value_range[0] < value_range[1], but "
                          f"got '[{lo}, {hi}]'")
        v = np.asarray(values, np.float64).reshape(-1)
        idx = np.clip(np.floor((v - lo) / (hi - lo) * n), 0, n - 1).astype(np.int64)
        return np.bincount(idx, minlength=n).astype(out)

    return compute


def _nhwc(x: np.ndarray, fmt: str) -> np.ndarray:
    return x if fmt == "NHWC" else np.transpose(x, (0, 2, 3, 1))


def _from_nhwc(x: np.ndarray, fmt: str) -> np.ndarray:
    return x if fmt == "NHWC" else np.transpose(x, (0, 3, 1, 2))


def space_to_batch(x: np.ndarray, block: np.ndarray, paddings: np.ndarray) -> np.ndarray:
    """TensorFlow's SpaceToBatchND on NumPy arrays."""
    block = [int(v) for v in np.asarray(block).reshape(-1)]
    m = len(block)
    pads = np.asarray(paddings).reshape(m, 2)
    if np.any(pads < 0):
        raise invalid("paddings must be non-negative")
    full = [(0, 0)] + [tuple(int(v) for v in p) for p in pads] + [(0, 0)] * (x.ndim - 1 - m)
    x = np.pad(x, full)
    batch, spatial, rest = x.shape[0], x.shape[1 : 1 + m], x.shape[1 + m :]
    for i, (d, k) in enumerate(zip(spatial, block)):
        if d % k:
            raise invalid(f"padded_shape[{i}]={d} is not divisible by block_shape[{i}]={k}")
    shape = [batch]
    for d, k in zip(spatial, block):
        shape += [d // k, k]
    x = x.reshape(shape + list(rest))
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    perm += list(range(1 + 2 * m, x.ndim))
    x = x.transpose(perm)
    return x.reshape([batch * int(np.prod(block))] + [d // k for d, k in zip(spatial, block)]
                     + list(rest)).copy()


def batch_to_space(x: np.ndarray, block: np.ndarray, crops: np.ndarray) -> np.ndarray:
    """TensorFlow's BatchToSpaceND on NumPy arrays."""
    block = [int(v) for v in np.asarray(block).reshape(-1)]
    m = len(block)
    crops = np.asarray(crops).reshape(m, 2)
    prod = int(np.prod(block))
    if x.shape[0] % prod:
        raise invalid(f"Input batch dimension ({x.shape[0]}) is not divisible by product of "
                      f"block sizes ({prod})")
    batch = x.shape[0] // prod
    spatial, rest = x.shape[1 : 1 + m], x.shape[1 + m :]
    x = x.reshape(block + [batch] + list(spatial) + list(rest))
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, x.ndim))
    x = x.transpose(perm).reshape([batch] + [d * k for d, k in zip(spatial, block)]
                                  + list(rest))
    index = [slice(None)]
    for i in range(m):
        lo, hi = int(crops[i][0]), int(crops[i][1])
        if lo < 0 or hi < 0 or lo + hi > x.shape[1 + i]:
            raise invalid(f"crops must be non-negative and fit the block: {crops.tolist()}")
        index.append(slice(lo, x.shape[1 + i] - hi))
    return x[tuple(index)].copy()


# NOTE: the SpaceToBatchND / BatchToSpaceND / SpaceToDepth / DepthToSpace kernels are in
# nn_misc_kernels; these helpers serve the block-size (V1) ops.


@register_kernel("SpaceToBatch")
def _space_to_batch_v1(node: KernelNode) -> Any:
    b = node.attrs["block_size"]
    return lambda ctx, x, p: space_to_batch(np.asarray(x), np.array([b, b]), p)


@register_kernel("BatchToSpace")
def _batch_to_space_v1(node: KernelNode) -> Any:
    b = node.attrs["block_size"]
    return lambda ctx, x, c: batch_to_space(np.asarray(x), np.array([b, b]), c)


@register_compute("IdentityN")
def _identity_n(ctx: Any, *inputs: Any) -> Any:
    return inputs[0] if len(inputs) == 1 else list(inputs)
