"""`tf.nn.nce_loss` and `tf.nn.sampled_softmax_loss` (follows TF 1.x `nn_impl.py`).

Both compute logits for the true classes and a set of sampled classes
(`_compute_sampled_logits`, TensorFlow's construction: one `embedding_lookup` of the
weights and biases for true and sampled ids, log(Q) subtracted, accidental hits pushed to
-FLOAT_MAX), then a sigmoid (NCE) or softmax cross-entropy.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, embedding_ops, math_ops, nn_impl
from tensorweave.ops import candidate_sampling_ops as sampling


def _sum_rows(x: Tensor) -> Tensor:
    """`[n, m] -> [n]`, a matmul with ones (TensorFlow's gradient-friendly row sum)."""
    ones = array_ops.ones(array_ops.stack([array_ops.shape(x)[1], 1]), x.dtype)
    return array_ops.reshape(math_ops.matmul(x, ones), [-1])


def _accidental_hit_mask(
    labels: Tensor, sampled: Tensor, num_true: int, num_sampled: int, dtype: Any
) -> Tensor:
    """`[batch, num_sampled]`: -FLOAT_MAX where a sampled class is a true class, else 0."""
    indices, ids, weights = sampling.compute_accidental_hits(labels, sampled, num_true=num_true)
    flat = math_ops.cast(indices, dtypes.int64) * num_sampled + ids
    batch = array_ops.shape(labels)[0]
    dense = math_ops.unsorted_segment_sum(
        math_ops.cast(weights, dtype), flat, math_ops.cast(batch, dtypes.int64) * num_sampled
    )
    return array_ops.reshape(dense, array_ops.stack([batch, num_sampled]))


def _true_logits(inputs: Tensor, true_w: Tensor, true_b: Tensor, num_true: int) -> Tensor:
    """`[batch, num_true]`: each example's dot products with its true classes' rows."""
    dim = array_ops.shape(true_w)[1:2]
    rows = math_ops.multiply(
        array_ops.expand_dims(inputs, 1),
        array_ops.reshape(true_w, array_ops.concat([[-1, num_true], dim], 0)),
    )
    dots = array_ops.reshape(rows, array_ops.concat([[-1], dim], 0))
    true_logits = array_ops.reshape(_sum_rows(dots), [-1, num_true])
    return true_logits + array_ops.reshape(true_b, [-1, num_true])


def _compute_sampled_logits(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_classes,
    num_true=1,
    sampled_values=None,
    subtract_log_q=True,
    remove_accidental_hits=False,
    partition_strategy="mod",
    name=None,
    seed=None,
):
    """`(logits [batch, num_true + num_sampled], labels)` of TensorFlow's helper."""
    weights = list(weights) if isinstance(weights, list | tuple) else [weights]
    with graph_mod.name_scope(name, "compute_sampled_logits", [*weights, biases, inputs, labels]):
        labels = convert_to_tensor(labels, name="labels")
        if labels.dtype != dtypes.int64:
            labels = math_ops.cast(labels, dtypes.int64)
        inputs = convert_to_tensor(inputs, name="inputs")
        labels_flat = array_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = sampling.log_uniform_candidate_sampler(
                labels, num_true, num_sampled, True, num_classes, seed=seed
            )
        sampled, true_expected, sampled_expected = (
            array_ops.stop_gradient(s) for s in sampled_values
        )
        sampled = math_ops.cast(sampled, dtypes.int64)
        all_ids = array_ops.concat([labels_flat, sampled], 0)
        n_true = array_ops.shape(labels_flat)[0]
        all_w = embedding_ops.embedding_lookup(
            weights, all_ids, partition_strategy=partition_strategy
        )
        all_w = math_ops.cast(all_w, inputs.dtype)
        true_w = array_ops.slice(all_w, [0, 0], array_ops.stack([n_true, -1]))
        sampled_w = array_ops.slice(all_w, array_ops.stack([n_true, 0]), [-1, -1])
        sampled_logits = math_ops.matmul(inputs, sampled_w, transpose_b=True)
        all_b = math_ops.cast(
            embedding_ops.embedding_lookup(biases, all_ids, partition_strategy=partition_strategy),
            inputs.dtype,
        )
        true_b = array_ops.slice(all_b, [0], array_ops.reshape(n_true, [1]))
        sampled_b = array_ops.slice(all_b, array_ops.reshape(n_true, [1]), [-1])
        true_logits = _true_logits(inputs, true_w, true_b, num_true)
        sampled_logits = sampled_logits + sampled_b
        if remove_accidental_hits:
            sampled_logits = sampled_logits + _accidental_hit_mask(
                labels, sampled, num_true, num_sampled, sampled_logits.dtype
            )
        if subtract_log_q:
            true_logits = true_logits - math_ops.log(math_ops.cast(true_expected, inputs.dtype))
            sampled_logits = sampled_logits - math_ops.log(
                math_ops.cast(sampled_expected, inputs.dtype)
            )
        out_logits = array_ops.concat([true_logits, sampled_logits], 1)
        out_labels = array_ops.concat(
            [array_ops.ones_like(true_logits) / num_true, array_ops.zeros_like(sampled_logits)], 1
        )
        return out_logits, out_labels


def nce_loss(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_classes,
    num_true=1,
    sampled_values=None,
    remove_accidental_hits=False,
    partition_strategy="mod",
    name="nce_loss",
):
    """Noise-contrastive estimation loss per example (follows `tf.nn.nce_loss`).

    Args:
      weights: float `[num_classes, dim]` Variable/Tensor, or a list of shards.
      biases: float `[num_classes]`.
      labels: int64 `[batch_size, num_true]` target classes.
      inputs: float `[batch_size, dim]`.
      num_sampled: the number of negative classes per batch.
      num_classes: the number of classes.
      num_true: the number of target classes per example.
      sampled_values: a `(sampled, true_expected, sampled_expected)` tuple from a
        candidate sampler (default: `log_uniform_candidate_sampler`, unique).
      remove_accidental_hits: mask samples that equal a target class.
      partition_strategy: "mod" or "div" for sharded weights.
      name: name scope.

    Returns:
      float `[batch_size]`: the sum over true and sampled classes of the sigmoid
      cross-entropies.
    """
    logits, labels = _compute_sampled_logits(subtract_log_q=True, **locals())
    losses = nn_impl.sigmoid_cross_entropy_with_logits(
        labels=labels, logits=logits, name="sampled_losses"
    )
    return _sum_rows(losses)


def sampled_softmax_loss(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_classes,
    num_true=1,
    sampled_values=None,
    remove_accidental_hits=True,
    partition_strategy="mod",
    name="sampled_softmax_loss",
    seed=None,
):
    """Softmax cross-entropy over the true and sampled classes (`tf.nn.sampled_softmax_loss`).

    Arguments as `nce_loss` (accidental hits are removed by default); `seed` seeds the
    default sampler.

    Returns:
      float `[batch_size]` losses.
    """
    logits, labels = _compute_sampled_logits(subtract_log_q=True, **locals())
    labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return nn_impl.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)


__all__ = ["nce_loss", "sampled_softmax_loss"]
