"""Reductions and the other many-to-one math ops (follows TF 1.x `math_ops`).

`Sum`, `Mean`, `Max`, `Min`, `Prod`, `All`, `Any`, `ArgMax`/`ArgMin`, `AddN`,
`UnsortedSegmentSum` and `Cumsum`/`Cumprod`.

`IndexedSlices` are densified with `unsorted_segment_sum` by the conversion function that
`gradients_impl` registers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import array_ops, constant_op, cwise_ops


# -------------------------------------------------------------------- helpers
def _lookup(new_name: str, new: Any, old_name: str, old: Any) -> Any:
    if new is not None and old is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
    return new if new is not None else old


def _reduce(op_type: str, input_tensor: Any, axis: Any, keepdims: Any, name: Any) -> Tensor:
    keepdims = bool(keepdims) if keepdims is not None else False
    if axis is not None:
        return apply_op(
            op_type, input=input_tensor, reduction_indices=axis, keep_dims=keepdims, name=name
        )
    x = input_tensor if isinstance(input_tensor, Tensor) else convert_to_tensor(input_tensor)
    rank = x.shape.ndims
    if rank is not None:
        axes = constant_op.constant(np.arange(rank, dtype=np.int32))
        out = apply_op(op_type, input=x, reduction_indices=axes, keep_dims=keepdims, name=name)
    else:
        # Unknown rank: reduce the flattened tensor (one Reshape instead of Rank + Range).

        flat = array_ops.reshape(x, [-1])
        out = apply_op(op_type, input=flat, reduction_indices=0, keep_dims=False, name=name)
        if keepdims:
            out = array_ops.reshape(out, array_ops.ones_like(array_ops.shape(x)))
    if not keepdims and not out.shape.is_fully_defined():
        out.set_shape(())
    return out


def _reduce_fn(op_type: str, api: str, doc: str) -> Any:
    def fn(
        input_tensor: Any,
        axis: Any = None,
        keepdims: bool | None = None,
        name: str | None = None,
        reduction_indices: Any = None,
        keep_dims: bool | None = None,
    ) -> Tensor:
        axis = _lookup("axis", axis, "reduction_indices", reduction_indices)
        keepdims = _lookup("keepdims", keepdims, "keep_dims", keep_dims)
        return _reduce(op_type, input_tensor, axis, keepdims, name)

    fn.__name__ = fn.__qualname__ = api
    fn.__doc__ = (
        f"{doc} (follows TF 1.x `tf.{api}`, op `{op_type}`).\n\n"
        "Args:\n"
        "  input_tensor: the tensor to reduce.\n"
        "  axis: int, list of ints or int Tensor of dimensions to reduce (negative counts\n"
        "    from the end); None reduces every dimension.\n"
        "  keepdims: keep reduced dimensions with length 1.\n"
        "  name: op name.\n"
        "  reduction_indices: deprecated alias of `axis`.\n"
        "  keep_dims: deprecated alias of `keepdims`.\n\n"
        "Returns:\n"
        "  The reduced tensor, of the input's dtype.\n\n"
        "Raises:\n"
        "  ValueError: for statically out-of-range axes, or both spellings of an argument.\n"
        "  errors.InvalidArgumentError: at run time, for out-of-range axes.\n"
    )
    return fn


reduce_sum = _reduce_fn("Sum", "reduce_sum", "Sum of elements across dimensions")
reduce_mean = _reduce_fn(
    "Mean",
    "reduce_mean",
    "Mean of elements across dimensions; integer means round toward zero",
)
reduce_max = _reduce_fn("Max", "reduce_max", "Maximum across dimensions (-inf when empty)")
reduce_min = _reduce_fn("Min", "reduce_min", "Minimum across dimensions (+inf when empty)")
reduce_prod = _reduce_fn("Prod", "reduce_prod", "Product of elements across dimensions")
reduce_all = _reduce_fn("All", "reduce_all", "Logical AND across dimensions of a bool tensor")
reduce_any = _reduce_fn("Any", "reduce_any", "Logical OR across dimensions of a bool tensor")


def reduce_logsumexp(
    input_tensor: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """`log(sum(exp(x)))` across dimensions (follows `tf.reduce_logsumexp`).

    Computed stably: the (finite) maximum is subtracted first and added back.

    Args:
      input_tensor: a floating tensor.
      axis: dimensions to reduce, as for `reduce_sum`; None reduces all.
      keepdims: keep reduced dimensions with length 1.
      name: name scope of the ops.
      reduction_indices: deprecated alias of `axis`.
      keep_dims: deprecated alias of `keepdims`.

    Returns:
      The reduced tensor of the input's dtype.
    """
    axis = _lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(_lookup("keepdims", keepdims, "keep_dims", keep_dims))
    with graph_mod.name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor, name="input_tensor")
        raw_max = reduce_max(x, axis=axis, keepdims=True)
        my_max = array_ops.stop_gradient(
            array_ops.where(cwise_ops.is_finite(raw_max), raw_max, array_ops.zeros_like(raw_max))
        )
        kept = cwise_ops.log(
            reduce_sum(cwise_ops.exp(cwise_ops.subtract(x, my_max)), axis, keepdims=True)
        )
        if keepdims:
            return cwise_ops.add(kept, my_max, name=scope)
        # Summing the kept size-1 dimensions away is an exact squeeze.
        return reduce_sum(cwise_ops.add(kept, my_max), axis, keepdims=False, name=scope)


def _arg(
    op_type: str,
    input: Any,  # noqa: A002  (TensorFlow's argument name)
    axis: Any,
    name: Any,
    dimension: Any,
    output_type: Any,
) -> Tensor:
    axis = _lookup("axis", axis, "dimension", dimension)
    if axis is None:
        axis = 0
    return apply_op(
        op_type, input=input, dimension=axis, output_type=dtypes.as_dtype(output_type), name=name
    )


def argmax(
    input: Any,  # noqa: A002  (TensorFlow's argument name)
    axis: Any = None,
    name: str | None = None,
    dimension: Any = None,
    output_type: Any = dtypes.int64,
) -> Tensor:
    """Index of the largest value along `axis` (default 0) (follows TF 1.x `tf.argmax`).

    Ties give the first index.

    Returns:
      `output_type` (int64 by default) tensor with `axis` removed.

    Raises:
      errors.InvalidArgumentError: at run time, for an out-of-range or empty axis.
    """
    return _arg("ArgMax", input, axis, name, dimension, output_type)


def argmin(
    input: Any,  # noqa: A002  (TensorFlow's argument name)
    axis: Any = None,
    name: str | None = None,
    dimension: Any = None,
    output_type: Any = dtypes.int64,
) -> Tensor:
    """Index of the smallest value along `axis` (default 0) (follows TF 1.x `tf.argmin`)."""
    return _arg("ArgMin", input, axis, name, dimension, output_type)


def arg_max(
    input: Any,  # noqa: A002  (TensorFlow's argument name)
    dimension: Any,
    output_type: Any = dtypes.int64,
    name: str | None = None,
) -> Tensor:
    """The `ArgMax` op directly (follows the deprecated `tf.arg_max`)."""
    return apply_op(
        "ArgMax",
        input=input,
        dimension=dimension,
        output_type=dtypes.as_dtype(output_type),
        name=name,
    )


def arg_min(
    input: Any,  # noqa: A002  (TensorFlow's argument name)
    dimension: Any,
    output_type: Any = dtypes.int64,
    name: str | None = None,
) -> Tensor:
    """The `ArgMin` op directly (follows the deprecated `tf.arg_min`)."""
    return apply_op(
        "ArgMin",
        input=input,
        dimension=dimension,
        output_type=dtypes.as_dtype(output_type),
        name=name,
    )


def _as_tensor_or_slices(value: Any) -> Any:
    return value if isinstance(value, IndexedSlices) else convert_to_tensor(value)


def add_n(inputs: Any, name: str | None = None) -> Tensor:
    """Element-wise sum of same-shape, same-dtype tensors (follows `tf.add_n`).

    No broadcasting; `IndexedSlices` inputs are densified.

    Raises:
      ValueError: if `inputs` is not a non-empty list.
      TypeError: for mixed dtypes.
    """
    if not inputs or not isinstance(inputs, list | tuple):
        raise ValueError(
            "inputs must be a list of at least one Tensor/IndexedSlices with the same dtype "
            "and shape"
        )
    inputs = [_as_tensor_or_slices(v) for v in inputs]
    if len(inputs) == 1:
        values = inputs[0]
        if isinstance(values, IndexedSlices):
            values = convert_to_tensor(values)
        if name:
            return array_ops.identity(values, name=name)
        return values
    return apply_op("AddN", inputs=inputs, name=name)


def accumulate_n(
    inputs: Any, shape: Any = None, tensor_dtype: Any = None, name: str | None = None
) -> Tensor:
    """Same as `add_n` after TensorFlow's checks (follows `tf.accumulate_n`).

    Raises:
      ValueError: for an empty list, non-Tensor items, mixed dtypes or incompatible shapes.
      TypeError: if `tensor_dtype` differs from the inputs' dtype.
    """

    def _input_error() -> ValueError:
        return ValueError(
            "inputs must be a list of at least one Tensor with the same dtype and shape"
        )

    if not inputs or not isinstance(inputs, list | tuple):
        raise _input_error()
    inputs = [_as_tensor_or_slices(v) for v in inputs]
    if not all(isinstance(x, Tensor) for x in inputs):
        raise _input_error()
    if not all(x.dtype == inputs[0].dtype for x in inputs):
        raise _input_error()
    merged = TensorShape(shape) if shape is not None else unknown_shape()
    for t in inputs:
        merged = merged.merge_with(t.shape)
    if tensor_dtype is not None and dtypes.as_dtype(tensor_dtype) != inputs[0].dtype:
        raise TypeError(f"tensor_dtype is {tensor_dtype}, but input is of type {inputs[0].dtype}")
    return add_n(inputs, name=name)


def unsorted_segment_sum(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Tensor:
    """`output[i] = sum(data[j] for segment_ids[j] == i)` (follows `tf.unsorted_segment_sum`).

    Rows with negative ids are dropped.

    Args:
      data: `T [d0, ..., dn]`.
      segment_ids: int32/int64 tensor whose shape is a prefix of `data`'s.
      num_segments: int32/int64 scalar.
      name: op name.

    Returns:
      `T [num_segments] + data.shape[segment_ids.ndim:]`.

    Raises:
      errors.InvalidArgumentError: at run time, for ids >= num_segments.
    """
    return apply_op(
        "UnsortedSegmentSum",
        data=data,
        segment_ids=segment_ids,
        num_segments=num_segments,
        name=name,
    )


def count_nonzero(
    input_tensor: Any = None,
    axis: Any = None,
    keepdims: bool | None = None,
    dtype: Any = dtypes.int64,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
    input: Any = None,  # noqa: A002  (TensorFlow's argument name)
) -> Tensor:
    """Number of non-zero elements across dimensions (follows TF 1.x `tf.count_nonzero`).

    Empty strings count as zero; the count has `dtype`, int64 by default.
    """
    input_tensor = _lookup("input", input, "input_tensor", input_tensor)
    axis = _lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = _lookup("keepdims", keepdims, "keep_dims", keep_dims)
    with graph_mod.name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        base = x.dtype.base_dtype
        zero_value: Any = b"" if base is dtypes.string else np.zeros((), base.as_numpy_dtype)
        zero = constant_op.constant(zero_value, dtype=base)
        nonzero = cwise_ops.cast(cwise_ops.not_equal(x, zero), dtypes.int64)
        return cwise_ops.cast(reduce_sum(nonzero, axis=axis, keepdims=keepdims), dtype=dtype)


def cumsum(
    x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Tensor:
    """Cumulative sum along `axis` (follows `tf.cumsum`).

    `exclusive` shifts the sums by one; `reverse` accumulates from the end.
    """
    with graph_mod.name_scope(name, "Cumsum", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply_op("Cumsum", x=x, axis=axis, exclusive=exclusive, reverse=reverse, name=scope)


def cumprod(
    x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Tensor:
    """Cumulative product along `axis` (follows `tf.cumprod`)."""
    with graph_mod.name_scope(name, "Cumprod", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply_op("Cumprod", x=x, axis=axis, exclusive=exclusive, reverse=reverse, name=scope)


def reduced_shape(input_shape: Any, axes: Any) -> Any:
    """`input_shape` with the `axes` set to 1 (follows `math_ops.reduced_shape`).

    A constant when both arguments are static, else an int32 tensor.
    """
    shape_v = constant_value(input_shape) if isinstance(input_shape, Tensor) else input_shape
    axes_v = constant_value(axes) if isinstance(axes, Tensor) else axes
    if shape_v is not None and axes_v is not None:
        dims = np.asarray(shape_v, dtype=np.int64).reshape(-1).copy()
        rank = dims.size
        for a in np.asarray(axes_v).reshape(-1).tolist():
            dims[a % rank] = 1
        return constant_op.constant(dims.astype(np.int32))

    shape_t = cwise_ops.cast(convert_to_tensor(input_shape), dtypes.int32)
    axes_t = array_ops.reshape(cwise_ops.cast(convert_to_tensor(axes), dtypes.int32), [-1])
    rank = array_ops.size(shape_t)
    axes_t = cwise_ops.floormod(cwise_ops.add(axes_t, rank), rank)
    hits = cwise_ops.minimum(unsorted_segment_sum(array_ops.ones_like(axes_t), axes_t, rank), 1)
    # Reduced dimensions become 1: d - (d - 1) * hit.
    return cwise_ops.subtract(shape_t, cwise_ops.multiply(cwise_ops.subtract(shape_t, 1), hits))


__all__ = [
    "accumulate_n",
    "add_n",
    "arg_max",
    "arg_min",
    "argmax",
    "argmin",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "reduce_all",
    "reduce_any",
    "reduce_logsumexp",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_sum",
    "unsorted_segment_sum",
]
