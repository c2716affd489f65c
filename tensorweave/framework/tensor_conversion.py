"""`convert_to_tensor` and its registry of conversion functions.

Follows `tf.convert_to_tensor` and `tf.register_tensor_conversion_function`.

The framework registers only `Tensor` itself; the op modules register Python/NumPy values
(as `Const`), lists of tensors (as `Pack`) and variables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.operation import Tensor

ConversionFn = Callable[..., Any]
_CONVERSIONS: list[tuple[int, type | tuple[type, ...], ConversionFn]] = []


def register_tensor_conversion_function(
    base_type: type | tuple[type, ...], conversion_func: ConversionFn, priority: int = 100
) -> None:
    """Registers a function converting instances of `base_type` to tensors.

    `conversion_func(value, dtype=None, name=None, as_ref=False) -> Tensor`; among the
    functions matching a value, lower `priority` runs first.

    Raises:
      TypeError: if `conversion_func` is not callable.
    """
    if not callable(conversion_func):
        raise TypeError("conversion_func must be callable.")
    _CONVERSIONS.append((priority, base_type, conversion_func))
    _CONVERSIONS.sort(key=lambda e: e[0])


def _tensor_to_tensor(value: Tensor, dtype: Any = None, name: Any = None, as_ref: bool = False):
    if dtype is not None and not dtype.is_compatible_with(value.dtype):
        raise ValueError(
            f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype "
            f"{value.dtype.name}: {value!r}"
        )
    return value


register_tensor_conversion_function(Tensor, _tensor_to_tensor, priority=0)


def convert_to_tensor(
    value: Any,
    dtype: Any = None,
    name: str | None = None,
    preferred_dtype: Any = None,
    as_ref: bool = False,
) -> Tensor:
    """Converts `value` (a Tensor, Variable, NumPy array, Python scalar or list) to a `Tensor`.

    Args:
      value: the object to convert.
      dtype: the required element type, or None to infer it.
      name: name for a new `Const` op, when one is created.
      preferred_dtype: used when `dtype` is None for Python values (not NumPy values),
        falling back to inference if the value cannot be represented with it.
      as_ref: return the reference (`_ref`-typed) tensor of a variable.

    Returns:
      A `Tensor`.

    Raises:
      TypeError: if no conversion function accepts `value`, or `value` does not fit `dtype`.
      ValueError: if a Tensor's dtype differs from `dtype`; for None (as TF 1.x).
    """
    if value is None:
        raise ValueError("None values not supported.")
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if type(value) is Tensor and dtype is None:
        return value
    # As in TensorFlow, a NumPy value keeps its own dtype: `preferred_dtype` (an op's
    # default type attr) only types Python scalars and lists.
    if isinstance(value, np.ndarray | np.generic) and value.dtype != object:
        preferred_dtype = None
    if dtype is None and preferred_dtype is not None:
        try:
            t = _convert(value, dtypes.as_dtype(preferred_dtype), name, as_ref)
        except (TypeError, ValueError):
            pass
        else:
            return t
    return _convert(value, dtype, name, as_ref)


def _convert(value: Any, dtype: Any, name: str | None, as_ref: bool) -> Tensor:
    for _, base_type, fn in _CONVERSIONS:
        if isinstance(value, base_type):
            ret = fn(value, dtype=dtype, name=name, as_ref=as_ref)
            if ret is NotImplemented:
                continue
            if not isinstance(ret, Tensor):
                raise RuntimeError(
                    f"Conversion function {fn!r} for type {base_type} returned non-Tensor: {ret!r}"
                )
            if dtype is not None and not dtype.is_compatible_with(ret.dtype):
                raise RuntimeError(
                    f"Conversion function {fn!r} for type {base_type} returned incompatible "
                    f"dtype: requested = {dtype.name}, actual = {ret.dtype.name}"
                )
            return ret
    raise TypeError(
        f"Failed to convert object of type {type(value)} to Tensor. "
        f"Contents: {value!r}. Consider casting elements to a supported type."
    )


def convert_n_to_tensor(values: Any, dtype: Any = None, name: str | None = None) -> list[Tensor]:
    """Converts each element of `values` (follows `tf.convert_n_to_tensor`).

    Raises:
      TypeError: if `values` is not a list or tuple.
    """
    if not isinstance(values, list | tuple):
        raise TypeError("values must be a sequence.")
    return [
        convert_to_tensor(v, dtype=dtype, name=None if name is None else f"{name}_{i}")
        for i, v in enumerate(values)
    ]


def is_tensor_like(value: Any) -> bool:
    """True for Tensors and objects that convert to one without a constant (variables)."""
    return isinstance(value, Tensor) or hasattr(value, "_as_graph_element")
