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
from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.shape_inference import (
    is_tensor_like,
    op_error,
    shape_str,
    static_shape_value,
    static_value,
    with_rank,
)
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops import constant_op

# --------------------------------------------------------------------- registrations

_INDEX = "{int32, int64} = DT_INT32"


def _shape_shape(op: Operation) -> list[TensorShape]:
    return [TensorShape([op.inputs[0].shape.ndims])]


def _scalar_shape(op: Operation) -> list[TensorShape]:
    return [TensorShape([])]


def _same_shape(op: Operation) -> list[TensorShape]:
    return [op.inputs[0].shape]


register_op(
    "Shape",
    inputs=["input: T"],
    outputs=["output: out_type"],
    attrs=["T: type", f"out_type: {_INDEX}"],
    shape_fn=_shape_shape,
)
register_op(
    "Size",
    inputs=["input: T"],
    outputs=["output: out_type"],
    attrs=["T: type", f"out_type: {_INDEX}"],
    shape_fn=_scalar_shape,
)
register_op(
    "Rank",
    inputs=["input: T"],
    outputs=["output: int32"],
    attrs=["T: type"],
    shape_fn=_scalar_shape,
)


@register_op(
    "Reshape",
    inputs=["tensor: T", "shape: Tshape"],
    outputs=["output: T"],
    attrs=["T: type", f"Tshape: {_INDEX}"],
)
def _reshape_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[1].shape, 1)
    try:
        out = static_shape_value(op.inputs[1])
    except ValueError as e:
        raise op_error(op, str(e)) from None
    in_shape = op.inputs[0].shape
    if out.ndims is None or in_shape.ndims is None:
        return [out]
    out_dims = out.as_list()
    in_dims = in_shape.as_list()
    out_unknown = [i for i, d in enumerate(out_dims) if d is None]
    in_unknown = [i for i, d in enumerate(in_dims) if d is None]
    if len(out_unknown) > 1 or len(in_unknown) > 1:
        return [out]
    out_known = int(np.prod([d for d in out_dims if d is not None], dtype=np.int64))
    in_known = int(np.prod([d for d in in_dims if d is not None], dtype=np.int64))
    if not in_unknown and not out_unknown:
        if in_known != out_known:
            raise op_error(
                op,
                f"Cannot reshape a tensor with {in_known} elements to shape {shape_str(out)} "
                f"({out_known} elements)",
            )
    elif not in_unknown and out_known > 0:
        if in_known % out_known:
            raise op_error(
                op, f"Dimension size must be evenly divisible by {out_known} but is {in_known}"
            )
        out_dims[out_unknown[0]] = in_known // out_known
    elif not out_unknown and in_unknown and in_known != 0:
        if out_known % in_known:
            raise op_error(
                op, f"Dimension size must be evenly divisible by {in_known} but is {out_known}"
            )
    return [TensorShape(out_dims)]


@register_op(
    "ExpandDims",
    inputs=["input: T", "dim: Tdim"],
    outputs=["output: T"],
    attrs=["T: type", f"Tdim: {_INDEX}"],
)
def _expand_dims_shape(op: Operation) -> list[TensorShape]:
    dim_value = static_value(op.inputs[1])
    if dim_value is not None and dim_value.size != 1:
        raise op_error(op, "'dim' input must be a tensor with a single value")
    in_shape = op.inputs[0].shape
    if dim_value is None or in_shape.ndims is None:
        return [unknown_shape()]
    dim = int(dim_value.reshape(-1)[0])
    rank = in_shape.ndims
    if dim < -rank - 1 or dim > rank:
        raise op_error(op, f"dim {dim} not in the interval [{-rank - 1}, {rank}].")
    if dim < 0:
        dim += rank + 1
    dims = in_shape.as_list()
    return [TensorShape(dims[:dim] + [1] + dims[dim:])]


@register_op(
    "Squeeze",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type", "squeeze_dims: list(int) >= 0 = []"],
)
def _squeeze_shape(op: Operation) -> list[TensorShape]:
    in_shape = op.inputs[0].shape
    if in_shape.ndims is None:
        return [unknown_shape()]
    rank = in_shape.ndims
    wanted = []
    for i, d in enumerate(op.get_attr("squeeze_dims")):
        if d < -rank or d >= rank:
            raise op_error(op, f"squeeze_dims[{i}] not in [{-rank},{rank}).")
        wanted.append(d + rank if d < 0 else d)
    result = []
    for i, d in enumerate(in_shape.as_list()):
        explicit = i in wanted
        if d is None:
            if explicit:
                continue
            if not wanted:
                return [unknown_shape()]
        elif d == 1:
            if explicit or not wanted:
                continue
        elif explicit:
            raise op_error(op, f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
        result.append(d)
    return [TensorShape(result)]


@register_op(
    "Transpose",
    inputs=["x: T", "perm: Tperm"],
    outputs=["y: T"],
    attrs=["T: type", f"Tperm: {_INDEX}"],
)
def _transpose_shape(op: Operation) -> list[TensorShape]:
    in_shape = op.inputs[0].shape
    perm_shape = op.inputs[1].shape
    perm = static_value(op.inputs[1])
    perm_elems = perm_shape.num_elements()
    if in_shape.ndims is None and perm_elems is None and perm is None:
        return [unknown_shape()]
    if in_shape.ndims is not None:
        rank = in_shape.ndims
    elif perm_elems is not None:
        rank = perm_elems
    else:
        rank = perm.size
    if in_shape.ndims is None and rank < 2:
        return [in_shape]
    with_rank(op, in_shape, rank)
    with_rank(op, perm_shape, 1)
    if perm_elems is not None and perm_elems != rank:
        raise op_error(op, f"Dimension must be {rank} but is {perm_elems}")
    if perm is None:
        return [unknown_shape(rank)]
    dims = in_shape.as_list() if in_shape.ndims is not None else [None] * rank
    out = []
    for p in perm.reshape(-1):
        p = int(p)
        if p >= rank or p < -rank:
            raise op_error(op, f"perm dim {p} is out of range of input rank {rank}")
        out.append(dims[p])
    return [TensorShape(out)]


register_op(
    "InvertPermutation",
    inputs=["x: T"],
    outputs=["y: T"],
    attrs=[f"T: {_INDEX}"],
    shape_fn=lambda op: [with_rank(op, op.inputs[0].shape, 1)],
)


@register_op(
    "Fill",
    inputs=["dims: index_type", "value: T"],
    outputs=["output: T"],
    attrs=["T: type", f"index_type: {_INDEX}"],
)
def _fill_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[0].shape, 1)
    with_rank(op, op.inputs[1].shape, 0)
    value = static_value(op.inputs[0])
    if value is not None and np.any(value < 0):
        raise op_error(op, "Fill dimensions must be >= 0")
    return [static_shape_value(op.inputs[0])]


register_op("ZerosLike", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"], shape_fn=_same_shape)
register_op(
    "OnesLike",
    inputs=["x: T"],
    outputs=["y: T"],
    attrs=[
        "T: {half, float, double, int8, uint8, int16, uint16, int32, int64, complex64, "
        "complex128, bool}"
    ],
    shape_fn=_same_shape,
)

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
                from tensorweave.ops import array_ops_gather, array_ops_join

                perm = array_ops_join.reverse_v2(array_ops_gather.range(0, rank(a), 1), [0])
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
