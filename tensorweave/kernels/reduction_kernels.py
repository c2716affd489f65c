"""NumPy kernels of the reductions and the other many-to-one math ops.

`Sum`, `Mean`, `Max`, `Min`, `Prod`, `All`, `Any`, `ArgMax`/`ArgMin`, `AddN`,
`UnsortedSegmentSum` and `Cumsum`/`Cumprod`.

Reduction axes usually come from a `Const`, whose value is the same read-only array every
step; the normalized axis tuple is cached per kernel for that array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels.math_kernels import trunc_div
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel


def _normalize_axes(axes: Any, ndim: int) -> tuple[int, ...]:
    arr = np.asarray(axes)
    if arr.ndim > 1:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"reduction_indices must be a scalar or vector, got shape {shape_str(arr.shape)}",
        )
    out = []
    for a in arr.reshape(-1).tolist():
        if not -ndim <= a < ndim:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Invalid reduction dimension ({a} for input with {ndim} dimension(s)",
            )
        a = a + ndim if a < 0 else a
        if a not in out:
            out.append(a)
    return tuple(out)


def _axes_resolver() -> Any:
    """A function `(axes, ndim) -> tuple` that caches the result for immutable inputs."""
    # One (axes, ndim, result) entry, replaced as a whole: steps may run concurrently.
    cache: list[Any] = [(None, -1, ())]

    def resolve(axes: Any, ndim: int) -> tuple[int, ...]:
        entry = cache[0]
        if axes is entry[0] and ndim == entry[1]:
            return entry[2]
        result = _normalize_axes(axes, ndim)
        if not (isinstance(axes, np.ndarray) and axes.flags.writeable):
            cache[0] = (axes, ndim, result)
        return result

    return resolve


def _reduction(op_type: str, make: Any) -> None:
    @register_kernel(op_type)
    def builder(node: KernelNode) -> Any:
        return make(node.attrs["keep_dims"], node.attrs.get("T"), _axes_resolver())


def _sum_like(np_fn: Any) -> Any:
    def make(keep: bool, t: Any, resolve: Any) -> Any:
        npt = t.as_numpy_dtype

        def compute(ctx: Any, x: Any, axes: Any) -> Any:
            return np_fn(x, axis=resolve(axes, x.ndim), dtype=npt, keepdims=keep)

        return compute

    return make


def _make_mean(keep: bool, t: Any, resolve: Any) -> Any:
    npt = t.as_numpy_dtype
    if t.is_integer:

        def int_mean(ctx: Any, x: Any, axes: Any) -> Any:
            s = np.add.reduce(x, axis=resolve(axes, x.ndim), dtype=npt, keepdims=keep)
            n = x.size // (s.size or 1)
            if n <= 1:
                return s
            # TensorFlow divides the integer sum by the count, rounding toward zero.
            return trunc_div(s, npt(n))

        return int_mean
    # float16 sums accumulate in float32, as np.mean does.
    acc = np.float32 if npt is np.float16 else npt

    def compute(ctx: Any, x: Any, axes: Any) -> Any:
        s = np.add.reduce(x, axis=resolve(axes, x.ndim), dtype=acc, keepdims=keep)
        n = x.size // (s.size or 1)
        if type(s) is np.ndarray:
            np.true_divide(s, n, out=s)
        else:
            s = s / acc(n)
        return s if acc is npt else s.astype(npt)

    return compute


def _make_extremum(np_fn: Any, upper: bool) -> Any:
    def make(keep: bool, t: Any, resolve: Any) -> Any:
        npt = np.dtype(t.as_numpy_dtype)
        if npt.kind == "f":
            identity = npt.type(-np.inf if upper else np.inf)
        elif npt.kind in "iu":
            info = np.iinfo(npt)
            identity = npt.type(info.min if upper else info.max)
        else:
            identity = None

        def compute(ctx: Any, x: Any, axes: Any) -> Any:
            ax = resolve(axes, x.ndim)
            if x.size == 0 and identity is not None:
                return np_fn(x, axis=ax, keepdims=keep, initial=identity)
            return np_fn(x, axis=ax, keepdims=keep)

        return compute

    return make


def _make_bool(np_fn: Any) -> Any:
    def make(keep: bool, t: Any, resolve: Any) -> Any:
        def compute(ctx: Any, x: Any, axes: Any) -> Any:
            return np_fn(x, axis=resolve(axes, x.ndim), keepdims=keep)

        return compute

    return make


# NOTE: ufunc.reduce directly, skipping the Python wrappers of np.sum & co.
_reduction("Sum", _sum_like(np.add.reduce))
_reduction("Prod", _sum_like(np.multiply.reduce))
_reduction("Mean", _make_mean)
_reduction("Max", _make_extremum(np.maximum.reduce, True))
_reduction("Min", _make_extremum(np.minimum.reduce, False))
_reduction("All", _make_bool(np.logical_and.reduce))
_reduction("Any", _make_bool(np.logical_or.reduce))


def _arg_kernel(np_fn: Any) -> Any:
    def builder(node: KernelNode) -> Any:
        out = node.attrs["output_type"].as_numpy_dtype

        def compute(ctx: Any, x: Any, dimension: Any) -> Any:
            if np.ndim(dimension) != 0:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"dim must be a scalar, but received tensor of shape: "
                    f"{shape_str(np.shape(dimension))}",
                )
            d = int(dimension)
            rank = x.ndim
            if not -rank <= d < rank:
                raise errors.InvalidArgumentError(
                    None, None, f"Expected dimension in the range [{-rank}, {rank}), but got {d}"
                )
            if x.shape[d] == 0:
                raise errors.InvalidArgumentError(
                    None, None, f"Reduction axis {d} is empty in shape {shape_str(x.shape)}"
                )
            return np_fn(x, axis=d).astype(out, copy=False)

        return compute

    return builder


register_kernel("ArgMax")(_arg_kernel(np.argmax))
register_kernel("ArgMin")(_arg_kernel(np.argmin))


@register_compute("AddN")
def _add_n(ctx: Any, *xs: Any) -> Any:
    first = xs[0]
    if len(xs) == 1:
        return first
    shape = np.shape(first)
    for i, v in enumerate(xs[1:], 1):
        if np.shape(v) != shape:
            raise errors.InvalidArgumentError(
                None,
                None,
                "Inputs to operation AddN of type AddN must have the same size and shape.  "
                f"Input 0: {shape_str(shape)} != input {i}: {shape_str(np.shape(v))}",
            )
    total = np.add(first, xs[1])
    if type(total) is np.ndarray:
        for v in xs[2:]:
            np.add(total, v, out=total)
    else:
        for v in xs[2:]:
            total = total + v
    return total


@register_kernel("UnsortedSegmentSum")
def _unsorted_segment_sum(node: KernelNode) -> Any:
    npt = node.attrs["T"].as_numpy_dtype

    def compute(ctx: Any, data: Any, ids: Any, num_segments: Any) -> Any:
        if np.ndim(num_segments) != 0:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"num_segments should be a scalar, not shape {shape_str(np.shape(num_segments))}",
            )
        n = int(num_segments)
        if n < 0:
            raise errors.InvalidArgumentError(
                None, None, f"Input num_segments == {n} must not be negative."
            )
        ids = np.asarray(ids)
        data = np.asarray(data)
        if data.shape[: ids.ndim] != ids.shape:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"data.shape = {shape_str(data.shape)} does not start with segment_ids.shape "
                f"= {shape_str(ids.shape)}",
            )
        tail = data.shape[ids.ndim :]
        out = np.zeros((n, *tail), dtype=npt)
        if ids.size == 0:
            return out
        flat_ids = ids.reshape(-1)
        flat_data = data.reshape((flat_ids.size, *tail))
        bad = flat_ids >= n
        if bad.any():
            i = int(np.argmax(bad))
            where = np.unravel_index(i, ids.shape)
            raise errors.InvalidArgumentError(
                None,
                None,
                f"segment_ids{shape_str(where)} = {int(flat_ids[i])} is out of range [0, {n})",
            )
        keep = flat_ids >= 0
        if not keep.all():
            flat_ids, flat_data = flat_ids[keep], flat_data[keep]
        np.add.at(out, flat_ids, flat_data)
        return out

    return compute


def _cumulative(np_fn: Any, identity: int) -> Any:
    def builder(node: KernelNode) -> Any:
        exclusive, reverse = node.attrs["exclusive"], node.attrs["reverse"]
        npt = node.attrs["T"].as_numpy_dtype

        def compute(ctx: Any, x: Any, axis: Any) -> Any:
            x = np.asarray(x)
            if np.ndim(axis) != 0:
                raise errors.InvalidArgumentError(
                    None, None, f"axis must be a scalar, but is {shape_str(np.shape(axis))}"
                )
            a = int(axis)
            if not -x.ndim <= a < x.ndim:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Expected scan axis in the range [{-x.ndim}, {x.ndim}), but got {a}",
                )
            if reverse:
                x = np.flip(x, a)
            out = np_fn(x, axis=a, dtype=npt)
            if exclusive and x.shape[a]:
                out = np.roll(out, 1, axis=a)
                idx = [slice(None)] * x.ndim
                idx[a] = 0
                out[tuple(idx)] = identity
            if reverse:
                out = np.flip(out, a)
            return out

        return compute

    return builder


register_kernel("Cumsum")(_cumulative(np.cumsum, 0))
register_kernel("Cumprod")(_cumulative(np.cumprod, 1))
