"""Gradients of the sparse ops with respect to their values and dense inputs (follows
TensorFlow's `sparse_grad.py`); indices and shapes get none."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops import array_ops, cwise_ops, reduction_ops
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient
from tensorweave.ops.scatter_nd_ops import gather_nd
from tensorweave.ops.sparse_ops import sparse_reduce_sum, sparse_tensor_dense_matmul


@RegisterGradient("SparseToDense")
def _sparse_to_dense_grad(op: Any, grad: Any) -> Any:
    indices = op.inputs[0]
    if indices.shape.ndims is not None and indices.shape.ndims < 2:
        indices = array_ops.reshape(indices, [-1, 1])
    values_grad = gather_nd(grad, indices)
    if op.inputs[2].shape.ndims == 0:
        values_grad = reduction_ops.reduce_sum(values_grad)
    default_grad = reduction_ops.reduce_sum(grad) - reduction_ops.reduce_sum(values_grad)
    return None, None, values_grad, default_grad


@RegisterGradient("SparseTensorDenseMatMul")
def _sparse_dense_matmul_grad(op: Any, grad: Any) -> Any:
    a_indices, a_values, a_shape, b = op.inputs
    adj_a, adj_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    b_grad = sparse_tensor_dense_matmul(SparseTensor(a_indices, a_values, a_shape), grad,
                                        adjoint_a=not adj_a)
    if adj_b:
        b_grad = array_ops.transpose(b_grad)
    indices = cwise_ops.cast(a_indices, dtypes.int64)
    rows, cols = indices[:, 0], indices[:, 1]
    parts_a = array_ops.gather(grad, cols if adj_a else rows)
    b_rows = array_ops.transpose(b) if adj_b else b
    parts_b = array_ops.gather(b_rows, rows if adj_a else cols)
    return None, reduction_ops.reduce_sum(parts_a * parts_b, axis=1), None, b_grad


@RegisterGradient("SparseTensorDenseAdd")
def _sparse_dense_add_grad(op: Any, grad: Any) -> Any:
    return None, gather_nd(grad, op.inputs[0]), None, grad


@RegisterGradient("SparseReduceSum")
def _sparse_reduce_sum_grad(op: Any, grad: Any) -> Any:
    indices, _, shape, axes = op.inputs
    kept_shape = reduction_ops.reduced_shape(shape, axes)
    scale = shape // cwise_ops.cast(kept_shape, dtypes.int64)
    values_grad = gather_nd(array_ops.reshape(grad, kept_shape), indices // scale)
    return None, values_grad, None, None


@RegisterGradient("SparseReorder")
def _sparse_reorder_grad(op: Any, _: Any, grad: Any) -> Any:
    indices, shape = op.inputs[0], op.inputs[2]
    n = array_ops.shape(indices, out_type=dtypes.int64)[0]
    _, moved = apply_op("SparseReorder", input_indices=indices,
                        input_values=array_ops.range(n), input_shape=shape)
    return None, array_ops.gather(grad, array_ops.invert_permutation(moved)), None


@RegisterGradient("SparseAdd")
def _sparse_add_grad(op: Any, _: Any, grad: Any, __: Any = None) -> Any:
    a_grad, b_grad = apply_op("SparseAddGrad", backprop_val_grad=grad,
                              a_indices=op.inputs[0], b_indices=op.inputs[3],
                              sum_indices=op.outputs[0])
    return None, a_grad, None, None, b_grad, None, None


@RegisterGradient("SparseFillEmptyRows")
def _sparse_fill_empty_rows_grad(op: Any, _: Any, grad: Any, *unused: Any) -> Any:
    d_values, d_default = apply_op("SparseFillEmptyRowsGrad", reverse_index_map=op.outputs[3],
                                   grad_values=grad)
    return None, d_values, None, d_default


@RegisterGradient("SparseSlice")
def _sparse_slice_grad(op: Any, _: Any, grad: Any, __: Any = None) -> Any:
    val_grad = apply_op("SparseSliceGrad", backprop_val_grad=grad, input_indices=op.inputs[0],
                        input_start=op.inputs[3], output_indices=op.outputs[0])
    return None, val_grad, None, None, None


@RegisterGradient("SparseSoftmax")
def _sparse_softmax_grad(op: Any, grad: Any) -> Any:
    indices, _, shape = op.inputs
    out = op.outputs[0]
    product = SparseTensor(indices, out * grad, shape)
    summed = cwise_ops.negative(sparse_reduce_sum(product, [-1], keepdims=True))
    zero_last = array_ops.concat([indices[:, :-1], array_ops.zeros_like(indices[:, -1:])], 1)
    return None, (grad + gather_nd(summed, zero_last)) * out, None


for _op in ("SparseReduceMax", "SparseReduceMaxSparse", "SparseReduceSumSparse",
            "SparseConcat", "SparseSplit", "SparseSparseMaximum", "SparseSparseMinimum",
            "SparseAddGrad", "SparseSliceGrad", "SparseFillEmptyRowsGrad", "SparseReshape"):
    no_gradient(_op)
