"""`tf.nn.embedding_lookup_sparse`: combined embeddings of sparse id lists (follows TF
1.x `embedding_ops.embedding_lookup_sparse`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.ops import array_ops, cwise_ops
from tensorweave.ops.embedding_ops import embedding_lookup
from tensorweave.ops.segment_ops import (
    segment_sum,
    sparse_segment_mean,
    sparse_segment_sqrt_n,
    sparse_segment_sum,
)


def embedding_lookup_sparse(
    params: Any,
    sp_ids: Any,
    sp_weights: Any,
    partition_strategy: str = "mod",
    name: str | None = None,
    combiner: str | None = None,
    max_norm: Any = None,
) -> Any:
    """One combined embedding per row of `sp_ids` (follows
    `tf.nn.embedding_lookup_sparse`).

    Args:
      params: embedding `Tensor`/variable [vocab, d] or a list of shards.
      sp_ids: int `SparseTensor` [batch, ...]; row `i` lists the ids of example `i`
        (indices in row-major order).
      sp_weights: float `SparseTensor` like `sp_ids`, or None for weights of 1.
      partition_strategy: "mod" or "div", for sharded `params`.
      name: op name.
      combiner: "sum", "mean" (default) or "sqrtn".
      max_norm: clip each embedding to this L2 norm.

    Returns:
      `Tensor` [number of rows, d]; rows without ids are 0.

    Raises:
      ValueError: for an unknown combiner; TypeError for non-sparse ids or weights.
    """
    combiner = combiner or "mean"
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    if not isinstance(sp_ids, SparseTensor | SparseTensorValue):
        raise TypeError("sp_ids must be SparseTensor")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor | SparseTensorValue):
        raise TypeError("sp_weights must be either None or SparseTensor")
    sp_ids = SparseTensor.from_value(sp_ids)
    with graph_mod.name_scope(name, "embedding_lookup_sparse", [sp_ids.values]):
        segment_ids = cwise_ops.cast(sp_ids.indices[:, 0], dtypes.int32)
        ids, idx = array_ops.unique(sp_ids.values)
        embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy,
                                      max_norm=max_norm)
        if sp_weights is None:
            fn = {"sum": sparse_segment_sum, "mean": sparse_segment_mean,
                  "sqrtn": sparse_segment_sqrt_n}[combiner]
            return fn(embeddings, idx, segment_ids)
        weights = cwise_ops.cast(SparseTensor.from_value(sp_weights).values, embeddings.dtype)
        embeddings = array_ops.gather(embeddings, idx) * array_ops.expand_dims(weights, 1)
        total = segment_sum(embeddings, segment_ids)
        if combiner == "sum":
            return total
        if combiner == "mean":
            denom = segment_sum(weights, segment_ids)
        else:
            denom = cwise_ops.sqrt(segment_sum(cwise_ops.square(weights), segment_ids))
        return total / array_ops.expand_dims(denom, 1)


__all__ = ["embedding_lookup_sparse"]
