"""Helpers shared by the math gradient modules, and the broadcasting gradient logic.

Where the reduction indices of a broadcasting op's gradient are decidable from the static
shapes they are computed while building the graph (see `math_grad`); otherwise the
gradient uses `Shape` + `BroadcastGradientArgs` + `Sum` + `Reshape`, as TensorFlow does.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, constant_op, cwise_ops, reduction_ops


def densify(grad: Any) -> Any:
    """`grad` as a dense Tensor (converting `IndexedSlices`); None stays None."""
    if grad is None or isinstance(grad, Tensor):
        return grad
    return convert_to_tensor(grad)


def shape_tuple(t: Tensor) -> tuple[int | None, ...] | None:
    """The static shape of `t` as a tuple (None for unknown dimensions), or None."""
    s = t.shape
    return None if s.ndims is None else tuple(s.as_list())


def const(value: Any, dtype: dtypes.DType) -> Tensor:
    """A `Const` tensor of `value` with `dtype`."""
    return constant_op.constant(value, dtype=dtype)


# ------------------------------------------------------- broadcasting gradients
def static_reduction_indices(
    xs: tuple[int | None, ...], ys: tuple[int | None, ...]
) -> tuple[list[int], list[int]] | None:
    """TensorFlow's `BroadcastGradientArgs` from (partial) static shapes, or None.

    None means that some dimension's broadcast depends on run-time sizes.

    Summing over a dimension of size 1 and reshaping back changes nothing, so an input
    whose dimension is 1 is always reduced there, and an input whose unknown dimension
    meets a 1 (or a missing dimension) on the other side is never reduced there.
    """
    if xs == ys and None not in xs:
        return [], []
    n = max(len(xs), len(ys))
    x = (1,) * (n - len(xs)) + tuple(xs)
    y = (1,) * (n - len(ys)) + tuple(ys)
    rx: list[int] = []
    ry: list[int] = []
    for i, (a, b) in enumerate(zip(x, y)):
        if a is None and b is None:
            return None
        if a is None:
            if b != 1:
                return None
            ry.append(i)
        elif b is None:
            if a != 1:
                return None
            rx.append(i)
        elif a == b:
            if a == 1:
                rx.append(i)
                ry.append(i)
        elif a == 1:
            rx.append(i)
        elif b == 1:
            ry.append(i)
        else:
            return None
    return rx, ry


def sum_to_static(
    g: Tensor, x: Tensor, xs: tuple[int | None, ...], r: list[int], out_rank: int
) -> Tensor:
    """Sums gradient `g` (of rank `out_rank`) over axes `r` back to the shape `xs` of `x`."""
    if not r:
        return g
    s = reduction_ops.reduce_sum(g, r)
    lead = out_rank - len(xs)
    if all(a < lead for a in r):
        return s
    target: Any = list(xs) if None not in xs else array_ops.shape(x)
    return array_ops.reshape(s, target)


def broadcast_reducers(x: Tensor, y: Tensor) -> tuple[Any, Any]:
    """Functions mapping a gradient of the broadcast shape to the shapes of `x` and `y`."""
    xs, ys = shape_tuple(x), shape_tuple(y)
    static = None if xs is None or ys is None else static_reduction_indices(xs, ys)
    if static is not None:
        rx, ry = static
        n = max(len(xs), len(ys))
        return (
            lambda g: sum_to_static(g, x, xs, rx, n),
            lambda g: sum_to_static(g, y, ys, ry, n),
        )
    sx, sy = array_ops.shape(x), array_ops.shape(y)
    rx_t, ry_t = cwise_ops.broadcast_gradient_args(sx, sy)
    return (
        lambda g: array_ops.reshape(reduction_ops.reduce_sum(g, rx_t), sx),
        lambda g: array_ops.reshape(reduction_ops.reduce_sum(g, ry_t), sy),
    )
