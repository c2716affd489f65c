"""Gradients of `FusedBatchNormV3`, `LRN` and `Selu`, built from other ops (so they are
differentiable again). TensorFlow routes them through `FusedBatchNormGradV3`, `LRNGrad`
and `SeluGrad` ops; the values are the same."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops.gradients_impl import RegisterGradient

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _dense(grad: Any) -> Any:
    if isinstance(grad, IndexedSlices):
        return math_ops.unsorted_segment_sum(grad.values, grad.indices, grad.dense_shape[0])
    return grad


def _s(op: Any, name: str) -> str:
    value = op.get_attr(name)
    return value.decode() if isinstance(value, bytes) else value


@RegisterGradient("FusedBatchNormV3")
def _fused_batch_norm_grad(op: Any, dy: Any, *unused: Any) -> tuple[Any, ...]:
    x, scale, _, mean, variance = op.inputs
    eps = op.get_attr("epsilon")
    rank = x.shape.ndims or (5 if _s(op, "data_format") in ("NDHWC", "NCDHW") else 4)
    first = _s(op, "data_format").startswith("NC")
    axes = [0, *range(2, rank)] if first else list(range(rank - 1))
    u = scale.dtype.base_dtype

    def per_channel(t: Any) -> Any:
        return array_ops.reshape(t, [-1] + [1] * (rank - 2)) if first else t

    xf, dyf = math_ops.cast(x, u), math_ops.cast(_dense(dy), u)
    if op.get_attr("is_training"):
        mu = math_ops.reduce_mean(xf, axes, keepdims=True)
        var = math_ops.reduce_mean(math_ops.square(xf - mu), axes, keepdims=True)
    else:
        mu, var = per_channel(mean), per_channel(variance)
    inv = math_ops.rsqrt(var + eps)
    xhat = (xf - mu) * inv
    dscale = math_ops.reduce_sum(dyf * xhat, axes)
    doffset = math_ops.reduce_sum(dyf, axes)
    factor = per_channel(scale) * inv
    if op.get_attr("is_training"):
        centered = dyf - math_ops.reduce_mean(dyf, axes, keepdims=True)
        dx = factor * (centered - xhat * math_ops.reduce_mean(dyf * xhat, axes, keepdims=True))
    else:
        dx = dyf * factor
    return math_ops.cast(dx, x.dtype.base_dtype), dscale, doffset, None, None


@RegisterGradient("LRN")
def _lrn_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs[0], op.outputs[0]
    radius = op.get_attr("depth_radius")
    bias, alpha, beta = op.get_attr("bias"), op.get_attr("alpha"), op.get_attr("beta")
    dtype = x.dtype.base_dtype
    c = array_ops.shape(x)[-1]
    idx = array_ops.range(c)
    near = math_ops.less_equal(
        math_ops.abs(array_ops.expand_dims(idx, 1) - array_ops.expand_dims(idx, 0)), radius
    )
    band = math_ops.cast(near, dtype)

    def window_sum(t: Any) -> Any:
        flat = array_ops.reshape(t, array_ops.stack([-1, c]))
        return array_ops.reshape(math_ops.matmul(flat, band), array_ops.shape(t))

    grad = _dense(grad)
    denom = bias + alpha * window_sum(math_ops.square(x))
    # y = x * denom ** -beta, so grad * y / denom == grad * x * denom ** (-beta - 1).
    inner = window_sum(grad * y / denom)
    return grad * math_ops.pow(denom, -beta) - 2.0 * alpha * beta * x * inner


@RegisterGradient("Selu")
def _selu_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs[0], op.outputs[0]
    grad = _dense(grad)
    zero = math_ops.cast(0.0, x.dtype.base_dtype)
    return array_ops.where(
        math_ops.greater(x, zero), grad * _SELU_SCALE, grad * (y + _SELU_SCALE * _SELU_ALPHA)
    )
