"""Static shapes with unknown dimensions and unknown rank (follows `tf.TensorShape`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from tensorweave.protos import tensor_shape_pb2


class Dimension:
    """One dimension of a shape: an int >= 0, or unknown (`value is None`)."""

    __slots__ = ("_value",)

    def __init__(self, value: Any):
        if isinstance(value, Dimension):
            value = value.value
        if value is None:
            self._value = None
            return
        try:
            ivalue = int(value.__index__())
        except AttributeError as e:
            raise TypeError(
                f"Dimension value must be integer or None or have an __index__ method, got "
                f"value '{value!r}' with type '{type(value)}'"
            ) from e
        if ivalue < 0:
            raise ValueError(f"Dimension {ivalue} must be >= 0")
        self._value = ivalue

    @property
    def value(self) -> int | None:
        """The size, or None when unknown."""
        return self._value

    def is_compatible_with(self, other: Any) -> bool:
        """True when either is unknown or both are equal."""
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def assert_is_compatible_with(self, other: Any) -> None:
        """Raises ValueError if the dimensions are not compatible."""
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")

    def merge_with(self, other: Any) -> Dimension:
        """The more specific of two compatible dimensions.

        Raises:
          ValueError: if both are known and differ.
        """
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return Dimension(self._value if self._value is not None else other.value)

    def __eq__(self, other: Any) -> Any:
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other.value is None:
            return None
        return self._value == other.value

    def __ne__(self, other: Any) -> Any:
        eq = self.__eq__(other)
        return eq if eq is None or eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(self._value)

    def __int__(self) -> int:
        if self._value is None:
            raise TypeError("Cannot convert an unknown Dimension to int")
        return self._value

    def __index__(self) -> int:
        return self.__int__()

    def _arith(self, other: Any, fn) -> Dimension:
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other.value))

    def __add__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a - b)

    def __mul__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a // b)

    def __mod__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a % b)

    def __lt__(self, other: Any) -> Any:
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return None
        return self._value < other.value

    def __le__(self, other: Any) -> Any:
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return None
        return self._value <= other.value

    def __gt__(self, other: Any) -> Any:
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return None
        return self._value > other.value

    def __ge__(self, other: Any) -> Any:
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return None
        return self._value >= other.value

    def __repr__(self) -> str:
        return f"Dimension({self._value!r})"

    def __str__(self) -> str:
        return "?" if self._value is None else str(self._value)

    def __reduce__(self):
        return Dimension, (self._value,)


def as_dimension(value: Any) -> Dimension:
    """Converts an int, None or Dimension to a `Dimension`."""
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dim: Any) -> int | None:
    """The int value of a Dimension or int, None when unknown (follows `tf.dimension_value`)."""
    return dim.value if isinstance(dim, Dimension) else dim


class TensorShape:
    """A possibly-partial static shape (follows `tf.TensorShape`).

    `TensorShape(None)` has unknown rank; `TensorShape([None, 3])` has rank 2 with an unknown
    first dimension. Iteration yields `Dimension`s (TF 1.x behaviour); `as_list()` gives ints
    and None.
    """

    __slots__ = ("_dims",)

    def __init__(self, dims: Any):
        if dims is None:
            self._dims: tuple[Dimension, ...] | None = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif hasattr(dims, "dim") and hasattr(dims, "unknown_rank"):  # TensorShapeProto
            if dims.unknown_rank:
                self._dims = None
            else:
                self._dims = tuple(Dimension(None if d.size == -1 else d.size) for d in dims.dim)
        elif isinstance(dims, Iterable) and not isinstance(dims, str | bytes):
            self._dims = tuple(as_dimension(d) for d in dims)
        else:
            self._dims = (as_dimension(dims),)

    @property
    def dims(self) -> list[Dimension] | None:
        """List of `Dimension`s, or None for unknown rank."""
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self) -> int | None:
        """The rank, or None when unknown."""
        return None if self._dims is None else len(self._dims)

    @property
    def rank(self) -> int | None:
        """Alias of `ndims`."""
        return self.ndims

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __iter__(self) -> Iterator[Any]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key: Any) -> Any:
        if self._dims is not None:
            if isinstance(key, slice):
                return TensorShape(self._dims[key])
            return self._dims[key]
        if isinstance(key, slice):
            start, stop = key.start, key.stop
            if key.step not in (None, 1) or (start or 0) < 0 or (stop is not None and stop < 0):
                return unknown_shape()
            if stop is None:
                return unknown_shape()
            return unknown_shape(ndims=stop - (start or 0))
        return Dimension(None)

    def num_elements(self) -> int | None:
        """Product of the dimensions, or None if any is unknown."""
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:  # type: ignore[union-attr]
            n *= d.value  # type: ignore[operator]
        return n

    def is_fully_defined(self) -> bool:
        """True when the rank and every dimension are known."""
        return self._dims is not None and all(d.value is not None for d in self._dims)

    def assert_is_fully_defined(self) -> None:
        """Raises ValueError unless fully defined."""
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def merge_with(self, other: Any) -> TensorShape:
        """The most specific shape compatible with both.

        Raises:
          ValueError: if the shapes are not compatible.
        """
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if len(self._dims) != len(other._dims):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        try:
            return TensorShape([a.merge_with(b) for a, b in zip(self._dims, other._dims)])
        except ValueError as e:
            raise ValueError(f"Shapes {self} and {other} are not compatible") from e

    def is_compatible_with(self, other: Any) -> bool:
        """True if some fully-defined shape could match both."""
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a.is_compatible_with(b) for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other: Any) -> None:
        """Raises ValueError if not compatible."""
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def most_specific_compatible_shape(self, other: Any) -> TensorShape:
        """The most specific shape compatible with both (unknown where they differ)."""
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return unknown_shape()
        return TensorShape(
            [a.value if a.value == b.value else None for a, b in zip(self._dims, other._dims)]
        )

    def concatenate(self, other: Any) -> TensorShape:
        """This shape followed by `other` (unknown rank if either is)."""
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return unknown_shape()
        return TensorShape(self._dims + other._dims)

    def with_rank(self, rank: int) -> TensorShape:
        """This shape, with rank `rank` enforced.

        Raises:
          ValueError: if the rank is known and differs.
        """
        try:
            return self.merge_with(unknown_shape(ndims=rank))
        except ValueError as e:
            raise ValueError(f"Shape {self} must have rank {rank}") from e

    def with_rank_at_least(self, rank: int) -> TensorShape:
        """This shape; ValueError if its known rank is below `rank`."""
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank: int) -> TensorShape:
        """This shape; ValueError if its known rank is above `rank`."""
        if self._dims is not None and len(self._dims) > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def as_list(self) -> list[int | None]:
        """Dimensions as ints/None.

        Raises:
          ValueError: for unknown rank.
        """
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d.value for d in self._dims]

    def as_proto(self) -> Any:
        """This shape as a `TensorShapeProto` (-1 marks unknown dimensions)."""
        proto = tensor_shape_pb2.TensorShapeProto()
        if self._dims is None:
            proto.unknown_rank = True
        else:
            for d in self._dims:
                proto.dim.add(size=-1 if d.value is None else d.value)
        return proto

    def __eq__(self, other: Any) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._dims is None or other._dims is None:
            return self._dims is None and other._dims is None
        return [d.value for d in self._dims] == [d.value for d in other._dims]

    def __ne__(self, other: Any) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(None if self._dims is None else tuple(d.value for d in self._dims))

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return "TensorShape(%r)" % [d.value for d in self._dims]

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"

    def __reduce__(self):
        return TensorShape, (None if self._dims is None else [d.value for d in self._dims],)


def as_shape(shape: Any) -> TensorShape:
    """Converts a list, tuple, TensorShapeProto, None or TensorShape to a `TensorShape`."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(ndims: int | None = None, rank: int | None = None) -> TensorShape:
    """A shape of unknown rank, or of known rank `ndims` with unknown dimensions."""
    ndims = rank if ndims is None else ndims
    return TensorShape(None if ndims is None else [None] * ndims)


def scalar() -> TensorShape:
    """The shape of a scalar, `()`."""
    return TensorShape([])


__all__ = [
    "Dimension",
    "TensorShape",
    "as_dimension",
    "as_shape",
    "dimension_value",
    "scalar",
    "unknown_shape",
]


def shape_str(shape: Any) -> str:
    """TensorFlow's debug form of a shape: `[2,3]`, `?` for an unknown dimension.

    Takes a `TensorShape` (of unknown rank: `?`, as TF's shape inference writes it), a
    runtime shape (a sequence of ints; None or -1 dimensions are `?`), or None (`<unknown>`,
    as TF's `PartialTensorShape::DebugString`).
    """
    if shape is None:
        return "<unknown>"
    if isinstance(shape, TensorShape):
        if shape.ndims is None:
            return "?"
        shape = shape.as_list()
    return "[" + ",".join("?" if d is None or d < 0 else str(int(d)) for d in shape) + "]"
