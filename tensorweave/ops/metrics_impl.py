"""Streaming metrics (follows TF 1.x `tf.metrics`, `python/ops/metrics_impl.py`).

Every metric returns `(value, update_op)`. Its state lives in local variables (collections
`LOCAL_VARIABLES` and `METRIC_VARIABLES`, not trainable, zero-initialised) created under a
variable scope named after the metric (`mean/total`, `mean/count`, ...), so
`tf.local_variables_initializer()` resets it. `update_op` adds the batch's statistics to the
state and returns the metric over everything seen so far; `value` reads the state without
changing it. `metrics_collections` receive `value`, `updates_collections` receive
`update_op`.

This module holds the mean family, the true/false positive/negative counts, precision,
recall, mean IoU and mean per-class accuracy; `metrics_thresholds` holds the metrics over
thresholds (AUC, sensitivity/specificity), `metrics_top_k` the top-k ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, constant_op, math_ops, state_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.variables import GraphKeys, Variable

Pair = tuple[Tensor, Tensor]


# ------------------------------------------------------------------------ helpers
def metric_variable(
    shape: Any, dtype: Any, validate_shape: bool = True, name: str | None = None
) -> Variable:
    """A zero-initialised local variable in `LOCAL_VARIABLES` and `METRIC_VARIABLES`."""
    dtype = dtypes.as_dtype(dtype)
    return Variable(
        lambda: array_ops.zeros(shape, dtype),
        trainable=False,
        collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
        validate_shape=validate_shape,
        name=name,
        dtype=dtype,
    )


def add_to_collections(collections: Any, value: Any) -> None:
    """Adds `value` to each collection named in `collections` (None: none)."""
    if collections:
        graph_mod.add_to_collections(collections, value)


def safe_div(numerator: Any, denominator: Any, name: str) -> Tensor:
    """`numerator / denominator`, 0 where the denominator is 0 (TF's `_safe_div`)."""
    return math_ops.div_no_nan(numerator, denominator, name=name)


def _squeeze_last(t: Tensor) -> Tensor:
    return array_ops.squeeze(t, [-1])


def remove_squeezable_dimensions(predictions: Any, labels: Any, weights: Any = None):
    """Drops a trailing size-1 dimension that makes ranks differ by one (static shapes).

    Returns `(predictions, labels, weights)` as Tensors (weights may be None).
    """
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels = convert_to_tensor(labels)
        p_rank, l_rank = predictions.shape.ndims, labels.shape.ndims
        if p_rank is not None and l_rank is not None:
            if l_rank == p_rank + 1 and labels.shape.as_list()[-1] == 1:
                labels = _squeeze_last(labels)
            elif p_rank == l_rank + 1 and predictions.shape.as_list()[-1] == 1:
                predictions = _squeeze_last(predictions)
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    w_rank, p_rank = weights.shape.ndims, predictions.shape.ndims
    if w_rank is not None and p_rank is not None:
        if w_rank == p_rank + 1 and weights.shape.as_list()[-1] == 1:
            weights = _squeeze_last(weights)
        elif p_rank == w_rank + 1 and w_rank > 0:
            weights = array_ops.expand_dims(weights, -1)
    return predictions, labels, weights


def broadcast_weights(weights: Any, values: Tensor) -> Tensor:
    """float32 `weights` broadcast to the shape of `values` (TF's `broadcast_weights`).

    Raises:
      ValueError: if the static shapes cannot broadcast.
    """
    weights = math_ops.cast(weights, dtypes.float32)
    w, v = weights.shape, values.shape
    if w.ndims is not None and v.ndims is not None:
        if w.ndims > v.ndims:
            raise ValueError(f"weights can not be broadcast to values. weights {w}, values {v}.")
        for a, b in zip(reversed(w.as_list()), reversed(v.as_list())):
            if a is not None and b is not None and a not in (1, b):
                raise ValueError(
                    f"weights can not be broadcast to values. weights {w}, values {v}."
                )
    return math_ops.multiply(weights, array_ops.ones_like(values, dtype=dtypes.float32))


def _finish(value: Tensor, update: Tensor, metrics_collections: Any, updates_collections: Any):
    add_to_collections(metrics_collections, value)
    add_to_collections(updates_collections, update)
    return value, update


# ------------------------------------------------------------------- the mean family
def mean(
    values: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """The (weighted) mean of `values` over all updates (follows `tf.metrics.mean`).

    Args:
      values: numeric Tensor of any shape (cast to float32).
      weights: None or a Tensor broadcastable to `values`; weight 0 leaves a value out.
      metrics_collections: collections receiving the value.
      updates_collections: collections receiving the update op.
      name: variable scope (default "mean"); the state is `<scope>/total`, `<scope>/count`.

    Returns:
      `(mean, update_op)`: float32 scalars; 0 before anything is counted.

    Raises:
      ValueError: if `weights` cannot broadcast to `values`.
    """
    with vs.variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            values, _, weights = remove_squeezable_dimensions(values, None, weights)
            weights = broadcast_weights(weights, values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.reduce_sum(weights)
        update_total = state_ops.assign_add(total, math_ops.reduce_sum(values))
        # NOTE: on an identity: the runtime runs a fed placeholder named as a control input.
        with graph_mod.control_dependencies([array_ops.identity(values)]):
            update_count = state_ops.assign_add(count, num_values)
        value = safe_div(total, count, "value")
        update = safe_div(update_total, update_count, "update_op")
        return _finish(value, update, metrics_collections, updates_collections)


def mean_tensor(
    values: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """The element-wise (weighted) mean of `values` over all updates (`tf.metrics.mean_tensor`).

    `values` needs a fully defined static shape; the state is `<scope>/total_tensor` and
    `<scope>/count_tensor` of that shape (scope default "mean"). Returns float32 Tensors of
    the shape of `values`.
    """
    with vs.variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable(values.shape, dtypes.float32, name="total_tensor")
        count = metric_variable(values.shape, dtypes.float32, name="count_tensor")
        num_values = array_ops.ones_like(values)
        if weights is not None:
            values, _, weights = remove_squeezable_dimensions(values, None, weights)
            weights = broadcast_weights(weights, values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.multiply(num_values, weights)
        update_total = state_ops.assign_add(total, values)
        # NOTE: on an identity: the runtime runs a fed placeholder named as a control input.
        with graph_mod.control_dependencies([array_ops.identity(values)]):
            update_count = state_ops.assign_add(count, num_values)
        value = safe_div(total, math_ops.maximum(count, 0.0), "value")
        update = safe_div(update_total, math_ops.maximum(update_count, 0.0), "update_op")
        return _finish(value, update, metrics_collections, updates_collections)


def accuracy(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """How often `predictions` equals `labels` (follows `tf.metrics.accuracy`).

    `labels` and `predictions` have one shape (a trailing size-1 dimension of either is
    squeezed); `predictions` is cast to the labels' dtype. Scope default "accuracy".

    Raises:
      ValueError: for incompatible shapes.
    """
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    predictions.shape.assert_is_compatible_with(labels.shape)
    if labels.dtype != predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def _errors(labels: Any, predictions: Any, weights: Any) -> tuple[Tensor, Tensor, Any]:
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    predictions.shape.assert_is_compatible_with(labels.shape)
    predictions = math_ops.cast(predictions, dtypes.float32)
    labels = math_ops.cast(labels, dtypes.float32)
    return labels, predictions, weights


def mean_absolute_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """The mean of `|predictions - labels|` (follows `tf.metrics.mean_absolute_error`)."""
    labels, predictions, weights = _errors(labels, predictions, weights)
    values = math_ops.abs(predictions - labels)
    name = name or "mean_absolute_error"
    return mean(values, weights, metrics_collections, updates_collections, name)


def mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """The mean of `(predictions - labels) ** 2` (follows `tf.metrics.mean_squared_error`)."""
    labels, predictions, weights = _errors(labels, predictions, weights)
    values = math_ops.squared_difference(predictions, labels)
    name = name or "mean_squared_error"
    return mean(values, weights, metrics_collections, updates_collections, name)


def root_mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """The square root of `mean_squared_error` (`tf.metrics.root_mean_squared_error`)."""
    mse, update_mse = mean_squared_error(
        labels, predictions, weights, None, None, name or "root_mean_squared_error"
    )
    value, update = math_ops.sqrt(mse), math_ops.sqrt(update_mse)
    return _finish(value, update, metrics_collections, updates_collections)


def mean_relative_error(
    labels: Any,
    predictions: Any,
    normalizer: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """The mean of `|labels - predictions| / normalizer`, 0 where the normalizer is 0.

    Follows `tf.metrics.mean_relative_error`; `normalizer` has the shape of `predictions`.
    """
    labels, predictions, weights = _errors(labels, predictions, weights)
    normalizer = math_ops.cast(normalizer, dtypes.float32)
    predictions.shape.assert_is_compatible_with(normalizer.shape)
    relative = array_ops.where(
        math_ops.equal(normalizer, 0.0),
        array_ops.zeros_like(labels),
        math_ops.truediv(math_ops.abs(labels - predictions), normalizer),
    )
    name = name or "mean_relative_error"
    return mean(relative, weights, metrics_collections, updates_collections, name)


def mean_cosine_distance(
    labels: Any,
    predictions: Any,
    dim: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """`1 - mean(sum(labels * predictions, dim))`, for unit-normalised inputs.

    Follows `tf.metrics.mean_cosine_distance`; `weights` broadcast to the reduced shape
    (with `dim` kept as size 1).
    """
    labels, predictions, weights = _errors(labels, predictions, weights)
    radial = math_ops.reduce_sum(math_ops.multiply(predictions, labels), axis=[dim], keepdims=True)
    value, update = mean(radial, weights, None, None, name or "mean_cosine_distance")
    value = math_ops.subtract(1.0, value)
    update = math_ops.subtract(1.0, update)
    return _finish(value, update, metrics_collections, updates_collections)


def percentage_below(
    values: Any,
    threshold: float,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """The fraction of `values` below `threshold` (follows `tf.metrics.percentage_below`).

    Scope default "percentage_below_threshold".
    """
    values = convert_to_tensor(values)
    is_below = math_ops.cast(math_ops.less(values, threshold), dtypes.float32)
    name = name or "percentage_below_threshold"
    return mean(is_below, weights, metrics_collections, updates_collections, name)


# ------------------------------------------------------------------------- counts
def _count_condition(
    values: Tensor, weights: Any, metrics_collections: Any, updates_collections: Any
) -> Pair:
    count = metric_variable([], dtypes.float32, name="count")
    values = math_ops.cast(values, dtypes.float32)
    if weights is not None:
        values = math_ops.multiply(values, broadcast_weights(weights, values))
    value = array_ops.identity(count)
    update = state_ops.assign_add(count, math_ops.reduce_sum(values))
    return _finish(value, update, metrics_collections, updates_collections)


def _bool_pair(labels: Any, predictions: Any, weights: Any) -> tuple[Tensor, Tensor, Any]:
    predictions, labels, weights = remove_squeezable_dimensions(
        math_ops.cast(predictions, dtypes.bool), math_ops.cast(labels, dtypes.bool), weights
    )
    predictions.shape.assert_is_compatible_with(labels.shape)
    return labels, predictions, weights


def _counter(scope: str, label_value: bool, prediction_value: bool, doc: str):
    def metric(
        labels: Any,
        predictions: Any,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: str | None = None,
    ) -> Pair:
        with vs.variable_scope(name, scope, (predictions, labels, weights)):
            labels, predictions, weights = _bool_pair(labels, predictions, weights)
            condition = math_ops.logical_and(
                math_ops.equal(labels, label_value), math_ops.equal(predictions, prediction_value)
            )
            return _count_condition(condition, weights, metrics_collections, updates_collections)

    metric.__name__ = metric.__qualname__ = scope
    metric.__doc__ = (
        f"The (weighted) number of {doc} (follows `tf.metrics.{scope}`).\n\n"
        "Args:\n"
        "  labels: Tensor cast to bool.\n"
        "  predictions: Tensor of the labels' shape, cast to bool.\n"
        "  weights: None or a Tensor broadcastable to `labels`.\n"
        "  metrics_collections: collections receiving the value.\n"
        "  updates_collections: collections receiving the update op.\n"
        f"  name: variable scope (default {scope!r}); the state is `<scope>/count`.\n\n"
        "Returns:\n"
        "  `(count, update_op)`: float32 scalars.\n"
    )
    return metric


true_positives = _counter("true_positives", True, True, "true labels predicted true")
false_positives = _counter("false_positives", False, True, "false labels predicted true")
true_negatives = _counter("true_negatives", False, False, "false labels predicted false")
false_negatives = _counter("false_negatives", True, False, "true labels predicted false")


def _ratio(
    scope: str,
    other: Any,
    labels: Any,
    predictions: Any,
    weights: Any,
    collections: tuple[Any, Any],
    name: str | None,
) -> Pair:
    with vs.variable_scope(name, scope, (predictions, labels, weights)):
        labels, predictions, weights = _bool_pair(labels, predictions, weights)
        tp, tp_update = true_positives(labels, predictions, weights)
        o, o_update = other(labels, predictions, weights)

        def compute(t: Tensor, x: Tensor, op_name: str) -> Tensor:
            return array_ops.where(
                math_ops.greater(t + x, 0.0), math_ops.truediv(t, t + x), 0.0, name=op_name
            )

        value = compute(tp, o, "value")
        update = compute(tp_update, o_update, "update_op")
        return _finish(value, update, *collections)


def precision(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """`tp / (tp + fp)` over bool-cast inputs, 0 when nothing is predicted true.

    Follows `tf.metrics.precision`; the state is `precision/true_positives/count` and
    `precision/false_positives/count`.
    """
    collections = (metrics_collections, updates_collections)
    return _ratio("precision", false_positives, labels, predictions, weights, collections, name)


def recall(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """`tp / (tp + fn)` over bool-cast inputs, 0 when no label is true (`tf.metrics.recall`)."""
    collections = (metrics_collections, updates_collections)
    return _ratio("recall", false_negatives, labels, predictions, weights, collections, name)


# ------------------------------------------------------------------ per-class metrics
def _flat(t: Any) -> Tensor:
    t = convert_to_tensor(t)
    return array_ops.reshape(t, [-1]) if t.shape.ndims != 1 else t


def streaming_confusion_matrix(
    labels: Any, predictions: Any, num_classes: int, weights: Any = None
) -> Pair:
    """`(total_cm, update_op)`: a float64 `[num_classes, num_classes]` local variable
    `total_confusion_matrix` (rows: labels, columns: predictions) and its update."""
    total_cm = metric_variable(
        [num_classes, num_classes], dtypes.float64, name="total_confusion_matrix"
    )
    labels = math_ops.cast(_flat(labels), dtypes.int64)
    predictions = math_ops.cast(_flat(predictions), dtypes.int64)
    if weights is None:
        weights = array_ops.ones_like(labels, dtype=dtypes.float64)
    else:
        weights = math_ops.cast(_flat(weights), dtypes.float64)
    cells = labels * num_classes + predictions
    counts = math_ops.unsorted_segment_sum(weights, cells, num_classes * num_classes)
    current = array_ops.reshape(counts, [num_classes, num_classes])
    return total_cm, state_ops.assign_add(total_cm, current)


def _diag(matrix: Tensor, n: int) -> Tensor:
    eye = constant_op.constant(np.eye(n), dtype=matrix.dtype)
    return math_ops.reduce_sum(matrix * eye, axis=1)


def mean_iou(
    labels: Any,
    predictions: Any,
    num_classes: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """The mean over classes of `tp / (tp + fp + fn)` (follows `tf.metrics.mean_iou`).

    Classes that appear neither in labels nor predictions are left out of the mean.

    Args:
      labels: int Tensor of class ids in `[0, num_classes)`, any shape (flattened).
      predictions: int Tensor of the labels' shape.
      num_classes: Python int.
      weights: None or a Tensor of the labels' shape.
      metrics_collections: collections receiving the value.
      updates_collections: collections receiving the update op.
      name: variable scope (default "mean_iou").

    Returns:
      `(mean_iou, update_op)`: a float64 scalar, and the float64
      `[num_classes, num_classes]` confusion matrix after the update (as TensorFlow).
    """
    with vs.variable_scope(name, "mean_iou", (predictions, labels, weights)):
        predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
        predictions.shape.assert_is_compatible_with(labels.shape)
        total_cm, update = streaming_confusion_matrix(labels, predictions, num_classes, weights)
        sum_rows = math_ops.reduce_sum(total_cm, 0)
        sum_cols = math_ops.reduce_sum(total_cm, 1)
        diag = _diag(total_cm, num_classes)
        denominator = sum_rows + sum_cols - diag
        valid = math_ops.reduce_sum(
            math_ops.cast(math_ops.not_equal(denominator, 0.0), dtypes.float64)
        )
        denominator = array_ops.where(
            math_ops.greater(denominator, 0.0), denominator, array_ops.ones_like(denominator)
        )
        iou = math_ops.truediv(diag, denominator)
        value = array_ops.where(
            math_ops.greater(valid, 0.0),
            math_ops.truediv(math_ops.reduce_sum(iou), math_ops.maximum(valid, 1.0)),
            math_ops.cast(0.0, dtypes.float64),
            name="mean_iou",
        )
        return _finish(value, update, metrics_collections, updates_collections)


def mean_per_class_accuracy(
    labels: Any,
    predictions: Any,
    num_classes: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """The mean over classes of each class's accuracy (`tf.metrics.mean_per_class_accuracy`).

    The state is `mean_accuracy/total` and `mean_accuracy/count`, float32 [num_classes].

    Returns:
      `(mean_accuracy, update_op)`: a float32 scalar, and the float32 [num_classes]
      per-class accuracies after the update (as TensorFlow).
    """
    with vs.variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        labels = math_ops.cast(_flat(labels), dtypes.int64)
        predictions = math_ops.cast(_flat(predictions), dtypes.int64)
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = metric_variable([num_classes], dtypes.float32, name="total")
        count = metric_variable([num_classes], dtypes.float32, name="count")
        ones = array_ops.ones_like(labels, dtype=dtypes.float32)
        is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
        if weights is not None:
            weights = math_ops.cast(_flat(weights), dtypes.float32)
            is_correct = is_correct * weights
            ones = ones * weights
        update_total = state_ops.scatter_add(total, labels, ones)
        update_count = state_ops.scatter_add(count, labels, is_correct)
        per_class = safe_div(count, total, None)
        value = math_ops.reduce_mean(per_class, name="mean_accuracy")
        update = safe_div(update_count, update_total, "update_op")
        return _finish(value, update, metrics_collections, updates_collections)


__all__ = [
    "accuracy",
    "false_negatives",
    "false_positives",
    "mean",
    "mean_absolute_error",
    "mean_cosine_distance",
    "mean_iou",
    "mean_per_class_accuracy",
    "mean_relative_error",
    "mean_squared_error",
    "mean_tensor",
    "percentage_below",
    "precision",
    "recall",
    "root_mean_squared_error",
    "true_negatives",
    "true_positives",
]
