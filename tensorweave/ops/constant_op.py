"""`tf.constant` and the conversion of Python/NumPy values to `Const` tensors."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import register_tensor_conversion_function
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

__all__ = ["constant"]
