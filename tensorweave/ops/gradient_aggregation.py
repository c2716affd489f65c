"""Summing and densifying gradients: `AggregationMethod` and `IndexedSlices` -> Tensor.

Part of `tf.gradients` (see `gradients_impl`, which re-exports `AggregationMethod`).
Importing this module registers the conversion of `IndexedSlices` to dense Tensors
(follows TF's `_IndexedSlicesToTensor`).
"""

from __future__ import annotations

import collections
import logging
from typing import Any

import numpy as np

from tensorweave.framework import dtypes, tensor_util
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorweave.ops import array_ops, math_ops

# NOTE: the logger keeps the name of `gradients_impl`, where these functions were first written.
_LOG = logging.getLogger("tensorweave.ops.gradients_impl")

# Converting IndexedSlices with at least this many dense elements logs a warning (TF's bound).
_LARGE_SPARSE_NUM_ELEMENTS = 100_000_000


class AggregationMethod:
    """How `gradients()` sums the gradients of a tensor with several consumers.

    Follows `tf.AggregationMethod`.

    `ADD_N` sums all terms with one `AddN` op once they are all ready; `EXPERIMENTAL_TREE`
    adds them pairwise so that terms can be freed earlier. `EXPERIMENTAL_ACCUMULATE_N` is
    accepted and behaves like `EXPERIMENTAL_TREE` (there is no `AccumulateNV2` op).
    """

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


AGGREGATION_METHODS = (
    AggregationMethod.ADD_N,
    AggregationMethod.EXPERIMENTAL_TREE,
    AggregationMethod.EXPERIMENTAL_ACCUMULATE_N,
)


# --------------------------------------------------------------- IndexedSlices -> Tensor
def _indexed_slices_to_tensor(
    value: IndexedSlices, dtype: Any = None, name: str | None = None, as_ref: bool = False
) -> Tensor:
    """Densifies `value` with `UnsortedSegmentSum` (follows TF's `_IndexedSlicesToTensor`).

    Raises:
      ValueError: if `dtype` differs from the slices' dtype, or `dense_shape` is None.
    """
    del as_ref  # A densified IndexedSlices is never a reference.
    if dtype is not None and not dtype.is_compatible_with(value.dtype):
        raise ValueError(
            f"Tensor conversion requested dtype {dtype.name} for IndexedSlices with dtype "
            f"{value.dtype.name}"
        )
    if value.dense_shape is None:
        raise ValueError(
            f"Tensor conversion requested for IndexedSlices without dense_shape: {value}"
        )
    shape_value = tensor_util.constant_value(value.dense_shape)
    if shape_value is None:
        _LOG.warning(
            "Converting sparse IndexedSlices to a dense Tensor of unknown shape. "
            "This may consume a large amount of memory."
        )
        num_segments = array_ops.gather(value.dense_shape, 0)
    else:
        num_elements = int(np.prod(shape_value))
        if num_elements >= _LARGE_SPARSE_NUM_ELEMENTS:
            _LOG.warning(
                "Converting sparse IndexedSlices to a dense Tensor with %d elements. "
                "This may consume a large amount of memory.",
                num_elements,
            )
        num_segments = int(shape_value[0])
    dense = math_ops.unsorted_segment_sum(value.values, value.indices, num_segments, name=name)
    if value.values.shape.ndims != 1:
        # Rows of more than one element: the static shape comes from `dense_shape`.
        dense = array_ops.reshape(dense, value.dense_shape)
    return dense


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor, priority=100)


# -------------------------------------------------------------------- aggregation
def aggregate_gradients(grad_list: list[Any], op: Operation, method: int) -> Any:
    """Sums the gradients received by one output of `op`.

    Follows TF's `_AggregatedGrads`: None if there are none, the one if there is one, an
    `AddN` of dense gradients, a concatenation of `IndexedSlices`, or a dense sum when mixed.

    Args:
      grad_list: the gradients (Tensors, IndexedSlices or None), one per consumer.
      op: the op whose output received them (names the tree-sum scope).
      method: an `AggregationMethod` value.

    Returns:
      The summed gradient (a Tensor or IndexedSlices), or None.

    Raises:
      TypeError: for gradients that are neither Tensors nor IndexedSlices.
    """
    grad_list = [g for g in grad_list if g is not None]
    for g in grad_list:
        if not isinstance(g, Tensor | IndexedSlices):
            raise TypeError(
                f"gradients have to be either all Tensors or all IndexedSlices, got {g!r} for "
                f"an output of '{op.name}'"
            )
    if not grad_list:
        return None
    if len(grad_list) == 1:
        return grad_list[0]
    if all(isinstance(g, IndexedSlices) for g in grad_list):
        return _aggregate_indexed_slices(grad_list)
    dense = [convert_to_tensor(g) if isinstance(g, IndexedSlices) else g for g in grad_list]
    if method == AggregationMethod.ADD_N:
        return _multi_device_add_n(dense)
    return _tree_sum(dense, op)


def _multi_device_add_n(tensors: list[Tensor]) -> Tensor:
    """Sums per device first, colocated with the first term, then across devices."""
    by_device: dict[str, list[Tensor]] = collections.defaultdict(list)
    for t in tensors:
        by_device[t.device or ""].append(t)
    graph = tensors[0].graph
    summands = []
    for device in sorted(by_device):
        terms = by_device[device]
        with graph.colocate_with(terms[0].op, ignore_existing=True):
            summands.append(terms[0] if len(terms) == 1 else math_ops.add_n(terms))
    return summands[0] if len(summands) == 1 else math_ops.add_n(summands)


def _tree_sum(tensors: list[Tensor], op: Operation) -> Tensor:

    with op.graph.name_scope(op.name + "_gradient_sum"):
        total = tensors[0]
        for t in tensors[1:]:
            total = math_ops.add_n([total, t])
    return total


def _flatten_nested_slices(grad: IndexedSlices) -> IndexedSlices:
    """Turns IndexedSlices whose values are IndexedSlices into plain IndexedSlices."""
    if not isinstance(grad.values, IndexedSlices):
        return grad
    inner = _flatten_nested_slices(grad.values)
    return IndexedSlices(
        inner.values, array_ops.gather(grad.indices, inner.indices), grad.dense_shape
    )


def _aggregate_indexed_slices(grads: list[IndexedSlices]) -> IndexedSlices:
    """Concatenates values and indices (TF's `_AggregateIndexedSlicesGradients`).

    Indices are cast to int64 when their types differ.
    """
    grads = [_flatten_nested_slices(g) for g in grads]
    indices = [g.indices for g in grads]
    if len({t.dtype.base_dtype for t in indices}) > 1:
        indices = [math_ops.cast(t, dtypes.int64) for t in indices]
    dense_shape = next((g.dense_shape for g in grads if g.dense_shape is not None), None)
    return IndexedSlices(
        array_ops.concat([g.values for g in grads], 0),
        array_ops.concat(indices, 0),
        dense_shape,
    )
