"""Sparse tensor ops: a sparse tensor travels as three tensors, `indices` (int64 [N, R]),
`values` ([N]) and `dense_shape` (int64 [R]).

Follows `tensorflow/core/ops/sparse_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_defs._types import NUMBER, REAL_NUMBER
from tensorweave.framework.shape_inference import (
    static_shape_value,
    static_value,
    with_rank,
)
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape


def _sp_out(rank: int | None = None) -> list[TensorShape]:
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _shape_rank(t: Any) -> int | None:
    s = t.shape
    return None if s.ndims != 1 else s.as_list()[0]


def _to_dense_shape(op: Any) -> list[TensorShape]:
    with_rank(op, op.inputs[3].shape, 0)
    return [static_shape_value(op.inputs[1])]


def _dense_matmul_shape(op: Any) -> list[TensorShape]:
    b = with_rank(op, op.inputs[3].shape, 2)
    shape = static_value(op.inputs[2])
    rows = None
    if shape is not None:
        rows = int(shape[1] if op.get_attr("adjoint_a") else shape[0])
    cols = b.as_list()[0 if op.get_attr("adjoint_b") else 1]
    return [TensorShape([rows, cols])]


def _reduce_shape(op: Any) -> list[TensorShape]:
    shape, axes = static_value(op.inputs[2]), static_value(op.inputs[3])
    if shape is None or axes is None:
        return [unknown_shape()]
    rank = len(shape)
    axes = {int(a) % rank for a in axes.reshape(-1)} if rank else set()
    keep = op.get_attr("keep_dims")
    dims = [1 if i in axes else int(d) for i, d in enumerate(shape)] if keep else [
        int(d) for i, d in enumerate(shape) if i not in axes
    ]
    return [TensorShape(dims)]


def _reduce_sparse_shape(op: Any) -> list[TensorShape]:
    return _sp_out()


def _reshape_shape(op: Any) -> list[TensorShape]:
    rank = _shape_rank(op.inputs[2])
    return [TensorShape([None, rank]), TensorShape([rank])]


def _concat_shape(op: Any) -> list[TensorShape]:
    return _sp_out(_shape_rank(op.inputs[-1]))


def _add_shape(op: Any) -> list[TensorShape]:
    return _sp_out(_shape_rank(op.inputs[2]))


def _reorder_shape(op: Any) -> list[TensorShape]:
    return [op.inputs[0].shape, op.inputs[1].shape]


def _fill_empty_rows_shape(op: Any) -> list[TensorShape]:
    rank = _shape_rank(op.inputs[2])
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([None]),
            TensorShape([op.inputs[0].shape.as_list()[0] if op.inputs[0].shape.ndims else None])]


def _split_shape(op: Any) -> list[TensorShape]:
    n = op.get_attr("num_split")
    rank = _shape_rank(op.inputs[3])
    return (
        [TensorShape([None, rank])] * n + [TensorShape([None])] * n + [TensorShape([rank])] * n
    )


def _sp_inputs(prefix: str, names: tuple[str, str, str] = ("indices", "values", "shape")):
    return [f"{prefix}{names[0]}: int64", f"{prefix}{names[1]}: T", f"{prefix}{names[2]}: int64"]


register_op(
    "SparseToDense",
    inputs=["sparse_indices: Tindices", "output_shape: Tindices", "sparse_values: T",
            "default_value: T"],
    outputs=["dense: T"],
    attrs=["validate_indices: bool = true", "T: type", "Tindices: {int32, int64}"],
    shape_fn=_to_dense_shape,
)
register_op(
    "SparseTensorDenseMatMul",
    inputs=["a_indices: Tindices", "a_values: T", "a_shape: int64", "b: T"],
    outputs=["product: T"],
    attrs=["T: type", "Tindices: {int32, int64} = DT_INT64", "adjoint_a: bool = false",
           "adjoint_b: bool = false"],
    shape_fn=_dense_matmul_shape,
)
register_op(
    "SparseTensorDenseAdd",
    inputs=["a_indices: Tindices", "a_values: T", "a_shape: Tindices", "b: T"],
    outputs=["output: T"],
    attrs=[f"T: {{{NUMBER}}}", "Tindices: {int32, int64}"],
    shape_fn=lambda op: [op.inputs[3].shape],
)
for _name, _types in (("SparseReduceSum", NUMBER), ("SparseReduceMax", REAL_NUMBER)):
    register_op(
        _name,
        inputs=[*_sp_inputs("input_"), "reduction_axes: int32"],
        outputs=["output: T"],
        attrs=["keep_dims: bool = false", f"T: {{{_types}}}"],
        shape_fn=_reduce_shape,
    )
    register_op(
        _name + "Sparse",
        inputs=[*_sp_inputs("input_"), "reduction_axes: int32"],
        outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
        attrs=["keep_dims: bool = false", f"T: {{{_types}}}"],
        shape_fn=_reduce_sparse_shape,
    )
register_op(
    "SparseReshape",
    inputs=["input_indices: int64", "input_shape: int64", "new_shape: int64"],
    outputs=["output_indices: int64", "output_shape: int64"],
    shape_fn=_reshape_shape,
)
register_op(
    "SparseConcat",
    inputs=["indices: N * int64", "values: N * T", "shapes: N * int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=["concat_dim: int", "N: int >= 2", "T: type"],
    shape_fn=_concat_shape,
)
register_op(
    "SparseAdd",
    inputs=[*_sp_inputs("a_"), *_sp_inputs("b_"), "thresh: Treal"],
    outputs=["sum_indices: int64", "sum_values: T", "sum_shape: int64"],
    attrs=[f"T: {{{NUMBER}}}", f"Treal: {{{REAL_NUMBER}}}"],
    shape_fn=_add_shape,
)
register_op(
    "SparseAddGrad",
    inputs=["backprop_val_grad: T", "a_indices: int64", "b_indices: int64",
            "sum_indices: int64"],
    outputs=["a_val_grad: T", "b_val_grad: T"],
    attrs=[f"T: {{{NUMBER}}}"],
    shape_fn=lambda op: [TensorShape([op.inputs[1].shape.as_list()[0]
                                      if op.inputs[1].shape.ndims else None]),
                         TensorShape([op.inputs[2].shape.as_list()[0]
                                      if op.inputs[2].shape.ndims else None])],
)
register_op(
    "SparseReorder",
    inputs=_sp_inputs("input_"),
    outputs=["output_indices: int64", "output_values: T"],
    attrs=["T: type"],
    shape_fn=_reorder_shape,
)
register_op(
    "SparseFillEmptyRows",
    inputs=["indices: int64", "values: T", "dense_shape: int64", "default_value: T"],
    outputs=["output_indices: int64", "output_values: T", "empty_row_indicator: bool",
             "reverse_index_map: int64"],
    attrs=["T: type"],
    shape_fn=lambda op: [TensorShape([None, _shape_rank(op.inputs[2])]), TensorShape([None]),
                         TensorShape([None]), TensorShape([op.inputs[1].shape.num_elements()])],
)
register_op(
    "SparseFillEmptyRowsGrad",
    inputs=["reverse_index_map: int64", "grad_values: T"],
    outputs=["d_values: T", "d_default_value: T"],
    attrs=["T: type"],
    shape_fn=lambda op: [op.inputs[0].shape, TensorShape([])],
)
register_op(
    "SparseSlice",
    inputs=["indices: int64", "values: T", "shape: int64", "start: int64", "size: int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=["T: type"],
    shape_fn=lambda op: _sp_out(_shape_rank(op.inputs[2])),
)
register_op(
    "SparseSliceGrad",
    inputs=["backprop_val_grad: T", "input_indices: int64", "input_start: int64",
            "output_indices: int64"],
    outputs=["val_grad: T"],
    attrs=[f"T: {{{NUMBER}}}"],
    shape_fn=lambda op: [TensorShape([op.inputs[1].shape.as_list()[0]
                                      if op.inputs[1].shape.ndims else None])],
)
register_op(
    "SparseSplit",
    inputs=["split_dim: int64", "indices: int64", "values: T", "shape: int64"],
    outputs=["output_indices: num_split * int64", "output_values: num_split * T",
             "output_shape: num_split * int64"],
    attrs=["num_split: int >= 1", "T: type"],
    shape_fn=_split_shape,
)
register_op(
    "SparseSoftmax",
    inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64"],
    outputs=["output: T"],
    attrs=["T: {half, float, double}"],
    shape_fn=lambda op: [op.inputs[1].shape],
)
for _name in ("SparseSparseMaximum", "SparseSparseMinimum"):
    register_op(
        _name,
        inputs=[*_sp_inputs("a_"), *_sp_inputs("b_")],
        outputs=["output_indices: int64", "output_values: T"],
        attrs=[f"T: {{{REAL_NUMBER}}}"],
        shape_fn=lambda op: [TensorShape([None, _shape_rank(op.inputs[2])]),
                             TensorShape([None])],
    )


def _edit_distance_shape(op: Any) -> list[TensorShape]:
    hyp, truth = static_value(op.inputs[2]), static_value(op.inputs[5])
    if hyp is None or truth is None:
        rank = _shape_rank(op.inputs[2])
        return [TensorShape(None if rank is None else [None] * (rank - 1))]
    return [TensorShape([max(int(a), int(b)) for a, b in zip(hyp[:-1], truth[:-1])])]


register_op(
    "EditDistance",
    inputs=["hypothesis_indices: int64", "hypothesis_values: T", "hypothesis_shape: int64",
            "truth_indices: int64", "truth_values: T", "truth_shape: int64"],
    outputs=["output: float"],
    attrs=["normalize: bool = true", "T: type"],
    shape_fn=_edit_distance_shape,
)


def _cross_shape(op: Any) -> list[TensorShape]:
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


register_op(
    "SparseCross",
    inputs=["indices: N * int64", "values: sparse_types", "shapes: N * int64",
            "dense_inputs: dense_types"],
    outputs=["output_indices: int64", "output_values: out_type", "output_shape: int64"],
    attrs=["N: int >= 0", "hashed_output: bool", "num_buckets: int >= 0", "hash_key: int",
           "sparse_types: list(type) >= 0", "dense_types: list(type) >= 0",
           "out_type: {int64, string}", "internal_type: {int64, string}"],
    shape_fn=_cross_shape,
)
register_op(
    "SparseCrossV2",
    inputs=["indices: N * int64", "values: sparse_types", "shapes: N * int64",
            "dense_inputs: dense_types", "sep: string"],
    outputs=["output_indices: int64", "output_values: string", "output_shape: int64"],
    attrs=["N: int >= 0", "sparse_types: list(type) >= 0",
           "dense_types: list(type) >= 0"],
    shape_fn=_cross_shape,
)
