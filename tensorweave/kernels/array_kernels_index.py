"""NumPy kernels of the indexing array ops.

`Slice`, `StridedSlice`, `StridedSliceGrad`, `GatherV2`, `OneHot`, `Select`, `Where`,
`Range`, `DynamicStitch`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.strided_slice import validate_strided_slice
from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels.array_kernels import readonly, zeros_of
from tensorweave.kernels.registry import KernelNode, invalid, register_compute, register_kernel

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


@register_compute("Slice")
def _slice(ctx: Any, x: Any, begin: Any, size: Any) -> Any:
    x = np.asarray(x)
    b, s = np.asarray(begin), np.asarray(size)
    if b.ndim != 1 or s.ndim != 1 or b.size != x.ndim or s.size != x.ndim:
        raise invalid(
            f"Expected begin and size arguments to be 1-D tensors of size {x.ndim}, but got "
            f"shapes {shape_str(b.shape)} and {shape_str(s.shape)} instead."
        )
    index = []
    for i, (dim, bi, si) in enumerate(zip(x.shape, b.tolist(), s.tolist())):
        if si == -1:
            si = dim - bi
        if bi < 0 or bi > dim:
            raise invalid(f"Expected begin[{i}] in [0, {dim}], but got {bi}")
        if si < 0 or si > dim - bi:
            raise invalid(f"Expected size[{i}] in [0, {dim - bi}], but got {si}")
        index.append(slice(bi, bi + si))
    return readonly(x[tuple(index)])


def _spec(node: KernelNode, shape: Any, begin: Any, end: Any, strides: Any) -> Any:
    b, e, s = np.asarray(begin), np.asarray(end), np.asarray(strides)
    if b.ndim != 1 or e.ndim != 1 or s.ndim != 1 or not b.size == e.size == s.size:
        raise invalid(
            "Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
            f"{shape_str(b.shape)}, {shape_str(e.shape)}, and {shape_str(s.shape)} instead."
        )
    try:
        return validate_strided_slice(
            [int(d) for d in shape], b, e, s, **{m: node.attrs.get(m, 0) for m in _MASKS}
        )
    except ValueError as err:
        raise invalid(str(err)) from None


@register_kernel("StridedSlice")
def _strided_slice(node: KernelNode) -> Any:
    def compute(ctx: Any, x: Any, begin: Any, end: Any, strides: Any) -> Any:
        x = np.asarray(x)
        spec = _spec(node, x.shape, begin, end, strides)
        return readonly(x[spec.numpy_index()].reshape(spec.final_shape))

    return compute


@register_kernel("StridedSliceGrad")
def _strided_slice_grad(node: KernelNode) -> Any:
    out_type = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, shape: Any, begin: Any, end: Any, strides: Any, dy: Any) -> Any:
        shape = np.asarray(shape)
        if shape.ndim != 1:
            raise invalid(f"shape must be 1-D, got {shape_str(shape.shape)}")
        spec = _spec(node, shape, begin, end, strides)
        dy = np.asarray(dy)
        if dy.shape != spec.final_shape:
            raise invalid(
                f"shape of dy was {shape_str(dy.shape)} instead of {shape_str(spec.final_shape)}"
            )
        out = zeros_of(tuple(int(d) for d in shape), out_type)
        out[spec.numpy_index()] = dy.reshape(spec.processing_shape)
        return out

    return compute


def bad_index_message(indices: np.ndarray, limit: int) -> str | None:
    """TensorFlow's message for the first index outside `[0, limit)`, or None."""
    flat = indices.reshape(-1)
    bad = np.nonzero((flat < 0) | (flat >= limit))[0]
    if not bad.size:
        return None
    i = int(bad[0])
    where = ",".join(str(int(c)) for c in np.unravel_index(i, indices.shape))
    return f"indices[{where}] = {int(flat[i])} is not in [0, {limit})"


@register_kernel("GatherV2")
def _gather_v2(node: KernelNode) -> Any:
    batch_dims = node.attrs.get("batch_dims", 0)

    def compute(ctx: Any, params: Any, indices: Any, axis: Any) -> Any:
        if batch_dims != 0:
            raise errors.UnimplementedError(None, None, "GatherV2 supports only batch_dims=0")
        p, i, a = np.asarray(params), np.asarray(indices), np.asarray(axis)
        if a.ndim != 0:
            raise invalid(f"axis must be scalar, but got {shape_str(a.shape)}")
        ax = int(a)
        if ax < -p.ndim or ax >= p.ndim:
            raise invalid(f"Expected axis in the range [{-p.ndim}, {p.ndim}), but got {ax}")
        ax = ax + p.ndim if ax < 0 else ax
        message = bad_index_message(i, p.shape[ax])
        if message:
            raise invalid(message)
        return np.take(p, i, axis=ax)

    return compute


@register_kernel("OneHot")
def _one_hot(node: KernelNode) -> Any:
    axis = node.attrs.get("axis", -1)
    out_type = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, indices: Any, depth: Any, on_value: Any, off_value: Any) -> Any:
        idx = np.asarray(indices)
        d, on, off = np.asarray(depth), np.asarray(on_value), np.asarray(off_value)
        if d.ndim != 0:
            raise invalid(f"depth must be a scalar, but got: {shape_str(d.shape)}")
        if int(d) < 0:
            raise invalid(f"depth must be non-negative, got: {int(d)}")
        if on.ndim != 0:
            raise invalid(f"on_value must be a scalar, but got: {shape_str(on.shape)}")
        if off.ndim != 0:
            raise invalid(f"off_value must be a scalar, but got: {shape_str(off.shape)}")
        r = idx.ndim + 1
        if axis != -1 and not 0 <= axis < r:
            raise invalid(f"Expected axis to be -1 or between [0, {r}).  But received: {axis}")
        at = r - 1 if axis == -1 else axis
        classes = np.arange(int(d)).reshape([-1] + [1] * (r - 1 - at))
        hot = np.expand_dims(idx.astype(np.int64), at) == classes
        return np.where(hot, on, off).astype(out_type)

    return compute


@register_compute("Select")
def _select(ctx: Any, cond: Any, t: Any, e: Any) -> Any:
    c, t, e = np.asarray(cond), np.asarray(t), np.asarray(e)
    if t.shape != e.shape:
        raise invalid(
            "'then' and 'else' must have the same size.  but received: "
            f"{shape_str(t.shape)} vs. {shape_str(e.shape)}"
        )
    if c.ndim == 0:
        return (t if c else e).copy()
    if c.ndim == 1 and t.ndim != 1:
        if t.ndim < 1:
            raise invalid(f"'then' must be at least a vector, but saw shape: {shape_str(t.shape)}")
        if t.shape[0] != c.size:
            raise invalid(
                "Number of batches of 'then' must match size of 'cond', but saw: "
                f"{t.shape[0]} vs. {c.size}"
            )
        c = c.reshape((-1,) + (1,) * (t.ndim - 1))
    elif c.shape != t.shape:
        raise invalid(
            "'cond' and 'then' must have the same size.  but received: "
            f"{shape_str(c.shape)} vs. {shape_str(t.shape)}"
        )
    return np.where(c, t, e).astype(t.dtype, copy=False)


@register_compute("Where")
def _where(ctx: Any, x: Any) -> Any:
    return np.argwhere(np.asarray(x)).astype(np.int64)


@register_kernel("Range")
def _range(node: KernelNode) -> Any:
    out_type = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, start: Any, limit: Any, delta: Any) -> Any:
        vals = []
        for what, v in (("start", start), ("limit", limit), ("delta", delta)):
            v = np.asarray(v)
            if v.ndim != 0:
                raise invalid(f"{what} must be a scalar, not shape {shape_str(v.shape)}")
            vals.append(v.item())
        s, lim, d = vals
        if d == 0:
            raise invalid(f"Requires delta != 0: {d}")
        if d > 0 and s > lim:
            raise invalid(f"Requires start <= limit when delta > 0: {s}/{lim}")
        if d < 0 and s < lim:
            raise invalid(f"Requires start >= limit when delta < 0: {s}/{lim}")
        if np.issubdtype(out_type, np.integer):
            n = (abs(lim - s) + abs(d) - 1) // abs(d)
        else:
            n = int(np.ceil(abs((lim - s) / d)))
        return (
            np.asarray(s, out_type) + np.arange(n, dtype=out_type) * np.asarray(d, out_type)
        ).astype(out_type, copy=False)

    return compute


@register_kernel("DynamicStitch")
def _dynamic_stitch(node: KernelNode) -> Any:
    n = node.attrs["N"]
    out_type = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, *args: Any) -> Any:
        indices = [np.asarray(a) for a in args[:n]]
        data = [np.asarray(a) for a in args[n:]]
        suffix = None
        max_index = -1
        for i, (idx, d) in enumerate(zip(indices, data)):
            if d.shape[: idx.ndim] != idx.shape:
                raise invalid(
                    f"data[{i}].shape = {shape_str(d.shape)} does not start with "
                    f"indices[{i}].shape = {shape_str(idx.shape)}"
                )
            rest = d.shape[idx.ndim :]
            if suffix is None:
                suffix = rest
            elif rest != suffix:
                raise invalid(
                    f"Need data[0].shape[{indices[0].ndim}:] = {shape_str(suffix)} to match "
                    f"data[{i}].shape[{idx.ndim}:] = {shape_str(rest)}"
                )
            if idx.size:
                max_index = max(max_index, int(idx.max()))
        out = zeros_of((max_index + 1,) + tuple(suffix), out_type)
        for idx, d in zip(indices, data):
            flat = idx.reshape(-1)
            neg = np.nonzero(flat < 0)[0]
            if neg.size:
                raise invalid(f"indices[{int(neg[0])}] is out of range")
            out[flat] = d.reshape((flat.size,) + tuple(suffix))
        return out

    return compute
