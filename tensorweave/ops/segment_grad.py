"""Gradients of the segment reductions (follows TensorFlow's `math_grad.py`).

Max/min route the gradient to every element equal to its segment's result, split evenly
between ties; products divide by the element (zeros handled as TensorFlow does: with one
zero in a segment only it gets the product of the others, with more none do).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.ops import array_ops, cwise_ops, reduction_ops
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient
from tensorweave.ops.segment_ops import segment_prod, segment_sum, unsorted_segment_prod


def _trailing_ones(ids: Any, data: Any) -> Any:
    """`ids`'s shape followed by ones up to `data`'s rank (for broadcasting per-row values)."""
    extra = array_ops.rank(data) - array_ops.rank(ids)
    ones = array_ops.ones(array_ops.expand_dims(extra, 0), dtypes.int32)
    return array_ops.concat([array_ops.shape(ids), ones], 0)


@RegisterGradient("SegmentSum")
def _segment_sum_grad(op: Any, grad: Any) -> Any:
    return array_ops.gather(grad, op.inputs[1]), None


@RegisterGradient("SegmentMean")
def _segment_mean_grad(op: Any, grad: Any) -> Any:
    data, ids = op.inputs
    ones = array_ops.fill(_trailing_ones(ids, data), cwise_ops.cast(1, grad.dtype))
    scaled = grad / segment_sum(ones, ids)
    return array_ops.gather(scaled, ids), None


def _segment_min_or_max_grad(op: Any, grad: Any) -> Any:
    data, ids = op.inputs
    is_selected = cwise_ops.equal(data, array_ops.gather(op.outputs[0], ids))
    num_selected = segment_sum(cwise_ops.cast(is_selected, grad.dtype), ids)
    gathered = array_ops.gather(grad / num_selected, ids)
    return array_ops.where(is_selected, gathered, array_ops.zeros_like(data)), None


RegisterGradient("SegmentMax")(_segment_min_or_max_grad)
RegisterGradient("SegmentMin")(_segment_min_or_max_grad)


@RegisterGradient("SegmentProd")
def _segment_prod_grad(op: Any, grad: Any) -> Any:
    data, ids = op.inputs
    is_zero = cwise_ops.equal(data, cwise_ops.cast(0, data.dtype))
    num_zeros = segment_sum(cwise_ops.cast(is_zero, dtypes.int32), ids)
    grad = array_ops.where(
        cwise_ops.greater(num_zeros, 1), array_ops.zeros_like(grad), grad
    )
    safe = array_ops.where(is_zero, array_ops.ones_like(data), data)
    non_zero_prod = segment_prod(safe, ids)
    partial = array_ops.where(
        is_zero,
        array_ops.gather(non_zero_prod, ids),
        array_ops.gather(op.outputs[0], ids) / safe,
    )
    return array_ops.gather(grad, ids) * partial, None


def _gather_drop_negatives(params: Any, ids: Any, clipped: Any = None, positive: Any = None):
    """`gather(params, ids)` with rows of negative ids zeroed (TF's `_GatherDropNegatives`)."""
    if clipped is None:
        clipped = cwise_ops.maximum(ids, array_ops.zeros_like(ids))
    gathered = array_ops.gather(params, clipped)
    if positive is None:
        positive = cwise_ops.greater_equal(ids, array_ops.zeros_like(ids))
        positive = array_ops.reshape(positive, _trailing_ones(positive, gathered))
        positive = cwise_ops.logical_and(
            positive, array_ops.ones_like(gathered, dtype=dtypes.bool)
        )
    return array_ops.where(positive, gathered, array_ops.zeros_like(gathered)), clipped, positive


def _unsorted_min_or_max_grad(op: Any, grad: Any) -> Any:
    data, ids, num = op.inputs
    gathered, clipped, positive = _gather_drop_negatives(op.outputs[0], ids)
    is_selected = cwise_ops.logical_and(cwise_ops.equal(data, gathered), positive)
    num_selected = reduction_ops.unsorted_segment_sum(
        cwise_ops.cast(is_selected, grad.dtype), ids, num
    )
    grads, _, _ = _gather_drop_negatives(grad / num_selected, None, clipped, positive)
    return array_ops.where(is_selected, grads, array_ops.zeros_like(grads)), None, None


RegisterGradient("UnsortedSegmentMax")(_unsorted_min_or_max_grad)
RegisterGradient("UnsortedSegmentMin")(_unsorted_min_or_max_grad)


@RegisterGradient("UnsortedSegmentProd")
def _unsorted_segment_prod_grad(op: Any, grad: Any) -> Any:
    data, ids, num = op.inputs
    is_zero = cwise_ops.equal(data, cwise_ops.cast(0, data.dtype))
    num_zeros = reduction_ops.unsorted_segment_sum(cwise_ops.cast(is_zero, dtypes.int32), ids, num)
    grad = array_ops.where(cwise_ops.greater(num_zeros, 1), array_ops.zeros_like(grad), grad)
    safe = array_ops.where(is_zero, array_ops.ones_like(data), data)
    non_zero_prod = unsorted_segment_prod(safe, ids, num)
    clipped = cwise_ops.maximum(ids, array_ops.zeros_like(ids))
    partial = array_ops.where(
        is_zero,
        array_ops.gather(non_zero_prod, clipped),
        array_ops.gather(op.outputs[0], clipped) / safe,
    )
    gathered, _, _ = _gather_drop_negatives(grad, ids, clipped)
    return gathered * partial, None, None


def _sparse_segment_grad(op: Any, grad: Any, scale: str) -> Any:
    data, indices, ids = op.inputs
    if scale != "sum":
        ones = array_ops.ones_like(ids, dtype=grad.dtype)
        counts = segment_sum(ones, ids)
        if scale == "sqrt":
            counts = cwise_ops.sqrt(counts)
        counts = array_ops.reshape(counts, _trailing_ones(counts, grad))
        grad = grad / counts
    rows = array_ops.gather(array_ops.shape(data), 0)
    dense = reduction_ops.unsorted_segment_sum(array_ops.gather(grad, ids), indices, rows)
    return dense, None, None


RegisterGradient("SparseSegmentSum")(lambda op, g: _sparse_segment_grad(op, g, "sum"))
RegisterGradient("SparseSegmentMean")(lambda op, g: _sparse_segment_grad(op, g, "mean"))
RegisterGradient("SparseSegmentSqrtN")(lambda op, g: _sparse_segment_grad(op, g, "sqrt"))
no_gradient("Bincount")
