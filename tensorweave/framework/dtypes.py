"""Tensor element types and their NumPy and `DataType`-enum equivalents (follows `tf.dtypes`)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

# `DataType` enum values of types.proto (TensorFlow's numbering); `_REF` types add 100.
_ENUMS = {
    "float32": 1,
    "float64": 2,
    "int32": 3,
    "uint8": 4,
    "int16": 5,
    "int8": 6,
    "string": 7,
    "complex64": 8,
    "int64": 9,
    "bool": 10,
    "uint16": 17,
    "complex128": 18,
    "float16": 19,
    "resource": 20,
    "variant": 21,
    "uint32": 22,
    "uint64": 23,
}
_NUMPY = {
    "float32": np.float32,
    "float64": np.float64,
    "int32": np.int32,
    "uint8": np.uint8,
    "int16": np.int16,
    "int8": np.int8,
    "string": np.object_,
    "complex64": np.complex64,
    "int64": np.int64,
    "bool": np.bool_,
    "uint16": np.uint16,
    "complex128": np.complex128,
    "float16": np.float16,
    "resource": np.object_,
    "variant": np.object_,
    "uint32": np.uint32,
    "uint64": np.uint64,
}
_REF_OFFSET = 100


class DType:
    """The type of the elements of a `Tensor` (follows `tf.DType`).

    Instances are interned: compare with `==` (which also accepts names, NumPy dtypes
    and enum values) or `is`.
    """

    __slots__ = ("_name", "_enum", "_np", "_base")

    def __init__(self, name: str, enum: int, np_type: Any, base: DType | None = None):
        self._name = name
        self._enum = enum
        self._np = np_type
        self._base = base if base is not None else self

    @property
    def name(self) -> str:
        """TensorFlow's name, e.g. `"float32"` or `"float32_ref"`."""
        return self._name

    @property
    def as_datatype_enum(self) -> int:
        """The `DataType` enum value (types.proto)."""
        return self._enum

    @property
    def as_numpy_dtype(self) -> Any:
        """The NumPy scalar type (`np.object_` for strings, holding `bytes`)."""
        return self._np

    @property
    def base_dtype(self) -> DType:
        """The non-reference type (`float32` for `float32_ref`)."""
        return self._base

    @property
    def real_dtype(self) -> DType:
        """The real part's type for complex types, else `base_dtype`."""
        if self._base is complex64:
            return float32
        if self._base is complex128:
            return float64
        return self._base

    @property
    def _is_ref_dtype(self) -> bool:
        return self._base is not self

    @property
    def _as_ref(self) -> DType:
        return self if self._is_ref_dtype else _REF_TYPES[self._name]

    @property
    def is_floating(self) -> bool:
        """True for float16/32/64."""
        return self._base._name in ("float16", "float32", "float64")

    @property
    def is_integer(self) -> bool:
        """True for signed and unsigned integer types."""
        return self._base._name.startswith(("int", "uint"))

    @property
    def is_unsigned(self) -> bool:
        """True for unsigned integer types and bool."""
        return self._base._name.startswith("uint") or self._base._name == "bool"

    @property
    def is_complex(self) -> bool:
        """True for complex64/128."""
        return self._base._name.startswith("complex")

    @property
    def is_bool(self) -> bool:
        """True for bool."""
        return self._base._name == "bool"

    @property
    def is_quantized(self) -> bool:
        """Always False: quantized types are not supported."""
        return False

    @property
    def is_numpy_compatible(self) -> bool:
        """False for resource and variant."""
        return self._base._name not in ("resource", "variant")

    @property
    def size(self) -> int:
        """Bytes per element (0 for string, resource and variant)."""
        if self._np is np.object_:
            return 0
        return np.dtype(self._np).itemsize

    @property
    def min(self) -> Any:
        """Smallest representable value.

        Raises:
          TypeError: for string, bool, complex, resource and variant.
        """
        return self._limit(False)

    @property
    def max(self) -> Any:
        """Largest representable value (same errors as `min`)."""
        return self._limit(True)

    def _limit(self, upper: bool) -> Any:
        if self.is_floating:
            info = np.finfo(self._np)
        elif self.is_integer:
            info = np.iinfo(self._np)
        else:
            raise TypeError(f"Cannot find minimum/maximum value of {self}.")
        return info.max if upper else info.min

    @property
    def limits(self) -> tuple[Any, Any]:
        """(min, max) of the type."""
        return (self.min, self.max)

    def is_compatible_with(self, other: Any) -> bool:
        """True if a value of type `other` can be used where this type is expected."""
        other = as_dtype(other)
        return self._enum in (other._enum, other.base_dtype._enum)

    def __eq__(self, other: Any) -> bool:
        if other is None:
            return False
        if isinstance(other, DType):
            return self is other
        try:
            return self is as_dtype(other)
        except TypeError:
            return False

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._enum

    def __reduce__(self):
        return as_dtype, (self._name,)

    def __repr__(self) -> str:
        return "tf." + self._name

    def __str__(self) -> str:
        return f"<dtype: {self._name!r}>"


_BASE_TYPES: dict[str, DType] = {n: DType(n, e, _NUMPY[n]) for n, e in _ENUMS.items()}
_REF_TYPES: dict[str, DType] = {
    n: DType(n + "_ref", e + _REF_OFFSET, _NUMPY[n], _BASE_TYPES[n]) for n, e in _ENUMS.items()
}

float16 = half = _BASE_TYPES["float16"]
float32 = _BASE_TYPES["float32"]
float64 = double = _BASE_TYPES["float64"]
int8 = _BASE_TYPES["int8"]
int16 = _BASE_TYPES["int16"]
int32 = _BASE_TYPES["int32"]
int64 = _BASE_TYPES["int64"]
uint8 = _BASE_TYPES["uint8"]
uint16 = _BASE_TYPES["uint16"]
uint32 = _BASE_TYPES["uint32"]
uint64 = _BASE_TYPES["uint64"]
bool = _BASE_TYPES["bool"]  # noqa: A001  (TensorFlow's public name `tf.bool`)
string = _BASE_TYPES["string"]
complex64 = _BASE_TYPES["complex64"]
complex128 = _BASE_TYPES["complex128"]
resource = _BASE_TYPES["resource"]
variant = _BASE_TYPES["variant"]

_BY_NAME: dict[str, DType] = {}
for _t in list(_BASE_TYPES.values()) + list(_REF_TYPES.values()):
    _BY_NAME[_t.name] = _t
_BY_NAME.update({"half": float16, "float": float32, "double": float64})
_BY_ENUM: dict[int, DType] = {
    t.as_datatype_enum: t for t in list(_BASE_TYPES.values()) + list(_REF_TYPES.values())
}
_BY_NUMPY: dict[Any, DType] = {
    np.dtype(v): _BASE_TYPES[k] for k, v in _NUMPY.items() if v is not np.object_
}
_BY_PYTHON = {
    float: float32,
    int: int32,
    complex: complex128,
    bytes: string,
    str: string,
    builtins.bool: bool,
}


def as_dtype(type_value: Any) -> DType:
    """Converts a DType, name, `DataType` enum, NumPy dtype or Python type to a `DType`.

    Args:
      type_value: e.g. `tf.float32`, `"float32"`, `1`, `np.float32`, `np.dtype("f4")`,
        `float` (-> float32), `int` (-> int32), `bool`, `str`/`bytes` (-> string).

    Returns:
      The interned `DType`.

    Raises:
      TypeError: if `type_value` names no supported type (follows `tf.as_dtype`).
    """
    if isinstance(type_value, DType):
        return type_value
    if type(type_value) is np.dtype:
        # NOTE: the hot path (tensor codecs): an array's dtype, one dict lookup.
        hit = _BY_NUMPY.get(type_value)
        if hit is not None:
            return hit
    if isinstance(type_value, str):
        if type_value in _BY_NAME:
            return _BY_NAME[type_value]
        raise TypeError(f"Cannot convert value {type_value!r} to a tensorweave DType.")
    if isinstance(type_value, int) and not isinstance(type_value, np.generic):
        if type_value in _BY_ENUM:
            return _BY_ENUM[type_value]
        raise TypeError(f"Cannot convert value {type_value!r} to a tensorweave DType.")
    if type_value in _BY_PYTHON:
        return _BY_PYTHON[type_value]
    try:
        npd = np.dtype(type_value)
    except TypeError as e:
        raise TypeError(f"Cannot convert value {type_value!r} to a tensorweave DType.") from e
    if npd in _BY_NUMPY:
        return _BY_NUMPY[npd]
    if npd.kind in ("S", "U", "O"):
        return string
    raise TypeError(f"Cannot convert value {type_value!r} to a tensorweave DType.")


def dtype_of_value(value: Any) -> DType:
    """Infers TensorFlow's default dtype for a Python or NumPy value (follows `tf.constant`).

    Python floats become float32, ints int32 (int64 when out of int32 range), bools bool,
    str/bytes string; NumPy arrays keep their dtype (float64 stays float64).

    Raises:
      TypeError: for values with no tensor dtype (e.g. an arbitrary object).
    """
    if isinstance(value, np.ndarray | np.generic):
        return as_dtype(value.dtype)
    arr = np.asarray(value)
    if arr.dtype.kind == "f":
        return float32
    if arr.dtype.kind in "iu":
        if arr.size and (arr.max() > 2**31 - 1 or arr.min() < -(2**31)):
            return int64
        return int32
    if arr.dtype.kind == "b":
        return bool
    if arr.dtype.kind == "c":
        return complex128
    if arr.dtype.kind in "SU":
        return string
    if arr.dtype.kind == "O":
        if all(isinstance(x, bytes | str) for x in arr.flat):
            return string
    raise TypeError(f"Cannot infer a tensor dtype for value {value!r}.")


QUANTIZED_DTYPES = frozenset()
__all__ = [
    "DType",
    "as_dtype",
    "float16",
    "half",
    "float32",
    "float64",
    "double",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "string",
    "complex64",
    "complex128",
    "resource",
    "variant",
]
