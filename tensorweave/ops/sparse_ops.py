"""Sparse tensor ops (follows TF 1.x `tf.sparse.*` and the `tf.sparse_*` names).

Every function takes `SparseTensor`s (or `SparseTensorValue`s) and returns
`SparseTensor`s or dense `Tensor`s; the ops see the three component tensors.
"""

from __future__ import annotations

from typing import Any

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array_ops, cwise_ops, reduction_ops
from tensorweave.ops.array_ops_more import setdiff1d
from tensorweave.ops.scatter_nd_ops import gather_nd

SparseTensorValue = SparseTensorValue  # noqa: PLW0127  (re-exported)


def _sp(x: Any) -> SparseTensor:
    if isinstance(x, SparseTensor | SparseTensorValue):
        return SparseTensor.from_value(x)
    raise TypeError(f"Input must be a SparseTensor, got {type(x).__name__}")


def sparse_placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> SparseTensor:
    """A `SparseTensor` of three placeholders, fed a `SparseTensorValue` (follows
    `tf.sparse.placeholder`). `shape`: the dense shape if fully known (then
    `dense_shape` is a constant-defaulted placeholder), else its rank is used."""
    with graph_mod.name_scope(name, "SparseTensor", []) as scope:
        shape_t = TensorShape(shape) if shape is not None else TensorShape(None)
        rank = shape_t.ndims
        if shape_t.is_fully_defined():
            dense_shape = array_ops.placeholder_with_default(
                convert_to_tensor(shape_t.as_list(), dtype=dtypes.int64), [rank],
                name="shape")
        else:
            dense_shape = array_ops.placeholder(dtypes.int64, [rank], name="shape")
        values = array_ops.placeholder(dtype, [None], name="values")
        indices = array_ops.placeholder(dtypes.int64, [None, rank], name="indices")
        del scope
        return SparseTensor(indices, values, dense_shape)


def sparse_to_dense(sparse_indices: Any, output_shape: Any, sparse_values: Any,
                    default_value: Any = 0, validate_indices: bool = True,
                    name: str | None = None) -> Tensor:
    """A dense tensor with `sparse_values` at `sparse_indices` (op `SparseToDense`)."""
    values = convert_to_tensor(sparse_values, name="sparse_values")
    return apply_op(
        "SparseToDense", sparse_indices=sparse_indices, output_shape=output_shape,
        sparse_values=values, default_value=convert_to_tensor(default_value, values.dtype),
        validate_indices=validate_indices, name=name,
    )


def sparse_tensor_to_dense(sp_input: Any, default_value: Any = None,
                           validate_indices: bool = True, name: str | None = None) -> Tensor:
    """The dense tensor of `sp_input`, missing entries `default_value` (default 0)
    (follows `tf.sparse.to_dense`)."""
    sp = _sp(sp_input)
    default = 0 if default_value is None else default_value
    if sp.dtype == dtypes.string and default_value is None:
        default = ""
    return sparse_to_dense(sp.indices, sp.dense_shape, sp.values, default,
                           validate_indices=validate_indices, name=name)


def from_dense(tensor: Any, name: str | None = None) -> SparseTensor:
    """The non-zero entries of a dense tensor as a `SparseTensor` (`tf.sparse.from_dense`)."""
    with graph_mod.name_scope(name, "dense_to_sparse", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        zero = array_ops.zeros([], tensor.dtype)
        indices = array_ops.where(cwise_ops.not_equal(tensor, zero))
        values = gather_nd(tensor, indices)
        shape = array_ops.shape(tensor, out_type=dtypes.int64)
        return SparseTensor(indices, values, shape)


def sparse_tensor_dense_matmul(sp_a: Any, b: Any, adjoint_a: bool = False,
                               adjoint_b: bool = False, name: str | None = None) -> Tensor:
    """`sp_a @ b` for a rank-2 `SparseTensor` and a dense matrix (op
    `SparseTensorDenseMatMul`)."""
    sp = _sp(sp_a)
    return apply_op("SparseTensorDenseMatMul", a_indices=sp.indices, a_values=sp.values,
                    a_shape=sp.dense_shape, b=b, adjoint_a=adjoint_a, adjoint_b=adjoint_b,
                    name=name)


def sparse_reduce_sum(sp_input: Any, axis: Any = None, keepdims: Any = None,
                      reduction_axes: Any = None, keep_dims: Any = None,
                      name: str | None = None) -> Tensor:
    """Dense sums of `sp_input` over `axis` (all axes by default) (op `SparseReduceSum`)."""
    return _sparse_reduce("SparseReduceSum", sp_input, axis, keepdims, reduction_axes,
                          keep_dims, name)


def sparse_reduce_max(sp_input: Any, axis: Any = None, keepdims: Any = None,
                      reduction_axes: Any = None, keep_dims: Any = None,
                      name: str | None = None) -> Tensor:
    """Dense maxima of the present entries over `axis`; groups with no entry give 0
    (op `SparseReduceMax`)."""
    return _sparse_reduce("SparseReduceMax", sp_input, axis, keepdims, reduction_axes,
                          keep_dims, name)


def _axes(sp: SparseTensor, axis: Any, reduction_axes: Any) -> Any:
    axis = axis if axis is not None else reduction_axes
    if axis is None:
        return array_ops.range(array_ops.size(sp.dense_shape))
    return axis


def _sparse_reduce(op_type: str, sp_input: Any, axis: Any, keepdims: Any, reduction_axes: Any,
                   keep_dims: Any, name: Any) -> Tensor:
    sp = _sp(sp_input)
    keep = bool(keepdims if keepdims is not None else keep_dims)
    return apply_op(op_type, input_indices=sp.indices, input_values=sp.values,
                    input_shape=sp.dense_shape, reduction_axes=_axes(sp, axis, reduction_axes),
                    keep_dims=keep, name=name)


def sparse_reduce_sum_sparse(sp_input: Any, axis: Any = None, keepdims: Any = None,
                             reduction_axes: Any = None, keep_dims: Any = None,
                             name: str | None = None) -> SparseTensor:
    """Sums over `axis` as a `SparseTensor` (op `SparseReduceSumSparse`)."""
    return _sparse_reduce_sparse("SparseReduceSumSparse", sp_input, axis, keepdims,
                                 reduction_axes, keep_dims, name)


def sparse_reduce_max_sparse(sp_input: Any, axis: Any = None, keepdims: Any = None,
                             reduction_axes: Any = None, keep_dims: Any = None,
                             name: str | None = None) -> SparseTensor:
    """Maxima over `axis` as a `SparseTensor` (op `SparseReduceMaxSparse`)."""
    return _sparse_reduce_sparse("SparseReduceMaxSparse", sp_input, axis, keepdims,
                                 reduction_axes, keep_dims, name)


def _sparse_reduce_sparse(op_type: str, sp_input: Any, axis: Any, keepdims: Any,
                          reduction_axes: Any, keep_dims: Any, name: Any) -> SparseTensor:
    sp = _sp(sp_input)
    keep = bool(keepdims if keepdims is not None else keep_dims)
    out = apply_op(op_type, input_indices=sp.indices, input_values=sp.values,
                   input_shape=sp.dense_shape, reduction_axes=_axes(sp, axis, reduction_axes),
                   keep_dims=keep, name=name)
    return SparseTensor(*out)


def sparse_reshape(sp_input: Any, shape: Any, name: str | None = None) -> SparseTensor:
    """The same entries in a dense shape `shape` (one dimension may be -1) (op
    `SparseReshape`)."""
    sp = _sp(sp_input)
    indices, dense_shape = apply_op(
        "SparseReshape", input_indices=sp.indices, input_shape=sp.dense_shape,
        new_shape=convert_to_tensor(shape, dtype=dtypes.int64), name=name)
    return SparseTensor(indices, sp.values, dense_shape)


def sparse_concat(axis: Any, sp_inputs: Any, name: str | None = None,
                  expand_nonconcat_dim: bool = False, concat_dim: Any = None,
                  expand_nonconcat_dims: bool = False) -> SparseTensor:
    """Concatenation of `SparseTensor`s along `axis` (op `SparseConcat`).

    Raises:
      NotImplementedError: for `expand_nonconcat_dim(s)=True`.
    """
    if expand_nonconcat_dim or expand_nonconcat_dims:
        raise NotImplementedError("tf.sparse.concat with expand_nonconcat_dims=True")
    axis = axis if axis is not None else concat_dim
    sps = [_sp(s) for s in sp_inputs]
    out = apply_op("SparseConcat", indices=[s.indices for s in sps],
                   values=[s.values for s in sps], shapes=[s.dense_shape for s in sps],
                   concat_dim=int(axis), name=name)
    return SparseTensor(*out)


def sparse_add(a: Any, b: Any, threshold: Any = 0, thresh: Any = None,
               name: str | None = None) -> Any:
    """`a + b`: a `SparseTensor` for two sparse inputs (sums below `threshold` in
    magnitude dropped; op `SparseAdd`), a dense `Tensor` when one is dense (op
    `SparseTensorDenseAdd`) (follows `tf.sparse.add`)."""
    thresh = thresh if thresh is not None else threshold
    a_sparse = isinstance(a, SparseTensor | SparseTensorValue)
    b_sparse = isinstance(b, SparseTensor | SparseTensorValue)
    if a_sparse and b_sparse:
        a, b = _sp(a), _sp(b)
        real = a.dtype.real_dtype if a.dtype.is_complex else a.dtype
        out = apply_op("SparseAdd", a_indices=a.indices, a_values=a.values,
                       a_shape=a.dense_shape, b_indices=b.indices, b_values=b.values,
                       b_shape=b.dense_shape, thresh=convert_to_tensor(thresh, real),
                       name=name)
        return SparseTensor(*out)
    sp, dense = (_sp(a), b) if a_sparse else (_sp(b), a)
    return apply_op("SparseTensorDenseAdd", a_indices=sp.indices, a_values=sp.values,
                    a_shape=sp.dense_shape, b=dense, name=name)


def sparse_reorder(sp_input: Any, name: str | None = None) -> SparseTensor:
    """The same entries in row-major order (op `SparseReorder`)."""
    sp = _sp(sp_input)
    indices, values = apply_op("SparseReorder", input_indices=sp.indices,
                               input_values=sp.values, input_shape=sp.dense_shape, name=name)
    return SparseTensor(indices, values, sp.dense_shape)


def sparse_transpose(sp_input: Any, perm: Any = None, name: str | None = None) -> SparseTensor:
    """The transpose of a `SparseTensor` (default: reversed dimensions), reordered
    (follows `tf.sparse.transpose`)."""
    with graph_mod.name_scope(name, "SparseTranspose", []):
        sp = _sp(sp_input)
        if perm is None:
            rank = array_ops.size(sp.dense_shape)
            perm = (rank - 1) - array_ops.range(rank)
        indices = array_ops.transpose(array_ops.gather(array_ops.transpose(sp.indices), perm))
        shape = array_ops.gather(sp.dense_shape, perm)
        return sparse_reorder(SparseTensor(indices, sp.values, shape))


def sparse_retain(sp_input: Any, to_retain: Any) -> SparseTensor:
    """The entries where the bool vector `to_retain` [N] is True (`tf.sparse.retain`)."""
    sp = _sp(sp_input)
    where = array_ops.reshape(array_ops.where(to_retain), [-1])
    return SparseTensor(array_ops.gather(sp.indices, where), array_ops.gather(sp.values, where),
                        sp.dense_shape)


def sparse_fill_empty_rows(sp_input: Any, default_value: Any, name: str | None = None):
    """`(filled, empty_row_indicator)`: `sp_input` with `[row, 0, ...] = default_value`
    added for every empty row (op `SparseFillEmptyRows`)."""
    sp = _sp(sp_input)
    indices, values, empty, _ = apply_op(
        "SparseFillEmptyRows", indices=sp.indices, values=sp.values,
        dense_shape=sp.dense_shape,
        default_value=convert_to_tensor(default_value, sp.dtype), name=name)
    return SparseTensor(indices, values, sp.dense_shape), empty


def sparse_slice(sp_input: Any, start: Any, size: Any, name: str | None = None):
    """The entries inside the box `[start, start + size)`, shifted to the origin (op
    `SparseSlice`)."""
    sp = _sp(sp_input)
    out = apply_op("SparseSlice", indices=sp.indices, values=sp.values, shape=sp.dense_shape,
                   start=convert_to_tensor(start, dtypes.int64),
                   size=convert_to_tensor(size, dtypes.int64), name=name)
    return SparseTensor(*out)


def sparse_split(keyword_required: Any = None, sp_input: Any = None, num_split: Any = None,
                 axis: Any = None, name: str | None = None, split_dim: Any = None):
    """`num_split` `SparseTensor`s along `axis` (the first ones one larger when the size
    does not divide evenly) (op `SparseSplit`).

    Raises:
      ValueError: if the arguments are passed positionally or `sp_input` is missing.
    """
    if keyword_required is not None or sp_input is None or num_split is None:
        raise ValueError("Keyword arguments are required for this function: sp_input, "
                         "num_split and axis")
    axis = axis if axis is not None else split_dim
    sp = _sp(sp_input)
    out = apply_op("SparseSplit", split_dim=convert_to_tensor(axis, dtypes.int64),
                   indices=sp.indices, values=sp.values, shape=sp.dense_shape,
                   num_split=int(num_split), name=name)
    indices, values, shapes = out
    return [SparseTensor(i, v, s) for i, v, s in zip(indices, values, shapes)]


def sparse_softmax(sp_input: Any, name: str | None = None) -> SparseTensor:
    """Softmax over the present entries of each innermost row (op `SparseSoftmax`)."""
    sp = _sp(sp_input)
    values = apply_op("SparseSoftmax", sp_indices=sp.indices, sp_values=sp.values,
                      sp_shape=sp.dense_shape, name=name)
    return SparseTensor(sp.indices, values, sp.dense_shape)


def _sparse_sparse(op_type: str, a: Any, b: Any, name: Any) -> SparseTensor:
    a, b = _sp(a), _sp(b)
    indices, values = apply_op(op_type, a_indices=a.indices, a_values=a.values,
                               a_shape=a.dense_shape, b_indices=b.indices, b_values=b.values,
                               b_shape=b.dense_shape, name=name)
    return SparseTensor(indices, values, a.dense_shape)


def sparse_maximum(sp_a: Any, sp_b: Any, name: str | None = None) -> SparseTensor:
    """Element-wise max over the union of entries, missing ones 0 (op
    `SparseSparseMaximum`)."""
    return _sparse_sparse("SparseSparseMaximum", sp_a, sp_b, name)


def sparse_minimum(sp_a: Any, sp_b: Any, name: str | None = None) -> SparseTensor:
    """Element-wise min over the union of entries, missing ones 0 (op
    `SparseSparseMinimum`)."""
    return _sparse_sparse("SparseSparseMinimum", sp_a, sp_b, name)


def sparse_to_indicator(sp_input: Any, vocab_size: Any, name: str | None = None) -> Tensor:
    """A bool dense tensor [..., vocab_size]: True at `[i..., id]` for every id in row
    `i...` of the int `sp_input` (follows `tf.sparse.to_indicator`)."""
    with graph_mod.name_scope(name, "SparseToIndicator", []):
        sp = _sp(sp_input)
        ids = cwise_ops.cast(sp.values, dtypes.int64)
        prefix = array_ops.slice(sp.indices, [0, 0], [-1, -1])
        prefix = prefix[:, :-1]
        indices = array_ops.concat([prefix, array_ops.expand_dims(ids, 1)], 1)
        shape = array_ops.concat(
            [sp.dense_shape[:-1], array_ops.reshape(cwise_ops.cast(vocab_size, dtypes.int64),
                                                    [1])], 0)
        reordered = sparse_reorder(SparseTensor(
            indices, array_ops.ones_like(ids, dtype=dtypes.bool), shape))
        return sparse_to_dense(reordered.indices, reordered.dense_shape, reordered.values,
                               False, validate_indices=False)


def sparse_mask(a: Any, mask_indices: Any, name: str | None = None) -> Any:
    """The rows of the `IndexedSlices` `a` whose indices are not in `mask_indices`
    (follows `tf.sparse.mask`)."""
    with graph_mod.name_scope(name, "sparse_mask", [a, mask_indices]):
        _, positions = setdiff1d(a.indices, mask_indices)
        return IndexedSlices(array_ops.gather(a.values, positions),
                             array_ops.gather(a.indices, positions), a.dense_shape)


def sparse_reset_shape(sp_input: Any, new_shape: Any = None) -> SparseTensor:
    """`sp_input` with dense shape `new_shape`, or the tightest shape holding its indices
    (follows `tf.sparse.reset_shape`)."""
    sp = _sp(sp_input)
    if new_shape is None:
        tight = reduction_ops.reduce_max(sp.indices, axis=0) + 1
        new_shape = cwise_ops.maximum(tight, array_ops.zeros_like(tight))
    return SparseTensor(sp.indices, sp.values, convert_to_tensor(new_shape, dtypes.int64))


__all__ = [
    "SparseTensor",
    "SparseTensorValue",
    "sparse_add",
    "sparse_concat",
    "sparse_fill_empty_rows",
    "sparse_mask",
    "sparse_maximum",
    "sparse_minimum",
    "sparse_placeholder",
    "sparse_reduce_max",
    "sparse_reduce_max_sparse",
    "sparse_reduce_sum",
    "sparse_reduce_sum_sparse",
    "sparse_reorder",
    "sparse_reset_shape",
    "sparse_reshape",
    "sparse_retain",
    "sparse_slice",
    "sparse_softmax",
    "sparse_split",
    "sparse_tensor_dense_matmul",
    "sparse_tensor_to_dense",
    "sparse_to_dense",
    "sparse_to_indicator",
    "sparse_transpose",
]
