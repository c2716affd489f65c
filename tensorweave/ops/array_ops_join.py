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
from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.shape_inference import (
    is_tensor_like,
    merge_shapes,
    op_error,
    static_int,
    static_shape_value,
    static_value,
    with_rank,
    with_rank_at_least,
)
from tensorweave.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorweave.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tensorweave.ops import constant_op

_INDEX = "{int32, int64} = DT_INT32"


def _axis_in(op: Operation, axis: int, rank: int) -> int:
    if axis < -rank or axis >= rank:
        raise op_error(op, f"Invalid axis: {axis}; must be in [{-rank},{rank})")
    return axis + rank if axis < 0 else axis


@register_op(
    "Pack",
    inputs=["values: N * T"],
    outputs=["output: T"],
    attrs=["N: int >= 1", "T: type", "axis: int = 0"],
)
def _pack_shape(op: Operation) -> list[TensorShape]:
    inputs = op.inputs
    cur = inputs[-1].shape
    for i in range(len(inputs) - 2, -1, -1):
        cur = merge_shapes(
            op, inputs[i].shape, cur, f"\n\tFrom merging shape {i} with other shapes."
        )
    if cur.ndims is None:
        return [unknown_shape()]
    axis = _axis_in(op, op.get_attr("axis"), cur.ndims + 1)
    dims = cur.as_list()
    return [TensorShape(dims[:axis] + [len(inputs)] + dims[axis:])]


@register_op(
    "Unpack",
    inputs=["value: T"],
    outputs=["output: num * T"],
    attrs=["num: int >= 0", "T: type", "axis: int = 0"],
)
def _unpack_shape(op: Operation) -> list[TensorShape]:
    s = op.inputs[0].shape
    num = op.get_attr("num")
    if s.ndims is None:
        return [unknown_shape()] * num
    axis = _axis_in(op, op.get_attr("axis"), s.ndims)
    dims = s.as_list()
    if dims[axis] is not None and dims[axis] != num:
        raise op_error(op, f"Dimension must be {num} but is {dims[axis]}")
    return [TensorShape(dims[:axis] + dims[axis + 1 :])] * num


@register_op(
    "ConcatV2",
    inputs=["values: N * T", "axis: Tidx"],
    outputs=["output: T"],
    attrs=["N: int >= 2", "T: type", f"Tidx: {_INDEX}"],
)
def _concat_shape(op: Operation) -> list[TensorShape]:
    values = [t.shape for t in op.inputs[:-1]]
    with_rank(op, op.inputs[-1].shape, 0)
    axis = static_int(op.inputs[-1])
    if axis is None:
        rank = next((s.ndims for s in values if s.ndims is not None), None)
        if rank is None:
            return [unknown_shape()]
        if rank == 0:
            raise op_error(op, "Can't concatenate scalars (use tf.stack instead)")
        for s in values:
            with_rank(op, s, rank)
        return [unknown_shape(rank)]
    min_rank = -axis if axis < 0 else axis + 1
    before: TensorShape | None = None
    after: TensorShape | None = None
    middle: int | None = 0
    for s in reversed(values):
        with_rank_at_least(op, s, min_rank)
        if s.ndims is None:
            b, m, a = unknown_shape(), None, unknown_shape()
        else:
            dims = s.as_list()
            k = axis + s.ndims if axis < 0 else axis
            b, m, a = TensorShape(dims[:k]), dims[k], TensorShape(dims[k + 1 :])
        before = b if before is None else merge_shapes(op, b, before)
        after = a if after is None else merge_shapes(op, a, after)
        middle = None if middle is None or m is None else middle + m
    if before.ndims is None or after.ndims is None:
        rank = next((s.ndims for s in values if s.ndims is not None), None)
        if rank is None:
            return [unknown_shape()]
        return [unknown_shape(rank)]
    return [before.concatenate([middle]).concatenate(after)]


register_op(
    "ConcatOffset",
    inputs=["concat_dim: int32", "shape: N * int32"],
    outputs=["offset: N * int32"],
    attrs=["N: int >= 2"],
    shape_fn=lambda op: [t.shape for t in op.inputs[1:]],
)


def _split_dim(op: Operation, tensor: Tensor, rank: int | None) -> int | None:
    with_rank(op, tensor.shape, 0)
    d = static_int(tensor)
    if d is None or rank is None:
        return None
    if d < -rank or d >= rank:
        raise op_error(
            op, f"Dimension size, given by scalar input {d} must be in range [{-rank}, {rank})"
        )
    return d + rank if d < 0 else d


@register_op(
    "Split",
    inputs=["split_dim: int32", "value: T"],
    outputs=["output: num_split * T"],
    attrs=["num_split: int >= 1", "T: type"],
)
def _split_shape(op: Operation) -> list[TensorShape]:
    value = op.inputs[1].shape
    n = op.get_attr("num_split")
    d = _split_dim(op, op.inputs[0], value.ndims)
    if d is None:
        return [unknown_shape(value.ndims)] * n
    dims = value.as_list()
    if dims[d] is not None:
        if dims[d] % n:
            raise op_error(
                op,
                f"Dimension size must be evenly divisible by {n} but is {dims[d]}\n\tNumber of "
                "ways to split should evenly divide the split dimension",
            )
        dims[d] //= n
    return [TensorShape(dims)] * n


@register_op(
    "SplitV",
    inputs=["value: T", "size_splits: Tlen", "split_dim: int32"],
    outputs=["output: num_split * T"],
    attrs=["num_split: int >= 1", "T: type", "Tlen: {int32, int64} = DT_INT64"],
)
def _split_v_shape(op: Operation) -> list[TensorShape]:
    value = op.inputs[0].shape
    n = op.get_attr("num_split")
    d = _split_dim(op, op.inputs[2], value.ndims)
    sizes = static_value(op.inputs[1])
    if value.ndims is None:
        return [unknown_shape()] * n
    if value.ndims == 0:
        raise op_error(op, "Can't split scalars")
    if d is None:
        return [unknown_shape(value.ndims)] * n
    dims = value.as_list()
    if sizes is None:
        return [TensorShape(dims[:d] + [None] + dims[d + 1 :])] * n
    sizes = [int(s) for s in sizes.reshape(-1)]
    if len(sizes) != n:
        raise op_error(op, "Length of size_splits should be equal to num_outputs")
    if sizes.count(-1) > 1:
        raise op_error(op, "size_splits can only have one -1")
    total = sum(s for s in sizes if s != -1)
    out = []
    for s in sizes:
        if s == -1:
            s = None if dims[d] is None else dims[d] - total
        out.append(TensorShape(dims[:d] + [s] + dims[d + 1 :]))
    if dims[d] is not None and (total > dims[d] if -1 in sizes else total != dims[d]):
        raise op_error(
            op,
            f"can't split axis of size {dims[d]} into pieces of size "
            f"[{','.join(str(s) for s in sizes)}]",
        )
    return out


@register_op(
    "Tile",
    inputs=["input: T", "multiples: Tmultiples"],
    outputs=["output: T"],
    attrs=["T: type", f"Tmultiples: {_INDEX}"],
)
def _tile_shape(op: Operation) -> list[TensorShape]:
    value = op.inputs[0].shape
    with_rank(op, op.inputs[1].shape, 1)
    multiples = static_shape_value(op.inputs[1])
    if value.ndims is not None:
        if multiples.ndims is not None and multiples.ndims != value.ndims:
            raise op_error(op, f"Shape must be rank {value.ndims} but is rank {multiples.ndims}")
        multiples = with_rank(op, multiples, value.ndims)
    if multiples.ndims is None:
        return [unknown_shape()]
    value = with_rank(op, value, multiples.ndims)
    return [
        TensorShape(
            [
                None if a is None or b is None else a * b
                for a, b in zip(value.as_list(), multiples.as_list())
            ]
        )
    ]


def _pad_shape(op: Operation) -> list[TensorShape]:
    paddings = with_rank(op, op.inputs[1].shape, 2)
    n_dim, cols = paddings.as_list()
    if cols is not None and cols != 2:
        raise op_error(op, f"Dimension must be 2 but is {cols}")
    value = op.inputs[0].shape
    if n_dim is not None:
        value = with_rank(op, value, n_dim)
    elif value.ndims is not None:
        n_dim = value.ndims
    pads = static_value(op.inputs[1])
    if pads is None:
        return [unknown_shape(n_dim)]
    value = with_rank(op, value, pads.shape[0])
    if np.any(pads < 0):
        raise op_error(op, "Paddings must be non-negative")
    return [
        TensorShape(
            [
                None if d is None else d + int(p[0]) + int(p[1])
                for d, p in zip(value.as_list(), pads)
            ]
        )
    ]


register_op(
    "Pad",
    inputs=["input: T", "paddings: Tpaddings"],
    outputs=["output: T"],
    attrs=["T: type", f"Tpaddings: {_INDEX}"],
    shape_fn=_pad_shape,
)
register_op(
    "PadV2",
    inputs=["input: T", "paddings: Tpaddings", "constant_values: T"],
    outputs=["output: T"],
    attrs=["T: type", f"Tpaddings: {_INDEX}"],
    shape_fn=_pad_shape,
)


@register_op(
    "ReverseV2",
    inputs=["tensor: T", "axis: Tidx"],
    outputs=["output: T"],
    attrs=[
        f"Tidx: {_INDEX}",
        "T: {uint8, int8, uint16, int16, int32, int64, bool, half, float, double, complex64, "
        "complex128, string}",
    ],
)
def _reverse_shape(op: Operation) -> list[TensorShape]:
    value = op.inputs[0].shape
    with_rank(op, op.inputs[1].shape, 1)
    if value.ndims is not None and value.ndims > 8:
        raise op_error(op, "reverse does not work on tensors with more than 8 dimensions")
    axes = static_value(op.inputs[1])
    if axes is not None and value.ndims is not None:
        r = value.ndims
        seen = set()
        for i, a in enumerate(int(a) for a in axes.reshape(-1)):
            c = a + r if a < 0 else a
            if c < 0 or c >= r:
                raise op_error(op, f"'axis'[{i}] = {a} is out of valid range [0, {r - 1}")
            if c in seen:
                raise op_error(op, f"axis {c} specified more than once.")
            seen.add(c)
    return [value]


register_op(
    "Unique",
    inputs=["x: T"],
    outputs=["y: T", "idx: out_idx"],
    attrs=["T: type", f"out_idx: {_INDEX}"],
    shape_fn=lambda op: [TensorShape([None]), with_rank(op, op.inputs[0].shape, 1)],
)

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
            from tensorweave.ops.array_ops import identity

            return identity(values[0], name=scope)
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
            from tensorweave.ops import math_ops

            v = math_ops.cast(v, dtype)
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
