"""Loss functions and the loss collections (follows TF 1.x `tf.losses` / `losses_impl.py`).

Every loss casts its inputs to float32, weights the per-element losses, reduces them as
`reduction` says (by default the sum divided by the number of non-zero weights) and adds
the result to `GraphKeys.LOSSES`; `get_total_loss` sums that collection and the
regularization losses. Weights must be statically broadcastable to the losses (TensorFlow
also checks at run time; here an incompatible run-time shape fails in the `Mul`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, constant_op, math_ops, nn_impl, nn_ops
from tensorweave.ops.variables import GraphKeys


class Reduction:
    """How a loss reduces its weighted per-element values (`tf.losses.Reduction`).

    `NONE` keeps them; `SUM` sums; `MEAN` divides the sum by the sum of the weights;
    `SUM_OVER_BATCH_SIZE` by the number of elements; `SUM_BY_NONZERO_WEIGHTS` (alias
    `SUM_OVER_NONZERO_WEIGHTS`, the default) by the number of non-zero weights.
    """

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple[str, ...]:
        """Every reduction key."""
        return (
            cls.NONE,
            cls.SUM,
            cls.MEAN,
            cls.SUM_OVER_BATCH_SIZE,
            cls.SUM_OVER_NONZERO_WEIGHTS,
            cls.SUM_BY_NONZERO_WEIGHTS,
        )

    @classmethod
    def validate(cls, key: str) -> None:
        """Raises ValueError("Invalid Reduction Key ...") for an unknown key."""
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}.")


# -------------------------------------------------------------------- helpers
def _assert_broadcastable(weights: Tensor, values: Tensor) -> None:
    """The static part of TF's `assert_broadcastable`.

    Weights must be a scalar, or of the values' rank with each dimension 1 or equal.
    """
    ws, vs = weights.shape, values.shape
    if ws.ndims is None or vs.ndims is None or ws.ndims == 0:
        return
    ok = ws.ndims == vs.ndims and all(
        w is None or v is None or w in (1, v) for w, v in zip(ws.as_list(), vs.as_list())
    )
    if not ok:
        raise ValueError(
            f"weights can not be broadcast to values. values.rank={vs.ndims}. "
            f"weights.rank={ws.ndims}. values.shape={vs}. weights.shape={ws}."
        )


def _safe_mean(total: Tensor, count: Tensor) -> Tensor:
    return math_ops.div_no_nan(math_ops.reduce_sum(total), count, name="value")


def _num_elements(losses: Tensor) -> Tensor:
    with graph_mod.name_scope(None, "num_elements", [losses]) as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), losses.dtype.base_dtype)


def _num_present(losses: Tensor, weights: Any) -> Tensor:
    """The number of entries of `losses` whose (broadcast) weight is not zero."""
    if isinstance(weights, float | int) and weights != 0:
        return _num_elements(losses)
    with graph_mod.name_scope(None, "num_present", [losses, weights]) as scope:
        weights = math_ops.cast(weights, dtypes.float32)
        zero = constant_op.constant(0.0, dtype=dtypes.float32)
        present = array_ops.where(
            math_ops.equal(weights, zero),
            array_ops.zeros_like(weights),
            array_ops.ones_like(weights),
        )
        present = math_ops.multiply(present, array_ops.ones_like(losses))
        return math_ops.reduce_sum(present, name=scope)


def add_loss(loss: Any, loss_collection: str | None = GraphKeys.LOSSES) -> None:
    """Adds `loss` to `loss_collection` (follows `tf.losses.add_loss`; None: nowhere)."""
    if loss_collection:
        graph_mod.add_to_collection(loss_collection, loss)


def compute_weighted_loss(
    losses: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weights and reduces per-element `losses` (follows `tf.losses.compute_weighted_loss`).

    Args:
      losses: a float Tensor `[batch, d1, ...]`.
      weights: a scalar or a Tensor broadcastable to `losses` (same rank, each dimension 1
        or equal).
      scope: name scope (default "weighted_loss").
      loss_collection: the collection the result is added to (None: none).
      reduction: a `Reduction` key.

    Returns:
      The loss, of `losses`' dtype: a scalar, or `losses`' shape for `Reduction.NONE`.

    Raises:
      ValueError: for an invalid reduction or weights that cannot broadcast.
    """
    Reduction.validate(reduction)
    with graph_mod.name_scope(scope, "weighted_loss", [losses, weights]):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype.base_dtype
        losses = math_ops.cast(losses, dtypes.float32)
        weights_t = math_ops.cast(weights, dtypes.float32)
        _assert_broadcastable(weights_t, losses)
        weighted = math_ops.multiply(losses, weights_t)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = math_ops.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _safe_mean(
                    loss,
                    math_ops.reduce_sum(math_ops.multiply(array_ops.ones_like(losses), weights_t)),
                )
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_mean(loss, _num_present(losses, weights))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_mean(loss, _num_elements(losses))
        loss = math_ops.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


def _check_args(labels: Any, predictions: Any, what: str = "predictions") -> None:
    if labels is None:
        raise ValueError("labels must not be None.")
    if predictions is None:
        raise ValueError(f"{what} must not be None.")


def _as_float_pair(labels: Any, predictions: Any) -> tuple[Tensor, Tensor]:
    predictions = math_ops.cast(predictions, dtypes.float32)
    labels = math_ops.cast(labels, dtypes.float32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return labels, predictions


# --------------------------------------------------------------------- losses
def pointwise_loss(
    default_name: str,
    loss_fn: Callable[[Tensor, Tensor], Tensor],
    labels: Any,
    predictions: Any,
    weights: Any,
    scope: str | None,
    loss_collection: str | None,
    reduction: str,
    what: str = "predictions",
) -> Tensor:
    """`compute_weighted_loss` of `loss_fn(labels, predictions)` on float32 inputs, in name
    scope `scope` (default `default_name`): the skeleton of the `tf.losses` functions.

    Raises:
      ValueError: for None inputs (naming `what`) or incompatible shapes.
    """
    _check_args(labels, predictions, what)
    with graph_mod.name_scope(scope, default_name, [predictions, labels, weights]) as s:
        labels, predictions = _as_float_pair(labels, predictions)
        losses = loss_fn(labels, predictions)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction=reduction)


def absolute_difference(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted `|predictions - labels|` (follows `tf.losses.absolute_difference`).

    Raises:
      ValueError: for None inputs or incompatible shapes.
    """
    return pointwise_loss(
        "absolute_difference", lambda z, p: math_ops.abs(math_ops.subtract(p, z)),
        labels, predictions, weights, scope, loss_collection, reduction,
    )


def mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted `(predictions - labels) ** 2` (follows `tf.losses.mean_squared_error`).

    Args:
      labels: the targets, shape of `predictions`.
      predictions: the outputs.
      weights: scalar or Tensor broadcastable to the losses.
      scope: name scope (default "mean_squared_error").
      loss_collection: collection the loss is added to.
      reduction: a `Reduction` key.

    Returns:
      A float32 scalar (or per-element losses for `Reduction.NONE`).

    Raises:
      ValueError: for None inputs or incompatible shapes.
    """
    return pointwise_loss(
        "mean_squared_error", lambda z, p: math_ops.squared_difference(p, z),
        labels, predictions, weights, scope, loss_collection, reduction,
    )


def log_loss(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    epsilon: float = 1e-7,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted `-z log(p + eps) - (1 - z) log(1 - p + eps)` (follows `tf.losses.log_loss`).

    Raises:
      ValueError: for None inputs or incompatible shapes.
    """

    def loss(z: Tensor, p: Tensor) -> Tensor:
        return -math_ops.multiply(z, math_ops.log(p + epsilon)) - math_ops.multiply(
            (1 - z), math_ops.log(1 - p + epsilon)
        )

    return pointwise_loss(
        "log_loss", loss, labels, predictions, weights, scope, loss_collection, reduction
    )


def hinge_loss(
    labels: Any,
    logits: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted `max(0, 1 - (2z - 1) * logits)` for 0/1 labels (`tf.losses.hinge_loss`).

    Raises:
      ValueError: for None inputs or incompatible shapes.
    """

    def loss(z: Tensor, x: Tensor) -> Tensor:
        all_ones = array_ops.ones_like(z)
        signed = math_ops.subtract(2 * z, all_ones)
        return nn_ops.relu(math_ops.subtract(all_ones, math_ops.multiply(signed, x)))

    return pointwise_loss(
        "hinge_loss", loss, labels, logits, weights, scope, loss_collection, reduction, "logits"
    )


def sigmoid_cross_entropy(
    multi_class_labels: Any,
    logits: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted sigmoid cross-entropy (follows `tf.losses.sigmoid_cross_entropy`).

    With `label_smoothing` s the labels become `z * (1 - s) + s / 2`.

    Raises:
      ValueError: for None inputs or incompatible shapes.
    """
    _check_args(multi_class_labels, logits, "logits")
    with graph_mod.name_scope(
        scope, "sigmoid_cross_entropy_loss", [logits, multi_class_labels, weights]
    ) as s:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(multi_class_labels, logits.dtype.base_dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_impl.sigmoid_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy"
        )
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction=reduction)


def softmax_cross_entropy(
    onehot_labels: Any,
    logits: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted softmax cross-entropy (follows `tf.losses.softmax_cross_entropy`).

    With `label_smoothing` s over C classes the labels become `z * (1 - s) + s / C`.
    Gradients do not flow into the labels.

    Args:
      onehot_labels: `[batch, num_classes]` one-hot (or soft) labels.
      logits: `[batch, num_classes]` float Tensor.
      weights: scalar or `[batch]`-broadcastable Tensor.
      label_smoothing: float in [0, 1].
      scope: name scope (default "softmax_cross_entropy_loss").
      loss_collection: collection the loss is added to.
      reduction: a `Reduction` key.

    Raises:
      ValueError: for None inputs or incompatible shapes.
    """
    _check_args(onehot_labels, logits, "logits")
    with graph_mod.name_scope(
        scope, "softmax_cross_entropy_loss", [logits, onehot_labels, weights]
    ) as s:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(onehot_labels, logits.dtype.base_dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            num_classes = math_ops.cast(array_ops.shape(labels)[-1], logits.dtype.base_dtype)
            labels = labels * (1.0 - label_smoothing) + label_smoothing / num_classes
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
        losses = nn_impl.softmax_cross_entropy_with_logits_v2(
            labels=labels, logits=logits, name="xentropy"
        )
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction=reduction)


def _squeeze_last(t: Tensor, target_rank: int | None) -> Tensor:
    """`t` without its last dimension when it is 1 and `t` has rank `target_rank + 1`."""
    rank = t.shape.ndims
    if rank is None or target_rank is None or rank != target_rank + 1:
        return t
    if t.shape.as_list()[-1] == 1:
        return array_ops.squeeze(t, [-1])
    return t


def sparse_softmax_cross_entropy(
    labels: Any,
    logits: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted cross-entropy against integer class ids (`tf.losses.sparse_softmax_cross_entropy`).

    Labels (and weights) of shape `[batch, 1]` are squeezed to `[batch]`.

    Args:
      labels: int32/int64 `[batch]` (or `[batch, 1]`), each in `[0, num_classes)`.
      logits: float `[batch, num_classes]`.
      weights: scalar or `[batch]` Tensor.
      scope: name scope (default "sparse_softmax_cross_entropy_loss").
      loss_collection: collection the loss is added to.
      reduction: a `Reduction` key.

    Raises:
      ValueError: for None inputs or incompatible shapes.
    """
    _check_args(labels, logits, "logits")
    with graph_mod.name_scope(
        scope, "sparse_softmax_cross_entropy_loss", [logits, labels, weights]
    ) as s:
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels)
        target = None if logits.shape.ndims is None else logits.shape.ndims - 1
        labels = _squeeze_last(labels, target)
        if isinstance(weights, Tensor):
            weights = _squeeze_last(weights, target)
        losses = nn_impl.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy"
        )
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction=reduction)


# --------------------------------------------------------------- collections
def get_losses(scope: str | None = None, loss_collection: str = GraphKeys.LOSSES) -> list[Any]:
    """The losses in `loss_collection` whose names match `scope` (`tf.losses.get_losses`)."""
    return graph_mod.get_collection(loss_collection, scope)


def get_regularization_losses(scope: str | None = None) -> list[Any]:
    """The `GraphKeys.REGULARIZATION_LOSSES` matching `scope`."""
    return graph_mod.get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(
    scope: str | None = None, name: str = "total_regularization_loss"
) -> Tensor:
    """The sum of the regularization losses, or a float32 0.0 when there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return constant_op.constant(0.0)


def get_total_loss(
    add_regularization_losses: bool = True, name: str = "total_loss", scope: str | None = None
) -> Tensor:
    """The sum of the losses (and regularization losses) (`tf.losses.get_total_loss`).

    Raises:
      ValueError: when there are no losses at all.
    """
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("No losses to sum: tf.losses.get_total_loss found an empty collection")
    return math_ops.add_n(losses, name=name)


__all__ = [
    "Reduction",
    "absolute_difference",
    "add_loss",
    "compute_weighted_loss",
    "get_losses",
    "get_regularization_loss",
    "get_regularization_losses",
    "get_total_loss",
    "hinge_loss",
    "log_loss",
    "mean_squared_error",
    "sigmoid_cross_entropy",
    "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]
