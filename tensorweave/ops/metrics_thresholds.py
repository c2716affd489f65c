"""Streaming metrics over decision thresholds (follows TF 1.x `metrics_impl.py`).

A prediction in `[0, 1]` counts as positive at threshold `t` when it is greater than `t`.
The confusion counts per threshold are float32 local variables `true_positives`,
`false_negatives`, `true_negatives`, `false_positives` of shape `[num_thresholds]` under
the metric's variable scope. AUC, precision/recall at thresholds and
sensitivity/specificity are computed from them as TensorFlow does.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.ops import array_ops, constant_op, math_ops, state_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.metrics_impl import (
    Pair,
    _finish,
    broadcast_weights,
    metric_variable,
    remove_squeezable_dimensions,
)

_ALL = ("tp", "fn", "tn", "fp")
_NAMES = {
    "tp": "true_positives",
    "fn": "false_negatives",
    "tn": "true_negatives",
    "fp": "false_positives",
}
_KEPSILON = 1e-7


def confusion_matrix_at_thresholds(
    labels: Any,
    predictions: Any,
    thresholds: list[float],
    weights: Any = None,
    includes: tuple[str, ...] = _ALL,
) -> tuple[dict[str, Any], dict[str, Tensor]]:
    """`(values, update_ops)`: per-threshold counts keyed "tp", "fn", "tn", "fp".

    Raises:
      ValueError: for an unknown key in `includes`.
    """
    for key in includes:
        if key not in _ALL:
            raise ValueError(f"Invalid key: {key}")
    predictions = math_ops.cast(predictions, dtypes.float32)
    predictions, labels, weights = remove_squeezable_dimensions(
        predictions, math_ops.cast(labels, dtypes.bool), weights
    )
    n = len(thresholds)
    preds_2d = array_ops.reshape(predictions, [1, -1])
    labels_2d = array_ops.reshape(labels, [1, -1])
    thresh = array_ops.reshape(
        constant_op.constant([float(t) for t in thresholds], dtype=dtypes.float32), [n, 1]
    )
    pred_pos = math_ops.greater(preds_2d, thresh)
    label_pos = math_ops.logical_and(labels_2d, math_ops.greater(thresh, -2.0))
    cases = {
        "tp": (label_pos, pred_pos),
        "fn": (label_pos, math_ops.logical_not(pred_pos)),
        "tn": (math_ops.logical_not(label_pos), math_ops.logical_not(pred_pos)),
        "fp": (math_ops.logical_not(label_pos), pred_pos),
    }
    weights_2d = None
    if weights is not None:
        weights_2d = array_ops.reshape(broadcast_weights(weights, predictions), [1, -1])
    values: dict[str, Any] = {}
    updates: dict[str, Tensor] = {}
    for key in _ALL:
        if key not in includes:
            continue
        var = metric_variable([n], dtypes.float32, name=_NAMES[key])
        hit = math_ops.cast(math_ops.logical_and(*cases[key]), dtypes.float32)
        if weights_2d is not None:
            hit = hit * weights_2d
        updates[key] = state_ops.assign_add(var, math_ops.reduce_sum(hit, 1))
        values[key] = var
    return values, updates


def _default_thresholds(num_thresholds: int) -> list[float]:
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - _KEPSILON, *inner, 1.0 + _KEPSILON]


def _interpolate_pr_auc(tp: Tensor, fp: Tensor, fn: Tensor, n: int) -> Tensor:
    """Davis & Goadrich's interpolated PR AUC (TF's `careful_interpolation`)."""
    dtp = tp[: n - 1] - tp[1:]
    p = tp + fp
    slope = math_ops.div_no_nan(dtp, math_ops.maximum(p[: n - 1] - p[1:], 0.0))
    intercept = tp[1:] - slope * p[1:]
    both = math_ops.logical_and(math_ops.greater(p[: n - 1], 0.0), math_ops.greater(p[1:], 0.0))
    ratio = array_ops.where(
        both,
        math_ops.div_no_nan(p[: n - 1], math_ops.maximum(p[1:], 0.0)),
        array_ops.ones_like(p[1:]),
    )
    increments = math_ops.div_no_nan(
        slope * (dtp + intercept * math_ops.log(ratio)), math_ops.maximum(tp[1:] + fn[1:], 0.0)
    )
    return math_ops.reduce_sum(increments, name="interpolate_pr_auc")


def _auc_from_counts(counts: dict[str, Tensor], n: int, curve: str, summation: str, name: str):
    tp, fn, tn, fp = (counts[k] for k in _ALL)
    if curve == "PR" and summation == "careful_interpolation":
        return _interpolate_pr_auc(tp, fp, fn, n)
    epsilon = 1.0e-6
    rec = math_ops.truediv(tp + epsilon, tp + fn + epsilon)
    if curve == "ROC":
        x, y = math_ops.truediv(fp, fp + tn + epsilon), rec
    else:
        x, y = rec, math_ops.truediv(tp + epsilon, tp + fp + epsilon)
    widths = x[: n - 1] - x[1:]
    if summation == "minoring":
        heights = math_ops.minimum(y[: n - 1], y[1:])
    elif summation == "majoring":
        heights = math_ops.maximum(y[: n - 1], y[1:])
    else:
        heights = (y[: n - 1] + y[1:]) / 2.0
    return math_ops.reduce_sum(widths * heights, name=name)


def auc(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    curve: str = "ROC",
    name: str | None = None,
    summation_method: str = "trapezoidal",
    thresholds: Any = None,
) -> Pair:
    """The area under the ROC or PR curve, by a Riemann sum over thresholds (`tf.metrics.auc`).

    Args:
      labels: Tensor cast to bool.
      predictions: float Tensor in [0, 1] of the labels' shape.
      weights: None or a Tensor broadcastable to `labels`.
      num_thresholds: the number of thresholds, evenly spaced on [0, 1] (the first one
        just below 0, the last just above 1).
      metrics_collections: collections receiving the value.
      updates_collections: collections receiving the update op.
      curve: "ROC" or "PR".
      name: variable scope (default "auc").
      summation_method: "trapezoidal", "careful_interpolation" (PR only differs),
        "minoring" or "majoring".
      thresholds: an explicit list of thresholds (overrides `num_thresholds`).

    Returns:
      `(auc, update_op)`: float32 scalars.

    Raises:
      ValueError: for an unknown `curve` or `summation_method`.
    """
    if curve not in ("ROC", "PR"):
        raise ValueError(f"curve must be either ROC or PR, {curve} unknown")
    if summation_method not in ("trapezoidal", "careful_interpolation", "minoring", "majoring"):
        raise ValueError(f"Invalid summation_method: {summation_method}")
    with vs.variable_scope(name, "auc", (labels, predictions, weights)):
        if thresholds is not None:
            values = sorted(float(t) for t in thresholds)
            num_thresholds = len(values) + 2
            points = [0.0 - _KEPSILON, *values, 1.0 + _KEPSILON]
        else:
            points = _default_thresholds(num_thresholds)
        counts, updates = confusion_matrix_at_thresholds(labels, predictions, points, weights)
        value = _auc_from_counts(counts, num_thresholds, curve, summation_method, "value")
        update = _auc_from_counts(updates, num_thresholds, curve, summation_method, "update_op")
        return _finish(value, update, metrics_collections, updates_collections)


def _at_thresholds(key: str):
    scope = _NAMES[key]

    def metric(
        labels: Any,
        predictions: Any,
        thresholds: list[float],
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: str | None = None,
    ) -> Pair:
        with vs.variable_scope(name, scope, (predictions, labels, weights)):
            values, updates = confusion_matrix_at_thresholds(
                labels, predictions, thresholds, weights, includes=(key,)
            )
            return _finish(values[key], updates[key], metrics_collections, updates_collections)

    metric.__name__ = metric.__qualname__ = f"{scope}_at_thresholds"
    metric.__doc__ = (
        f"The (weighted) {scope.replace('_', ' ')} at each threshold "
        f"(follows `tf.metrics.{scope}_at_thresholds`).\n\n"
        "Returns `(counts, update_op)`: float32 [len(thresholds)]; the state is\n"
        f"`{scope}/{scope}` (scope default {scope!r}).\n"
    )
    return metric


true_positives_at_thresholds = _at_thresholds("tp")
false_negatives_at_thresholds = _at_thresholds("fn")
true_negatives_at_thresholds = _at_thresholds("tn")
false_positives_at_thresholds = _at_thresholds("fp")


def _ratio_at_thresholds(
    other: str, scope: str, labels, predictions, thresholds, weights, collections, name
) -> Pair:
    with vs.variable_scope(name, scope, (predictions, labels, weights)):
        values, updates = confusion_matrix_at_thresholds(
            labels, predictions, thresholds, weights, includes=("tp", other)
        )
        prefix = scope.split("_at_")[0]

        def compute(counts: dict[str, Tensor], op_name: str) -> Tensor:
            tp = counts["tp"]
            return math_ops.truediv(tp, _KEPSILON + tp + counts[other], name=f"{prefix}_{op_name}")

        return _finish(compute(values, "value"), compute(updates, "update_op"), *collections)


def precision_at_thresholds(
    labels: Any,
    predictions: Any,
    thresholds: list[float],
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """`tp / (tp + fp + 1e-7)` at each threshold (`tf.metrics.precision_at_thresholds`).

    Returns `(precision, update_op)`: float32 [len(thresholds)].
    """
    collections = (metrics_collections, updates_collections)
    return _ratio_at_thresholds(
        "fp", "precision_at_thresholds", labels, predictions, thresholds, weights, collections,
        name,
    )  # fmt: skip


def recall_at_thresholds(
    labels: Any,
    predictions: Any,
    thresholds: list[float],
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """`tp / (tp + fn + 1e-7)` at each threshold (`tf.metrics.recall_at_thresholds`).

    Returns `(recall, update_op)`: float32 [len(thresholds)].
    """
    collections = (metrics_collections, updates_collections)
    return _ratio_at_thresholds(
        "fn", "recall_at_thresholds", labels, predictions, thresholds, weights, collections, name
    )


def _at_threshold_metric(
    default_name: str, compute: Any, labels: Any, predictions: Any, weights: Any,
    num_thresholds: int, collections: tuple, name: str | None,
) -> Pair:
    """`compute(counts, op_name)` on the confusion counts at `num_thresholds` thresholds:
    the value from the accumulated counts, the update op from the updated ones."""
    with vs.variable_scope(name, default_name, (predictions, labels, weights)):
        points = _default_thresholds(num_thresholds)
        values, updates = confusion_matrix_at_thresholds(labels, predictions, points, weights)
        value, update = compute(values, "value"), compute(updates, "update_op")
        return _finish(value, update, *collections)


def _check_rate(name: str, value: float) -> None:
    if value < 0 or value > 1:
        raise ValueError(f"`{name}` must be in the range [0, 1]. Currently, `{name}` got {value}.")


def sensitivity_at_specificity(
    labels: Any,
    predictions: Any,
    specificity: float,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """The sensitivity at the threshold whose specificity is closest to `specificity`.

    Follows `tf.metrics.sensitivity_at_specificity` (the first closest threshold wins).

    Raises:
      ValueError: if `specificity` is outside [0, 1].
    """
    _check_rate("specificity", specificity)

    def compute(c: dict[str, Tensor], op_name: str) -> Tensor:
        tp, fn, tn, fp = (c[k] for k in _ALL)
        specificities = math_ops.truediv(tn, tn + fp + _KEPSILON)
        index = math_ops.argmin(math_ops.abs(specificities - specificity), 0)
        index = math_ops.cast(index, dtypes.int32)
        tp_i, fn_i = array_ops.gather(tp, index), array_ops.gather(fn, index)
        return math_ops.truediv(tp_i, tp_i + fn_i + _KEPSILON, name=op_name)

    return _at_threshold_metric(
        "sensitivity_at_specificity", compute, labels, predictions, weights, num_thresholds,
        (metrics_collections, updates_collections), name,
    )


def specificity_at_sensitivity(
    labels: Any,
    predictions: Any,
    sensitivity: float,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """The specificity at the threshold whose sensitivity is closest to `sensitivity`.

    Follows `tf.metrics.specificity_at_sensitivity` (the last closest threshold wins).

    Raises:
      ValueError: if `sensitivity` is outside [0, 1].
    """
    _check_rate("sensitivity", sensitivity)

    def compute(c: dict[str, Tensor], op_name: str) -> Tensor:
        tp, fn, tn, fp = (c[k] for k in _ALL)
        distance = math_ops.abs(math_ops.truediv(tp, tp + fn + _KEPSILON) - sensitivity)
        at_min = math_ops.cast(
            math_ops.equal(distance, math_ops.reduce_min(distance)), dtypes.int64
        )
        index = math_ops.cast(math_ops.argmax(math_ops.cumsum(at_min), 0), dtypes.int32)
        tn_i, fp_i = array_ops.gather(tn, index), array_ops.gather(fp, index)
        return math_ops.truediv(tn_i, tn_i + fp_i + _KEPSILON, name=op_name)

    return _at_threshold_metric(
        "specificity_at_sensitivity", compute, labels, predictions, weights, num_thresholds,
        (metrics_collections, updates_collections), name,
    )


__all__ = [
    "auc",
    "false_negatives_at_thresholds",
    "false_positives_at_thresholds",
    "precision_at_thresholds",
    "recall_at_thresholds",
    "sensitivity_at_specificity",
    "specificity_at_sensitivity",
    "true_negatives_at_thresholds",
    "true_positives_at_thresholds",
]
