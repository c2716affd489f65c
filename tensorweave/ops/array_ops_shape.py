"""Shape ops (follows TF 1.x `array_ops`).

`Shape`, `Size`, `Rank`, `Reshape`, `ExpandDims`, `Squeeze`, `Transpose`,
`InvertPermutation`, `Fill`, `ZerosLike`, `OnesLike`, and `tf.zeros`/`tf.ones`.

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
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import constant_op

# ------------------------------------------------------------------ Python wrappers


def shape(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:  # noqa: A002
    """The shape of `input` as a 1-D int tensor (follows `tf.shape`).

    A `Const` when the static shape is fully defined, else a `Shape` op.

    Args:
      input: a Tensor (or value convertible to one) of any shape.
      name: op name.
      out_type: int32 (default) or int64.

    Returns:
      `out_type` [rank(input)].
    """
    return shape_internal(input, name, optimize=True, out_type=out_type)


def shape_internal(
    input: Any,  # noqa: A002  (TensorFlow's argument name)
    name: str | None = None,
    optimize: bool = True,
    out_type: Any = dtypes.int32,
) -> Tensor:
    """`shape`, folding fully defined static shapes to a `Const` only when `optimize`."""
    out_type = dtypes.as_dtype(out_type)
    with graph_mod.name_scope(name, "Shape", [input]) as name:
        x = convert_to_tensor(input)
        if optimize and x.shape.is_fully_defined():
            return constant_op.constant(
                np.array(x.shape.as_list(), dtype=out_type.as_numpy_dtype), name=name
            )
        return apply_op("Shape", input=x, out_type=out_type, name=name)


def size(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:  # noqa: A002
    """The number of elements of `input` as a scalar (follows `tf.size`).

    Returns:
      `out_type` [] (a `Const` when the static shape is fully defined or has a zero
      dimension).
    """
    out_type = dtypes.as_dtype(out_type)
    with graph_mod.name_scope(name, "Size", [input]) as name:
        x = convert_to_tensor(input)
        s = x.shape
        if s.is_fully_defined():
            return constant_op.constant(s.num_elements(), dtype=out_type, name=name)
        if s.ndims is not None and any(d == 0 for d in s.as_list()):
            return constant_op.constant(0, dtype=out_type, name=name)
        return apply_op("Size", input=x, out_type=out_type, name=name)


def rank(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The rank of `input` as an int32 scalar (follows `tf.rank`).

    A `Const` when the static rank is known.
    """
    with graph_mod.name_scope(name, "Rank", [input]) as name:
        x = convert_to_tensor(input)
        if x.shape.ndims is not None:
            return constant_op.constant(x.shape.ndims, dtype=dtypes.int32, name=name)
        return apply_op("Rank", input=x, name=name)


def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:
    """`tensor` with the same elements in a new shape (follows `tf.reshape`).

    Args:
      tensor: a Tensor of any dtype.
      shape: int32/int64 [k]; at most one entry may be -1 (inferred).
      name: op name.

    Raises:
      ValueError: if the element counts are statically incompatible.
      errors.InvalidArgumentError: at run time, if they differ.
    """
    return apply_op("Reshape", tensor=tensor, shape=shape, name=name)


def expand_dims(
    input: Any,  # noqa: A002  (TensorFlow's argument name)
    axis: Any = None,
    name: str | None = None,
    dim: Any = None,
) -> Tensor:
    """Inserts a dimension of size 1 at `axis` (follows `tf.expand_dims`).

    `dim` is the deprecated alias of `axis`.

    Raises:
      ValueError: if neither or both of `axis` and `dim` are given, or `axis` is out of
        `[-rank-1, rank]`.
    """
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return apply_op("ExpandDims", input=input, dim=axis, name=name)


def squeeze(
    input: Any,  # noqa: A002  (TensorFlow's argument name)
    axis: Any = None,
    name: str | None = None,
    squeeze_dims: Any = None,
) -> Tensor:
    """Removes dimensions of size 1: those in `axis`, or all of them (follows `tf.squeeze`).

    `squeeze_dims` is the deprecated alias of `axis`.

    Raises:
      ValueError: if both `axis` and `squeeze_dims` are given, or a listed dimension is
        statically not 1.
    """
    if squeeze_dims is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'squeeze_dims'")
        axis = squeeze_dims
    if axis is None:
        axis = []
    elif np.isscalar(axis):
        axis = [axis]
    return apply_op("Squeeze", input=input, squeeze_dims=list(axis), name=name)


def transpose(a: Any, perm: Any = None, name: str = "transpose", conjugate: bool = False) -> Tensor:
    """Permutes the dimensions of `a`: output dim i is input dim `perm[i]`.

    Follows `tf.transpose`; the default `perm` reverses the dimensions.

    Raises:
      ValueError: if `perm` is statically not a permutation of the rank.
      NotImplementedError: for `conjugate=True` on complex tensors.
    """
    with graph_mod.name_scope(name, "transpose", [a]) as name:
        a = convert_to_tensor(a, name="a")
        if conjugate and a.dtype.is_complex:
            raise NotImplementedError("transpose(conjugate=True) is not supported")
        if perm is None:
            r = a.shape.ndims
            if r is None:
                ascending = apply_op("Range", start=0, limit=rank(a), delta=1)
                perm = apply_op("ReverseV2", tensor=ascending, axis=[0])
            else:
                perm = np.arange(r - 1, -1, -1, dtype=np.int32)
        return apply_op("Transpose", x=a, perm=perm, name=name)


def invert_permutation(x: Any, name: str | None = None) -> Tensor:
    """`y[x[i]] = i` for a permutation `x` of `0..n-1` (follows `tf.invert_permutation`).

    Raises:
      errors.InvalidArgumentError: at run time, if `x` is not a permutation.
    """
    return apply_op("InvertPermutation", x=x, name=name)


def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    """A tensor of shape `dims` filled with the scalar `value` (follows `tf.fill`).

    Args:
      dims: int32/int64 [rank], the output shape.
      value: scalar of any dtype.
      name: op name.
    """
    return apply_op("Fill", dims=dims, value=value, name=name)


def _zero_of(dtype: dtypes.DType) -> Any:
    if dtype is dtypes.bool:
        return False
    if dtype is dtypes.string:
        return ""
    return 0


def _filled(shape_arg: Any, value: Any, dtype: dtypes.DType, name: str) -> Tensor:
    if not is_tensor_like(shape_arg):
        try:
            static = TensorShape(shape_arg)
            dims = static.as_list() if static.is_fully_defined() else None
        except (TypeError, ValueError):
            dims = None
        if dims is not None:
            if int(np.prod(dims, dtype=np.int64)) < 1000:
                return constant_op.constant(value, dtype=dtype, shape=dims, name=name)
            big = any(d >= 2**31 for d in dims)
            shape_arg = constant_op.constant(dims, dtype=dtypes.int64 if big else dtypes.int32)
        else:
            shape_arg = convert_to_tensor(shape_arg, dtype=dtypes.int32)
    shape_arg = convert_to_tensor(shape_arg)
    if shape_arg.shape.ndims is None or shape_arg.shape.ndims == 0:
        shape_arg = reshape(shape_arg, [-1])
    return fill(shape_arg, constant_op.constant(value, dtype=dtype), name=name)


def zeros(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """A tensor of `shape` with all elements 0 (False, or "" for strings) (`tf.zeros`).

    A fully known shape with fewer than 1000 elements gives a `Const`; otherwise `Fill`.

    Args:
      shape: a list/tuple/TensorShape of ints, or a 1-D int32 tensor.
      dtype: element type (default float32).
      name: op name.
    """
    dtype = dtypes.as_dtype(dtype).base_dtype
    with graph_mod.name_scope(name, "zeros", [shape]) as name:
        return _filled(shape, _zero_of(dtype), dtype, name)


def ones(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """A tensor of `shape` with all elements 1 (True for bool) (follows `tf.ones`)."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    with graph_mod.name_scope(name, "ones", [shape]) as name:
        return _filled(shape, True if dtype is dtypes.bool else 1, dtype, name)


def zeros_like(
    tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True
) -> Tensor:
    """Zeros with the shape of `tensor` and its dtype (or `dtype`) (follows `tf.zeros_like`).

    With `optimize` and a fully defined static shape the result is a constant; otherwise a
    `ZerosLike` op (or `Fill` when `dtype` differs from the tensor's).
    """
    with graph_mod.name_scope(name, "zeros_like", [tensor]) as name:
        tensor = convert_to_tensor(tensor, name="tensor")
        base = tensor.dtype.base_dtype
        dtype = base if dtype is None else dtypes.as_dtype(dtype).base_dtype
        if optimize and tensor.shape.is_fully_defined() and base is not dtypes.variant:
            return zeros(tensor.shape.as_list(), dtype=dtype, name=name)
        if dtype is not base and dtype is not dtypes.variant:
            return zeros(shape_internal(tensor, optimize=optimize), dtype=dtype, name=name)
        return apply_op("ZerosLike", x=tensor, name=name)


def ones_like(
    tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True
) -> Tensor:
    """Ones with the shape of `tensor` and its dtype (or `dtype`) (follows `tf.ones_like`)."""
    with graph_mod.name_scope(name, "ones_like", [tensor]) as name:
        tensor = convert_to_tensor(tensor, name="tensor")
        ones_shape = shape_internal(tensor, optimize=optimize)
        dtype = tensor.dtype.base_dtype if dtype is None else dtypes.as_dtype(dtype)
        ret = ones(ones_shape, dtype=dtype, name=name)
        ret.set_shape(tensor.shape)
        return ret


__all__ = [
    "shape",
    "size",
    "rank",
    "reshape",
    "expand_dims",
    "squeeze",
    "transpose",
    "invert_permutation",
    "fill",
    "zeros",
    "ones",
    "zeros_like",
    "ones_like",
]
