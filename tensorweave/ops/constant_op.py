"""`tf.constant` and the conversion of Python/NumPy values to `Const` tensors."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import register_tensor_conversion_function
from tensorweave.framework.tensor_shape import Dimension, TensorShape
from tensorweave.framework.tensor_util import to_numpy


def constant(
    value: Any,
    dtype: Any = None,
    shape: Any = None,
    name: str = "Const",
    verify_shape: bool = False,
) -> Any:
    """Creates a `Const` tensor (follows TF 1.x `tf.constant`).

    Args:
      value: a Python scalar, nested list, NumPy array or bytes/str.
      dtype: element type; inferred when None (Python float -> float32, int -> int32).
      shape: optional shape; a scalar `value` is broadcast to it.
      name: op name.
      verify_shape: require `value` to have exactly `shape`.

    Returns:
      A `Tensor` of `dtype` and the value's (or `shape`'s) shape.

    Raises:
      TypeError: if `value` cannot be represented with `dtype`, or when `verify_shape` fails.
      ValueError: if `value` has more elements than `shape`.
    """
    dt = dtypes.as_dtype(dtype) if dtype is not None else None
    arr = to_numpy(value, dt)
    if dt is None:
        dt = dtypes.as_dtype(arr.dtype) if arr.dtype != object else dtypes.string
    if shape is not None:
        target = tuple(int(d) for d in shape) if not isinstance(shape, int) else (shape,)
        if verify_shape and arr.shape != target:
            raise TypeError(f"Expected Tensor's shape: {target}, got {arr.shape}.")
        if arr.size == 1 and int(np.prod(target)) != 1:
            arr = np.full(target, arr.reshape(()), dtype=arr.dtype)
        elif arr.size != int(np.prod(target)):
            raise ValueError(
                f"Too many elements provided. Needed at most {int(np.prod(target))}, "
                f"but received {arr.size}"
            )
        else:
            arr = arr.reshape(target)
    arr = np.array(arr, copy=True)
    arr.flags.writeable = False
    g = graph_mod.get_default_graph()
    op = g.create_op("Const", [], [dt], name=name, attrs={"value": arr, "dtype": dt})
    return op.outputs[0]


def _constant_conversion(value: Any, dtype: Any = None, name: Any = None, as_ref: bool = False):
    if as_ref:
        raise TypeError(f"Cannot convert {value!r} to a mutable (ref) tensor.")
    return constant(value, dtype=dtype, name=name or "Const")


register_tensor_conversion_function(
    (int, float, complex, bool, str, bytes, list, tuple, np.ndarray, np.generic),
    _constant_conversion,
    priority=100,
)


def _shape_dtype(dtype: Any, sizes: list[int], what: str) -> dtypes.DType:
    """int32, or int64 when asked or when a size does not fit int32."""
    big = [d for d in sizes if d > 2**31 - 1]
    if dtype is None:
        return dtypes.int64 if big else dtypes.int32
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Cannot convert a {what} to dtype: {dtype.name}")
    if dtype is dtypes.int32 and big:
        raise ValueError(
            f"Cannot convert a {what} to dtype int32; a dimension is too large ({big[0]})")
    return dtype


def _tensor_shape_conversion(
    shape: TensorShape, dtype: Any = None, name: Any = None, as_ref: bool = False
):
    """A fully defined `TensorShape` as a 1-D int32 (int64 if needed) `Const`, as in TF.

    Raises:
      ValueError: if the shape is not fully defined.
      TypeError: for a dtype other than int32/int64.
    """
    if not shape.is_fully_defined():
        raise ValueError(f"Cannot convert a partially known TensorShape to a Tensor: {shape}")
    sizes = shape.as_list()
    dtype = _shape_dtype(dtype, sizes, "TensorShape")
    return constant(sizes, dtype=dtype, name=name or "shape_as_tensor")


def _dimension_conversion(dim: Dimension, dtype: Any = None, name: Any = None,
                          as_ref: bool = False):
    """A known `Dimension` as a scalar int32 (int64 if needed) `Const`, as in TF.

    Raises:
      ValueError: if the dimension is unknown.
      TypeError: for a dtype other than int32/int64.
    """
    if dim.value is None:
        raise ValueError(f"Cannot convert an unknown Dimension to a Tensor: {dim}")
    dtype = _shape_dtype(dtype, [dim.value], "Dimension")
    return constant(dim.value, dtype=dtype, name=name or "shape_as_tensor")


register_tensor_conversion_function(TensorShape, _tensor_shape_conversion, priority=100)
register_tensor_conversion_function(Dimension, _dimension_conversion, priority=100)

__all__ = ["constant"]
