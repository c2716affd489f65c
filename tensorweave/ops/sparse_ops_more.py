"""More sparse functions (follows TF 1.x `tf.edit_distance`, `tf.sparse.expand_dims`,
`tf.sparse.eye`, `tf.sparse.bincount`, `tf.sparse.merge`/`tf.sparse_merge`)."""

from __future__ import annotations

from typing import Any

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, cwise_ops, reduction_ops
from tensorweave.ops.gradients_impl import no_gradient
from tensorweave.ops.segment_ops import bincount as dense_bincount
from tensorweave.ops.sparse_ops import _sp, from_dense, sparse_reorder


def edit_distance(hypothesis: Any, truth: Any, normalize: bool = True,
                  name: str = "edit_distance") -> Tensor:
    """Levenshtein distances between the sequences (last dimension) of two
    `SparseTensor`s, float32 [batch dims]; normalized by the truth length, which gives inf
    for an empty truth (op `EditDistance`).

    Raises:
      TypeError: for non-sparse inputs.
    """
    hyp, tru = _sp(hypothesis), _sp(truth)
    return apply_op("EditDistance", hypothesis_indices=hyp.indices,
                    hypothesis_values=hyp.values, hypothesis_shape=hyp.dense_shape,
                    truth_indices=tru.indices, truth_values=tru.values,
                    truth_shape=tru.dense_shape, normalize=normalize, name=name)


def sparse_expand_dims(sp_input: Any, axis: Any = None, name: str | None = None):
    """`sp_input` with a dimension of size 1 inserted at `axis` (default -1) (follows
    `tf.sparse.expand_dims`)."""
    with graph_mod.name_scope(name, "expand_dims", []):
        sp = _sp(sp_input)
        rank = sp.dense_shape.shape.as_list()[0]
        axis = -1 if axis is None else int(axis)
        axis = axis % (rank + 1) if rank is not None else axis
        n = array_ops.shape(sp.indices, out_type=dtypes.int64)[0]
        zeros = array_ops.zeros(array_ops.stack([n, 1]), dtypes.int64)
        indices = array_ops.concat([sp.indices[:, :axis], zeros, sp.indices[:, axis:]], 1)
        one = convert_to_tensor([1], dtypes.int64)
        shape = array_ops.concat([sp.dense_shape[:axis], one, sp.dense_shape[axis:]], 0)
        return SparseTensor(indices, sp.values, shape)


def sparse_eye(num_rows: Any, num_columns: Any = None, dtype: Any = dtypes.float32,
               name: str | None = None) -> SparseTensor:
    """A sparse identity [num_rows, num_columns] (follows `tf.sparse.eye`)."""
    with graph_mod.name_scope(name, "eye", [num_rows, num_columns]):
        rows = convert_to_tensor(num_rows, dtypes.int64)
        cols = rows if num_columns is None else convert_to_tensor(num_columns, dtypes.int64)
        n = cwise_ops.minimum(rows, cols)
        diag = array_ops.range(n)
        indices = array_ops.stack([diag, diag], axis=1)
        values = array_ops.ones(array_ops.expand_dims(cwise_ops.cast(n, dtypes.int32), 0),
                                dtype=dtype)
        return SparseTensor(indices, values, array_ops.stack([rows, cols]))


def sparse_bincount(values: Any, weights: Any = None, axis: int = 0, minlength: Any = None,
                    maxlength: Any = None, binary_output: bool = False,
                    name: str | None = None) -> SparseTensor:
    """Counts of the int values (dense or sparse) as a `SparseTensor`: over everything
    (axis=0) or per row of a 2-D input (axis=-1) (follows `tf.sparse.bincount`).

    Raises:
      ValueError: for another axis.
    """
    if axis not in (0, -1):
        raise ValueError(f"Unsupported axis value {axis}. Only 0 and -1 are supported.")
    with graph_mod.name_scope(name, "count", [values, weights]):
        if isinstance(values, SparseTensor):
            rows = values.indices[:, 0]
            flat, nrows = values.values, values.dense_shape[0]
            w = None if weights is None else _sp(weights).values
        else:
            dense = convert_to_tensor(values, name="values")
            flat = array_ops.reshape(dense, [-1])
            shape = array_ops.shape(dense, out_type=dtypes.int64)
            nrows = shape[0] if axis == -1 else convert_to_tensor(1, dtypes.int64)
            cols = shape[-1] if axis == -1 else convert_to_tensor(1, dtypes.int64)
            rows = array_ops.range(nrows * cols) // cols
            w = None if weights is None else array_ops.reshape(convert_to_tensor(weights), [-1])
        flat = cwise_ops.cast(flat, dtypes.int32)
        size = reduction_ops.reduce_max(flat) + 1
        if minlength is not None:
            size = cwise_ops.maximum(size, minlength)
        if maxlength is not None:
            size = cwise_ops.minimum(size, maxlength)
        if axis == 0:
            counts = dense_bincount(flat, weights=w, minlength=size, maxlength=size)
        else:
            keys = cwise_ops.cast(rows, dtypes.int32) * size + flat
            total = cwise_ops.cast(nrows, dtypes.int32) * size
            counts = array_ops.reshape(
                dense_bincount(keys, weights=w, minlength=total, maxlength=total),
                array_ops.stack([cwise_ops.cast(nrows, dtypes.int32), size]))
        if binary_output:
            counts = cwise_ops.cast(cwise_ops.greater(counts, 0), counts.dtype)
        return from_dense(counts)


def sparse_merge(sp_ids: Any, sp_values: Any, vocab_size: Any, name: str | None = None,
                 already_sorted: bool = False) -> SparseTensor:
    """A `SparseTensor` with `sp_values` placed at column `sp_ids` of each row, dense
    shape [..., vocab_size] (follows `tf.sparse.merge`)."""
    with graph_mod.name_scope(name, "SparseMerge", []):
        ids, vals = _sp(sp_ids), _sp(sp_values)
        new_ids = array_ops.expand_dims(cwise_ops.cast(ids.values, dtypes.int64), 1)
        indices = array_ops.concat([ids.indices[:, :-1], new_ids], 1)
        vocab = array_ops.reshape(convert_to_tensor(vocab_size, dtypes.int64), [1])
        shape = array_ops.concat([ids.dense_shape[:-1], vocab], 0)
        merged = SparseTensor(indices, vals.values, shape)
        return merged if already_sorted else sparse_reorder(merged)


def _cross_inputs(inputs: Any) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    if not isinstance(inputs, list | tuple):
        raise TypeError("Inputs must be a list")
    sparse = [SparseTensor.from_value(x) for x in inputs
              if isinstance(x, SparseTensor | SparseTensorValue)]
    dense = [convert_to_tensor(x) for x in inputs
             if not isinstance(x, SparseTensor | SparseTensorValue)]
    # int inputs are int64, as TensorFlow's cross ops require.
    values = [s.values if s.values.dtype == dtypes.string else cwise_ops.cast(
        s.values, dtypes.int64) for s in sparse]
    dense = [d if d.dtype == dtypes.string else cwise_ops.cast(d, dtypes.int64) for d in dense]
    return [s.indices for s in sparse], values, [s.dense_shape for s in sparse], dense


def sparse_cross(inputs: Any, name: str | None = None, separator: Any = None) -> SparseTensor:
    """String crosses of the features of each row of `inputs` (SparseTensors or dense
    [batch, k] tensors, string or int), joined by `separator` (default "_X_") (follows
    `tf.sparse.cross`, op `SparseCrossV2`)."""
    indices, values, shapes, dense = _cross_inputs(inputs)
    out = apply_op("SparseCrossV2", indices=indices, values=values, shapes=shapes,
                   dense_inputs=dense, sep=convert_to_tensor(
                       "_X_" if separator is None else separator, dtypes.string), name=name)
    return SparseTensor(*out)


def sparse_cross_hashed(inputs: Any, num_buckets: int = 0, hash_key: Any = None,
                        name: str | None = None) -> SparseTensor:
    """int64 hashed crosses (TensorFlow's FingerprintCat64 chain of Fingerprint64s, equal
    to TF's values) modulo `num_buckets` (follows `tf.sparse.cross_hashed`, op
    `SparseCross`)."""
    indices, values, shapes, dense = _cross_inputs(inputs)
    out = apply_op("SparseCross", indices=indices, values=values, shapes=shapes,
                   dense_inputs=dense, hashed_output=True, num_buckets=num_buckets,
                   hash_key=0xDECAFCAFFE if hash_key is None else int(hash_key),
                   out_type=dtypes.int64, internal_type=dtypes.int64, name=name)
    return SparseTensor(*out)


no_gradient("EditDistance")
no_gradient("SparseCross")
no_gradient("SparseCrossV2")

__all__ = ["edit_distance", "sparse_merge"]
