"""`embedding_lookup`: gathering rows of one or several sharded embedding tensors.

Follows TF 1.x `embedding_ops.embedding_lookup`, with its "mod" and "div" partition
strategies. Each shard's `Gather` is colocated with the shard, so on a cluster only the
looked-up rows of the touched shards travel, and the gradient w.r.t. each shard is an
`IndexedSlices` over the rows looked up in it (the `GatherV2` gradient). The results are
reassembled with `DynamicStitch`.

Deviation from TensorFlow: there is no `DynamicPartition` op here, so the ids of shard `p`
are selected with `Where(equal(assignment, p))` + `Gather`; the positions `Where` returns
are exactly the original indices that `DynamicPartition` would produce.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array_ops, constant_op, math_ops


def _param_list(params: Any) -> list[Any]:
    """`params` as a list of shards.

    Accepts a list/tuple, one tensor/variable, or any iterable of them (such as a
    `PartitionedVariable`).

    Raises:
      ValueError: for None or an empty list.
    """
    if params is None:
        raise ValueError("params must be specified")
    if isinstance(params, list | tuple):
        shards = list(params)
    elif isinstance(params, Tensor | np.ndarray) or hasattr(params, "_as_graph_element"):
        shards = [params]
    elif hasattr(params, "__iter__"):
        shards = list(params)
    else:
        shards = [params]
    if not shards:
        raise ValueError("Need at least one param")
    return [
        p if isinstance(p, Tensor) or hasattr(p, "_as_graph_element") else convert_to_tensor(p)
        for p in shards
    ]


def _clip(x: Tensor, ids: Tensor, max_norm: Any) -> Tensor:
    """Rows of `x` (dimensions after those of `ids`) scaled to an L2 norm <= `max_norm`.

    TensorFlow's `clip_by_norm` over those axes, built inline.
    """
    if max_norm is None:
        return x
    ids_rank, x_rank = ids.shape.ndims, x.shape.ndims
    if ids_rank is None or x_rank is None:
        axes: Any = math_ops.range(array_ops.rank(ids), array_ops.rank(x))
    else:
        axes = list(range(ids_rank, x_rank))
    with graph_mod.name_scope(None, "clip_by_norm", [x, max_norm]):
        dt = x.dtype.base_dtype
        max_norm = convert_to_tensor(max_norm, dtype=dt, name="clip_norm")
        l2sum = math_ops.reduce_sum(math_ops.square(x), axes, keepdims=True)
        positive = math_ops.greater(l2sum, constant_op.constant(0, dtype=dt))
        safe = array_ops.where(positive, l2sum, array_ops.ones_like(l2sum))
        l2norm = array_ops.where(positive, math_ops.sqrt(safe), l2sum)
        scaled = math_ops.multiply(x, max_norm)
        return array_ops.identity(math_ops.divide(scaled, math_ops.maximum(l2norm, max_norm)))


def _div_assignments(params: list[Any], flat_ids: Tensor) -> tuple[Tensor, Tensor]:
    """The "div" strategy: contiguous id ranges, the first `total % n` shards one id longer."""
    n = len(params)
    dims = [(_static_dims(p) or [None])[0] for p in params]
    id_dtype = flat_ids.dtype.base_dtype
    if None not in dims:
        total = constant_op.constant(sum(dims), dtype=id_dtype)
    else:
        sizes = []
        for p, d in zip(params, dims):
            if d is not None:
                sizes.append(constant_op.constant(d, dtype=dtypes.int32))
            else:
                with graph_mod.get_default_graph().colocate_with(p):
                    sizes.append(array_ops.shape(p)[0])
        total = math_ops.cast(math_ops.reduce_sum(array_ops.stack(sizes)), id_dtype)
    per_shard = total // n
    extras = total % n
    assignments = math_ops.maximum(flat_ids // (per_shard + 1), (flat_ids - extras) // per_shard)
    new_ids = array_ops.where(
        assignments < extras, flat_ids % (per_shard + 1), (flat_ids - extras) % per_shard
    )
    return assignments, new_ids


def _static_dims(p: Any) -> list[int | None] | None:
    shape = p.shape
    return None if shape.ndims is None else shape.as_list()


def _element_shapes(params: list[Any]) -> tuple[TensorShape, Any]:
    """The static shape of one embedding row, and the row shape to reshape with.

    The latter is a list when static, else a Tensor computed next to the first shard.
    """
    static = TensorShape(None)
    for p in params:
        dims = _static_dims(p)
        static = static.merge_with(TensorShape(None if dims is None else dims[1:]))
    if static.is_fully_defined():
        return static, static.as_list()
    with graph_mod.get_default_graph().colocate_with(params[0]):
        return static, array_ops.shape(params[0])[1:]


def embedding_lookup(
    params: Any,
    ids: Any,
    partition_strategy: str = "mod",
    name: str | None = None,
    validate_indices: bool = True,
    max_norm: Any = None,
) -> Tensor:
    """Looks up `ids` in a (possibly sharded) embedding table (TF 1.x `embedding_lookup`).

    With several shards, id `i` lives in shard `i % n` at row `i // n` ("mod"), or in
    contiguous ranges where the first `total_rows % n` shards hold one extra id ("div").

    Args:
      params: the table: a Tensor or Variable `T [rows, d_1, ...]`, or a list of shards
        (or any iterable of them, e.g. a `PartitionedVariable`) of equal trailing shape.
      ids: int32/int64 Tensor of any shape, the ids to look up.
      partition_strategy: "mod" or "div" (only used with several shards).
      name: name scope and name of the result (default "embedding_lookup").
      validate_indices: ignored (indices are always validated on CPU).
      max_norm: if not None, rows whose L2 norm exceeds it are scaled down to it.

    Returns:
      `T [*shape(ids), d_1, ...]`.

    Raises:
      ValueError: for empty params or an unknown partition strategy.
      errors.InvalidArgumentError: at run time, for an id outside its shard.
    """
    del validate_indices
    params = _param_list(params)
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}")
    graph = graph_mod.get_default_graph()
    with graph_mod.name_scope(name, "embedding_lookup", [*params, ids]) as scope:
        ids = convert_to_tensor(ids, name="ids")
        n = len(params)
        if n == 1:
            with graph.colocate_with(params[0]):
                result = _clip(array_ops.gather(params[0], ids, name=scope), ids, max_norm)
            return array_ops.identity(result)
        flat_ids = array_ops.reshape(ids, [-1])
        if partition_strategy == "mod":
            assignments, new_ids = flat_ids % n, flat_ids // n
        else:
            assignments, new_ids = _div_assignments(params, flat_ids)
        assignments = math_ops.cast(assignments, dtypes.int32)
        positions, parts = [], []
        for p in range(n):
            where_p = array_ops.reshape(array_ops.where(math_ops.equal(assignments, p)), [-1])
            positions.append(math_ops.cast(where_p, dtypes.int32))
            shard_ids = array_ops.gather(new_ids, where_p)
            with graph.colocate_with(params[p]):
                parts.append(array_ops.gather(params[p], shard_ids))
        ret = array_ops.dynamic_stitch(positions, parts, name=scope)
        static, row_shape = _element_shapes(params)
        ret = array_ops.reshape(ret, array_ops.concat([array_ops.shape(ids), row_shape], 0))
        ret.set_shape(ids.shape.concatenate(static))
        return _clip(ret, ids, max_norm)


__all__ = ["embedding_lookup"]
