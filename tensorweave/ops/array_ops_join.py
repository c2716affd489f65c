"""Joining and splitting ops (follows TF 1.x `array_ops`).

`Pack`, `Unpack`, `ConcatV2`, `ConcatOffset`, `Split`, `SplitV`, `Tile`, `Pad`, `PadV2`,
`ReverseV2`, `Unique`, and the auto-packing of lists that contain tensors.

Re-exported by `tensorweave.ops.array_ops`; import from there.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.shape_inference import (
    is_tensor_like,
)
from tensorweave.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorweave.framework.tensor_shape import Dimension
from tensorweave.ops import constant_op
from tensorweave.ops.cwise_unary_ops import cast

# ------------------------------------------------------------------ Python wrappers


def stack(values: Any, axis: int = 0, name: str = "stack") -> Tensor:
    """Stacks rank-R tensors into one rank-(R+1) tensor along `axis` (follows `tf.stack`).

    With `axis == 0` a list of plain values becomes a single `Const`.

    Args:
      values: a list of tensors (or convertible values) of one dtype and shape.
      axis: where the new dimension goes, in `[-(R+1), R+1)`.
      name: op name.

    Raises:
      ValueError: if `axis` is out of range or the shapes are statically incompatible.
      errors.InvalidArgumentError: at run time, if the shapes differ.
    """
    if axis == 0:
        try:
            return convert_to_tensor(values, name=name)
        except (TypeError, ValueError):
            pass
    first = convert_to_tensor(values[0], name=name)
    if first.shape.ndims is not None:
        expanded = first.shape.ndims + 1
        if axis < -expanded or axis >= expanded:
            raise ValueError(f"axis = {axis} not in [{-expanded}, {expanded})")
    return apply_op("Pack", values=list(values), axis=axis, name=name)


def unstack(
    value: Any, num: int | None = None, axis: int = 0, name: str = "unstack"
) -> list[Tensor]:
    """Splits `value` along `axis` into a list of rank-(R-1) tensors (follows `tf.unstack`).

    Raises:
      ValueError: if `num` is None and the static size of `axis` is unknown, or `axis` is
        out of range.
    """
    if num is None:
        value = convert_to_tensor(value)
        s = value.shape
        if s.ndims is not None:
            if axis < -s.ndims or axis >= s.ndims:
                raise ValueError(f"axis = {axis} not in [{-s.ndims}, {s.ndims})")
            num = s.as_list()[axis]
        if num is None:
            raise ValueError(f"Cannot infer num from shape {s}")
    return apply_op("Unpack", value=value, num=num, axis=axis, name=name)[0]


def concat(values: Any, axis: Any, name: str = "concat") -> Tensor:
    """Concatenates tensors along dimension `axis` (follows `tf.concat`).

    A single tensor is returned through an `Identity`.

    Raises:
      ValueError: for statically incompatible shapes or an out-of-range `axis`.
      errors.InvalidArgumentError: at run time, for mismatched shapes.
    """
    if not isinstance(values, list | tuple):
        values = [values]
    if len(values) == 1:
        with graph_mod.name_scope(name) as scope:
            axis_t = convert_to_tensor(axis, name="concat_dim", dtype=dtypes.int32)
            if axis_t.shape.ndims not in (None, 0):
                raise ValueError(f"Shape {axis_t.shape} must have rank 0")
            return apply_op("Identity", input=values[0], name=scope)
    return apply_op("ConcatV2", values=list(values), axis=axis, name=name)


def split(
    value: Any, num_or_size_splits: Any, axis: Any = 0, num: int | None = None, name: str = "split"
) -> list[Tensor]:
    """Splits `value` along `axis` (follows `tf.split`).

    `num_or_size_splits` is a number of equal parts, or the sizes of the parts (one may be
    -1).

    Raises:
      ValueError: if the number of outputs cannot be inferred, or the sizes are statically
        incompatible.
    """
    if isinstance(num_or_size_splits, int | np.integer | Dimension) and not isinstance(
        num_or_size_splits, bool
    ):
        n = int(num_or_size_splits)
        return apply_op("Split", split_dim=axis, value=value, num_split=n, name=name)[0]
    size_splits = convert_to_tensor(num_or_size_splits)
    if size_splits.shape.ndims == 0:
        raise ValueError(
            "Rank-0 tensors are not supported as the num_or_size_splits argument to split. "
            f"Argument provided: {num_or_size_splits}"
        )
    if num is None:
        if size_splits.shape.ndims:
            num = size_splits.shape.as_list()[0]
        if num is None:
            raise ValueError(f"Cannot infer num from shape {num_or_size_splits}")
    return apply_op(
        "SplitV",
        value=value,
        size_splits=size_splits,
        split_dim=axis,
        num_split=num,
        name=name,
    )[0]


def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Repeats `input` `multiples[i]` times along dimension i (follows `tf.tile`).

    Raises:
      ValueError: if `multiples` statically has the wrong length.
    """
    return apply_op("Tile", input=input, multiples=multiples, name=name)


def pad(
    tensor: Any,
    paddings: Any,
    mode: str = "CONSTANT",
    name: str | None = None,
    constant_values: Any = 0,
) -> Tensor:
    """Pads `tensor` with `paddings[i] = [before, after]` entries per dimension.

    Follows `tf.pad`; only the "CONSTANT" mode is supported.

    Raises:
      ValueError: for an unknown mode, or statically invalid paddings.
      NotImplementedError: for "REFLECT" and "SYMMETRIC".
    """
    if mode.upper() == "CONSTANT":
        if not is_tensor_like(constant_values) and np.all(np.asarray(constant_values) == 0):
            result = apply_op("Pad", input=tensor, paddings=paddings, name=name)
        else:
            result = apply_op(
                "PadV2",
                input=tensor,
                paddings=paddings,
                constant_values=constant_values,
                name=name,
            )
    elif mode.upper() in ("REFLECT", "SYMMETRIC"):
        raise NotImplementedError(f"pad mode {mode} is not supported")
    else:
        raise ValueError(f"Unknown padding mode: {mode}")
    return result


def reverse_v2(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    """Reverses `tensor` along the dimensions in `axis` (follows `tf.reverse`).

    `tf.reverse` is the TF 1.x name of `ReverseV2`.

    Raises:
      ValueError: for statically out-of-range or repeated axes.
    """
    return apply_op("ReverseV2", tensor=tensor, axis=axis, name=name)


reverse = reverse_v2

UniqueOutput = collections.namedtuple("UniqueOutput", ["y", "idx"])


def unique(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> UniqueOutput:
    """The distinct values of the 1-D `x` in order of first appearance (`tf.unique`).

    Also, for each element of `x`, the index of its value in `y`.

    Returns:
      `(y, idx)`: `T [n_unique]` and `out_idx [len(x)]`.
    """
    y, idx = apply_op("Unique", x=x, out_idx=dtypes.as_dtype(out_idx), name=name)
    return UniqueOutput(y, idx)


# --------------------------------------------------------------------- auto-packing


def _nested_dtype(values: Any) -> dtypes.DType | None:
    for v in values:
        if is_tensor_like(v):
            return v.dtype.base_dtype
        if isinstance(v, list | tuple):
            d = _nested_dtype(v)
            if d is not None:
                return d
    return None


def _cast_tensors(values: Any, dtype: dtypes.DType) -> Any:
    out = []
    for v in values:
        if is_tensor_like(v) and v.dtype.base_dtype is not dtype:
            v = cast(v, dtype)
        elif isinstance(v, list | tuple):
            v = _cast_tensors(v, dtype)
        out.append(v)
    return out


def _autopack(values: Any, dtype: dtypes.DType, name: str) -> Any:
    must_pack = False
    converted = []
    with graph_mod.name_scope(name) as scope:
        for i, v in enumerate(values):
            if is_tensor_like(v):
                if v.dtype.base_dtype is not dtype:
                    raise TypeError(
                        f"Cannot convert a list containing a tensor of dtype {v.dtype.name} "
                        f"to {dtype.name} (Tensor is: {v!r})"
                    )
                must_pack = True
            elif isinstance(v, list | tuple):
                v = _autopack(v, dtype, str(i))
                must_pack = must_pack or is_tensor_like(v)
            converted.append(v)
        if not must_pack:
            return converted
        elems = [
            convert_to_tensor(v)
            if is_tensor_like(v)
            else constant_op.constant(v, dtype=dtype, name=str(i))
            for i, v in enumerate(converted)
        ]
        return apply_op("Pack", values=elems, name=scope)


def _autopacking_conversion(
    values: Any, dtype: Any = None, name: Any = None, as_ref: bool = False
) -> Any:
    if as_ref:
        return NotImplemented
    inferred = _nested_dtype(values)
    if inferred is None:
        return NotImplemented
    if dtype is None:
        dtype = inferred
    else:
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype is not inferred:
            values = _cast_tensors(values, dtype)
    return _autopack(values, dtype, name or "packed")


register_tensor_conversion_function((list, tuple), _autopacking_conversion, priority=99)

__all__ = [
    "stack",
    "unstack",
    "concat",
    "split",
    "tile",
    "pad",
    "reverse",
    "reverse_v2",
    "unique",
]
