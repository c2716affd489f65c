"""Gradients of the unary math ops, of their `*Grad` helper ops, and of casts and checks.

Follows TensorFlow's `math_grad.py`; registered by importing `tensorweave.ops`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.ops import array_ops, cwise_ops
from tensorweave.ops.gradient_registry import RegisterGradient
from tensorweave.ops.math_grad_common import (
    const,
    densify,
)


# ----------------------------------------------------------------------- unary
@RegisterGradient("Neg")
def _neg_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.negative(densify(grad))


@RegisterGradient("Abs")
def _abs_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(densify(grad), cwise_ops.sign(op.inputs[0]))


@RegisterGradient("Square")
def _square_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    two = const(2.0, x.dtype.base_dtype)
    return cwise_ops.multiply(densify(grad), cwise_ops.multiply(x, two))


@RegisterGradient("Sqrt")
def _sqrt_grad(op: Any, grad: Any) -> Any:
    return _unary_grad_op("SqrtGrad", op.outputs[0], grad)


@RegisterGradient("Rsqrt")
def _rsqrt_grad(op: Any, grad: Any) -> Any:
    return _unary_grad_op("RsqrtGrad", op.outputs[0], grad)


@RegisterGradient("Reciprocal")
def _reciprocal_grad(op: Any, grad: Any) -> Any:
    return _unary_grad_op("ReciprocalGrad", op.outputs[0], grad)


@RegisterGradient("Tanh")
def _tanh_grad(op: Any, grad: Any) -> Any:
    return _unary_grad_op("TanhGrad", cwise_ops.conj(op.outputs[0]), grad)


@RegisterGradient("Sigmoid")
def _sigmoid_grad(op: Any, grad: Any) -> Any:
    return _unary_grad_op("SigmoidGrad", cwise_ops.conj(op.outputs[0]), grad)


def _unary_grad_op(op_type: str, y: Tensor, dy: Any) -> Tensor:
    return apply_op(op_type, y=y, dy=densify(dy))


@RegisterGradient("Exp")
def _exp_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(densify(grad), cwise_ops.conj(op.outputs[0]))


@RegisterGradient("Expm1")
def _expm1_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(densify(grad), cwise_ops.exp(cwise_ops.conj(op.inputs[0])))


@RegisterGradient("Log")
def _log_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    return cwise_ops.multiply(densify(grad), cwise_ops.reciprocal(x))


@RegisterGradient("Log1p")
def _log1p_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    one = const(1, x.dtype.base_dtype)
    return cwise_ops.multiply(densify(grad), cwise_ops.reciprocal(cwise_ops.add(one, x)))


@RegisterGradient("Sign")
def _sign_grad(op: Any, grad: Any) -> Any:
    return array_ops.zeros_like(op.inputs[0])


@RegisterGradient("Floor")
@RegisterGradient("Ceil")
@RegisterGradient("Round")
@RegisterGradient("Rint")
def _piecewise_constant_grad(op: Any, grad: Any) -> list[None]:
    return [None]


@RegisterGradient("Sin")
def _sin_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(densify(grad), cwise_ops.cos(cwise_ops.conj(op.inputs[0])))


@RegisterGradient("Cos")
def _cos_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(
        cwise_ops.negative(densify(grad)), cwise_ops.sin(cwise_ops.conj(op.inputs[0]))
    )


@RegisterGradient("Tan")
def _tan_grad(op: Any, grad: Any) -> Any:
    secx = cwise_ops.reciprocal(cwise_ops.cos(cwise_ops.conj(op.inputs[0])))
    return cwise_ops.multiply(cwise_ops.square(secx), densify(grad))


def _one_minus_square(x: Tensor) -> Tensor:
    return cwise_ops.subtract(const(1, x.dtype.base_dtype), cwise_ops.square(x))


@RegisterGradient("Asin")
def _asin_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    inv = cwise_ops.reciprocal(cwise_ops.sqrt(_one_minus_square(x)))
    return cwise_ops.multiply(densify(grad), inv)


@RegisterGradient("Acos")
def _acos_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    inv = cwise_ops.reciprocal(cwise_ops.sqrt(_one_minus_square(x)))
    return cwise_ops.multiply(cwise_ops.negative(densify(grad)), inv)


@RegisterGradient("Atan")
def _atan_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    one = const(1, x.dtype.base_dtype)
    inv = cwise_ops.reciprocal(cwise_ops.add(one, cwise_ops.square(x)))
    return cwise_ops.multiply(densify(grad), inv)


@RegisterGradient("Sinh")
def _sinh_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(densify(grad), cwise_ops.cosh(cwise_ops.conj(op.inputs[0])))


@RegisterGradient("Cosh")
def _cosh_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(densify(grad), cwise_ops.sinh(cwise_ops.conj(op.inputs[0])))


@RegisterGradient("Asinh")
def _asinh_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.divide(densify(grad), cwise_ops.cosh(cwise_ops.conj(op.outputs[0])))


@RegisterGradient("Acosh")
def _acosh_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.divide(densify(grad), cwise_ops.sinh(cwise_ops.conj(op.outputs[0])))


@RegisterGradient("Atanh")
def _atanh_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    return cwise_ops.multiply(densify(grad), cwise_ops.reciprocal(_one_minus_square(x)))


# ------------------------------------------- second order (the *Grad helper ops)
@RegisterGradient("SqrtGrad")
def _sqrt_grad_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    a = op.inputs[0]
    y = op.outputs[0]  # y = 0.5 * b / conj(a)
    ga = cwise_ops.divide(densify(grad), a)
    half = const(0.5, ga.dtype.base_dtype)
    return (
        cwise_ops.multiply(cwise_ops.negative(cwise_ops.conj(ga)), y),
        cwise_ops.multiply(half, ga),
    )


@RegisterGradient("RsqrtGrad")
def _rsqrt_grad_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    a, b = op.inputs  # y = -0.5 * b * conj(a)^3
    ca, cg = cwise_ops.conj(a), cwise_ops.conj(densify(grad))
    k = const(-1.5, ca.dtype.base_dtype)
    grad_a = cwise_ops.multiply(
        cwise_ops.multiply(cwise_ops.multiply(k, cg), b), cwise_ops.square(ca)
    )
    return grad_a, _unary_grad_op("RsqrtGrad", ca, grad)


@RegisterGradient("TanhGrad")
def _tanh_grad_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    a, b = (cwise_ops.conj(t) for t in op.inputs)  # y = b * (1 - a^2)
    grad = densify(grad)
    k = const(-2.0, a.dtype.base_dtype)
    return (
        cwise_ops.multiply(cwise_ops.multiply(cwise_ops.multiply(grad, k), b), a),
        _unary_grad_op("TanhGrad", a, grad),
    )


@RegisterGradient("SigmoidGrad")
def _sigmoid_grad_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    a, b = (cwise_ops.conj(t) for t in op.inputs)  # y = b * a * (1 - a)
    grad = densify(grad)
    gb = cwise_ops.multiply(grad, b)
    two = const(2.0, a.dtype.base_dtype)
    return (
        cwise_ops.subtract(gb, cwise_ops.multiply(cwise_ops.multiply(two, gb), a)),
        _unary_grad_op("SigmoidGrad", a, grad),
    )


@RegisterGradient("ReciprocalGrad")
def _reciprocal_grad_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    a, b = op.inputs  # y = -b * conj(a)^2
    ca, cg = cwise_ops.conj(a), cwise_ops.conj(densify(grad))
    k = const(-2.0, ca.dtype.base_dtype)
    return (
        cwise_ops.multiply(cwise_ops.multiply(cwise_ops.multiply(cg, k), b), ca),
        _unary_grad_op("ReciprocalGrad", ca, grad),
    )


# ---------------------------------------------------------- casts and checks
_FLOATING = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


@RegisterGradient("Cast")
def _cast_grad(op: Any, grad: Any) -> Any:
    src = op.inputs[0].dtype.base_dtype
    dst = grad.dtype.base_dtype
    if src in _FLOATING and dst in _FLOATING:
        return cwise_ops.cast(grad, src)
    return None


@RegisterGradient("Conj")
def _conj_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.conj(densify(grad))


@RegisterGradient("CheckNumerics")
def _check_numerics_grad(op: Any, grad: Any) -> Any:
    message = op.get_attr("message")
    if isinstance(message, bytes):
        message = message.decode("utf-8")
    return cwise_ops.check_numerics(
        densify(grad),
        f"Not a number (NaN) or infinity (Inf) values detected in gradient. {message}",
    )
