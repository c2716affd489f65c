"""Gathering and selection ops (follows TF 1.x `array_ops`).

`GatherV2`, `OneHot`, `Select`, `Where`, `Range`, `DynamicStitch`, and `boolean_mask`.

Re-exported by `tensorweave.ops.array_ops`; import from there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.shape_inference import (
    is_tensor_like,
)
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import Dimension, TensorShape
from tensorweave.ops.array_ops_join import concat
from tensorweave.ops.array_ops_shape import reshape, size, squeeze
from tensorweave.ops.array_ops_shape import shape as shape_of
from tensorweave.ops.cwise_unary_ops import cast

# ------------------------------------------------------------------ Python wrappers


def gather(
    params: Any, indices: Any, validate_indices: Any = None, name: str | None = None, axis: Any = 0
) -> Tensor:
    """Rows (or slices along `axis`) of `params` at `indices` (follows TF 1.x `tf.gather`).

    Output shape: `params.shape[:axis] + indices.shape + params.shape[axis + 1:]`.

    Raises:
      errors.InvalidArgumentError: at run time, for an index outside
        `[0, params.shape[axis])` ("indices[1] = 7 is not in [0, 3)").
    """
    del validate_indices
    return apply_op("GatherV2", params=params, indices=indices, axis=axis, name=name)


def one_hot(
    indices: Any,
    depth: Any,
    on_value: Any = None,
    off_value: Any = None,
    axis: int | None = None,
    dtype: Any = None,
    name: str | None = None,
) -> Tensor:
    """A one-hot encoding of `indices` (follows `tf.one_hot`).

    The new dimension of size `depth` goes at `axis` (default last); indices outside
    `[0, depth)` give all `off_value`.

    `on_value`/`off_value` default to 1/0 of `dtype`, which defaults to their dtype, else
    float32.

    Raises:
      TypeError: if the dtypes of `on_value`, `off_value` and `dtype` disagree.
    """
    with graph_mod.name_scope(
        name, "one_hot", [indices, depth, on_value, off_value, axis, dtype]
    ) as name:
        # NOTE: Python values are converted to `dtype` (TensorFlow infers their own dtype
        # and then rejects e.g. `on_value=1, dtype=tf.float32`); tensors must match.
        on_t = _one_hot_value(on_value, dtype, "on_value")
        off_t = _one_hot_value(off_value, dtype, "off_value")
        on_dtype = None if on_t is None else on_t.dtype.base_dtype
        off_dtype = None if off_t is None else off_t.dtype.base_dtype
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype).base_dtype
            if on_dtype is not None and on_dtype is not dtype:
                raise TypeError(
                    f"dtype {on_dtype} of on_value does not match dtype parameter {dtype}"
                )
            if off_dtype is not None and off_dtype is not dtype:
                raise TypeError(
                    f"dtype {off_dtype} of off_value does not match dtype parameter {dtype}"
                )
        elif on_dtype is not None or off_dtype is not None:
            dtype = on_dtype if on_dtype is not None else off_dtype
        else:
            dtype = dtypes.float32
        # NOTE: TensorFlow converts the ints 1/0, which fails for bool; True/False work.
        if on_t is None:
            on_t = convert_to_tensor(dtype is dtypes.bool or 1, dtype, name="on_value")
            on_dtype = dtype
        if off_t is None:
            off_t = convert_to_tensor(dtype is not dtypes.bool and 0, dtype, name="off_value")
            off_dtype = dtype
        if on_dtype is not off_dtype:
            raise TypeError(
                f"dtype {on_dtype} of on_value does not match dtype {off_dtype} of off_value"
            )
        return apply_op(
            "OneHot",
            indices=indices,
            depth=depth,
            on_value=on_t,
            off_value=off_t,
            axis=-1 if axis is None else axis,
            name=name,
        )


def _one_hot_value(value: Any, dtype: Any, name: str) -> Tensor | None:
    if value is None:
        return None
    if is_tensor_like(value) or dtype is None:
        return convert_to_tensor(value, name=name)
    return convert_to_tensor(value, dtype=dtype, name=name)


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """TF 1.x `tf.where`: a `Select` with `x` and `y`, else a `Where`.

    With `x` and `y`: elements of `x` where `condition` else of `y`; `condition` has the
    shape of `x`, or is a vector over its first dimension, or a scalar. Without them: the
    int64 [n, rank] coordinates of the true elements.

    Raises:
      ValueError: if only one of `x` and `y` is given, or for incompatible static shapes.
    """
    if x is None and y is None:
        with graph_mod.name_scope(name, "Where", [condition]) as name:
            condition = convert_to_tensor(condition, preferred_dtype=dtypes.bool, name="condition")
            return apply_op("Where", input=condition, name=name)
    if x is not None and y is not None:
        return apply_op("Select", condition=condition, t=x, e=y, name=name)
    raise ValueError("x and y must both be non-None or both be None.")


def boolean_mask(
    tensor: Any, mask: Any, name: str = "boolean_mask", axis: int | None = None
) -> Tensor:
    """The elements (or slices) of `tensor` where the bool `mask` is true.

    Follows `tf.boolean_mask`.

    `mask` covers dimensions `[axis, axis + rank(mask))` of `tensor`; those collapse into
    one dimension holding the selected entries.

    Raises:
      ValueError: for a scalar mask, a mask of unknown rank, or incompatible shapes.
    """
    with graph_mod.name_scope(name, values=[tensor, mask]):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        shape_mask = mask.shape
        ndims_mask = shape_mask.ndims
        shape_tensor = tensor.shape
        if ndims_mask == 0:
            raise ValueError("mask cannot be scalar.")
        if ndims_mask is None:
            raise ValueError(
                "Number of mask dimensions must be specified, even if some dimensions are "
                "None.  E.g. shape=[None] is ok, but shape=None is not."
            )
        axis = 0 if axis is None else axis
        covered = shape_tensor[axis : axis + ndims_mask]
        covered.assert_is_compatible_with(shape_mask)

        full = shape_of(tensor)
        leading = covered.num_elements()
        if leading is None:
            leading = shape_mask.num_elements()
        leading_t = leading if leading is not None else size(mask)
        tensor = reshape(
            tensor,
            concat([full[:axis], [leading_t], full[axis + ndims_mask :]], 0),
        )
        if shape_tensor.ndims is not None:
            tensor.set_shape(
                TensorShape(shape_tensor.as_list()[:axis])
                .concatenate([leading])
                .concatenate(shape_tensor[axis + ndims_mask :])
            )
        mask = reshape(mask, [-1])
        indices = squeeze(where(mask), axis=[1])
        return gather(tensor, indices, axis=axis)


def range(  # noqa: A001  (TensorFlow's public name `tf.range`)
    start: Any,
    limit: Any = None,
    delta: Any = 1,
    dtype: Any = None,
    name: str = "range",
) -> Tensor:
    """`[start, start + delta, ...]` up to but excluding `limit` (follows `tf.range`).

    With one argument, `range(limit)` starts at 0.

    Without `dtype`, the widest of the arguments' dtypes in int32 < int64 < float32 <
    float64 is used.

    Raises:
      ValueError: for a zero `delta` or a `delta` pointing away from `limit` (statically
        known arguments).
      errors.InvalidArgumentError: at run time, for the same.
    """
    if limit is None:
        start, limit = 0, start
    with graph_mod.name_scope(name, "Range", [start, limit, delta]) as name:
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype).base_dtype
        # A static `Dimension` (`x.shape[0]`) is an int32 (int64) tensor, cast if need be.
        args = [convert_to_tensor(a, name=n) if isinstance(a, Dimension) else a
                for a, n in zip((start, limit, delta), ("start", "limit", "delta"))]
        tensors = [a for a in args if is_tensor_like(a)]
        if dtype is None:
            order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]
            found = [
                convert_to_tensor(a).dtype.base_dtype
                if is_tensor_like(a)
                else _python_range_dtype(a)
                for a in args
            ]
            if any(d not in order for d in found):
                raise TypeError(
                    f"range arguments must be int32, int64, float32 or float64, "
                    f"got {[d.name for d in found]}"
                )
            dtype = max(found, key=order.index)
        del tensors
        converted = []
        for a, arg_name in zip(args, ("start", "limit", "delta")):
            if is_tensor_like(a):
                t = convert_to_tensor(a)
                if t.dtype.base_dtype is not dtype:
                    t = cast(t, dtype)
                converted.append(t)
            else:
                converted.append(convert_to_tensor(a, dtype=dtype, name=arg_name))
        return apply_op(
            "Range", start=converted[0], limit=converted[1], delta=converted[2], name=name
        )


def _python_range_dtype(value: Any) -> dtypes.DType:
    if isinstance(value, np.ndarray | np.generic):
        return dtypes.as_dtype(value.dtype)
    return dtypes.dtype_of_value(value)


def dynamic_stitch(indices: Any, data: Any, name: str | None = None) -> Tensor:
    """Interleaves `data[i]` into one tensor at rows `indices[i]` (`tf.dynamic_stitch`).

    `merged[indices[m][j]] = data[m][j]`; for repeated indices the last one wins.

    Args:
      indices: a list of int32 tensors.
      data: a list of tensors; `data[m].shape = indices[m].shape + D`.
      name: op name.

    Returns:
      `T [max(indices) + 1] + D`.
    """
    return apply_op("DynamicStitch", indices=list(indices), data=list(data), name=name)


__all__ = [
    "gather",
    "one_hot",
    "where",
    "boolean_mask",
    "range",
    "dynamic_stitch",
]
