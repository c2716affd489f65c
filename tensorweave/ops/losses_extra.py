"""`tf.losses.cosine_distance`, `huber_loss` and `mean_pairwise_squared_error` (follows
TF 1.x `losses_impl.py`); weighting and reduction as the other losses in `losses_impl`."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops.losses_impl import (
    Reduction,
    _as_float_pair,
    _check_args,
    add_loss,
    pointwise_loss,
)
from tensorweave.ops.variables import GraphKeys


def cosine_distance(
    labels: Any,
    predictions: Any,
    axis: int | None = None,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
    dim: int | None = None,
) -> Tensor:
    """Weighted `1 - sum(labels * predictions, axis)` of unit-normalised inputs.

    Follows `tf.losses.cosine_distance`; the per-element losses keep `axis` as size 1.

    Args:
      labels: float Tensor, unit-normalised along `axis`.
      predictions: float Tensor of the labels' shape, unit-normalised along `axis`.
      axis: the dimension holding the vectors (required).
      weights: scalar or Tensor broadcastable to the per-element losses.
      scope: name scope (default "cosine_distance_loss").
      loss_collection: the collection the loss is added to.
      reduction: a `tf.losses.Reduction` key.
      dim: the deprecated name of `axis`.

    Returns:
      float32 loss (a scalar unless `reduction` is NONE).

    Raises:
      ValueError: if `axis` is missing, both `axis` and `dim` are given, or for
        incompatible shapes.
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify 'axis'.")

    def loss(z: Tensor, p: Tensor) -> Tensor:
        return 1.0 - math_ops.reduce_sum(math_ops.multiply(p, z), axis=(axis,), keepdims=True)

    return pointwise_loss(
        "cosine_distance_loss", loss, labels, predictions, weights, scope, loss_collection,
        reduction,
    )


def huber_loss(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    delta: float = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted Huber loss: `0.5 * e**2` for `|e| <= delta`, else `delta * (|e| - 0.5 * delta)`.

    Follows `tf.losses.huber_loss` (`e = predictions - labels`); arguments as
    `cosine_distance` (scope "huber_loss").

    Raises:
      ValueError: for None inputs or incompatible shapes.
    """

    def loss(z: Tensor, p: Tensor) -> Tensor:
        abs_error = math_ops.abs(math_ops.subtract(p, z))
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        return math_ops.add(
            math_ops.multiply(0.5, math_ops.multiply(quadratic, quadratic)),
            math_ops.multiply(delta, linear),
        )

    return pointwise_loss(
        "huber_loss", loss, labels, predictions, weights, scope, loss_collection, reduction
    )


def _present_per_batch(diffs: Tensor, weights: Tensor, axis: list[int]) -> Tensor:
    with graph_mod.name_scope(None, "num_present", (diffs, weights)) as scope:
        present = array_ops.where(
            math_ops.equal(weights, 0.0),
            array_ops.zeros_like(weights),
            array_ops.ones_like(weights),
        )
        present = math_ops.multiply(present, array_ops.ones_like(diffs))
        return math_ops.reduce_sum(present, axis=axis, keepdims=True, name=scope)


def mean_pairwise_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
) -> Tensor:
    """Weighted mean over pairs of elements of each batch entry of the squared difference
    of their differences, `((p_i - p_j) - (l_i - l_j)) ** 2`.

    Follows `tf.losses.mean_pairwise_squared_error`: per batch entry,
    `2 * sum(d**2) / (n - 1) - 2 * sum(d)**2 / (n * (n - 1))` with `d = p - l` and `n`
    the number of entries with non-zero weight; the weighted results are summed.

    Args:
      labels: float `[batch, d1, ...]`.
      predictions: float of the labels' shape.
      weights: a scalar or `[batch, 1, ...]` weights per batch entry.
      scope: name scope (default "mean_pairwise_squared_error").
      loss_collection: the collection the loss is added to.

    Returns:
      float32 scalar.

    Raises:
      ValueError: for None inputs, incompatible shapes or an unknown rank.
    """
    _check_args(labels, predictions)
    with graph_mod.name_scope(scope, "mean_pairwise_squared_error", (predictions, labels, weights)):
        weights = math_ops.cast(weights, dtypes.float32)
        labels, predictions = _as_float_pair(labels, predictions)
        diffs = math_ops.subtract(predictions, labels)
        if diffs.shape.ndims is None:
            raise ValueError("mean_pairwise_squared_error needs inputs of known rank.")
        axis = list(range(1, diffs.shape.ndims))
        sum_squares = math_ops.reduce_sum(math_ops.square(diffs), axis=axis, keepdims=True)
        num_present = _present_per_batch(diffs, weights, axis)
        term1 = 2.0 * math_ops.div_no_nan(
            sum_squares, math_ops.maximum(num_present - 1, 0.0), name="value"
        )
        sum_diff = math_ops.reduce_sum(diffs, axis=axis, keepdims=True)
        term2 = 2.0 * math_ops.div_no_nan(
            math_ops.square(sum_diff),
            math_ops.maximum(math_ops.multiply(num_present, num_present - 1), 0.0),
            name="value",
        )
        loss = math_ops.reduce_sum(math_ops.multiply(term1 - term2, weights))
        mean_loss = array_ops.where(
            math_ops.greater(math_ops.reduce_sum(num_present), 0.0),
            loss,
            array_ops.zeros_like(loss),
            name="value",
        )
        add_loss(mean_loss, loss_collection)
        return mean_loss


__all__ = ["cosine_distance", "huber_loss", "mean_pairwise_squared_error"]
