"""NumPy kernels of the array ops: placeholders, shapes, reshaping, fills, join and split.

The indexing ops' kernels are in `array_kernels_index` (imported at the bottom).

Kernels that return views of an input (reshape, squeeze, transpose, split, ...) mark the view
read-only, so a fetched or downstream value never aliases a writable buffer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels.registry import KernelNode, invalid, register_compute, register_kernel


@register_kernel("Const")
def _const(node: KernelNode) -> Any:
    value = node.attrs["value"]
    value.flags.writeable = False
    return lambda ctx: value


@register_kernel("Placeholder")
def _placeholder(node: KernelNode) -> Any:
    dtype = node.attrs["dtype"]
    shape = node.attrs.get("shape")
    dims = (
        "<unknown>"
        if shape is None or shape.ndims is None
        else "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"
    )
    message = (
        f"You must feed a value for placeholder tensor '{node.name}' with dtype "
        f"{dtype.name} and shape {dims}"
    )

    def compute(ctx: Any) -> Any:
        raise errors.InvalidArgumentError(None, None, message)

    return compute


@register_compute("Identity", "StopGradient", "PlaceholderWithDefault")
def _identity(ctx: Any, x: Any) -> Any:
    return x


# ----------------------------------------------------------------------- helpers


def readonly(a: Any) -> Any:
    """`a`, marked read-only when it is a view (so it cannot alias a writable buffer)."""
    if isinstance(a, np.ndarray) and a.base is not None and a.flags.writeable:
        a.flags.writeable = False
    return a


def zeros_of(shape: Any, np_dtype: Any) -> np.ndarray:
    """Zeros of `np_dtype` (empty bytes for strings)."""
    if np.dtype(np_dtype) == np.dtype(object):
        return np.full(shape, b"", dtype=object)
    return np.zeros(shape, dtype=np_dtype)


def outputs_of(node: KernelNode, values: list[Any]) -> Any:
    """`values` as the executor expects them: the value itself for a single output."""
    return values[0] if node.num_outputs == 1 else values


def _out_type(node: KernelNode, i: int = 0) -> Any:
    return node.output_dtypes[i].as_numpy_dtype


def _int_vector(value: Any, what: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise invalid(f"{what} must be a vector, got shape {shape_str(arr.shape)}")
    return arr


# ------------------------------------------------------------------------ shapes


@register_kernel("Shape")
def _shape(node: KernelNode) -> Any:
    out = _out_type(node)
    return lambda ctx, x: np.array(np.shape(x), dtype=out)


@register_kernel("Size")
def _size(node: KernelNode) -> Any:
    out = _out_type(node)
    return lambda ctx, x: np.array(np.size(x), dtype=out)


@register_compute("Rank")
def _rank(ctx: Any, x: Any) -> Any:
    return np.array(np.ndim(x), dtype=np.int32)


@register_compute("Reshape")
def _reshape(ctx: Any, tensor: Any, shape: Any) -> Any:
    x = np.asarray(tensor)
    s = np.asarray(shape)
    if s.ndim != 1:
        raise invalid(f"sizes input must be 1-D, not {shape_str(s.shape)}")
    dims = [int(d) for d in s]
    unknown = -1
    product = 1
    for i, d in enumerate(dims):
        if d == -1:
            if unknown != -1:
                raise invalid(f"Only one input size may be -1, not both {unknown} and {i}")
            unknown = i
        elif d < 0:
            raise invalid(f"Size {i} must be non-negative, not {d}")
        else:
            product *= d
    n = x.size
    if unknown != -1:
        if product == 0:
            raise invalid(
                "Reshape cannot infer the missing input size for an empty tensor unless all "
                "specified input sizes are non-zero"
            )
        if n % product:
            raise invalid(
                f"Input to reshape is a tensor with {n} values, but the requested shape "
                f"requires a multiple of {product}"
            )
        dims[unknown] = n // product
    elif product != n:
        raise invalid(
            f"Input to reshape is a tensor with {n} values, but the requested shape has {product}"
        )
    return readonly(x.reshape(dims))


@register_compute("ExpandDims")
def _expand_dims(ctx: Any, x: Any, dim: Any) -> Any:
    x = np.asarray(x)
    d = np.asarray(dim)
    if d.size != 1:
        raise invalid(f"'dim' must be a tensor with a single value, got {shape_str(d.shape)}")
    axis = int(d.reshape(-1)[0])
    if axis < -1 - x.ndim or axis > x.ndim:
        raise invalid(f"Tried to expand dim index {axis} for tensor with {x.ndim} dimensions.")
    return readonly(np.expand_dims(x, axis))


@register_kernel("Squeeze")
def _squeeze(node: KernelNode) -> Any:
    wanted = list(node.attrs.get("squeeze_dims") or [])

    def compute(ctx: Any, x: Any) -> Any:
        x = np.asarray(x)
        axes = []
        for d in wanted:
            if d < -x.ndim or d >= x.ndim:
                raise invalid(
                    f"Tried to squeeze dim index {d} for tensor with {x.ndim} dimensions."
                )
            d = d + x.ndim if d < 0 else d
            if x.shape[d] != 1:
                raise invalid(
                    f"Can not squeeze dim[{d}], expected a dimension of 1, got {x.shape[d]}"
                )
            axes.append(d)
        if not wanted:
            axes = [i for i, n in enumerate(x.shape) if n == 1]
        return readonly(np.squeeze(x, axis=tuple(sorted(set(axes)))))

    return compute


def check_permutation(perm: Any, rank: int) -> list[int]:
    """Validates a transpose permutation of `rank` dimensions (TensorFlow's messages)."""
    p = np.asarray(perm)
    if p.ndim != 1 or p.size != rank:
        raise invalid(
            f"transpose expects a vector of size {rank}. But input(1) is a vector of size {p.size}"
        )
    values = [int(v) for v in p]
    for v in values:
        if v < 0 or v >= rank:
            raise invalid(f"{v} is out of range [0 .. {rank})")
    seen = set(values)
    for i in range(rank):
        if i not in seen:
            raise invalid(f"{i} is missing from {{{','.join(str(v) for v in values)}}}.")
    return values


@register_compute("Transpose")
def _transpose(ctx: Any, x: Any, perm: Any) -> Any:
    x = np.asarray(x)
    return readonly(np.transpose(x, check_permutation(perm, x.ndim)))


@register_compute("InvertPermutation")
def _invert_permutation(ctx: Any, x: Any) -> Any:
    x = np.asarray(x)
    if x.ndim != 1:
        raise invalid("invert_permutation expects a 1D vector.")
    n = x.size
    out = np.full(n, -1, dtype=x.dtype)
    for i, d in enumerate(int(v) for v in x):
        if d < 0 or d >= n:
            raise invalid(f"{d} is not between 0 and {n}")
        if out[d] != -1:
            raise invalid(f"{d} is duplicated in the input.")
        out[d] = i
    return out


@register_kernel("Fill")
def _fill(node: KernelNode) -> Any:
    out = _out_type(node)

    def compute(ctx: Any, dims: Any, value: Any) -> Any:
        d = _int_vector(dims, "dims")
        v = np.asarray(value)
        if v.ndim != 0:
            raise invalid(f"value must be a scalar, got shape {shape_str(v.shape)}")
        for n in d:
            if n < 0:
                raise invalid(f"Dimension {int(n)} must be >= 0")
        return np.full(tuple(int(n) for n in d), v[()], dtype=out)

    return compute


@register_kernel("ZerosLike")
def _zeros_like(node: KernelNode) -> Any:
    out = _out_type(node)
    return lambda ctx, x: zeros_of(np.shape(x), out)


@register_kernel("OnesLike")
def _ones_like(node: KernelNode) -> Any:
    out = _out_type(node)
    return lambda ctx, x: np.ones(np.shape(x), dtype=out)


# ----------------------------------------------------------------- join / split


@register_kernel("Pack")
def _pack(node: KernelNode) -> Any:
    axis = node.attrs.get("axis", 0)
    out = _out_type(node)

    def compute(ctx: Any, *values: Any) -> Any:
        arrays = [np.asarray(v) for v in values]
        first = arrays[0].shape
        for i, a in enumerate(arrays[1:], 1):
            if a.shape != first:
                raise invalid(
                    f"Shapes of all inputs must match: values[0].shape = {shape_str(first)} "
                    f"!= values[{i}].shape = {shape_str(a.shape)}"
                )
        r = len(first) + 1
        if axis < -r or axis >= r:
            raise invalid(f"axis = {axis} not in [{-r}, {r})")
        return np.stack(arrays, axis=axis).astype(out, copy=False)

    return compute


@register_kernel("Unpack")
def _unpack(node: KernelNode) -> Any:
    axis = node.attrs.get("axis", 0)
    num = node.attrs["num"]

    def compute(ctx: Any, value: Any) -> Any:
        x = np.asarray(value)
        if axis < -x.ndim or axis >= x.ndim:
            raise invalid(f"axis = {axis} not in [{-x.ndim}, {x.ndim})")
        a = axis + x.ndim if axis < 0 else axis
        if x.shape[a] != num:
            raise invalid(f"Input shape axis {a} must equal {num}, got shape {shape_str(x.shape)}")
        lead = (slice(None),) * a
        return outputs_of(node, [readonly(x[lead + (i,)]) for i in range(num)])

    return compute


def concat_axis(axis: Any, rank: int) -> int:
    """A validated, non-negative concat axis."""
    a = np.asarray(axis)
    if a.ndim != 0:
        raise invalid(f"Concat dim tensor should be a scalar, but got shape {shape_str(a.shape)}")
    d = int(a)
    if d < -rank or d >= rank:
        raise invalid(
            f"ConcatOp : Expected concatenating dimensions in the range [{-rank}, {rank}), but "
            f"got {d}"
        )
    return d + rank if d < 0 else d


@register_kernel("ConcatV2")
def _concat(node: KernelNode) -> Any:
    out = _out_type(node)

    def compute(ctx: Any, *args: Any) -> Any:
        axis = args[-1]
        if type(axis) is not np.ndarray or axis.ndim == 0:
            # NOTE: NumPy checks ranks, dims and the axis as TensorFlow does; only its
            # errors are reported through the validation below.
            try:
                return np.concatenate(args[:-1], axis=int(axis)).astype(out, copy=False)
            except (ValueError, TypeError, IndexError):
                pass
        values = [np.asarray(v) for v in args[:-1]]
        first = values[0].shape
        axis = concat_axis(args[-1], len(first))
        for i, v in enumerate(values[1:], 1):
            if v.ndim != len(first):
                raise invalid(
                    "ConcatOp : Ranks of all input tensors should match: shape[0] = "
                    f"{shape_str(first)} vs. shape[{i}] = {shape_str(v.shape)}"
                )
            if any(a != b for j, (a, b) in enumerate(zip(first, v.shape)) if j != axis):
                raise invalid(
                    "ConcatOp : Dimensions of inputs should match: shape[0] = "
                    f"{shape_str(first)} vs. shape[{i}] = {shape_str(v.shape)}"
                )
        return np.concatenate(values, axis=axis).astype(out, copy=False)

    return compute


@register_compute("ConcatOffset")
def _concat_offset(ctx: Any, concat_dim: Any, *shapes: Any) -> Any:
    shapes = [np.asarray(s) for s in shapes]
    n = shapes[0].size
    for i, s in enumerate(shapes):
        if s.ndim != 1:
            raise invalid(f"input {i + 1} should be a vector, but got shape {shape_str(s.shape)}")
        if s.size != n:
            raise invalid(f"input {i + 1} should contain {n} elements, but got {s.size}")
    axis = concat_axis(concat_dim, n)
    offsets = []
    offset = 0
    first = shapes[0].tolist()
    for i, s in enumerate(shapes):
        dims = s.tolist()
        for j in range(n):
            if j != axis and dims[j] != first[j]:
                raise invalid(
                    f"All dimensions except {axis} must match. Input {i} has shape "
                    f"{shape_str(s)} and doesn't match input 0 with shape {shape_str(shapes[0])}."
                )
        o = np.zeros(n, dtype=np.int32)
        o[axis] = offset
        offsets.append(o)
        offset += int(dims[axis])
    return offsets


def split_axis(split_dim: Any, rank: int) -> int:
    """A validated, non-negative split dimension."""
    d = int(np.asarray(split_dim).reshape(()))
    if d < -rank or d >= rank:
        raise invalid(f"-input rank(-{rank}) <= split_dim < input rank ({rank}), but got {d}")
    return d + rank if d < 0 else d


@register_kernel("Split")
def _split(node: KernelNode) -> Any:
    n = node.attrs["num_split"]

    def compute(ctx: Any, split_dim: Any, value: Any) -> Any:
        x = np.asarray(value)
        axis = split_axis(split_dim, x.ndim)
        if x.shape[axis] % n:
            raise invalid(
                "Number of ways to split should evenly divide the split dimension, but got "
                f"split_dim {axis} (size = {x.shape[axis]}) and num_split {n}"
            )
        # NOTE: basic slices are the views np.split returns, without its per-call cost.
        size = x.shape[axis] // n
        lead = (slice(None),) * axis
        return outputs_of(node, [readonly(x[(*lead, slice(i * size, (i + 1) * size))])
                                 for i in range(n)])

    return compute


@register_kernel("SplitV")
def _split_v(node: KernelNode) -> Any:
    n = node.attrs["num_split"]

    def compute(ctx: Any, value: Any, size_splits: Any, split_dim: Any) -> Any:
        x = np.asarray(value)
        sizes_arr = np.asarray(size_splits)
        if sizes_arr.ndim != 1 or sizes_arr.size != n:
            raise invalid(
                "size of the split_tensor must be 1-D and have the same elements as outputs "
                f"got {sizes_arr.ndim} -D and {sizes_arr.size} elements"
            )
        axis = split_axis(split_dim, x.ndim)
        total = x.shape[axis]
        sizes = [int(s) for s in sizes_arr]
        if sizes.count(-1) > 1:
            raise invalid("There can only be one -1 in the input.")
        for i, s in enumerate(sizes):
            if s < -1:
                raise invalid(f"Split size at index {i} must be >= 0. Got: {s}")
        known = sum(s for s in sizes if s != -1)
        if (-1 in sizes and known > total) or (-1 not in sizes and known != total):
            raise invalid(
                "Determined shape must either match input shape along split_dim exactly if "
                "fully specified, or be less than the size of the input along split_dim if not "
                f"fully specified.  Got: {known}"
            )
        sizes = [total - known if s == -1 else s for s in sizes]
        cuts = np.cumsum(sizes)[:-1]
        return outputs_of(node, [readonly(p) for p in np.split(x, cuts, axis=axis)])

    return compute


@register_compute("Tile")
def _tile(ctx: Any, value: Any, multiples: Any) -> Any:
    x = np.asarray(value)
    m = np.asarray(multiples)
    if m.ndim != 1 or m.size != x.ndim:
        raise invalid(
            f"Expected multiples argument to be a vector of length {x.ndim} but got length {m.size}"
        )
    for i, k in enumerate(m):
        if k < 0:
            raise invalid(f"Expected multiples[{i}] >= 0, but got {int(k)}")
    return np.tile(x, tuple(int(k) for k in m)).astype(x.dtype, copy=False)


def _pad_compute(x: Any, paddings: Any, constant: Any) -> Any:
    x = np.asarray(x)
    p = np.asarray(paddings)
    if p.ndim != 2 or p.shape[1] != 2:
        raise invalid(f"paddings must be a matrix with 2 columns: {shape_str(p.shape)}")
    if p.shape[0] != x.ndim:
        raise invalid(
            "The first dimension of paddings must be the rank of inputs"
            f"{shape_str(p.shape)} {shape_str(x.shape)}"
        )
    for before, after in p:
        if before < 0 or after < 0:
            raise invalid(f"Paddings must be non-negative: {int(before)} {int(after)}")
    c = np.asarray(constant)
    if c.ndim != 0:
        raise invalid(f"constant_values must be a scalar. Got: {shape_str(c.shape)}")
    widths = [(int(b), int(a)) for b, a in p]
    if x.dtype == object:
        out = np.full(tuple(d + b + a for d, (b, a) in zip(x.shape, widths)), c[()], dtype=object)
        out[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, widths))] = x
        return out
    return np.pad(x, widths, mode="constant", constant_values=c[()])


@register_kernel("Pad")
def _pad(node: KernelNode) -> Any:
    zero = zeros_of((), _out_type(node))
    return lambda ctx, x, paddings: _pad_compute(x, paddings, zero)


@register_compute("PadV2")
def _pad_v2(ctx: Any, x: Any, paddings: Any, constant_values: Any) -> Any:
    return _pad_compute(x, paddings, constant_values)


@register_compute("ReverseV2")
def _reverse_v2(ctx: Any, tensor: Any, axis: Any) -> Any:
    x = np.asarray(tensor)
    axes = np.asarray(axis)
    if axes.ndim != 1:
        raise invalid(f"'dims' must be 1-dimension, not {axes.ndim}")
    r = x.ndim
    seen: list[int] = []
    for i, a in enumerate(int(v) for v in axes):
        c = a + r if a < 0 else a
        if c < 0 or c >= r:
            raise invalid(f"'axis'[{i}] = {a} is out of valid range [0, {r - 1}")
        if c in seen:
            raise invalid(f"axis {c} specified more than once.")
        seen.append(c)
    return readonly(np.flip(x, axis=tuple(seen))) if seen else x


@register_kernel("Unique")
def _unique(node: KernelNode) -> Any:
    idx_type = _out_type(node, 1)

    def compute(ctx: Any, x: Any) -> Any:
        x = np.asarray(x)
        if x.ndim != 1:
            raise invalid("unique expects a 1D vector.")
        if x.size == 0:
            return x.copy(), np.zeros(0, dtype=idx_type)
        _, first, inverse = np.unique(x, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return x[np.sort(first)], rank[inverse.reshape(-1)].astype(idx_type)

    return compute
