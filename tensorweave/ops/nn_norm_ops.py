"""Normalization and moments (follows TF 1.x `nn_impl.py` / `nn_ops.py`):
`batch_normalization`, `fused_batch_norm` (the `FusedBatchNormV3` op),
`batch_norm_with_global_normalization`, `normalize_moments`, `sufficient_statistics`,
`weighted_moments` and `lrn` / `local_response_normalization` (the `LRN` op)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.op_defs import nn_extra as _defs  # noqa: F401
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, constant_op, math_ops


def batch_normalization(
    x: Any,
    mean: Any,
    variance: Any,
    offset: Any,
    scale: Any,
    variance_epsilon: float,
    name: str | None = None,
) -> Tensor:
    """`scale * (x - mean) / sqrt(variance + variance_epsilon) + offset`.

    Follows `tf.nn.batch_normalization` (the same composite ops, scope "batchnorm").

    Args:
      x: float Tensor of any rank.
      mean: a Tensor broadcastable to `x`.
      variance: a Tensor broadcastable to `x`.
      offset: None or a Tensor broadcastable to `x` (beta).
      scale: None or a Tensor broadcastable to `x` (gamma).
      variance_epsilon: small float avoiding division by zero.
      name: name scope.

    Returns:
      The normalized Tensor, shaped and typed like `x`.
    """
    with graph_mod.name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x, name="x")
        inv = math_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = offset - mean * inv if offset is not None else -mean * inv
        return x * math_ops.cast(inv, x.dtype) + math_ops.cast(shift, x.dtype)


def fused_batch_norm(
    x: Any,
    scale: Any,
    offset: Any,
    mean: Any = None,
    variance: Any = None,
    epsilon: float = 0.001,
    data_format: str = "NHWC",
    is_training: bool = True,
    name: str | None = None,
    exponential_avg_factor: float = 1.0,
) -> tuple[Tensor, Tensor, Tensor]:
    """Batch normalization in one `FusedBatchNormV3` op (follows `tf.nn.fused_batch_norm`).

    Args:
      x: float 4-D (or 5-D) Tensor.
      scale: float32 [channels] (gamma).
      offset: float32 [channels] (beta).
      mean: float32 [channels]; required for inference or a moving average factor.
      variance: float32 [channels]; likewise.
      epsilon: added to the variance (at least 1.001e-5, as TensorFlow).
      data_format: "NHWC", "NCHW", "NDHWC" or "NCDHW".
      is_training: normalize with the batch statistics (else with `mean`/`variance`).
      name: op name.
      exponential_avg_factor: with training, the returned statistics are
        `(1 - f) * old + f * batch`.

    Returns:
      `(y, batch_mean, batch_variance)`; in training, the variance returned is the
      unbiased batch variance (n / (n - 1)), the normalization uses the biased one.

    Raises:
      ValueError: if `mean`/`variance` are missing where they are required.
    """
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError(
            "Both `mean` and `variance` must be a 1D tensor when is_training is False or "
            f"exponential_avg_factor != 1.0. Got `mean` {mean} and `variance` {variance}"
        )
    x = convert_to_tensor(x, name="input")
    scale = convert_to_tensor(scale, name="scale")
    offset = convert_to_tensor(offset, name="offset")
    if mean is None:
        mean = constant_op.constant([], dtype=scale.dtype)
    if variance is None:
        variance = constant_op.constant([], dtype=scale.dtype)
    epsilon = epsilon if epsilon > 1.001e-5 else 1.001e-5
    outputs = apply_op(
        "FusedBatchNormV3",
        x=x,
        scale=scale,
        offset=offset,
        mean=mean,
        variance=variance,
        epsilon=epsilon,
        exponential_avg_factor=exponential_avg_factor,
        data_format=data_format,
        is_training=is_training,
        name=name,
    )
    return outputs[0], outputs[1], outputs[2]


def batch_norm_with_global_normalization(
    t: Any = None,
    m: Any = None,
    v: Any = None,
    beta: Any = None,
    gamma: Any = None,
    variance_epsilon: float | None = None,
    scale_after_normalization: bool | None = None,
    name: str | None = None,
    input: Any = None,  # noqa: A002
    mean: Any = None,
    variance: Any = None,
) -> Tensor:
    """`batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None)`.

    Follows `tf.nn.batch_norm_with_global_normalization` (`input`, `mean`, `variance` are
    the aliases of `t`, `m`, `v`).
    """
    t = input if t is None else t
    m = mean if m is None else m
    v = variance if v is None else v
    gamma = gamma if scale_after_normalization else None
    return batch_normalization(t, m, v, beta, gamma, variance_epsilon, name)


def normalize_moments(
    counts: Any, mean_ss: Any, variance_ss: Any, shift: Any, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """Mean and variance from `sufficient_statistics` (follows `tf.nn.normalize_moments`).

    Returns:
      `(mean, variance)`: `mean_ss / counts (+ shift)` and
      `variance_ss / counts - (mean_ss / counts) ** 2`.
    """
    with graph_mod.name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = math_ops.reciprocal(counts, name="divisor")
        if shift is not None:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="shifted_mean")
            mean = math_ops.add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = math_ops.subtract(
            math_ops.multiply(variance_ss, divisor),
            math_ops.square(shifted_mean),
            name="variance",
        )
        return mean, variance


def sufficient_statistics(
    x: Any,
    axes: Any,
    shift: Any = None,
    keep_dims: bool | None = None,
    name: str | None = None,
    keepdims: bool | None = None,
) -> tuple[Tensor, Tensor, Tensor, Any]:
    """Count, sum and sum of squares of `x` over `axes` (`tf.nn.sufficient_statistics`).

    Args:
      x: float Tensor.
      axes: ints, the dimensions to reduce.
      shift: None or a Tensor subtracted first (numerical stability).
      keep_dims: keep the reduced dimensions (deprecated alias of `keepdims`).
      name: name scope.
      keepdims: keep the reduced dimensions.

    Returns:
      `(count, mean_ss, variance_ss, shift)`: the count is a constant when the reduced
      dimensions are static.
    """
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    axes = [int(a) for a in axes]
    with graph_mod.name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x, name="x")
        dims = x.shape.as_list() if x.shape.ndims is not None else None
        if dims is not None and all(dims[d] is not None for d in axes):
            count = 1
            for d in axes:
                count *= dims[d]
            counts = constant_op.constant(count, dtype=x.dtype)
        else:
            sizes = array_ops.gather(math_ops.cast(array_ops.shape(x), x.dtype), axes)
            counts = math_ops.reduce_prod(sizes, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, dtype=x.dtype, name="shift")
            m_ss = math_ops.subtract(x, shift)
            v_ss = math_ops.squared_difference(x, shift)
        else:
            m_ss, v_ss = x, math_ops.square(x)
        m_ss = math_ops.reduce_sum(m_ss, axes, keepdims=keepdims, name="mean_ss")
        v_ss = math_ops.reduce_sum(v_ss, axes, keepdims=keepdims, name="var_ss")
        return counts, m_ss, v_ss, shift


def weighted_moments(
    x: Any,
    axes: Any,
    frequency_weights: Any,
    name: str | None = None,
    keep_dims: bool | None = None,
    keepdims: bool | None = None,
) -> tuple[Tensor, Tensor]:
    """Frequency-weighted mean and variance over `axes` (`tf.nn.weighted_moments`).

    `frequency_weights` broadcasts to `x`; float16 inputs are computed in float32. Zero
    total weight gives 0 (div_no_nan).
    """
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    axes = [int(a) for a in axes]
    with graph_mod.name_scope(name, "weighted_moments", [x, frequency_weights]):
        x = convert_to_tensor(x, name="x")
        w = convert_to_tensor(frequency_weights, name="frequency_weights")
        half = x.dtype == dtypes.float16
        if half:
            x = math_ops.cast(x, dtypes.float32)
        if w.dtype != x.dtype:
            w = math_ops.cast(w, x.dtype)
        total = math_ops.reduce_sum(w * x, axes, keepdims=True, name="weighted_input_sum")
        sum_w = math_ops.reduce_sum(
            w + array_ops.zeros_like(x), axes, keepdims=True, name="sum_of_weights"
        )
        mean = math_ops.div_no_nan(total, sum_w)
        distsq = math_ops.reduce_sum(
            w * math_ops.squared_difference(x, mean), axes, keepdims=True, name="weighted_distsq"
        )
        variance = math_ops.div_no_nan(distsq, sum_w)
        if not keepdims:
            mean = array_ops.squeeze(mean, axis=axes)
            variance = array_ops.squeeze(variance, axis=axes)
        if half:
            mean = math_ops.cast(mean, dtypes.float16)
            variance = math_ops.cast(variance, dtypes.float16)
        return mean, variance


def local_response_normalization(
    input: Any,  # noqa: A002
    depth_radius: int = 5,
    bias: float = 1.0,
    alpha: float = 1.0,
    beta: float = 0.5,
    name: str | None = None,
) -> Tensor:
    """Local response normalization over the last dimension (the `LRN` op).

    Follows `tf.nn.local_response_normalization`:
    `input / (bias + alpha * sum(input[..., d - r : d + r + 1] ** 2)) ** beta`.

    Args:
      input: half/float32 `[batch, height, width, channels]`.
      depth_radius: the half-width `r` of the channel window.
      bias: the offset.
      alpha: the scale of the sum.
      beta: the exponent.
      name: op name.

    Returns:
      A Tensor like `input`.
    """
    return apply_op(
        "LRN",
        input=input,
        depth_radius=depth_radius,
        bias=bias,
        alpha=alpha,
        beta=beta,
        name=name,
    )


lrn = local_response_normalization

__all__ = [
    "batch_norm_with_global_normalization",
    "batch_normalization",
    "fused_batch_norm",
    "local_response_normalization",
    "lrn",
    "normalize_moments",
    "sufficient_statistics",
    "weighted_moments",
]
