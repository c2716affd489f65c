"""NumPy kernels of the sequence, range, matrix-diagonal/band, `Einsum`, `ListDiff`, `Roll`
and bitwise ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.kernels.array_kernels import invalid
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel


@register_kernel("ReverseSequence")
def _reverse_sequence(node: KernelNode) -> Any:
    seq_dim, batch_dim = node.attrs["seq_dim"], node.attrs["batch_dim"]

    def compute(ctx: Any, x: Any, lengths: Any) -> Any:
        x, lengths = np.asarray(x), np.asarray(lengths)
        if lengths.shape != (x.shape[batch_dim],):
            raise invalid(
                f"Length of seq_lengths != input.dims({batch_dim}), ({lengths.size} vs. "
                f"{x.shape[batch_dim]})"
            )
        if lengths.size and (lengths.min() < 0 or lengths.max() > x.shape[seq_dim]):
            raise invalid(f"seq_lengths must be in [0, {x.shape[seq_dim]}], got {lengths}")
        out = x.copy()
        for b, n in enumerate(lengths.tolist()):
            src = [slice(None)] * x.ndim
            src[batch_dim] = b
            src[seq_dim] = slice(0, n)
            out[tuple(src)] = np.flip(x[tuple(src)], axis=seq_dim - (batch_dim < seq_dim))
        return out

    return compute


@register_compute("LinSpace")
def _lin_space(ctx: Any, start: Any, stop: Any, num: Any) -> Any:
    if int(num) <= 0:
        raise invalid(f"Requires num > 0: {int(num)}")
    dtype = np.asarray(start).dtype
    out = np.linspace(np.float64(start), np.float64(stop), int(num))
    return out.astype(dtype)


@register_kernel("UniqueWithCounts")
def _unique_with_counts(node: KernelNode) -> Any:
    idx_dtype = node.output_dtypes[1].as_numpy_dtype

    def compute(ctx: Any, x: Any) -> Any:
        x = np.asarray(x)
        if x.ndim != 1:
            raise invalid(f"unique expects a 1D vector, got shape {list(x.shape)}")
        _, first, inverse, counts = np.unique(
            x, return_index=True, return_inverse=True, return_counts=True
        )
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return (
            x[first[order]],
            rank[inverse.reshape(-1)].astype(idx_dtype),
            counts[order].astype(idx_dtype),
        )

    return compute


@register_kernel("ListDiff")
def _list_diff(node: KernelNode) -> Any:
    idx_dtype = node.output_dtypes[1].as_numpy_dtype

    def compute(ctx: Any, x: Any, y: Any) -> Any:
        x, y = np.asarray(x), np.asarray(y)
        if x.ndim != 1 or y.ndim != 1:
            raise invalid("x and y should be 1D vectors")
        keep = np.nonzero(~np.isin(x, y))[0]
        return x[keep], keep.astype(idx_dtype)

    return compute


@register_compute("MatrixBandPart")
def _band_part(ctx: Any, x: Any, num_lower: Any, num_upper: Any) -> Any:
    x = np.asarray(x)
    if x.ndim < 2:
        raise invalid(f"input must be at least 2-dim, received shape: {list(x.shape)}")
    m, n = x.shape[-2:]
    lower, upper = int(num_lower), int(num_upper)
    if lower > m:
        raise invalid(f"num_lower must be negative or less or equal to number of rows ({m}) "
                      f"got: {lower}")
    if upper > n:
        raise invalid(f"num_upper must be negative or less or equal to number of columns ({n}) "
                      f"got: {upper}")
    i = np.arange(m)[:, None]
    j = np.arange(n)[None, :]
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    return np.where(keep, x, np.zeros((), x.dtype))


def _diag_embed(d: np.ndarray) -> np.ndarray:
    n = d.shape[-1]
    out = np.zeros(d.shape + (n,), dtype=d.dtype)
    idx = np.arange(n)
    out[..., idx, idx] = d
    return out


@register_compute("MatrixDiag")
def _matrix_diag(ctx: Any, d: Any) -> Any:
    d = np.asarray(d)
    if d.ndim < 1:
        raise invalid(f"input must be at least 1-dim, received shape: {list(d.shape)}")
    return _diag_embed(d)


@register_compute("MatrixDiagPart")
def _matrix_diag_part(ctx: Any, x: Any) -> Any:
    x = np.asarray(x)
    if x.ndim < 2:
        raise invalid(f"input must be at least 2-dim, received shape: {list(x.shape)}")
    return np.diagonal(x, axis1=-2, axis2=-1).copy()


@register_compute("MatrixSetDiag")
def _matrix_set_diag(ctx: Any, x: Any, d: Any) -> Any:
    x, d = np.asarray(x), np.asarray(d)
    k = min(x.shape[-2:]) if x.ndim >= 2 else -1
    if x.ndim < 2 or d.shape != x.shape[:-2] + (k,):
        raise invalid(
            f"must have diagonal.shape == input.shape[:-2] + [min(input.shape[-2:])], but "
            f"received input shape: {list(x.shape)} and diagonal shape: {list(d.shape)}"
        )
    out = x.copy()
    idx = np.arange(k)
    out[..., idx, idx] = d
    return out


@register_compute("Diag")
def _diag(ctx: Any, d: Any) -> Any:
    d = np.asarray(d)
    if d.ndim < 1:
        raise invalid("Input must be at least rank 1, got 0")
    return np.diag(d.reshape(-1)).reshape(d.shape * 2)


@register_compute("DiagPart")
def _diag_part(ctx: Any, x: Any) -> Any:
    x = np.asarray(x)
    half = x.ndim // 2
    if x.ndim % 2 or x.ndim == 0 or x.shape[:half] != x.shape[half:]:
        raise invalid(f"Invalid shape {list(x.shape)}: dimensions must be [D1..Dk, D1..Dk]")
    n = int(np.prod(x.shape[:half]))
    return np.diagonal(x.reshape(n, n)).reshape(x.shape[:half]).copy()


def _split_tokens(term: str) -> list[str]:
    out, i = [], 0
    while i < len(term):
        if term.startswith("...", i):
            out.append("...")
            i += 3
        else:
            out.append(term[i])
            i += 1
    return out


def _einsum(equation: str, inputs: list[np.ndarray]) -> np.ndarray:
    """np.einsum, plus repeated output labels (a generalized diagonal, zeros elsewhere)."""
    lhs, out = equation.split("->")
    tokens = _split_tokens(out)
    unique = list(dict.fromkeys(tokens))
    if len(unique) == len(tokens):
        return np.einsum(equation, *inputs)
    value = np.asarray(np.einsum(f"{lhs}->{''.join(unique)}", *inputs))
    axes_of: dict[str, list[int]] = {}
    pos = 0
    for t in unique:
        width = value.ndim - (len(unique) - 1) if t == "..." else 1
        axes_of[t] = list(range(pos, pos + width))
        pos += width
    grids = np.indices(value.shape, sparse=True)
    index, shape = [], []
    for t in tokens:
        for a in axes_of[t]:
            index.append(grids[a])
            shape.append(value.shape[a])
    result = np.zeros(shape, dtype=value.dtype)
    result[tuple(index)] = value
    return result


@register_kernel("Einsum")
def _einsum_kernel(node: KernelNode) -> Any:
    equation = node.attrs["equation"]
    equation = equation.decode() if isinstance(equation, bytes) else equation
    equation = equation.replace(" ", "")

    def compute(ctx: Any, *inputs: Any) -> Any:
        try:
            out = _einsum(equation, [np.asarray(x) for x in inputs])
        except ValueError as e:
            raise invalid(f"Einsum {equation!r}: {e}") from None
        return np.asarray(out, dtype=np.asarray(inputs[0]).dtype)

    return compute


@register_compute("Cross")
def _cross(ctx: Any, a: Any, b: Any) -> Any:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.shape[-1:] != (3,):
        raise invalid(f"inner dimension of a and b must be 3 and shapes equal, got "
                      f"{list(a.shape)} and {list(b.shape)}")
    return np.cross(a, b).astype(a.dtype)


@register_compute("Roll")
def _roll(ctx: Any, x: Any, shift: Any, axis: Any) -> Any:
    shift, axis = np.asarray(shift).reshape(-1), np.asarray(axis).reshape(-1)
    if shift.size != axis.size:
        raise invalid("shift and axis must have the same size")
    x = np.asarray(x)
    for a in axis:
        if not -x.ndim <= a < x.ndim:
            raise invalid(f"axis {int(a)} is out of range for input of rank {x.ndim}")
    return np.roll(x, tuple(int(s) for s in shift), tuple(int(a) for a in axis))


register_compute("BitwiseAnd")(lambda ctx, x, y: np.bitwise_and(x, y))
register_compute("BitwiseOr")(lambda ctx, x, y: np.bitwise_or(x, y))
register_compute("BitwiseXor")(lambda ctx, x, y: np.bitwise_xor(x, y))
register_compute("Invert")(lambda ctx, x: np.invert(x))


def _shift(left: bool) -> Any:
    def compute(ctx: Any, x: Any, y: Any) -> Any:
        x, y = np.asarray(x), np.asarray(y)
        bits = x.dtype.itemsize * 8
        y = np.clip(y, 0, bits - 1).astype(x.dtype)
        return np.left_shift(x, y) if left else np.right_shift(x, y)

    return compute


register_compute("LeftShift")(_shift(True))
register_compute("RightShift")(_shift(False))


@register_compute("PopulationCount")
def _population_count(ctx: Any, x: Any) -> Any:
    x = np.asarray(x)
    as_bytes = x.view(np.uint8).reshape(x.shape + (x.dtype.itemsize,))
    return np.unpackbits(as_bytes, axis=-1).sum(axis=-1, dtype=np.uint8)


@register_compute("BroadcastTo")
def _broadcast_to(ctx: Any, x: Any, shape: Any) -> Any:
    shape = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    try:
        return np.broadcast_to(x, shape).copy()
    except ValueError:
        raise invalid(f"Incompatible shapes: {list(np.shape(x))} vs. {list(shape)}") from None


@register_compute("BroadcastArgs")
def _broadcast_args(ctx: Any, s0: Any, s1: Any) -> Any:
    s0, s1 = np.asarray(s0), np.asarray(s1)
    try:
        out = np.broadcast_shapes(tuple(int(d) for d in s0), tuple(int(d) for d in s1))
    except ValueError:
        raise invalid(f"Incompatible shapes: {list(s0)} vs. {list(s1)}") from None
    return np.array(out, dtype=s0.dtype)


def _bound(side: str) -> Any:
    def builder(node: KernelNode) -> Any:
        out_type = node.output_dtypes[0].as_numpy_dtype

        def compute(ctx: Any, sorted_inputs: Any, values: Any) -> Any:
            s, v = np.asarray(sorted_inputs), np.asarray(values)
            if s.ndim != v.ndim or s.shape[:-1] != v.shape[:-1]:
                raise invalid("Leading dim_size of both tensors must match.")
            flat_s = s.reshape(-1, s.shape[-1]) if s.ndim else s.reshape(1, 1)
            flat_v = v.reshape(-1, v.shape[-1]) if v.ndim else v.reshape(1, 1)
            out = np.stack([np.searchsorted(a, b, side=side) for a, b in zip(flat_s, flat_v)])
            return out.reshape(v.shape).astype(out_type)

        return compute

    return builder


register_kernel("LowerBound")(_bound("left"))
register_kernel("UpperBound")(_bound("right"))


@register_compute("UnravelIndex")
def _unravel_index(ctx: Any, indices: Any, dims: Any) -> Any:
    indices, dims = np.asarray(indices), np.asarray(dims)
    total = int(np.prod(dims))
    if indices.size and (indices.min() < 0 or indices.max() >= total):
        raise invalid(f"index out of bounds: values must be in [0, {total})")
    return np.array(np.unravel_index(indices, tuple(int(d) for d in dims)), dtype=dims.dtype)
