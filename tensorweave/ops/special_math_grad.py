"""Gradients of the special functions (follows TensorFlow's `math_grad.py`).

As in TensorFlow, `Betainc` differentiates only in x, `Zeta` only in q and `Polygamma`
only in x; `Igamma`/`Igammac` in both (a through the `IgammaGradA` op).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import array_ops, cwise_ops, reduction_ops
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient
from tensorweave.ops.special_math_ops import (
    bessel_i0,
    bessel_i0e,
    bessel_i1,
    bessel_i1e,
    digamma,
    lgamma,
    polygamma,
    zeta,
)


def _reduce_to(grad: Any, x: Any, other: Any) -> Any:
    """`grad` summed over the dimensions along which `x` was broadcast against `other`."""
    sx, so = array_ops.shape(x), array_ops.shape(other)
    rx, _ = cwise_ops.broadcast_gradient_args(sx, so)
    return array_ops.reshape(reduction_ops.reduce_sum(grad, rx), sx)


@RegisterGradient("Lgamma")
def _lgamma_grad(op: Any, grad: Any) -> Any:
    return grad * digamma(op.inputs[0])


@RegisterGradient("Digamma")
def _digamma_grad(op: Any, grad: Any) -> Any:
    x = op.inputs[0]
    return grad * polygamma(array_ops.ones_like(x), x)


@RegisterGradient("Erf")
def _erf_grad(op: Any, grad: Any) -> Any:
    x = op.inputs[0]
    two_over_root_pi = cwise_ops.cast(2.0 / math.sqrt(math.pi), grad.dtype)
    return grad * two_over_root_pi * cwise_ops.exp(cwise_ops.negative(cwise_ops.square(x)))


@RegisterGradient("Erfc")
def _erfc_grad(op: Any, grad: Any) -> Any:
    x = op.inputs[0]
    minus = cwise_ops.cast(-2.0 / math.sqrt(math.pi), grad.dtype)
    return grad * minus * cwise_ops.exp(cwise_ops.negative(cwise_ops.square(x)))


def _igamma_dx(a: Any, x: Any) -> Any:
    """d/dx P(a, x) = exp(-x + (a - 1) log x - lgamma(a))."""
    one = array_ops.ones_like(a)
    return cwise_ops.exp(cwise_ops.negative(x) + (a - one) * cwise_ops.log(x) - lgamma(a))


@RegisterGradient("Igamma")
def _igamma_grad(op: Any, grad: Any) -> Any:
    a, x = op.inputs
    partial_a = apply_op("IgammaGradA", a=a, x=x)
    return _reduce_to(grad * partial_a, a, x), _reduce_to(grad * _igamma_dx(a, x), x, a)


@RegisterGradient("Igammac")
def _igammac_grad(op: Any, grad: Any) -> Any:
    a, x = op.inputs
    partial_a = apply_op("IgammaGradA", a=a, x=x)
    return (_reduce_to(cwise_ops.negative(grad * partial_a), a, x),
            _reduce_to(cwise_ops.negative(grad * _igamma_dx(a, x)), x, a))


@RegisterGradient("Betainc")
def _betainc_grad(op: Any, grad: Any) -> Any:
    a, b, x = op.inputs
    one = array_ops.ones_like(x)
    log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
    partial_x = cwise_ops.exp(
        (b - one) * cwise_ops.log1p(cwise_ops.negative(x)) + (a - one) * cwise_ops.log(x)
        - log_beta
    )
    return None, None, _reduce_to(grad * partial_x, x, a + b)


@RegisterGradient("Zeta")
def _zeta_grad(op: Any, grad: Any) -> Any:
    x, q = op.inputs
    partial_q = cwise_ops.negative(x) * zeta(x + array_ops.ones_like(x), q)
    return None, _reduce_to(grad * partial_q, q, x)


@RegisterGradient("Polygamma")
def _polygamma_grad(op: Any, grad: Any) -> Any:
    n, x = op.inputs
    partial_x = polygamma(n + array_ops.ones_like(n), x)
    return None, _reduce_to(grad * partial_x, x, n)


@RegisterGradient("Erfinv")
def _erfinv_grad(op: Any, grad: Any) -> Any:
    y = op.outputs[0]
    half_root_pi = cwise_ops.cast(math.sqrt(math.pi) / 2, grad.dtype)
    return grad * half_root_pi * cwise_ops.exp(cwise_ops.square(y))


@RegisterGradient("Ndtri")
def _ndtri_grad(op: Any, grad: Any) -> Any:
    y = op.outputs[0]
    root_two_pi = cwise_ops.cast(math.sqrt(2 * math.pi), grad.dtype)
    return grad * root_two_pi * cwise_ops.exp(cwise_ops.square(y) / 2.0)


@RegisterGradient("BesselI0")
def _bessel_i0_grad(op: Any, grad: Any) -> Any:
    return grad * bessel_i1(op.inputs[0])


@RegisterGradient("BesselI0e")
def _bessel_i0e_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs[0], op.outputs[0]
    return grad * (bessel_i1e(x) - cwise_ops.sign(x) * y)


def _safe_x(x: Any) -> tuple[Any, Any]:
    tiny = cwise_ops.cast(np.finfo(x.dtype.as_numpy_dtype).tiny, x.dtype)
    not_tiny = cwise_ops.greater(cwise_ops.abs(x), tiny)
    return not_tiny, array_ops.where(not_tiny, x, tiny + array_ops.zeros_like(x))


@RegisterGradient("BesselI1")
def _bessel_i1_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs[0], op.outputs[0]
    not_tiny, safe = _safe_x(x)
    dy_dx = bessel_i0(safe) - y / safe
    return grad * array_ops.where(not_tiny, dy_dx, 0.5 + array_ops.zeros_like(x))


@RegisterGradient("BesselI1e")
def _bessel_i1e_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs[0], op.outputs[0]
    not_tiny, safe = _safe_x(x)
    dy_dx = bessel_i0e(safe) - y * (cwise_ops.sign(safe) + 1.0 / safe)
    return grad * array_ops.where(not_tiny, dy_dx, 0.5 + array_ops.zeros_like(x))


no_gradient("NextAfter")
