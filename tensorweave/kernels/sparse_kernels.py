"""NumPy kernels of the sparse ops: a sparse tensor arrives as `indices` int64 [N, R],
`values` [N] and `shape` int64 [R] (canonical order = row-major order of the indices)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.kernels.array_kernels import invalid
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel


def _check(indices: Any, values: Any, shape: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    indices = np.asarray(indices, np.int64)
    values, shape = np.asarray(values), np.asarray(shape, np.int64)
    if indices.ndim != 2 or values.ndim != 1 or shape.ndim != 1:
        raise invalid(
            f"Input indices should be a matrix, values a vector and shape a vector, got "
            f"shapes {list(indices.shape)}, {list(values.shape)}, {list(shape.shape)}"
        )
    if indices.shape[0] != values.shape[0] or indices.shape[1] != shape.shape[0]:
        raise invalid(
            f"Number of indices {indices.shape[0]} and values {values.shape[0]} or rank "
            f"{indices.shape[1]} and shape size {shape.shape[0]} do not match"
        )
    return indices, values, shape


def _order(indices: np.ndarray) -> np.ndarray:
    """The permutation sorting `indices` rows into row-major order (stable)."""
    if indices.shape[0] == 0 or indices.shape[1] == 0:
        return np.arange(indices.shape[0])
    return np.lexsort(indices.T[::-1])


def _linear(indices: np.ndarray, shape: np.ndarray) -> np.ndarray:
    if indices.shape[1] == 0:
        return np.zeros(indices.shape[0], np.int64)
    return np.ravel_multi_index(tuple(indices.T), tuple(int(d) for d in shape), mode="wrap")


@register_kernel("SparseToDense")
def _sparse_to_dense(node: KernelNode) -> Any:
    validate = node.attrs["validate_indices"]

    def compute(ctx: Any, indices: Any, shape: Any, values: Any, default: Any) -> Any:
        indices, shape, values = np.asarray(indices), np.asarray(shape), np.asarray(values)
        shape = tuple(int(d) for d in shape.reshape(-1))
        if indices.ndim < 2:
            indices = indices.reshape(-1, 1) if len(shape) == 1 else indices.reshape(1, -1)
        n = indices.shape[0]
        if values.ndim not in (0, 1) or (values.ndim == 1 and values.shape[0] != n):
            raise invalid(f"sparse_values has incorrect shape {list(values.shape)}, should be "
                          f"[] or [{n}]")
        if indices.shape[1] != len(shape):
            raise invalid(f"sparse_indices rank {indices.shape[1]} does not match output rank "
                          f"{len(shape)}")
        bad = np.nonzero(np.any((indices < 0) | (indices >= np.array(shape, np.int64)), axis=1))[0]
        if bad.size:
            i = int(bad[0])
            raise invalid(f"indices[{i}] = {list(indices[i])} is out of bounds: need "
                          f"0 <= index < {list(shape)}")
        if validate and n > 1:
            lin = _linear(indices, np.array(shape))
            steps = np.diff(lin)
            if np.any(steps == 0):
                i = int(np.nonzero(steps == 0)[0][0]) + 1
                raise invalid(f"indices[{i}] = {list(indices[i])} is repeated")
            if np.any(steps < 0):
                i = int(np.nonzero(steps < 0)[0][0]) + 1
                raise invalid(f"indices[{i}] = {list(indices[i])} is out of order. Many sparse "
                              "ops require sorted indices.")
        out = np.full(shape, default, dtype=np.asarray(default).dtype)
        if n:
            out[tuple(indices.T)] = values
        return out

    return compute


@register_kernel("SparseTensorDenseMatMul")
def _sparse_dense_matmul(node: KernelNode) -> Any:
    adjoint_a, adjoint_b = node.attrs["adjoint_a"], node.attrs["adjoint_b"]

    def compute(ctx: Any, a_indices: Any, a_values: Any, a_shape: Any, b: Any) -> Any:
        a_indices, a_values = np.asarray(a_indices, np.int64), np.asarray(a_values)
        b = np.asarray(b)
        rows, cols = (int(d) for d in np.asarray(a_shape))
        if adjoint_b:
            b = np.conj(b.T)
        if adjoint_a:
            rows, cols = cols, rows
            a_indices, a_values = a_indices[:, ::-1], np.conj(a_values)
        if b.shape[0] != cols:
            raise invalid(f"Cannot multiply A and B because inner dimension does not match: "
                          f"{cols} vs. {b.shape[0]}. Did you forget a transpose?  Dimensions "
                          f"of A: [{rows}, {cols}).  Dimensions of B: {list(b.shape)}")
        out = np.zeros((rows, b.shape[1]), dtype=b.dtype)
        bad = (a_indices[:, 0] < 0) | (a_indices[:, 0] >= rows) | (a_indices[:, 1] < 0) | (
            a_indices[:, 1] >= cols)
        if np.any(bad):
            i = int(np.nonzero(bad)[0][0])
            raise invalid(f"k ({a_indices[i, 1]}) from index[{i},1] out of bounds (>={cols})")
        np.add.at(out, a_indices[:, 0], a_values[:, None] * b[a_indices[:, 1]])
        return out

    return compute


@register_compute("SparseTensorDenseAdd")
def _sparse_dense_add(ctx: Any, indices: Any, values: Any, shape: Any, b: Any) -> Any:
    out = np.array(b, copy=True)
    if tuple(int(d) for d in np.asarray(shape)) != out.shape:
        raise invalid(f"Dimensions do not match: {list(np.asarray(shape))} vs {list(out.shape)}")
    np.add.at(out, tuple(np.asarray(indices, np.int64).T), values)
    return out


def _reduction(kind: str, sparse_out: bool, keep_dims: bool) -> Any:
    def compute(ctx: Any, indices: Any, values: Any, shape: Any, axes: Any) -> Any:
        indices, values, shape = _check(indices, values, shape)
        rank = shape.size
        axes = np.asarray(axes).reshape(-1)
        bad = axes[(axes < -rank) | (axes >= rank)]
        if bad.size:
            raise invalid(f"Invalid reduction dimension {int(bad[0])}, for input with {rank} "
                          "dimensions.")
        reduced = sorted({int(a) % rank for a in axes}) if rank else []
        kept = [i for i in range(rank) if i not in reduced]
        out_shape = shape.copy()
        out_shape[reduced] = 1
        group = indices.copy()
        group[:, reduced] = 0
        lin = _linear(group, out_shape)
        uniq, inverse = np.unique(lin, return_inverse=True)
        if kind == "Sum":
            acc = np.zeros(uniq.size, values.dtype)
            np.add.at(acc, inverse, values)
        else:
            acc = np.full(uniq.size, _lowest(values.dtype), values.dtype)
            np.maximum.at(acc, inverse, values)
        dims = out_shape if keep_dims else shape[kept]
        if sparse_out:
            full = np.array(np.unravel_index(uniq, tuple(int(d) for d in out_shape))).T
            full = full.reshape(-1, rank).astype(np.int64)
            return (full if keep_dims else full[:, kept]), acc, dims.astype(np.int64)
        # Groups without entries are 0 for both reductions, as in TensorFlow.
        dense = np.zeros(int(np.prod(out_shape)), values.dtype)
        dense[uniq] = acc
        return dense.reshape(tuple(int(d) for d in dims))

    return compute


def _lowest(dtype: Any) -> Any:
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _reduction_kernel(kind: str, sparse_out: bool) -> Any:
    def builder(node: KernelNode) -> Any:
        return _reduction(kind, sparse_out, node.attrs["keep_dims"])

    return builder


for _kind in ("Sum", "Max"):
    register_kernel(f"SparseReduce{_kind}")(_reduction_kernel(_kind, False))
    register_kernel(f"SparseReduce{_kind}Sparse")(_reduction_kernel(_kind, True))


@register_compute("SparseReshape")
def _sparse_reshape(ctx: Any, indices: Any, shape: Any, new_shape: Any) -> Any:
    indices, shape = np.asarray(indices, np.int64), np.asarray(shape, np.int64)
    new_shape = np.asarray(new_shape, np.int64).copy()
    total = int(np.prod(shape))
    unknown = np.nonzero(new_shape == -1)[0]
    if unknown.size > 1:
        raise invalid(f"only one output dimension may be -1, not both {int(unknown[0])} and "
                      f"{int(unknown[1])}")
    known = int(np.prod(new_shape[new_shape != -1]))
    if unknown.size:
        if known == 0 or total % known:
            raise invalid(f"Input to reshape is a SparseTensor with {total} dense values, but "
                          f"the requested shape requires a multiple of {known}")
        new_shape[unknown[0]] = total // known
    elif known != total:
        raise invalid(f"Input to reshape is a tensor with {total} dense values, but the "
                      f"requested shape has {known}")
    lin = _linear(indices, shape)
    out = np.array(np.unravel_index(lin, tuple(int(d) for d in new_shape))).T
    return out.reshape(-1, new_shape.size).astype(np.int64), new_shape


@register_kernel("SparseConcat")
def _sparse_concat(node: KernelNode) -> Any:
    n, dim = node.attrs["N"], node.attrs["concat_dim"]

    def compute(ctx: Any, *args: Any) -> Any:
        parts = [_check(args[i], args[n + i], args[2 * n + i]) for i in range(n)]
        rank = parts[0][2].size
        axis = dim % rank if -rank <= dim < rank else None
        if axis is None:
            raise invalid(f"Concat dimension must be in range [{-rank}, {rank}), got {dim}")
        offset, all_idx, all_val = 0, [], []
        out_shape = parts[0][2].copy()
        for k, (idx, val, shp) in enumerate(parts):
            others = np.delete(shp, axis)
            if shp.size != rank or not np.array_equal(others, np.delete(out_shape, axis)):
                raise invalid(f"All SparseTensors' shapes must match except on the concat "
                              f"dimension; input {k} has shape {list(shp)}")
            shifted = idx.copy()
            shifted[:, axis] += offset
            offset += int(shp[axis])
            all_idx.append(shifted)
            all_val.append(val)
        out_shape[axis] = offset
        indices, values = np.concatenate(all_idx), np.concatenate(all_val)
        order = _order(indices)
        return indices[order], values[order], out_shape

    return compute


def _union(a_idx: np.ndarray, b_idx: np.ndarray, shape: np.ndarray):
    """Linear keys of the union, and where each input's entries land in it."""
    la, lb = _linear(a_idx, shape), _linear(b_idx, shape)
    keys = np.union1d(la, lb)
    return keys, np.searchsorted(keys, la), np.searchsorted(keys, lb)


@register_compute("SparseAdd")
def _sparse_add(ctx: Any, ai: Any, av: Any, ash: Any, bi: Any, bv: Any, bsh: Any, thresh: Any):
    ai, av, ash = _check(ai, av, ash)
    bi, bv, bsh = _check(bi, bv, bsh)
    if not np.array_equal(ash, bsh):
        raise invalid(f"Operands do not have the same ranks or shapes: {list(ash)} vs "
                      f"{list(bsh)}")
    keys, pa, pb = _union(ai, bi, ash)
    dtype = np.result_type(av, bv)
    total = np.zeros(keys.size, dtype)
    np.add.at(total, pa, av)
    np.add.at(total, pb, bv)
    both = np.zeros(keys.size, bool)
    in_a = np.zeros(keys.size, bool)
    in_a[pa] = True
    both[pb] = in_a[pb]
    keep = ~both | (np.abs(total) >= thresh)
    keys, total = keys[keep], total[keep]
    idx = np.array(np.unravel_index(keys, tuple(int(d) for d in ash))).T.reshape(-1, ash.size)
    return idx.astype(np.int64), total, ash


@register_compute("SparseAddGrad")
def _sparse_add_grad(ctx: Any, grad: Any, a_idx: Any, b_idx: Any, sum_idx: Any) -> Any:
    grad = np.asarray(grad)
    sums = {tuple(r): i for i, r in enumerate(np.asarray(sum_idx).tolist())}

    def pick(idx: Any) -> np.ndarray:
        out = np.zeros(len(idx), grad.dtype)
        for k, r in enumerate(np.asarray(idx).tolist()):
            i = sums.get(tuple(r))
            if i is not None:
                out[k] = grad[i]
        return out

    return pick(a_idx), pick(b_idx)


@register_compute("SparseReorder")
def _sparse_reorder(ctx: Any, indices: Any, values: Any, shape: Any) -> Any:
    indices, values, _ = _check(indices, values, shape)
    order = _order(indices)
    return indices[order], values[order]


@register_compute("SparseFillEmptyRows")
def _fill_empty_rows(ctx: Any, indices: Any, values: Any, shape: Any, default: Any) -> Any:
    indices, values, shape = _check(indices, values, shape)
    if np.asarray(default).ndim != 0:
        raise invalid("default_value must be a scalar")
    rows = int(shape[0]) if shape.size else 0
    if indices.shape[0] and (indices[:, 0].min() < 0 or indices[:, 0].max() >= rows):
        raise invalid(f"indices rows must be in [0, {rows})")
    empty = np.ones(rows, bool)
    empty[indices[:, 0]] = False
    fill = np.nonzero(empty)[0]
    extra = np.zeros((fill.size, shape.size), np.int64)
    extra[:, 0] = fill
    all_idx = np.concatenate([indices, extra])
    all_val = np.concatenate([values, np.full(fill.size, default, values.dtype)])
    order = _order(all_idx)
    where = np.empty(order.size, np.int64)
    where[order] = np.arange(order.size)
    return all_idx[order], all_val[order], empty, where[: indices.shape[0]]


@register_compute("SparseFillEmptyRowsGrad")
def _fill_empty_rows_grad(ctx: Any, reverse_map: Any, grad: Any) -> Any:
    grad, reverse_map = np.asarray(grad), np.asarray(reverse_map, np.int64)
    d_values = grad[reverse_map]
    rest = np.ones(grad.shape[0], bool)
    rest[reverse_map] = False
    return d_values, grad[rest].sum(dtype=grad.dtype)


@register_compute("SparseSlice")
def _sparse_slice(ctx: Any, indices: Any, values: Any, shape: Any, start: Any, size: Any):
    indices, values, shape = _check(indices, values, shape)
    start, size = np.asarray(start, np.int64), np.asarray(size, np.int64)
    if start.shape != shape.shape or size.shape != shape.shape:
        raise invalid(f"Expected start and size of length {shape.size}")
    end = np.minimum(start + size, shape)
    keep = np.all((indices >= start) & (indices < end), axis=1)
    out_shape = np.maximum(end - start, 0)
    return indices[keep] - start, values[keep], out_shape


@register_compute("SparseSliceGrad")
def _sparse_slice_grad(ctx: Any, grad: Any, in_idx: Any, start: Any, out_idx: Any) -> Any:
    grad, in_idx = np.asarray(grad), np.asarray(in_idx, np.int64)
    shifted = {tuple(r): i for i, r in enumerate((np.asarray(out_idx) + start).tolist())}
    out = np.zeros(in_idx.shape[0], grad.dtype)
    for k, r in enumerate(in_idx.tolist()):
        i = shifted.get(tuple(r))
        if i is not None:
            out[k] = grad[i]
    return out


@register_kernel("SparseSplit")
def _sparse_split(node: KernelNode) -> Any:
    n = node.attrs["num_split"]

    def compute(ctx: Any, split_dim: Any, indices: Any, values: Any, shape: Any) -> Any:
        indices, values, shape = _check(indices, values, shape)
        rank = shape.size
        dim = int(split_dim)
        if not -rank <= dim < rank:
            raise invalid(f"Input split_dim should be between {-rank} and {rank}, got {dim}")
        dim %= rank
        total = int(shape[dim])
        if n > total:
            raise invalid(f"Input num_split should be between 1 and {total}, got {n}")
        sizes = [total // n + (1 if i < total % n else 0) for i in range(n)]
        outs_i, outs_v, outs_s, begin = [], [], [], 0
        for size in sizes:
            keep = (indices[:, dim] >= begin) & (indices[:, dim] < begin + size)
            idx = indices[keep].copy()
            idx[:, dim] -= begin
            shp = shape.copy()
            shp[dim] = size
            outs_i.append(idx)
            outs_v.append(values[keep])
            outs_s.append(shp)
            begin += size
        return [*outs_i, *outs_v, *outs_s]

    return compute


@register_compute("SparseSoftmax")
def _sparse_softmax(ctx: Any, indices: Any, values: Any, shape: Any) -> Any:
    indices, values, shape = _check(indices, values, shape)
    if shape.size < 2:
        raise invalid(f"Input should have rank >= 2, but received shape: {list(shape)}")
    rows = _linear(indices[:, :-1], shape[:-1])
    _, group = np.unique(rows, return_inverse=True)
    top = np.full(group.max() + 1 if group.size else 0, -np.inf)
    np.maximum.at(top, group, values)
    e = np.exp(values - top[group])
    total = np.zeros(top.size)
    np.add.at(total, group, e)
    return (e / total[group]).astype(values.dtype)


def _sparse_sparse(fn: Any) -> Any:
    def compute(ctx: Any, ai: Any, av: Any, ash: Any, bi: Any, bv: Any, bsh: Any) -> Any:
        ai, av, ash = _check(ai, av, ash)
        bi, bv, bsh = _check(bi, bv, bsh)
        if not np.array_equal(ash, bsh):
            raise invalid(f"Operands' shapes do not match: {list(ash)} vs. {list(bsh)}")
        keys, pa, pb = _union(ai, bi, ash)
        a_full = np.zeros(keys.size, av.dtype)
        b_full = np.zeros(keys.size, av.dtype)
        a_full[pa], b_full[pb] = av, bv
        idx = np.array(np.unravel_index(keys, tuple(int(d) for d in ash))).T
        return idx.reshape(-1, ash.size).astype(np.int64), fn(a_full, b_full)

    return compute


register_compute("SparseSparseMaximum")(_sparse_sparse(np.maximum))
register_compute("SparseSparseMinimum")(_sparse_sparse(np.minimum))
