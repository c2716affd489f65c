"""Gradients of the binary math ops: arithmetic, `Maximum`/`Minimum`, `Atan2`, matmul.

Also declares the math ops that have no gradient (comparisons, logic, `ArgMax`...).
Follows TensorFlow's `math_grad.py`; registered by importing `tensorweave.ops`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.ops import array_ops, cwise_ops, matmul_ops, reduction_ops
from tensorweave.ops.gradient_registry import RegisterGradient, no_gradient
from tensorweave.ops.math_grad_common import (
    broadcast_reducers,
    const,
    densify,
    shape_tuple,
    static_reduction_indices,
    sum_to_static,
)


@RegisterGradient("Add")
@RegisterGradient("AddV2")
def _add_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    grad = densify(grad)
    to_x, to_y = broadcast_reducers(op.inputs[0], op.inputs[1])
    return to_x(grad), to_y(grad)


@RegisterGradient("Sub")
def _sub_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    grad = densify(grad)
    to_x, to_y = broadcast_reducers(op.inputs[0], op.inputs[1])
    return to_x(grad), to_y(cwise_ops.negative(grad))


@RegisterGradient("Mul")
def _mul_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    grad = densify(grad)
    x, y = op.inputs
    to_x, to_y = broadcast_reducers(x, y)
    cx, cy = cwise_ops.conj(x), cwise_ops.conj(y)
    return to_x(cwise_ops.multiply(grad, cy)), to_y(cwise_ops.multiply(cx, grad))


def _div_grad_with(divide: Any) -> Any:
    def grad_fn(op: Any, grad: Any) -> tuple[Any, Any]:
        grad = densify(grad)
        x, y = op.inputs
        to_x, to_y = broadcast_reducers(x, y)
        cx, cy = cwise_ops.conj(x), cwise_ops.conj(y)
        gx = divide(grad, cy)
        gy = cwise_ops.multiply(grad, divide(divide(cwise_ops.negative(cx), cy), cy))
        return to_x(gx), to_y(gy)

    return grad_fn


RegisterGradient("Div")(_div_grad_with(cwise_ops.divide))
RegisterGradient("RealDiv")(_div_grad_with(cwise_ops.realdiv))
RegisterGradient("DivNoNan")(_div_grad_with(cwise_ops.div_no_nan))


@RegisterGradient("FloorDiv")
def _floor_div_grad(op: Any, grad: Any) -> tuple[None, None]:
    return None, None


@RegisterGradient("TruncateDiv")
def _truncate_div_grad(op: Any, grad: Any) -> tuple[None, None]:
    return None, None


def _mod_grad_with(quotient: Any) -> Any:
    def grad_fn(op: Any, grad: Any) -> tuple[Any, Any]:
        grad = densify(grad)
        x, y = op.inputs
        to_x, to_y = broadcast_reducers(x, y)
        q = quotient(x, y)
        return to_x(grad), to_y(cwise_ops.multiply(grad, cwise_ops.negative(q)))

    return grad_fn


RegisterGradient("FloorMod")(_mod_grad_with(cwise_ops.floor_div))
RegisterGradient("TruncateMod")(_mod_grad_with(cwise_ops.truncatediv))


@RegisterGradient("Pow")
def _pow_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    """`grad * y * x^(y-1)` and `grad * z * log(x)` (0 where x <= 0, avoiding log(0))."""
    grad = densify(grad)
    x, y = op.inputs
    to_x, to_y = broadcast_reducers(x, y)
    cx, cy = cwise_ops.conj(x), cwise_ops.conj(y)
    one = const(1, y.dtype.base_dtype)
    gx = cwise_ops.multiply(
        cwise_ops.multiply(grad, cy), cwise_ops.pow(cx, cwise_ops.subtract(cy, one))
    )
    z = cwise_ops.conj(op.outputs[0])
    if cx.dtype.base_dtype.is_complex:
        mask = cwise_ops.not_equal(cx, const(0, cx.dtype.base_dtype))
    else:
        mask = cwise_ops.greater(cx, const(0, cx.dtype.base_dtype))
    safe_x = array_ops.where(mask, cx, array_ops.ones_like(cx))
    log_x = array_ops.where(mask, cwise_ops.log(safe_x), array_ops.zeros_like(cx))
    gy = cwise_ops.multiply(cwise_ops.multiply(grad, z), log_x)
    return to_x(gx), to_y(gy)


def _maximum_minimum_grad(op: Any, grad: Any, selector: Any) -> tuple[Any, Any]:
    grad = densify(grad)
    x, y = op.inputs
    to_x, to_y = broadcast_reducers(x, y)
    zeros = array_ops.zeros_like(grad)
    xmask = selector(x, y)
    return (
        to_x(array_ops.where(xmask, grad, zeros)),
        to_y(array_ops.where(xmask, zeros, grad)),
    )


@RegisterGradient("Maximum")
def _maximum_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    return _maximum_minimum_grad(op, grad, cwise_ops.greater_equal)


@RegisterGradient("Minimum")
def _minimum_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    return _maximum_minimum_grad(op, grad, cwise_ops.less_equal)


@RegisterGradient("SquaredDifference")
def _squared_difference_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    grad = densify(grad)
    x, y = op.inputs
    to_x, to_y = broadcast_reducers(x, y)
    x_grad = cwise_ops.multiply(cwise_ops.scalar_mul(2.0, grad), cwise_ops.subtract(x, y))
    return to_x(x_grad), cwise_ops.negative(to_y(x_grad))


@RegisterGradient("Atan2")
def _atan2_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    grad = densify(grad)
    y, x = op.inputs
    to_y, to_x = broadcast_reducers(y, x)
    grad_inv = cwise_ops.divide(grad, cwise_ops.add(cwise_ops.square(x), cwise_ops.square(y)))
    return (
        to_y(cwise_ops.multiply(x, grad_inv)),
        to_x(cwise_ops.multiply(cwise_ops.negative(y), grad_inv)),
    )


for _name in (
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "Equal",
    "NotEqual",
    "LogicalAnd",
    "LogicalOr",
    "LogicalNot",
    "IsNan",
    "IsInf",
    "IsFinite",
    "ArgMax",
    "ArgMin",
    "All",
    "Any",
    "BroadcastGradientArgs",
):
    no_gradient(_name)


# -------------------------------------------------------------------- matmul
@RegisterGradient("MatMul")
def _matmul_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    grad = densify(grad)
    t_a, t_b = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    a, b = cwise_ops.conj(op.inputs[0]), cwise_ops.conj(op.inputs[1])

    def mm(p: Tensor, q: Tensor, ta: bool = False, tb: bool = False) -> Tensor:
        return apply_op("MatMul", a=p, b=q, transpose_a=ta, transpose_b=tb)

    if not t_a and not t_b:
        return mm(grad, b, tb=True), mm(a, grad, ta=True)
    if not t_a and t_b:
        return mm(grad, b), mm(grad, a, ta=True)
    if t_a and not t_b:
        return mm(b, grad, tb=True), mm(a, grad)
    return mm(b, grad, ta=True, tb=True), mm(grad, a, ta=True, tb=True)


def _batch_matmul_grads(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    grad = densify(grad)
    x, y = op.inputs
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    mm = matmul_ops.matmul
    if not adj_x:
        if not adj_y:
            return mm(grad, y, adjoint_b=True), mm(x, grad, adjoint_a=True)
        return mm(grad, y), mm(grad, x, adjoint_a=True)
    if not adj_y:
        return mm(y, grad, adjoint_b=True), mm(x, grad)
    return mm(y, grad, adjoint_a=True, adjoint_b=True), mm(grad, x, adjoint_a=True, adjoint_b=True)


@RegisterGradient("BatchMatMul")
def _batch_matmul_grad(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    return _batch_matmul_grads(op, grad)


@RegisterGradient("BatchMatMulV2")
def _batch_matmul_v2_grad(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    grad_x, grad_y = _batch_matmul_grads(op, grad)
    x, y = op.inputs
    xs, ys = shape_tuple(x), shape_tuple(y)
    if xs is not None and ys is not None:
        static = static_reduction_indices(xs[:-2], ys[:-2])
        if static is not None:
            n = max(len(xs), len(ys))
            rx, ry = static
            return sum_to_static(grad_x, x, xs, rx, n), sum_to_static(grad_y, y, ys, ry, n)
    sx, sy = array_ops.shape(x), array_ops.shape(y)
    rx_t, ry_t = cwise_ops.broadcast_gradient_args(sx[:-2], sy[:-2])
    return (
        array_ops.reshape(reduction_ops.reduce_sum(grad_x, rx_t), sx),
        array_ops.reshape(reduction_ops.reduce_sum(grad_y, ry_t), sy),
    )
