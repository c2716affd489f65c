"""Static helpers of the array ops' shape functions.

TensorFlow-worded shape-inference errors, and the statically known values of tensors
(`static_value`, `static_shape_value`), which extend `tensor_util.constant_value` with the
array ops whose outputs follow from static inputs, as TensorFlow's C++ shape inference does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.framework import tensor_util
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.strided_slice import validate_strided_slice
from tensorweave.framework.tensor_shape import TensorShape, shape_str, unknown_shape


def op_error(op: Operation, message: str) -> ValueError:
    """A shape-inference ValueError worded as TensorFlow's.

    The message ends `... for 'name' (op: 'Type') with input shapes: [2,3], [1].`
    """
    shapes = ", ".join(shape_str(t.shape) for t in op.inputs)
    return ValueError(f"{message} for '{op.name}' (op: '{op.type}') with input shapes: {shapes}.")


def with_rank(op: Operation, shape: TensorShape, rank: int) -> TensorShape:
    """`shape` with rank `rank` enforced; ValueError in TensorFlow's words otherwise."""
    if shape.ndims is not None and shape.ndims != rank:
        raise op_error(op, f"Shape must be rank {rank} but is rank {shape.ndims}")
    return shape if shape.ndims is not None else unknown_shape(rank)


def with_rank_at_least(op: Operation, shape: TensorShape, rank: int) -> TensorShape:
    """`shape`; ValueError in TensorFlow's words if its known rank is below `rank`."""
    if shape.ndims is not None and shape.ndims < rank:
        raise op_error(op, f"Shape must be at least rank {rank} but is rank {shape.ndims}")
    return shape


def merge_shapes(op: Operation, a: TensorShape, b: TensorShape, context: str = "") -> TensorShape:
    """`a.merge_with(b)`, with TensorFlow's shape-inference error message."""
    try:
        return a.merge_with(b)
    except ValueError:
        if a.ndims != b.ndims:
            msg = f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}"
        else:
            i = next(
                i
                for i, (x, y) in enumerate(zip(a.as_list(), b.as_list()))
                if x is not None and y is not None and x != y
            )
            msg = (
                f"Dimension {i} in both shapes must be equal, but are {a.as_list()[i]} and "
                f"{b.as_list()[i]}. Shapes are {shape_str(a)} and {shape_str(b)}."
            )
        raise op_error(op, msg + context) from None


def unchanged_shape(op: Operation) -> list[TensorShape]:
    """Shape function of ops whose output has the shape of input 0."""
    return [op.inputs[0].shape]


def broadcast_shapes(op: Operation, sx: TensorShape, sy: TensorShape) -> TensorShape:
    """The broadcast of two static shapes, as TensorFlow's `BroadcastBinaryOpShapeFn` infers it.

    An unknown dimension paired with a known dimension > 1 is assumed to be that dimension.

    Raises:
      ValueError: for known dimensions that differ and are not 1.
    """
    if sx.ndims is None or sy.ndims is None:
        return unknown_shape()
    xs, ys = sx.as_list(), sy.as_list()
    rank = max(len(xs), len(ys))
    xs = [1] * (rank - len(xs)) + xs
    ys = [1] * (rank - len(ys)) + ys
    dims: list[int | None] = []
    for dx, dy in zip(xs, ys):
        if dx is None or dy is None:
            if dx is not None and dx > 1:
                dims.append(dx)
            elif dy is not None and dy > 1:
                dims.append(dy)
            elif dx == 1:
                dims.append(dy)
            elif dy == 1:
                dims.append(dx)
            else:
                dims.append(None)
        elif dx == 1:
            dims.append(dy)
        elif dy == 1 or dx == dy:
            dims.append(dx)
        else:
            raise op_error(op, f"Dimensions must be equal, but are {dx} and {dy}")
    return TensorShape(dims)


def broadcast_shape_fn(op: Operation) -> list[TensorShape]:
    """Shape function of the broadcasting binary ops."""
    return [broadcast_shapes(op, op.inputs[0].shape, op.inputs[1].shape)]


def static_value(tensor: Any) -> np.ndarray | None:
    """The value of `tensor` if known while building the graph, else None.

    Extends `tensor_util.constant_value` with the array ops whose outputs follow from
    static inputs: `Reshape`, `ExpandDims`, `Squeeze`, `Pack`, `ConcatV2`, `StridedSlice`
    and `Slice` (also of a partially known `Shape`), `GatherV2`, `Range`, `Transpose`.
    """
    if not isinstance(tensor, Tensor):
        return None
    value = tensor_util.constant_value(tensor)
    if value is not None:
        return value
    op = tensor.op
    t = op.type
    try:
        if t in ("Reshape", "ExpandDims", "Squeeze"):
            x = static_value(op.inputs[0])
            if x is None or tensor.shape.ndims is None or not tensor.shape.is_fully_defined():
                return None
            return x.reshape(tensor.shape.as_list())
        if t == "StridedSlice":
            return _static_strided_slice(op)
        fold = _FOLD_STATIC_INPUTS.get(t)
        if fold is None:
            return None
        values = [static_value(x) for x in op.inputs]
        if any(v is None for v in values):
            return None
        return fold(op, values)
    except (ValueError, IndexError, TypeError):
        return None


def _static_slice(x: np.ndarray, begin: np.ndarray, size: np.ndarray) -> np.ndarray:
    return x[tuple(slice(int(b), None if int(s) == -1 else int(b) + int(s))
                   for b, s in zip(begin, size))]


# The ops `static_value` folds once all their inputs are static: NumPy on those values.
_FOLD_STATIC_INPUTS: dict[str, Callable[[Operation, list[np.ndarray]], np.ndarray]] = {
    "Pack": lambda op, v: np.stack(v, axis=op.get_attr("axis")),
    "ConcatV2": lambda op, v: np.concatenate(v[:-1], axis=int(v[-1])),
    "Slice": lambda op, v: _static_slice(*v),
    "GatherV2": lambda op, v: np.take(v[0], v[1], axis=int(v[2])),
    "Range": lambda op, v: np.arange(*v).astype(op.get_attr("Tidx").as_numpy_dtype),
    "Transpose": lambda op, v: np.transpose(v[0], v[1]),
}


def _static_strided_slice(op: Operation) -> np.ndarray | None:
    begin, end, strides = (static_value(v) for v in op.inputs[1:])
    if begin is None or end is None or strides is None:
        return None
    masks = {
        k: op.get_attr(k)
        for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
    }
    x = static_value(op.inputs[0])
    if x is not None:
        spec = validate_strided_slice(x.shape, begin, end, strides, **masks)
        return x[spec.numpy_index()].reshape(spec.final_shape)
    src = op.inputs[0].op
    if src.type != "Shape" or src.inputs[0].shape.ndims is None:
        return None
    dims = np.array([-1 if d is None else d for d in src.inputs[0].shape.as_list()], dtype=np.int64)
    spec = validate_strided_slice(dims.shape, begin, end, strides, **masks)
    picked = dims[spec.numpy_index()].reshape(spec.final_shape)
    if np.any(picked < 0):
        return None
    return picked.astype(src.get_attr("out_type").as_numpy_dtype)


def static_shape_value(tensor: Tensor) -> TensorShape:
    """A `TensorShape` from a 1-D int tensor holding a shape; unknown parts (and -1) are None.

    Extends `tensor_util.constant_value_as_shape` as TensorFlow's shape inference does:
    `Pack` of partially known scalars, `ConcatV2`, slices of `Shape`.

    Raises:
      ValueError: if a known value is below -1.
    """
    value = static_value(tensor)
    if value is not None:
        flat = value.reshape(-1)
        if np.any(flat < -1):
            raise ValueError(f"Invalid value in tensor used for shape: {int(flat.min())}")
        return TensorShape([None if d < 0 else int(d) for d in flat])
    op = tensor.op
    if op.type == "Shape":
        return op.inputs[0].shape
    if op.type == "Pack":
        dims: list[int | None] = []
        for x in op.inputs:
            v = static_value(x)
            dims.append(None if v is None or v.size != 1 or int(v) < 0 else int(v))
        return TensorShape(dims)
    if op.type == "ConcatV2":
        result = TensorShape([])
        for x in op.inputs[:-1]:
            result = result.concatenate(static_shape_value(x))
        return result
    if op.type == "StridedSlice" and op.inputs[0].op.type == "Shape":
        sliced = _sliced_shape(op)
        if sliced is not None:
            return sliced
    if tensor.shape.ndims == 1 and tensor.shape.as_list()[0] is not None:
        return unknown_shape(tensor.shape.as_list()[0])
    return unknown_shape()


def _sliced_shape(op: Operation) -> TensorShape | None:
    shape = op.inputs[0].op.inputs[0].shape
    begin, end, strides = (static_value(v) for v in op.inputs[1:])
    if shape.ndims is None or begin is None or end is None or strides is None:
        return None
    if op.get_attr("shrink_axis_mask") or op.get_attr("new_axis_mask"):
        return None
    try:
        spec = validate_strided_slice(
            [shape.ndims],
            begin,
            end,
            strides,
            **{k: op.get_attr(k) for k in ("begin_mask", "end_mask", "ellipsis_mask")},
        )
    except ValueError:
        return None
    return TensorShape(shape.as_list()[spec.numpy_index()[0]])


def static_int(tensor: Tensor) -> int | None:
    """The statically known value of a scalar (or 1-element) int tensor, else None."""
    v = static_value(tensor)
    if v is None or v.size != 1:
        return None
    return int(v.reshape(-1)[0])


def is_tensor_like(x: Any) -> bool:
    """True for Tensors and graph elements that convert to one (variables)."""
    return isinstance(x, Tensor) or (
        hasattr(x, "_as_graph_element") and hasattr(x, "dtype") and not isinstance(x, Operation)
    )
