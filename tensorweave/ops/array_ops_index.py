"""Slicing ops (follows TF 1.x `array_ops`).

`Slice`, `StridedSlice`, `StridedSliceGrad`, and `Tensor.__getitem__` (TF's
`_slice_helper`).

Re-exported by `tensorweave.ops.array_ops`; import from there.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.shape_inference import (
    is_tensor_like,
)
from tensorweave.framework.tensor_shape import Dimension, TensorShape
from tensorweave.ops import constant_op
from tensorweave.ops.array_ops_gather import boolean_mask
from tensorweave.ops.array_ops_join import stack
from tensorweave.ops.array_ops_shape import ones_like
from tensorweave.ops.cwise_unary_ops import cast

newaxis = None


# ------------------------------------------------------------------ Python wrappers


def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:  # noqa: A001
    """`input_[begin[i] : begin[i] + size[i]]` in every dimension (follows `tf.slice`).

    A size of -1 takes the rest of the dimension.

    Raises:
      errors.InvalidArgumentError: at run time, for out-of-range begin/size.
    """
    return apply_op("Slice", input=input_, begin=begin, size=size, name=name)


def strided_slice(
    input_: Any,
    begin: Any,
    end: Any,
    strides: Any = None,
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    new_axis_mask: int = 0,
    shrink_axis_mask: int = 0,
    var: Any = None,
    name: str | None = None,
) -> Tensor:
    """A strided slice of `input_` (follows `tf.strided_slice`).

    `Tensor.__getitem__` builds these. Bit i of a mask applies to entry i of
    `begin`/`end`/`strides`.

    Args:
      input_: the tensor to slice.
      begin: int32/int64 [n], start indices.
      end: int32/int64 [n], stop indices (exclusive).
      strides: int32/int64 [n], defaults to ones.
      begin_mask: ignore `begin[i]` (take the widest range).
      end_mask: ignore `end[i]` (take the widest range).
      ellipsis_mask: entry i is `...`.
      new_axis_mask: entry i inserts a dimension of size 1.
      shrink_axis_mask: entry i indexes by `begin[i]` and drops the dimension.
      var: unused (sliced assignment is not supported).
      name: op name.
    """
    del var
    if strides is None:
        strides = ones_like(begin)
    return apply_op(
        "StridedSlice",
        input=input_,
        begin=begin,
        end=end,
        strides=strides,
        begin_mask=begin_mask,
        end_mask=end_mask,
        ellipsis_mask=ellipsis_mask,
        new_axis_mask=new_axis_mask,
        shrink_axis_mask=shrink_axis_mask,
        name=name,
    )


_SLICE_TYPE_ERROR = (
    "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
    "tf.int32/tf.int64 tensors are valid indices"
)
_SLICE_DTYPES = (dtypes.int32, dtypes.int64)


def _check_index(idx: Any) -> None:
    if isinstance(idx, int | Dimension):
        return
    dtype = getattr(idx, "dtype", None)
    try:
        dtype = None if dtype is None else dtypes.as_dtype(dtype).base_dtype
    except TypeError:
        dtype = None
    shape_ = getattr(idx, "shape", None)
    if dtype not in _SLICE_DTYPES or (shape_ is not None and _known_rank(shape_) == 1):
        raise TypeError(_SLICE_TYPE_ERROR + f", got {idx!r}")


def _known_rank(shape_: Any) -> int | None:
    if isinstance(shape_, TensorShape):
        return shape_.ndims
    return len(shape_)


def _index_value(x: Any) -> Any:
    return int(x) if isinstance(x, Dimension) else x


def _slice_helper(tensor: Any, slice_spec: Any, var: Any = None) -> Tensor:
    """`tensor[slice_spec]` as a `StridedSlice` (follows TF's `_slice_helper`).

    Supports ints (negative from the end), slices with steps, `...`, `None`/`tf.newaxis`,
    and scalar int32/int64 tensors; a bool tensor or array index is a `boolean_mask`.

    Raises:
      TypeError: for any other kind of index.
      ValueError: for statically out-of-range indices.
    """
    if (
        isinstance(slice_spec, bool)
        or (is_tensor_like(slice_spec) and slice_spec.dtype.base_dtype is dtypes.bool)
        or (isinstance(slice_spec, np.ndarray) and slice_spec.dtype == np.bool_)
    ):
        return boolean_mask(tensor=tensor, mask=slice_spec)
    if not isinstance(slice_spec, list | tuple):
        slice_spec = [slice_spec]
    begin, end, strides, masks = _sparse_spec(slice_spec)
    values = [tensor, *begin, *end, *strides]
    with graph_mod.name_scope(None, "strided_slice", values) as name:
        packed = _packed_spec(begin, end, strides)
        return strided_slice(tensor, *packed, **masks, var=var, name=name)


def _bound(value: Any) -> tuple[Any, bool]:
    """A slice bound as `(value, False)`, or `(0, True)` (masked) when it is absent."""
    # `a[:]` may carry sys.maxsize as its stop; treat it like None.
    if value is not None and (is_tensor_like(value) or value != _MAXSIZE):
        _check_index(value)
        return _index_value(value), False
    return 0, True


def _sparse_spec(slice_spec: list[Any] | tuple[Any, ...]) -> tuple[list, list, list, dict]:
    """The sparse `StridedSlice` arguments of a Python index: begin, end, strides, masks.

    Raises:
      TypeError: for entries that are not valid indices.
    """
    begin: list[Any] = []
    end: list[Any] = []
    strides: list[Any] = []
    masks = dict.fromkeys(
        ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"), 0
    )
    for index, s in enumerate(slice_spec):
        bit = 1 << index
        if isinstance(s, builtins.slice):
            (b, begin_masked), (e, end_masked) = _bound(s.start), _bound(s.stop)
            begin.append(b)
            end.append(e)
            if begin_masked:
                masks["begin_mask"] |= bit
            if end_masked:
                masks["end_mask"] |= bit
            if s.step is not None:
                _check_index(s.step)
                strides.append(_index_value(s.step))
            else:
                strides.append(1)
        elif s is Ellipsis or s is newaxis:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks["ellipsis_mask" if s is Ellipsis else "new_axis_mask"] |= bit
        else:
            _check_index(s)
            s = _index_value(s)
            begin.append(s)
            # NOTE: a shrunk dimension ignores `end`; TensorFlow stores `s + 1`, which for
            # a tensor index would need an `Add` op, so a tensor index is stored as-is.
            end.append(s + 1 if not is_tensor_like(s) else s)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
    return begin, end, strides, masks


def _packed_spec(begin: list[Any], end: list[Any], strides: list[Any]) -> list[Tensor]:
    """`begin`, `end` and `strides` as 1-D tensors of one dtype (int64 if any is int64)."""
    if not begin:
        empty = constant_op.constant([], dtype=dtypes.int32)
        return [empty, empty, empty]
    packed = [stack(begin), stack(end), stack(strides)]
    if any(p.dtype.base_dtype is dtypes.int64 for p in packed):
        packed = [
            p if p.dtype.base_dtype is dtypes.int64 else cast(p, dtypes.int64) for p in packed
        ]
    return packed


_MAXSIZE = __import__("sys").maxsize

Tensor._override_operator("__getitem__", _slice_helper)


__all__ = [
    "newaxis",
    "slice",
    "strided_slice",
]
