"""`tf.contrib.seq2seq`: the sequence loss of TF 1.15's `contrib/seq2seq` (`sequence_loss`).

The decoders, helpers and attention mechanisms of that module are not provided.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, nn_impl


def _check_rank(t: Tensor, rank: int, message: str) -> None:
    if t.shape.ndims != rank:
        raise ValueError(message)


def _mean_over(values: Tensor, weights: Tensor, axis: Any, count_nonzero: bool) -> Tensor:
    """`sum(values, axis) / d`, d = `sum(weights, axis)` or their non-zero count (0 if d is 0)."""
    total = math_ops.reduce_sum(values, axis=axis)
    if count_nonzero:
        size = math_ops.cast(math_ops.count_nonzero(weights, axis=axis), total.dtype)
    else:
        size = math_ops.reduce_sum(weights, axis=axis)
    return math_ops.div_no_nan(total, size)


def sequence_loss(logits: Any, targets: Any, weights: Any,
                  average_across_timesteps: bool = True, average_across_batch: bool = True,
                  sum_over_timesteps: bool = False, sum_over_batch: bool = False,
                  softmax_loss_function: Any = None, name: str | None = None) -> Tensor:
    """Weighted cross-entropy of a sequence of logits (`tf.contrib.seq2seq.sequence_loss`).

    The cross-entropy `c[b, t]` of each target (sparse softmax, or
    `softmax_loss_function(labels=, logits=)` on the flattened `[batch * time]` targets and
    `[batch * time, classes]` logits) is multiplied by `weights[b, t]`, then reduced:
    `average_across_*` divides the sum over that axis by the sum of the weights,
    `sum_over_*` by the number of non-zero weights (a zero divisor gives 0, as
    `div_no_nan`). With both axes averaged (the default) or both summed, all of
    `[batch, time]` is reduced at once.

    Args:
      logits: float Tensor `[batch, time, classes]`.
      targets: int32/int64 Tensor `[batch, time]`, class ids in `[0, classes)`.
      weights: float Tensor `[batch, time]` of `logits`' dtype (e.g. a `sequence_mask`).
      average_across_timesteps: average over the time axis.
      average_across_batch: average over the batch axis.
      sum_over_timesteps: reduce the time axis by the count of non-zero weights.
      sum_over_batch: reduce the batch axis by the count of non-zero weights.
      softmax_loss_function: replaces the sparse softmax cross-entropy.
      name: name scope (default "sequence_loss").

    Returns:
      float Tensor: a scalar when both axes are reduced, `[batch]` or `[time]` when one
      is, otherwise `[batch, time]`.

    Raises:
      ValueError: `logits` is not of rank 3, `targets` or `weights` not of rank 2, or an
        axis is both averaged and summed.
      InvalidArgumentError: (at run time) a target outside `[0, classes)`.
    """
    with graph_mod.name_scope(name, "sequence_loss", [logits, targets, weights]):
        logits = convert_to_tensor(logits, name="logits")
        targets = convert_to_tensor(targets, name="targets")
        weights = convert_to_tensor(weights, name="weights")
        _check_rank(logits, 3, "Logits must be a [batch_size x sequence_length x logits] tensor")
        _check_rank(targets, 2, "Targets must be a [batch_size x sequence_length] tensor")
        _check_rank(weights, 2, "Weights must be a [batch_size x sequence_length] tensor")
        if average_across_timesteps and sum_over_timesteps:
            raise ValueError("average_across_timesteps and sum_over_timesteps cannot be set "
                             "to True at same time.")
        if average_across_batch and sum_over_batch:
            raise ValueError("average_across_batch and sum_over_batch cannot be set to True "
                             "at same time.")
        logits_shape = array_ops.shape(logits)
        flat_logits = array_ops.reshape(logits, [-1, logits_shape[2]])
        flat_targets = array_ops.reshape(targets, [-1])
        loss_fn = softmax_loss_function or nn_impl.sparse_softmax_cross_entropy_with_logits
        crossent = loss_fn(labels=flat_targets, logits=flat_logits)
        crossent = crossent * array_ops.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return _mean_over(crossent, weights, None, count_nonzero=False)
        if sum_over_timesteps and sum_over_batch:
            return _mean_over(crossent, weights, None, count_nonzero=True)
        crossent = array_ops.reshape(crossent, logits_shape[0:2])
        if average_across_timesteps or average_across_batch:
            return _mean_over(crossent, weights, [0] if average_across_batch else [1],
                              count_nonzero=False)
        if sum_over_timesteps or sum_over_batch:
            return _mean_over(crossent, weights, [0] if sum_over_batch else [1],
                              count_nonzero=True)
        return crossent


__all__ = ["sequence_loss"]
