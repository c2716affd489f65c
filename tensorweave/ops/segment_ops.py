"""Segment reductions (follows TF 1.x `tf.math.segment_*`, `tf.math.unsorted_segment_*`,
`tf.sparse.segment_*` and `tf.math.bincount`).

Sorted `segment_*` ops reduce the rows of `data` whose `segment_ids` (sorted, >= 0) are
equal; `unsorted_segment_*` take any ids (negative ids are dropped) and `num_segments`.
The mean/sqrt_n unsorted variants are compositions, as in TensorFlow.
"""

from __future__ import annotations

from typing import Any

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, cwise_ops, reduction_ops


def _sorted_segment_reduction(op_type: str, tf_name: str, what: str, empty: int) -> Any:
    """The wrapper of sorted segment reduction `op_type` (`tf.math.<tf_name>`)."""

    def reduction(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
        return apply_op(op_type, data=data, segment_ids=segment_ids, name=name)

    reduction.__name__ = reduction.__qualname__ = tf_name
    reduction.__doc__ = f"""{what} of the rows of `data` per segment (follows `tf.math.{tf_name}`,
    op `{op_type}`).

    Args:
      data: numeric `Tensor` [d0, ...].
      segment_ids: int32/int64 `Tensor` [d0], sorted, values >= 0.
      name: op name.

    Returns:
      `Tensor` [max(segment_ids) + 1, ...] of `data`'s dtype (empty segments: {empty}).

    Raises:
      InvalidArgumentError: at run time, for unsorted or negative ids.
    """
    return reduction


segment_sum = _sorted_segment_reduction("SegmentSum", "segment_sum", "Sums", 0)
segment_mean = _sorted_segment_reduction("SegmentMean", "segment_mean", "Means", 0)
segment_prod = _sorted_segment_reduction("SegmentProd", "segment_prod", "Products", 1)
segment_max = _sorted_segment_reduction("SegmentMax", "segment_max", "Maxima", 0)
segment_min = _sorted_segment_reduction("SegmentMin", "segment_min", "Minima", 0)


def _unsorted(op_type: str, data: Any, segment_ids: Any, num_segments: Any, name: Any):
    return apply_op(
        op_type, data=data, segment_ids=segment_ids, num_segments=num_segments, name=name
    )


def unsorted_segment_max(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None):
    """Maxima per segment; ids in any order, negative ids dropped, empty segments are
    the lowest value of the dtype (follows `tf.math.unsorted_segment_max`).

    Args:
      data: real `Tensor` whose leading dims match `segment_ids`'s shape.
      segment_ids: int32/int64 `Tensor`, values < `num_segments`.
      num_segments: int scalar.
      name: op name.

    Raises:
      InvalidArgumentError: at run time, for ids >= num_segments.
    """
    return _unsorted("UnsortedSegmentMax", data, segment_ids, num_segments, name)


def unsorted_segment_min(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None):
    """Minima per segment; empty segments are the highest value of the dtype (follows
    `tf.math.unsorted_segment_min`). See `unsorted_segment_max`."""
    return _unsorted("UnsortedSegmentMin", data, segment_ids, num_segments, name)


def unsorted_segment_prod(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None):
    """Products per segment; empty segments are 1 (follows `tf.math.unsorted_segment_prod`).
    See `unsorted_segment_max`."""
    return _unsorted("UnsortedSegmentProd", data, segment_ids, num_segments, name)


def _segment_counts(segment_ids: Any, num_segments: Any, dtype: Any, data: Tensor) -> Tensor:
    ones = array_ops.ones_like(segment_ids, dtype=dtype)
    counts = reduction_ops.unsorted_segment_sum(ones, segment_ids, num_segments)
    counts = cwise_ops.maximum(counts, cwise_ops.cast(1, dtype))
    # counts [num_segments] broadcast over data's trailing dims.
    extra = array_ops.size(array_ops.shape(data)) - array_ops.size(array_ops.shape(segment_ids))
    shape = array_ops.concat(
        [array_ops.shape(counts), array_ops.ones(array_ops.expand_dims(extra, 0), dtypes.int32)],
        0,
    )
    return array_ops.reshape(counts, shape)


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None):
    """Means per segment, `sum / max(count, 1)` (follows `tf.math.unsorted_segment_mean`).

    Args:
      data: float `Tensor` whose leading dims match `segment_ids`'s shape.
      segment_ids: int32/int64 `Tensor`.
      num_segments: int scalar.
      name: op name.
    """
    return _unsorted_normalized(
        "UnsortedSegmentMean", lambda counts: counts, data, segment_ids, num_segments, name
    )


def unsorted_segment_sqrt_n(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Tensor:
    """Sums per segment divided by `sqrt(max(count, 1))` (follows
    `tf.math.unsorted_segment_sqrt_n`). See `unsorted_segment_mean`."""
    return _unsorted_normalized(
        "UnsortedSegmentSqrtN", cwise_ops.sqrt, data, segment_ids, num_segments, name
    )


def _unsorted_normalized(
    default_name: str, divisor: Any, data: Any, segment_ids: Any, num_segments: Any, name: Any
) -> Tensor:
    """`unsorted_segment_sum` over `divisor(max(count, 1))` per segment."""
    with graph_mod.name_scope(name, default_name, [data, segment_ids]):
        data = convert_to_tensor(data, name="data")
        total = reduction_ops.unsorted_segment_sum(data, segment_ids, num_segments)
        counts = _segment_counts(segment_ids, num_segments, data.dtype.base_dtype, data)
        return total / divisor(counts)


def _sparse_segment(
    op_type: str, unsorted: Any, data: Any, indices: Any, segment_ids: Any, name: Any,
    num_segments: Any,
) -> Tensor:
    """`op_type`, or `unsorted(gather(data, indices), ...)` when `num_segments` is given (as
    TensorFlow composes it)."""
    if num_segments is not None:
        with graph_mod.name_scope(name, op_type, [data, indices]):
            return unsorted(array_ops.gather(data, indices), segment_ids, num_segments)
    return apply_op(op_type, data=data, indices=indices, segment_ids=segment_ids, name=name)


def sparse_segment_sum(
    data: Any, indices: Any, segment_ids: Any, name: str | None = None, num_segments: Any = None
) -> Tensor:
    """`segment_sum(gather(data, indices), segment_ids)` (follows `tf.sparse.segment_sum`).

    Args:
      data: `Tensor` [d0, ...].
      indices: int `Tensor` [k] of rows of `data`.
      segment_ids: sorted int `Tensor` [k].
      name: op name.
      num_segments: optional int scalar (then the composition with
        `unsorted_segment_sum` is used, as TensorFlow does).
    """
    return _sparse_segment("SparseSegmentSum", reduction_ops.unsorted_segment_sum, data,
                           indices, segment_ids, name, num_segments)


def sparse_segment_mean(
    data: Any, indices: Any, segment_ids: Any, name: str | None = None, num_segments: Any = None
) -> Tensor:
    """Means of `gather(data, indices)` per segment (follows `tf.sparse.segment_mean`)."""
    return _sparse_segment("SparseSegmentMean", unsorted_segment_mean, data, indices,
                           segment_ids, name, num_segments)


def sparse_segment_sqrt_n(
    data: Any, indices: Any, segment_ids: Any, name: str | None = None, num_segments: Any = None
) -> Tensor:
    """Sums of `gather(data, indices)` per segment over sqrt(count) (follows
    `tf.sparse.segment_sqrt_n`)."""
    return _sparse_segment("SparseSegmentSqrtN", unsorted_segment_sqrt_n, data, indices,
                           segment_ids, name, num_segments)


def bincount(
    arr: Any,
    weights: Any = None,
    minlength: Any = None,
    maxlength: Any = None,
    dtype: Any = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """Counts of each value in the int32 `arr` (follows `tf.math.bincount`, op `Bincount`).

    Args:
      arr: int32 `Tensor` of non-negative values.
      weights: optional `Tensor` of `arr`'s shape; bins then sum the weights.
      minlength: lower bound of the output length (default `max(arr) + 1`).
      maxlength: upper bound of the output length.
      dtype: output dtype when `weights` is None.
      name: op name.

    Returns:
      1-D `Tensor` [max(max(arr) + 1, minlength) capped at maxlength].
    """
    with graph_mod.name_scope(name, "bincount", [arr, weights, minlength, maxlength]):
        arr = convert_to_tensor(arr, name="arr", dtype=dtypes.int32)
        nonempty = cwise_ops.cast(cwise_ops.greater(array_ops.size(arr), 0), dtypes.int32)
        size = nonempty * (reduction_ops.reduce_max(arr) + 1)
        if minlength is not None:
            size = cwise_ops.maximum(size, convert_to_tensor(minlength, dtypes.int32))
        if maxlength is not None:
            size = cwise_ops.minimum(size, convert_to_tensor(maxlength, dtypes.int32))
        if weights is None:
            weights = array_ops.zeros([0], dtype=dtypes.as_dtype(dtype))
        else:
            weights = convert_to_tensor(weights, name="weights")
        return apply_op("Bincount", arr=arr, size=size, weights=weights)


__all__ = [
    "bincount",
    "segment_max",
    "segment_mean",
    "segment_min",
    "segment_prod",
    "segment_sum",
    "sparse_segment_mean",
    "sparse_segment_sqrt_n",
    "sparse_segment_sum",
    "unsorted_segment_max",
    "unsorted_segment_mean",
    "unsorted_segment_min",
    "unsorted_segment_prod",
    "unsorted_segment_sqrt_n",
]
