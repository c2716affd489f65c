"""Streaming top-k metrics (follows TF 1.x `metrics_impl.py`: `precision_at_k`,
`recall_at_k`, `precision_at_top_k`, `recall_at_top_k`, `average_precision_at_k`).

Labels are dense int64 class ids, `[D1, ... DN, num_labels]` or `[D1, ... DN]` (a label
per row); each row's labels are taken as a set (give distinct ids per row). Predictions
are float `[D1, ... DN, num_classes]` logits or probabilities, or for the `*_top_k`
variants the int `[D1, ... DN, k]` indices of the top predictions. Counts are float64
local variables (`true_positive_at_<k>`, `false_positive_at_<k>`, `false_negative_at_<k>`,
with `_class<id>` when `class_id` is given), under a scope named like TensorFlow's
(`precision_at_<k>`, ...).

Deviation: `SparseTensor` labels are not accepted (TensorFlow's set ops are not here).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, nn_ops, state_ops
from tensorweave.ops.metrics_impl import Pair, _finish, broadcast_weights, metric_variable

_F64 = dtypes.float64


def _at_k_name(name: str, k: int | None = None, class_id: int | None = None) -> str:
    name = f"{name}_at_{k}" if k is not None else f"{name}_at_k"
    if class_id is not None:
        name = f"{name}_class{class_id}"
    return name


def _labels(labels: Any, rank: int | None) -> Tensor:
    labels = math_ops.cast(convert_to_tensor(labels), dtypes.int64)
    if hasattr(labels, "dense_shape"):
        raise NotImplementedError("SparseTensor labels in tf.metrics top-k metrics")
    if rank is not None and labels.shape.ndims == rank - 1:
        labels = array_ops.expand_dims(labels, -1)
    return labels


def _member(values: Tensor, pool: Tensor) -> Tensor:
    """Bool `[..., n]`: whether `values[..., i]` occurs in `pool[..., :]` (same row)."""
    hits = math_ops.equal(array_ops.expand_dims(values, -1), array_ops.expand_dims(pool, -2))
    return math_ops.reduce_any(hits, axis=-1)


def _row_counts(idx: Tensor, labels: Tensor, class_id: int | None) -> dict[str, Tensor]:
    """float64 `[D1, ... DN]` true positives, false positives, false negatives per row."""
    if class_id is None:
        in_labels = math_ops.cast(_member(idx, labels), _F64)
        in_idx = math_ops.cast(_member(labels, idx), _F64)
        return {
            "tp": math_ops.reduce_sum(in_labels, -1),
            "fp": math_ops.reduce_sum(1.0 - in_labels, -1),
            "fn": math_ops.reduce_sum(1.0 - in_idx, -1),
        }
    predicted = math_ops.reduce_any(math_ops.equal(idx, class_id), axis=-1)
    labelled = math_ops.reduce_any(math_ops.equal(labels, class_id), axis=-1)

    def both(a: Tensor, b: Tensor) -> Tensor:
        return math_ops.cast(math_ops.logical_and(a, b), _F64)

    return {
        "tp": both(predicted, labelled),
        "fp": both(predicted, math_ops.logical_not(labelled)),
        "fn": both(labelled, math_ops.logical_not(predicted)),
    }


_VAR_NAMES = {"tp": "true_positive", "fp": "false_positive", "fn": "false_negative"}


def _streaming(key: str, rows: Tensor, k: int, class_id: int | None, weights: Any) -> Pair:
    if weights is not None:
        rows = rows * math_ops.cast(broadcast_weights(weights, rows), _F64)
    var = metric_variable([], _F64, name=_at_k_name(_VAR_NAMES[key], k, class_id))
    return var, state_ops.assign_add(var, math_ops.reduce_sum(rows))


def _top_k_ratio(
    kind: str,
    labels: Any,
    predictions_idx: Any,
    k: int | None,
    class_id: int | None,
    weights: Any,
    collections: tuple[Any, Any],
    name: str | None,
) -> Pair:
    other = "fp" if kind == "precision" else "fn"
    predictions_idx = math_ops.cast(convert_to_tensor(predictions_idx), dtypes.int64)
    default = _at_k_name(kind, k, class_id)
    with graph_mod.name_scope(name, default, (predictions_idx, labels, weights)) as scope:
        labels = _labels(labels, predictions_idx.shape.ndims)
        rows = _row_counts(predictions_idx, labels, class_id)
        tp, tp_update = _streaming("tp", rows["tp"], k, class_id, weights)
        o, o_update = _streaming(other, rows[other], k, class_id, weights)
        value = math_ops.truediv(tp, math_ops.add(tp, o), name=scope)
        update = math_ops.truediv(tp_update, math_ops.add(tp_update, o_update), name="update")
        return _finish(value, update, *collections)


def _top_k_indices(predictions: Any, k: int) -> Tensor:
    _, idx = nn_ops.top_k(predictions, k)
    return math_ops.cast(idx, dtypes.int64)


def precision_at_top_k(
    labels: Any,
    predictions_idx: Any,
    k: int | None = None,
    class_id: int | None = None,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """Precision of the given top-k class indices (follows `tf.metrics.precision_at_top_k`).

    Args:
      labels: int64 `[D1, ... DN, num_labels]` or `[D1, ... DN]` class ids.
      predictions_idx: int `[D1, ... DN, k]`, the predicted class ids.
      k: the number of predictions per row (default: the last dimension of
        `predictions_idx`).
      class_id: count only this class (None: all).
      weights: None or a Tensor broadcastable to `[D1, ... DN]`.
      metrics_collections: collections receiving the value.
      updates_collections: collections receiving the update op.
      name: name scope (default `precision_at_<k>[_class<id>]`).

    Returns:
      `(precision, update_op)`: float64 scalars, NaN while nothing is counted (as TF).
    """
    collections = (metrics_collections, updates_collections)
    return _top_k_ratio(
        "precision", labels, predictions_idx, k, class_id, weights, collections, name
    )


def recall_at_top_k(
    labels: Any,
    predictions_idx: Any,
    k: int | None = None,
    class_id: int | None = None,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """Recall of the given top-k class indices (follows `tf.metrics.recall_at_top_k`).

    Arguments as `precision_at_top_k` (scope `recall_at_<k>[_class<id>]`); labels outside
    the predicted classes always count as false negatives.
    """
    collections = (metrics_collections, updates_collections)
    return _top_k_ratio("recall", labels, predictions_idx, k, class_id, weights, collections, name)


def precision_at_k(
    labels: Any,
    predictions: Any,
    k: int,
    class_id: int | None = None,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """Precision of the `k` highest `predictions` per row (follows `tf.metrics.precision_at_k`).

    `predictions`: float `[D1, ... DN, num_classes]`; other arguments as
    `precision_at_top_k`.
    """
    idx = _top_k_indices(predictions, k)
    return precision_at_top_k(
        labels, idx, k, class_id, weights, metrics_collections, updates_collections, name
    )


def recall_at_k(
    labels: Any,
    predictions: Any,
    k: int,
    class_id: int | None = None,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """Recall of the `k` highest `predictions` per row (follows `tf.metrics.recall_at_k`)."""
    idx = _top_k_indices(predictions, k)
    return recall_at_top_k(
        labels, idx, k, class_id, weights, metrics_collections, updates_collections, name
    )


def sparse_precision_at_k(
    labels: Any,
    predictions: Any,
    k: int,
    class_id: int | None = None,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """The deprecated name of `precision_at_k` (`tf.metrics.sparse_precision_at_k`)."""
    return precision_at_k(
        labels, predictions, k, class_id, weights, metrics_collections, updates_collections, name
    )


def _average_precision_rows(idx: Tensor, labels: Tensor, k: int) -> Tensor:
    """float64 `[D1, ... DN]`: each row's average precision of its top-k indices."""
    relevant = math_ops.cast(_member(idx, labels), _F64)
    ranks = math_ops.cast(math_ops.cumsum(array_ops.ones_like(relevant), axis=-1), _F64)
    precision = math_ops.truediv(math_ops.cumsum(relevant, axis=-1), ranks)
    num_labels = labels.shape.as_list()[-1]
    if num_labels is None:
        num_labels = array_ops.shape(labels)[-1]
    num_relevant = math_ops.cast(math_ops.minimum(num_labels, k), _F64)
    return math_ops.truediv(math_ops.reduce_sum(relevant * precision, -1), num_relevant)


def average_precision_at_k(
    labels: Any,
    predictions: Any,
    k: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """Mean average precision of the top `k` predictions (`tf.metrics.average_precision_at_k`).

    A row's AP sums the precision at each rank holding a label, divided by
    `min(k, num_labels)`. The state is float64 `<scope>/total` and `<scope>/max` (scope
    default `average_precision_at_<k>`).

    Raises:
      ValueError: if `k < 1`.
    """
    if k < 1:
        raise ValueError(f"Invalid k={k}.")
    with graph_mod.name_scope(name, _at_k_name("average_precision", k), (predictions, labels)):
        idx = _top_k_indices(predictions, k)
        labels = _labels(labels, idx.shape.ndims)
        ap = _average_precision_rows(idx, labels, k)
        if weights is not None:
            w = math_ops.cast(broadcast_weights(weights, ap), _F64)
            batch_max, batch_total = math_ops.reduce_sum(w), math_ops.reduce_sum(ap * w)
        else:
            batch_max = math_ops.cast(array_ops.size(ap), _F64)
            batch_total = math_ops.reduce_sum(ap)
        total = metric_variable([], _F64, name="total")
        maximum = metric_variable([], _F64, name="max")
        total_update = state_ops.assign_add(total, batch_total)
        max_update = state_ops.assign_add(maximum, batch_max)
        value = math_ops.div_no_nan(total, maximum, name="mean")
        update = math_ops.div_no_nan(total_update, max_update, name="update")
        return _finish(value, update, metrics_collections, updates_collections)


def sparse_average_precision_at_k(
    labels: Any,
    predictions: Any,
    k: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> Pair:
    """The deprecated name of `average_precision_at_k`."""
    return average_precision_at_k(
        labels, predictions, k, weights, metrics_collections, updates_collections, name
    )


__all__ = [
    "average_precision_at_k",
    "precision_at_k",
    "precision_at_top_k",
    "recall_at_k",
    "recall_at_top_k",
    "sparse_average_precision_at_k",
    "sparse_precision_at_k",
]
