"""Shared pieces of the element-wise ops: TensorFlow's type sets and the shape functions.

The broadcasting shape function follows TensorFlow's `BroadcastBinaryOpShapeFn`: an unknown
dimension paired with a known dimension > 1 is assumed to be that dimension.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

# TensorFlow's type sets (bfloat16 and the quantized types are not supported here).
FLOATS = "half, float, double"
COMPLEX = "complex64, complex128"
REAL_NUMBER = f"{FLOATS}, int32, int64, uint8, int16, int8, uint16, uint32, uint64"
NUMBER = f"{REAL_NUMBER}, {COMPLEX}"


# ----------------------------------------------------------------- shape functions
def format_shape(shape: TensorShape) -> str:
    """TensorFlow's debug form of a static shape: `[2,?,3]`, or `?` for unknown rank."""
    if shape.ndims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def shape_error(op: Any, message: str) -> ValueError:
    """A ValueError worded like TensorFlow's shape-inference errors for `op`."""
    shapes = ", ".join(format_shape(t.shape) for t in op.inputs)
    return ValueError(f"{message} for '{op.name}' (op: '{op.type}') with input shapes: {shapes}.")


def unchanged_shape(op: Any) -> list[TensorShape]:
    """The output has the shape of input 0."""
    return [op.inputs[0].shape]


def broadcast_shapes(op: Any, sx: TensorShape, sy: TensorShape) -> TensorShape:
    """The broadcast of two static shapes, as TensorFlow infers it.

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
            raise shape_error(op, f"Dimensions must be equal, but are {dx} and {dy}")
    return TensorShape(dims)


def broadcast_shape_fn(op: Any) -> list[TensorShape]:
    """Shape function of the broadcasting binary ops."""
    return [broadcast_shapes(op, op.inputs[0].shape, op.inputs[1].shape)]


def op_scope(name: str | None, default: str, values: list[Any]) -> Any:
    """`graph.name_scope(name, default, values)`: the scope an op function builds in."""
    return graph_mod.name_scope(name, default, values)


def base_dtype(t: Any) -> dtypes.DType:
    """The base (non-reference) dtype of tensor `t`."""
    return t.dtype.base_dtype
