"""Composite neural-network functions built from other ops.

Follows TF 1.x `nn_impl` and the Python parts of `nn_ops`.

Cross-entropy wrappers, `dropout`, `moments`, `l2_normalize`, `xw_plus_b`, `relu_layer`
and `zero_fraction`. They build the same ops, in the same name scopes, as TensorFlow 1.x.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import array_ops, constant_op, math_ops, nn_ops, random_ops


def _ensure_xent_args(name: str, sentinel: Any, labels: Any, logits: Any) -> None:
    if sentinel is not None:
        raise ValueError(f"Only call `{name}` with named arguments (labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")


def _same_shape(labels: Tensor, logits: Tensor) -> None:
    try:
        labels.shape.merge_with(logits.shape)
    except ValueError:
        raise ValueError(
            f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})"
        ) from None


# ---------------------------------------------------------------- cross-entropy
def sigmoid_cross_entropy_with_logits(
    _sentinel: Any = None, labels: Any = None, logits: Any = None, name: str | None = None
) -> Tensor:
    """Element-wise logistic loss, `max(x, 0) - x * z + log(1 + exp(-|x|))`.

    Follows `tf.nn.sigmoid_cross_entropy_with_logits` (the numerically stable form, with
    `x = logits`, `z = labels`); call it with keyword arguments.

    Args:
      _sentinel: guards against positional arguments.
      labels: `T`, same shape as `logits`, values in [0, 1].
      logits: half/float32/float64 Tensor.
      name: name scope (default "logistic_loss").

    Returns:
      `T`, the shape of `logits`.

    Raises:
      ValueError: for positional use, missing arguments or mismatched shapes.
    """
    _ensure_xent_args("sigmoid_cross_entropy_with_logits", _sentinel, labels, logits)
    with graph_mod.name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype.base_dtype, name="labels")
        _same_shape(labels, logits)
        zeros = array_ops.zeros_like(logits)
        cond = math_ops.greater_equal(logits, zeros)
        relu_logits = array_ops.where(cond, logits, zeros)
        neg_abs_logits = array_ops.where(cond, math_ops.negative(logits), logits)
        return math_ops.add(
            math_ops.subtract(relu_logits, math_ops.multiply(logits, labels)),
            math_ops.log1p(math_ops.exp(neg_abs_logits)),
            name=scope,
        )


def weighted_cross_entropy_with_logits(
    labels: Any = None,
    logits: Any = None,
    pos_weight: Any = None,
    name: str | None = None,
    targets: Any = None,
) -> Tensor:
    """Logistic loss with the positive term weighted by `pos_weight`.

    Follows TF 1.15 `tf.nn.weighted_cross_entropy_with_logits`:
    `(1 - z) * x + (1 + (q - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0))`.

    Args:
      labels: `T`, the shape of `logits`.
      logits: half/float32/float64 Tensor.
      pos_weight: a coefficient (Python number or Tensor) for the positive examples.
      name: name scope (default "logistic_loss").
      targets: deprecated alias of `labels`.

    Raises:
      ValueError: for mismatched shapes or both `labels` and `targets`.
    """
    if labels is not None and targets is not None:
        raise ValueError("Cannot specify both 'labels' and 'targets'")
    labels = targets if labels is None else labels
    with graph_mod.name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype.base_dtype, name="labels")
        _same_shape(labels, logits)
        log_weight = 1 + (pos_weight - 1) * labels
        softplus_neg = math_ops.add(
            math_ops.log1p(math_ops.exp(-math_ops.abs(logits))), nn_ops.relu(-logits)
        )
        return math_ops.add((1 - labels) * logits, log_weight * softplus_neg, name=scope)


def _flatten_outer_dims(t: Tensor) -> Tensor:
    """`t` reshaped to a matrix `[prod(dims[:-1]), dims[-1]]`."""
    out = array_ops.reshape(t, array_ops.stack([-1, array_ops.shape(t)[-1]]))
    dims = t.shape.as_list() if t.shape.ndims is not None else None
    if dims is not None:
        rows = None if None in dims[:-1] else int(np.prod(dims[:-1], dtype=np.int64))
        out.set_shape([rows, dims[-1]])
    return out


def _move_axis_to_end(t: Tensor, axis: int) -> Tensor:
    rank = t.shape.ndims
    if rank is None:
        raise ValueError(
            "softmax_cross_entropy_with_logits over a non-last axis needs a known rank"
        )
    axis %= rank
    return array_ops.transpose(t, [i for i in range(rank) if i != axis] + [axis])


def softmax_cross_entropy_with_logits_v2(
    labels: Any, logits: Any, axis: Any = None, name: str | None = None, dim: Any = None
) -> Tensor:
    """Softmax cross-entropy between `logits` and a distribution `labels` (TF 1.x `_v2`).

    Gradients flow into both `labels` and `logits`. Inputs of rank other than 2 are
    flattened to `[-1, classes]` around a `SoftmaxCrossEntropyWithLogits` op, each on its
    own as TensorFlow does (so `[1, batch, classes]` labels go with `[batch, classes]`
    logits); half inputs are computed in float32.

    Args:
      labels: `T`, the shape of `logits` (or one that flattens to the same rows); each row
        a probability distribution.
      logits: half/float32/float64 Tensor of unscaled log probabilities.
      axis: the class dimension (default -1).
      name: name scope and op name (default "softmax_cross_entropy_with_logits").
      dim: deprecated alias of `axis`.

    Returns:
      `T`, the shape of `logits` without `axis`.
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = -1 if axis is None and dim is None else (dim if axis is None else axis)
    with graph_mod.name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        to_float32 = logits.dtype.base_dtype == dtypes.float16
        precise = math_ops.cast(logits, dtypes.float32) if to_float32 else logits
        labels = math_ops.cast(labels, precise.dtype.base_dtype)
        shape = logits.shape
        if axis != -1 and not (shape.ndims is not None and axis == shape.ndims - 1):
            precise, labels = _move_axis_to_end(precise, axis), _move_axis_to_end(labels, axis)
        if labels.shape.ndims != 2:
            # TF flattens labels on their own: `[1, batch, classes]` labels meet
            # `[batch, classes]` logits (the op then checks the row counts).
            labels = _flatten_outer_dims(labels)
        if precise.shape.ndims == 2:
            cost = apply_op("SoftmaxCrossEntropyWithLogits", features=precise, labels=labels,
                            name=scope)[0]  # fmt: skip
        else:
            input_shape = array_ops.shape(precise)
            cost = apply_op(
                "SoftmaxCrossEntropyWithLogits",
                features=_flatten_outer_dims(precise),
                labels=labels,
                name=scope,
            )[0]
            cost = array_ops.reshape(cost, input_shape[:-1])
            if shape.ndims is not None:
                dims = shape.as_list()
                del dims[axis]
                cost.set_shape(dims)
        return math_ops.cast(cost, dtypes.float16) if to_float32 else cost


def softmax_cross_entropy_with_logits(
    _sentinel: Any = None,
    labels: Any = None,
    logits: Any = None,
    dim: Any = -1,
    name: str | None = None,
    axis: Any = None,
) -> Tensor:
    """Softmax cross-entropy, with gradients stopped at `labels` (TF 1.x, deprecated there).

    Follows `tf.nn.softmax_cross_entropy_with_logits`: `labels` go through a
    `StopGradient` (in name scope "softmax_cross_entropy_with_logits_sg"), then
    `softmax_cross_entropy_with_logits_v2`. Call it with keyword arguments.

    Raises:
      ValueError: for positional use or missing arguments.
    """
    _ensure_xent_args("softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    axis = dim if axis is None else axis
    with graph_mod.name_scope(
        name, "softmax_cross_entropy_with_logits_sg", [logits, labels]
    ) as scope:
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=axis, name=scope)


def sparse_softmax_cross_entropy_with_logits(
    _sentinel: Any = None, labels: Any = None, logits: Any = None, name: str | None = None
) -> Tensor:
    """Softmax cross-entropy against integer class ids (follows TF 1.x, keyword-only use).

    Args:
      _sentinel: guards against positional arguments.
      labels: int32/int64 `[d_0, ..., d_{r-1}]`, each in `[0, num_classes)`; at run time
        an out-of-range label raises InvalidArgumentError ("Received a label value of 5
        which is outside the valid range of [0, 3). ...").
      logits: half/float32/float64 `[d_0, ..., d_{r-1}, num_classes]`.
      name: op name (rank 2) or name scope.

    Returns:
      `T [d_0, ..., d_{r-1}]`, the loss of each example.

    Raises:
      ValueError: for positional use, scalar logits or mismatched static shapes/ranks.
    """
    _ensure_xent_args("sparse_softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    with graph_mod.name_scope(
        name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]
    ) as scope:
        labels = convert_to_tensor(labels)
        logits = convert_to_tensor(logits)
        to_float32 = logits.dtype.base_dtype == dtypes.float16
        precise = math_ops.cast(logits, dtypes.float32) if to_float32 else logits
        _check_sparse_shapes(labels.shape, logits.shape)
        if logits.shape.ndims == 2:
            cost = apply_op(
                "SparseSoftmaxCrossEntropyWithLogits", features=precise, labels=labels,
                name=scope,
            )[0]  # fmt: skip
        else:
            labels_shape = array_ops.shape(labels)
            flat_logits = array_ops.reshape(
                precise, array_ops.stack([-1, array_ops.shape(precise)[-1]])
            )
            cost = apply_op(
                "SparseSoftmaxCrossEntropyWithLogits",
                features=flat_logits,
                labels=array_ops.reshape(labels, [-1]),
            )[0]
            cost = array_ops.reshape(cost, labels_shape, name=scope)
            cost.set_shape(labels.shape)
        return math_ops.cast(cost, dtypes.float16) if to_float32 else cost


def _check_sparse_shapes(labels_shape: TensorShape, logits_shape: TensorShape) -> None:
    if logits_shape.ndims == 0:
        raise ValueError(f"Logits cannot be scalars - received shape {logits_shape}.")
    if (
        logits_shape.ndims is not None
        and labels_shape.ndims is not None
        and labels_shape.ndims != logits_shape.ndims - 1
    ):
        raise ValueError(
            f"Rank mismatch: Rank of labels (received {labels_shape.ndims}) should equal rank "
            f"of logits minus 1 (received {logits_shape.ndims})."
        )
    if (
        labels_shape.is_fully_defined()
        and logits_shape.is_fully_defined()
        and labels_shape.as_list() != logits_shape.as_list()[:-1]
    ):
        raise ValueError(
            f"Shape mismatch: The shape of labels (received {labels_shape}) should equal the "
            f"shape of logits except for the last dimension (received {logits_shape})."
        )


# ---------------------------------------------------------------------- dropout
def _keep_probability(keep_prob: Any, rate: Any) -> Any:
    """The keep probability from exactly one of `keep_prob` and `rate` (TF 1.15 rules)."""
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'rate' and 'keep_prob'")
    if keep_prob is None and rate is None:
        raise ValueError("You must provide a rate to dropout.")
    if rate is not None:
        if isinstance(rate, numbers.Real):
            if not 0 <= rate < 1:
                raise ValueError(
                    f"rate must be a scalar tensor or a float in the range [0, 1), got {rate:g}"
                )
            return 1 - rate
        return ("rate", rate)
    if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
        raise ValueError(
            f"keep_prob must be a scalar tensor or a float in the range (0, 1], got {keep_prob:g}"
        )
    return keep_prob


def _noise_shape(x: Tensor, noise_shape: Any) -> Any:
    if noise_shape is None:
        return array_ops.shape(x)
    if isinstance(noise_shape, Tensor) or x.shape.ndims is None:
        return noise_shape
    dims = list(noise_shape)
    if len(dims) == x.shape.ndims:
        dims = [x.shape.as_list()[i] if d is None else d for i, d in enumerate(dims)]
    if None in dims:
        return array_ops.stack(
            [array_ops.shape(x)[i] if d is None else d for i, d in enumerate(dims)]
        )
    return dims


def dropout(
    x: Any,
    keep_prob: Any = None,
    noise_shape: Any = None,
    seed: int | None = None,
    name: str | None = None,
    rate: Any = None,
) -> Tensor:
    """Zeros entries of `x` with probability `1 - keep_prob`, scaling the rest by `1/keep_prob`.

    Follows TF 1.15 `tf.nn.dropout`: pass exactly one of `keep_prob` and `rate`
    (`= 1 - keep_prob`). A constant keep probability of 1 returns `x` itself.

    Args:
      x: a floating Tensor.
      keep_prob: float in (0, 1] or a scalar Tensor.
      noise_shape: int32 [rank(x)], the shape of the random keep/drop mask (broadcast
        against `x`); None entries take `x`'s dimension.
      seed: op-level random seed.
      name: name scope (default "dropout").
      rate: float in [0, 1) or a scalar Tensor, the drop probability.

    Returns:
      A Tensor of `x`'s dtype and shape.

    Raises:
      ValueError: if both or neither of `keep_prob`/`rate` are given, a Python value is out
        of range, or `x` is not floating.
    """
    keep = _keep_probability(keep_prob, rate)
    with graph_mod.name_scope(name, "dropout", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        dt = x.dtype.base_dtype
        if not dt.is_floating:
            raise ValueError(
                "x has to be a floating point tensor since it's going to be scaled. Got a "
                f"{dt.name} tensor instead."
            )
        if isinstance(keep, tuple):
            keep = math_ops.subtract(
                constant_op.constant(1, dtype=dt), convert_to_tensor(keep[1], dtype=dt, name="rate")
            )
        if isinstance(keep, numbers.Real) and keep == 1:
            return x
        keep = convert_to_tensor(keep, dtype=dt, name="keep_prob")
        keep.shape.assert_is_compatible_with(TensorShape([]))
        value = constant_value(keep)
        if value is not None and float(value) == 1.0:
            return x
        noise = random_ops.random_uniform(_noise_shape(x, noise_shape), seed=seed, dtype=dt)
        binary = math_ops.floor(math_ops.add(keep, noise))
        out = math_ops.multiply(math_ops.divide(x, keep), binary, name=scope)
        out.set_shape(x.shape)
        return out


# ---------------------------------------------------------------- normalisation
def l2_normalize(
    x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None, dim: Any = None
) -> Tensor:
    """`x / sqrt(max(sum(x ** 2, axis), epsilon))` (follows TF 1.x `tf.nn.l2_normalize`).

    Args:
      x: a floating Tensor.
      axis: dimension(s) to normalise over (None: all).
      epsilon: lower bound of the squared norm.
      name: name scope and name of the final op (default "l2_normalize").
      dim: deprecated alias of `axis`.
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    with graph_mod.name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        eps = constant_op.constant(epsilon, dtype=x.dtype.base_dtype)
        inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, eps))
        return math_ops.multiply(x, inv_norm, name=scope)


def moments(
    x: Any, axes: Any, shift: Any = None, name: str | None = None, keep_dims: bool = False
) -> tuple[Tensor, Tensor]:
    """Mean and variance of `x` over `axes` (follows TF 1.x `tf.nn.moments`).

    The variance is `mean((x - stop_gradient(mean)) ** 2)`; `shift` is accepted and
    unused, as in TensorFlow >= 1.5. Half inputs are computed in float32.

    Args:
      x: a floating Tensor.
      axes: list of ints, the dimensions to reduce.
      shift: ignored.
      name: name scope (default "moments").
      keep_dims: keep the reduced dimensions with length 1.

    Returns:
      `(mean, variance)`, both of `x`'s dtype.
    """
    del shift
    with graph_mod.name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x, name="x")
        half = x.dtype.base_dtype == dtypes.float16
        y = math_ops.cast(x, dtypes.float32) if half else x
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        variance = math_ops.reduce_mean(
            math_ops.squared_difference(y, array_ops.stop_gradient(mean)),
            axes,
            keepdims=True,
            name="variance",
        )
        if not keep_dims:
            squeeze_axes = [int(a) for a in np.reshape(axes, -1)]
            mean = array_ops.squeeze(mean, squeeze_axes)
            variance = array_ops.squeeze(variance, squeeze_axes)
        if half:
            return math_ops.cast(mean, dtypes.float16), math_ops.cast(variance, dtypes.float16)
        return mean, variance


# ------------------------------------------------------------------------ layers
def xw_plus_b(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """`matmul(x, weights) + biases` (follows `tf.nn.xw_plus_b`).

    Args:
      x: `T [batch, in_units]`.
      weights: `T [in_units, out_units]`.
      biases: `T [out_units]`.
      name: name scope; the final `BiasAdd` is named after it (default "xw_plus_b").
    """
    with graph_mod.name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        return nn_ops.bias_add(math_ops.matmul(x, weights), biases, name=scope)


def relu_layer(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """`relu(matmul(x, weights) + biases)` (follows `tf.nn.relu_layer`); shapes as `xw_plus_b`."""
    with graph_mod.name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        return nn_ops.relu(nn_ops.bias_add(math_ops.matmul(x, weights), biases), name=scope)


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of zeros in `value`, a float32 scalar (follows `tf.nn.zero_fraction`)."""
    with graph_mod.name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        zero = constant_op.constant(0, dtype=value.dtype.base_dtype, name="zero")
        return math_ops.reduce_mean(math_ops.cast(math_ops.equal(value, zero), dtypes.float32))


__all__ = [
    "dropout",
    "l2_normalize",
    "moments",
    "relu_layer",
    "sigmoid_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2",
    "sparse_softmax_cross_entropy_with_logits",
    "weighted_cross_entropy_with_logits",
    "xw_plus_b",
    "zero_fraction",
]
