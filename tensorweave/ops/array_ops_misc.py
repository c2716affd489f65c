"""Miscellaneous array functions (follows TF 1.x `tf.where_v2`, `tf.dynamic_partition`,
`tf.ensure_shape`, `tf.bitcast`, `tf.guarantee_const`, `tf.count_up_to`,
`tf.histogram_fixed_width`, `tf.space_to_depth`, `tf.depth_to_space`,
`tf.space_to_batch(_nd)`, `tf.batch_to_space(_nd)`, `tf.batch_gather`, `tf.sparse_matmul`
and the tensor predicates `tf.is_tensor`, `tf.get_static_value`, `tf.dimension_value`)."""

from __future__ import annotations

from typing import Any

import numpy as np

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.shape_inference import is_tensor_like, static_value
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import Dimension, TensorShape
from tensorweave.ops import array_ops, cwise_ops, matmul_ops
from tensorweave.ops.scatter_nd_ops import gather_nd


def where_v2(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """`x` where `condition` else `y`, all three broadcast together (op `SelectV2`); with
    neither x nor y, the coordinates of the true elements (follows `tf.where_v2`).

    Raises:
      ValueError: if only one of x and y is given.
    """
    if x is None and y is None:
        return array_ops.where(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return apply_op("SelectV2", condition=condition, t=x, e=y, name=name)


def dynamic_partition(data: Any, partitions: Any, num_partitions: int,
                      name: str | None = None) -> list[Tensor]:
    """`num_partitions` tensors: output i holds the rows of `data` whose `partitions`
    entry is i, in order (op `DynamicPartition`)."""
    out = apply_op("DynamicPartition", data=data, partitions=partitions,
                   num_partitions=num_partitions, name=name)
    return list(out[0]) if len(out) == 1 and isinstance(out[0], list) else list(out)


def ensure_shape(x: Any, shape: Any, name: str | None = None) -> Tensor:
    """`x`, checked at run time to have a shape compatible with `shape` (op `EnsureShape`).

    Raises:
      ValueError: if the static shape is incompatible; InvalidArgumentError at run time.
    """
    return apply_op("EnsureShape", input=x, shape=TensorShape(shape), name=name)


def bitcast(input: Any, type: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """`input`'s bytes reinterpreted as `type`; a smaller type adds a last dimension, a
    larger one consumes it (op `Bitcast`)."""
    return apply_op("Bitcast", input=input, type=dtypes.as_dtype(type), name=name)


def guarantee_const(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """`input`, promised constant for the session (op `GuaranteeConst`; an identity here)."""
    return apply_op("GuaranteeConst", input=input, name=name)


def count_up_to(ref: Any, limit: int, name: str | None = None) -> Tensor:
    """Increments the int variable `ref` and returns its old value (op `CountUpTo`).

    Raises:
      OutOfRangeError: at run time, once the value reached `limit`.
    """
    ref = ref._ref() if hasattr(ref, "_ref") else ref
    return apply_op("CountUpTo", ref=ref, limit=limit, name=name)


def histogram_fixed_width(values: Any, value_range: Any, nbins: Any = 100,
                          dtype: Any = dtypes.int32, name: str | None = None) -> Tensor:
    """Counts of `values` in `nbins` equal bins over `value_range` (values outside go to
    the end bins) (op `HistogramFixedWidth`)."""
    return apply_op("HistogramFixedWidth", values=values, value_range=value_range,
                    nbins=convert_to_tensor(nbins, dtypes.int32),
                    dtype=dtypes.as_dtype(dtype), name=name)


def histogram_fixed_width_bins(values: Any, value_range: Any, nbins: Any = 100,
                               dtype: Any = dtypes.int32, name: str | None = None) -> Tensor:
    """The bin index of each element of `values` (follows
    `tf.histogram_fixed_width_bins`)."""
    with graph_mod.name_scope(name, "histogram_fixed_width_bins", [values, value_range]):
        values = convert_to_tensor(values, name="values")
        value_range = convert_to_tensor(value_range, dtype=values.dtype)
        nbins_t = convert_to_tensor(nbins, dtypes.int32)
        lo, hi = value_range[0], value_range[1]
        scaled = (values - lo) / (hi - lo)
        bins = cwise_ops.floor(cwise_ops.cast(nbins_t, scaled.dtype) * scaled)
        top = cwise_ops.cast(nbins_t - 1, scaled.dtype)
        clipped = cwise_ops.minimum(cwise_ops.maximum(bins, array_ops.zeros_like(bins)), top)
        return cwise_ops.cast(clipped, dtype)


def space_to_depth(input: Any, block_size: int, name: str | None = None,  # noqa: A002
                   data_format: str = "NHWC") -> Tensor:
    """Moves `block_size` x `block_size` spatial blocks into depth (op `SpaceToDepth`)."""
    return apply_op("SpaceToDepth", input=input, block_size=block_size,
                    data_format=data_format, name=name)


def depth_to_space(input: Any, block_size: int, name: str | None = None,  # noqa: A002
                   data_format: str = "NHWC") -> Tensor:
    """Moves depth into `block_size` x `block_size` spatial blocks (op `DepthToSpace`)."""
    return apply_op("DepthToSpace", input=input, block_size=block_size,
                    data_format=data_format, name=name)


def space_to_batch_nd(input: Any, block_shape: Any, paddings: Any,  # noqa: A002
                      name: str | None = None) -> Tensor:
    """Pads the spatial dims and moves blocks of them into the batch (op
    `SpaceToBatchND`)."""
    return apply_op("SpaceToBatchND", input=input, block_shape=block_shape,
                    paddings=paddings, name=name)


def batch_to_space_nd(input: Any, block_shape: Any, crops: Any,  # noqa: A002
                      name: str | None = None) -> Tensor:
    """The inverse of `space_to_batch_nd`, then crops (op `BatchToSpaceND`)."""
    return apply_op("BatchToSpaceND", input=input, block_shape=block_shape, crops=crops,
                    name=name)


def space_to_batch(input: Any, paddings: Any, block_size: Any = None,  # noqa: A002
                   name: str | None = None, block_shape: Any = None) -> Tensor:
    """`space_to_batch_nd` with a square block over two spatial dims (TF 1.x
    `tf.space_to_batch`, op `SpaceToBatchND`)."""
    size = block_size if block_size is not None else block_shape
    return space_to_batch_nd(input, np.array([size, size], np.int32), paddings, name=name)


def batch_to_space(input: Any, crops: Any, block_size: Any = None,  # noqa: A002
                   name: str | None = None, block_shape: Any = None) -> Tensor:
    """`batch_to_space_nd` with a square block over two spatial dims (TF 1.x
    `tf.batch_to_space`)."""
    size = block_size if block_size is not None else block_shape
    return batch_to_space_nd(input, np.array([size, size], np.int32), crops, name=name)


def required_space_to_batch_paddings(input_shape: Any, block_shape: Any,
                                     base_paddings: Any = None, name: str | None = None):
    """`(paddings, crops)` making `input_shape` + `base_paddings` divisible by
    `block_shape` (follows `tf.required_space_to_batch_paddings`)."""
    with graph_mod.name_scope(name, "required_space_to_batch_paddings", [input_shape]):
        shape = convert_to_tensor(input_shape, dtypes.int32)
        block = convert_to_tensor(block_shape, dtypes.int32)
        m = block.shape.as_list()[0]
        base = (array_ops.zeros([m, 2], dtypes.int32) if base_paddings is None
                else convert_to_tensor(base_paddings, dtypes.int32))
        start, end = base[:, 0], base[:, 1]
        full = shape + start + end
        pad_end_extra = (block - full % block) % block
        pad_end = end + pad_end_extra
        paddings = array_ops.stack([start, pad_end], axis=1)
        crops = array_ops.stack([array_ops.zeros_like(start), pad_end_extra], axis=1)
        return paddings, crops


def batch_gather(params: Any, indices: Any, name: str | None = None) -> Tensor:
    """`params[i..., indices[i..., j], ...]` per batch entry (follows the deprecated
    `tf.batch_gather`: batch dims are all leading dims of `indices` but the last)."""
    with graph_mod.name_scope(name, "BatchGather", [params, indices]):
        params = convert_to_tensor(params, name="params")
        indices = convert_to_tensor(indices, name="indices")
        rank = indices.shape.ndims
        if rank is None:
            raise ValueError("batch_gather needs indices of known rank")
        batch = array_ops.shape(indices, out_type=indices.dtype)[:-1]
        grids = [array_ops.range(batch[i]) for i in range(rank - 1)]
        prefix = []
        for i, g in enumerate(grids):
            shape = [1] * rank
            shape[i] = -1
            prefix.append(array_ops.reshape(g, shape) + array_ops.zeros_like(indices))
        full = array_ops.stack(prefix + [indices], axis=-1)
        return gather_nd(params, full)


def sparse_matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False,
                  a_is_sparse: bool = False, b_is_sparse: bool = False,
                  name: str | None = None) -> Tensor:
    """`a @ b`; the sparsity hints are ignored (follows `tf.sparse_matmul`)."""
    return matmul_ops.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b, name=name)


def is_tensor(x: Any) -> bool:
    """True for tensor-like objects: Tensors, variables, SparseTensors, IndexedSlices
    (follows `tf.is_tensor`)."""
    return is_tensor_like(x) or isinstance(x, SparseTensor | IndexedSlices)


def get_static_value(tensor: Any, partial: bool = False) -> Any:
    """The value of `tensor` if known while building the graph, else None (follows
    `tf.get_static_value`; NumPy values pass through)."""
    if not is_tensor_like(tensor):
        return np.asarray(tensor) if tensor is not None else None
    return static_value(convert_to_tensor(tensor))


def dimension_value(dimension: Any) -> int | None:
    """The int (or None) of a `Dimension` or int (follows `tf.dimension_value`)."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


def dimension_at_index(shape: Any, index: int) -> Dimension:
    """`Dimension` `index` of `shape`, unknown for an unknown rank
    (follows `tf.dimension_at_index`)."""
    shape = TensorShape(shape)
    if shape.ndims is None:
        return Dimension(None)
    return Dimension(shape.as_list()[index])


def convert_to_tensor_or_sparse_tensor(value: Any, dtype: Any = None,
                                       name: str | None = None) -> Any:
    """`value` as a `SparseTensor` if it is sparse, else as a `Tensor` (follows
    `tf.convert_to_tensor_or_sparse_tensor`)."""
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and value.dtype != dtypes.as_dtype(dtype):
            raise ValueError(f"Sparse dtype: requested = {dtype}, actual = {value.dtype}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def convert_to_tensor_or_indexed_slices(value: Any, dtype: Any = None,
                                        name: str | None = None) -> Any:
    """`value` itself if it is `IndexedSlices`, else `convert_to_tensor(value)` (follows
    `tf.convert_to_tensor_or_indexed_slices`)."""
    if isinstance(value, IndexedSlices):
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def is_numeric_tensor(tensor: Any) -> bool:
    """True for a Tensor of a numeric dtype (follows `tf.debugging.is_numeric_tensor`)."""
    if not isinstance(tensor, Tensor):
        return False
    dt = tensor.dtype.base_dtype
    return dt.is_floating or dt.is_integer or dt.is_complex


__all__ = [
    "batch_gather",
    "batch_to_space",
    "batch_to_space_nd",
    "bitcast",
    "convert_to_tensor_or_indexed_slices",
    "convert_to_tensor_or_sparse_tensor",
    "count_up_to",
    "depth_to_space",
    "dimension_at_index",
    "dimension_value",
    "dynamic_partition",
    "ensure_shape",
    "get_static_value",
    "guarantee_const",
    "histogram_fixed_width",
    "histogram_fixed_width_bins",
    "is_numeric_tensor",
    "is_tensor",
    "required_space_to_batch_paddings",
    "space_to_batch",
    "space_to_batch_nd",
    "space_to_depth",
    "sparse_matmul",
    "where_v2",
]
