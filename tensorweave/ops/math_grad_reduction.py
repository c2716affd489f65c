"""Gradients of the reductions, `AddN`, segment sums and cumulative ops.

Follows TensorFlow's `math_grad.py`; registered by importing `tensorweave.ops`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import array_ops, cwise_ops, reduction_ops
from tensorweave.ops.gradient_registry import RegisterGradient
from tensorweave.ops.math_grad_common import (
    const,
    densify,
    shape_tuple,
)


@RegisterGradient("AddN")
def _add_n_grad(op: Any, grad: Any) -> list[Any]:
    return [grad] * len(op.inputs)


# ----------------------------------------------------------------- reductions
def _reduction_layout(x: Tensor, axes_t: Tensor) -> tuple[Any, Any, list[int] | None]:
    """How a reduction of `x` over `axes_t` maps back to `x`: `(kept, multiples, axes)`.

    `kept` is the keep-dims shape (a list with at most one -1 when static, else a Tensor),
    `multiples` the Tile multiples back to `x`'s shape (a list when static, else a
    Tensor), `axes` the sorted reduced axes when static, else None.
    """
    shape = x.shape
    axes = constant_value(axes_t)
    if shape.ndims is not None and axes is not None:
        rank = shape.ndims
        red = sorted({int(a) % rank for a in np.asarray(axes).reshape(-1).tolist()}) if rank else []
        dims = shape.as_list()
        kept = [1 if i in red else d for i, d in enumerate(dims)]
        mult = [d if i in red else 1 for i, d in enumerate(dims)]
        kept_t: Any
        if None not in kept:
            kept_t = kept
        elif kept.count(None) == 1 and 0 not in kept:
            kept_t = [-1 if d is None else d for d in kept]
        else:
            kept_t = reduction_ops.reduced_shape(array_ops.shape(x), red)
        mult_t: Any
        if None not in mult:
            mult_t = mult
        elif len(red) == rank:
            mult_t = array_ops.shape(x)
        else:
            mask = np.array([1 if i in red else 0 for i in range(rank)], dtype=np.int32)
            mult_t = cwise_ops.add(
                cwise_ops.multiply(array_ops.shape(x), const(mask, dtypes.int32)),
                const(1 - mask, dtypes.int32),
            )
        return kept_t, mult_t, red
    in_shape = array_ops.shape(x)
    kept_dyn = reduction_ops.reduced_shape(in_shape, axes_t)
    mult_dyn = cwise_ops.floor_div(in_shape, cwise_ops.maximum(kept_dyn, 1))
    return kept_dyn, mult_dyn, None


def _reshape_unless_same(g: Tensor, target: Any) -> Tensor:
    if isinstance(target, list) and -1 not in target and shape_tuple(g) == tuple(target):
        return g
    return array_ops.reshape(g, target)


def _sum_grad_and_multiples(op: Any, grad: Any) -> tuple[Tensor, Any]:
    grad = densify(grad)
    kept, mult, _ = _reduction_layout(op.inputs[0], op.inputs[1])
    g = _reshape_unless_same(grad, kept)
    if isinstance(mult, list) and all(m == 1 for m in mult):
        return g, mult
    return array_ops.tile(g, mult), mult


@RegisterGradient("Sum")
def _sum_grad(op: Any, grad: Any) -> tuple[Tensor, None]:
    return _sum_grad_and_multiples(op, grad)[0], None


@RegisterGradient("Mean")
def _mean_grad(op: Any, grad: Any) -> tuple[Tensor, None]:
    sum_grad, mult = _sum_grad_and_multiples(op, grad)
    dt = sum_grad.dtype.base_dtype
    if isinstance(mult, list):
        factor = const(int(np.prod(mult, dtype=np.int64)), dt)
    else:
        factor = cwise_ops.cast(reduction_ops.reduce_prod(mult), dt)
    return cwise_ops.truediv(sum_grad, factor), None


def _min_or_max_grad(op: Any, grad: Any) -> tuple[Tensor, None]:
    """Splits the gradient evenly between the inputs that equal the extremum (TF's rule)."""
    grad = densify(grad)
    x, axes = op.inputs
    y = op.outputs[0]
    kept, _, _ = _reduction_layout(x, axes)
    if not op.get_attr("keep_dims"):
        y = _reshape_unless_same(y, kept)
        grad = _reshape_unless_same(grad, kept)
    indicators = cwise_ops.cast(cwise_ops.equal(y, x), grad.dtype.base_dtype)
    num_selected = reduction_ops.reduce_sum(indicators, axes, keepdims=True)
    return cwise_ops.multiply(cwise_ops.divide(indicators, num_selected), grad), None


RegisterGradient("Max")(_min_or_max_grad)
RegisterGradient("Min")(_min_or_max_grad)


@RegisterGradient("Prod")
def _prod_grad(op: Any, grad: Any) -> tuple[Tensor, None]:
    """Products of all other entries, from exclusive cumprods of each side (TF's method).

    Zeros in the input are handled exactly.

    Raises:
      ValueError: when the input rank or the reduction axes are not known statically.
    """
    x, axes = op.inputs
    kept, mult, red = _reduction_layout(x, axes)
    if red is None:
        raise ValueError(
            f"The gradient of {op.name} (Prod) needs a static input rank and constant "
            "reduction indices"
        )
    grad = _reshape_unless_same(densify(grad), kept)
    if not (isinstance(mult, list) and all(m == 1 for m in mult)):
        grad = array_ops.tile(grad, mult)
    rank = x.shape.ndims
    if rank == 0:
        return grad, None
    other = [i for i in range(rank) if i not in red]
    perm = red + other
    dims = x.shape.as_list()
    reduced_num = (
        None if any(dims[i] is None for i in red) else int(np.prod([dims[i] for i in red]))
    )
    other_num = (
        None if any(dims[i] is None for i in other) else int(np.prod([dims[i] for i in other]))
    )
    permuted = x if perm == list(range(rank)) else array_ops.transpose(x, perm)
    if reduced_num is not None and other_num is not None:
        target: Any = [reduced_num, other_num]
    elif reduced_num:
        target = [reduced_num, -1]
    elif other_num:
        target = [-1, other_num]
    else:
        in_shape = array_ops.shape(x)
        target = array_ops.stack(
            [
                reduction_ops.reduce_prod(array_ops.gather(in_shape, red)),
                reduction_ops.reduce_prod(array_ops.gather(in_shape, other)),
            ]
        )
    reshaped = array_ops.reshape(permuted, target)
    left = reduction_ops.cumprod(reshaped, axis=0, exclusive=True)
    right = reduction_ops.cumprod(reshaped, axis=0, exclusive=True, reverse=True)
    product = cwise_ops.multiply(cwise_ops.conj(left), cwise_ops.conj(right))
    permuted_dims = [dims[p] for p in perm]
    permuted_shape: Any = permuted_dims if None not in permuted_dims else array_ops.shape(permuted)
    y = array_ops.reshape(product, permuted_shape)
    if perm != list(range(rank)):
        y = array_ops.transpose(y, [int(i) for i in np.argsort(perm)])
    return cwise_ops.multiply(grad, y), None


@RegisterGradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op: Any, grad: Any) -> tuple[Tensor, None, None]:
    """Gathers the gradient rows back; rows of negative (dropped) ids get zeros."""
    grad = densify(grad)
    ids = op.inputs[1]
    ids_v = constant_value(ids)
    if ids_v is not None and (np.asarray(ids_v) >= 0).all():
        return array_ops.gather(grad, ids), None, None
    zero = const(0, ids.dtype.base_dtype)
    gathered = array_ops.gather(grad, cwise_ops.maximum(ids, zero))
    is_positive = cwise_ops.greater_equal(ids, zero)
    ids_rank, grad_rank = ids.shape.ndims, grad.shape.ndims
    if ids_rank is not None and grad_rank is not None:
        k = grad_rank - 1
        ids_dims = ids.shape.as_list()
        if k and ids_dims.count(None) <= 1:
            target = [-1 if d is None else d for d in ids_dims] + [1] * k
            is_positive = array_ops.reshape(is_positive, target)
        elif k:
            for _ in range(k):
                is_positive = array_ops.expand_dims(is_positive, -1)
    else:
        # Unknown ranks: make the mask's rank match by reshaping to shape(ids) + ones.
        ones = array_ops.ones_like(array_ops.shape(grad))
        tail = ones[1:]
        is_positive = array_ops.reshape(
            is_positive, array_ops.concat([array_ops.shape(ids), tail], 0)
        )
    is_positive = cwise_ops.logical_and(
        is_positive, array_ops.ones_like(gathered, dtype=dtypes.bool)
    )
    return array_ops.where(is_positive, gathered, array_ops.zeros_like(gathered)), None, None


@RegisterGradient("Cumsum")
def _cumsum_grad(op: Any, grad: Any) -> tuple[Tensor, None]:
    return reduction_ops.cumsum(
        densify(grad),
        op.inputs[1],
        exclusive=op.get_attr("exclusive"),
        reverse=not op.get_attr("reverse"),
    ), None


@RegisterGradient("Cumprod")
def _cumprod_grad(op: Any, grad: Any) -> tuple[Tensor, None]:
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    # NOTE: as in TensorFlow, this divides by x and so fails where x contains 0.
    prod = reduction_ops.cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = reduction_ops.cumsum(
        cwise_ops.multiply(prod, densify(grad)), axis, exclusive=exclusive, reverse=not reverse
    )
    return cwise_ops.divide(out, x), None
