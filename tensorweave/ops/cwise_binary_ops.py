"""Element-wise binary ops: arithmetic, comparisons and logic (follows TF 1.x `math_ops`).

Binary ops broadcast like NumPy; their static shapes follow TensorFlow's
`BroadcastBinaryOpShapeFn` (see `cwise_common`). `logical_not` lives here with the other
logical ops, and `BroadcastGradientArgs` (the gradient helper of broadcasting ops) too.
Everything public is re-exported by `cwise_ops` and `math_ops`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.cwise_common import base_dtype as _base
from tensorweave.ops.cwise_common import op_scope as _scope
from tensorweave.ops.cwise_unary_ops import cast


# ------------------------------------------------------------ binary functions
def add(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x + y` element-wise with broadcasting; strings concatenate.

    Follows TF 1.x `tf.add` (op `Add`; the `+` operator builds `AddV2` for numbers).

    Args:
      x: a numeric or string Tensor (or a value convertible to one).
      y: same dtype as `x`, broadcast-compatible shape.
      name: op name.

    Returns:
      A Tensor of `x`'s dtype with the broadcast shape.

    Raises:
      TypeError: if `x` and `y` have different dtypes.
      ValueError: if the static shapes cannot broadcast.
    """
    return apply_op("Add", x=x, y=y, name=name)


def add_v2(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x + y` element-wise (op `AddV2`, what the `+` operator builds for numbers)."""
    return apply_op("AddV2", x=x, y=y, name=name)


def _add_dispatch(x: Any, y: Any, name: str | None = None) -> Tensor:
    if _base(x) is dtypes.string:
        return apply_op("Add", x=x, y=y, name=name)
    return apply_op("AddV2", x=x, y=y, name=name)


def subtract(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x - y` element-wise with broadcasting (follows `tf.subtract`, op `Sub`)."""
    return apply_op("Sub", x=x, y=y, name=name)


def multiply(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x * y` element-wise with broadcasting (follows `tf.multiply`, op `Mul`)."""
    return apply_op("Mul", x=x, y=y, name=name)


def realdiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x / y` element-wise for real types (follows `tf.realdiv`, op `RealDiv`).

    Integer inputs divide truncating toward zero; integer division by zero raises
    InvalidArgumentError at run time.
    """
    return apply_op("RealDiv", x=x, y=y, name=name)


def div_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x / y`, with 0 wherever `y == 0` (follows `tf.div_no_nan`, floating types only)."""
    with _scope(name, "div_no_nan", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=_base(x))
        return apply_op("DivNoNan", x=x, y=y, name=scope)


def floor_div(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`floor(x / y)` element-wise (op `FloorDiv`, follows `tf.floor_div`).

    Integer division by zero raises InvalidArgumentError at run time.
    """
    return apply_op("FloorDiv", x=x, y=y, name=name)


def floordiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x // y` rounding toward negative infinity (follows `tf.floordiv`, op `FloorDiv`)."""
    with _scope(name, "floordiv", [x, y]) as scope:
        return apply_op("FloorDiv", x=x, y=y, name=scope)


def truncatediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Division rounding toward zero, as C (follows `tf.truncatediv`, op `TruncateDiv`)."""
    return apply_op("TruncateDiv", x=x, y=y, name=name)


def floormod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Remainder with the sign of `y`, `x - floor(x / y) * y` (follows `tf.floormod`)."""
    return apply_op("FloorMod", x=x, y=y, name=name)


mod = floormod


def truncatemod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Remainder with the sign of `x`, as C `fmod` (follows `tf.truncatemod`)."""
    return apply_op("TruncateMod", x=x, y=y, name=name)


_TRUEDIV_TABLE: dict[dtypes.DType, dtypes.DType | None] = {
    dtypes.uint8: dtypes.float32,
    dtypes.int8: dtypes.float32,
    dtypes.uint16: dtypes.float32,
    dtypes.int16: dtypes.float32,
    dtypes.int32: dtypes.float64,
    dtypes.int64: dtypes.float64,
    dtypes.float16: None,
    dtypes.float32: None,
    dtypes.float64: None,
    dtypes.complex64: None,
    dtypes.complex128: None,
}


def truediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x / y` with Python 3 semantics (follows `tf.truediv`).

    Integer inputs are cast first: int8/int16/uint8/uint16 to float32, int32/int64 to
    float64; the division is a `RealDiv` named `truediv`.

    Raises:
      TypeError: if `x` and `y` have different dtypes or the dtype cannot be divided.
    """
    with _scope(name, "truediv", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", preferred_dtype=_base(x))
        x_dtype, y_dtype = _base(x), _base(y)
        if x_dtype is not y_dtype:
            raise TypeError(f"x and y must have the same dtype, got {x_dtype!r} != {y_dtype!r}")
        if x_dtype not in _TRUEDIV_TABLE:
            raise TypeError(f"Invalid dtype {x_dtype!r} in __truediv__")
        target = _TRUEDIV_TABLE[x_dtype]
        if target is not None:
            x = cast(x, target)
            y = cast(y, target)
        return apply_op("RealDiv", x=x, y=y, name=scope)


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x / y` (follows `tf.divide`: Python 3 true division, see `truediv`)."""
    if name is not None:
        with _scope(name, "truediv", [x, y]) as scope:
            return truediv(x, y, name=scope)
    return truediv(x, y)


def div(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x / y` with Python 2 semantics (follows TF 1.x `tf.div`).

    Builds `RealDiv` for floating and complex types, `FloorDiv` (flooring) for integers.

    Raises:
      TypeError: if `x` and `y` have different dtypes.
    """
    with _scope(name, "div", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=_base(x))
        dt = _base(x)
        if dt.is_floating or dt.is_complex:
            return apply_op("RealDiv", x=x, y=y, name=scope)
        return apply_op("FloorDiv", x=x, y=y, name=scope)


def pow(x: Any, y: Any, name: str | None = None) -> Tensor:  # noqa: A001
    """`x ** y` element-wise (follows `tf.pow`, op `Pow`).

    Integer inputs with negative exponents raise InvalidArgumentError at run time.
    """
    with _scope(name, "Pow", [x]) as scope:
        return apply_op("Pow", x=x, y=y, name=scope)


def maximum(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Element-wise `max(x, y)` with broadcasting (follows `tf.maximum`)."""
    return apply_op("Maximum", x=x, y=y, name=name)


def minimum(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Element-wise `min(x, y)` with broadcasting (follows `tf.minimum`)."""
    return apply_op("Minimum", x=x, y=y, name=name)


def squared_difference(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`(x - y) * conj(x - y)` element-wise (follows `tf.squared_difference`)."""
    return apply_op("SquaredDifference", x=x, y=y, name=name)


def atan2(y: Any, x: Any, name: str | None = None) -> Tensor:
    """`atan(y / x)` in the right quadrant (follows `tf.atan2`; note the argument order)."""
    return apply_op("Atan2", y=y, x=x, name=name)


# ---------------------------------------------------------------- comparisons
def less(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Element-wise `x < y` with broadcasting, as bool (follows `tf.less`)."""
    return apply_op("Less", x=x, y=y, name=name)


def less_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Element-wise `x <= y`, as bool (follows `tf.less_equal`)."""
    return apply_op("LessEqual", x=x, y=y, name=name)


def greater(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Element-wise `x > y`, as bool (follows `tf.greater`)."""
    return apply_op("Greater", x=x, y=y, name=name)


def greater_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Element-wise `x >= y`, as bool (follows `tf.greater_equal`)."""
    return apply_op("GreaterEqual", x=x, y=y, name=name)


def equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Element-wise `x == y` for any dtype including string (follows `tf.equal`)."""
    return apply_op("Equal", x=x, y=y, name=name)


def not_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Element-wise `x != y`, as bool (follows `tf.not_equal`)."""
    return apply_op("NotEqual", x=x, y=y, name=name)


def logical_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Element-wise `x AND y` of bool tensors (follows `tf.logical_and`)."""
    return apply_op("LogicalAnd", x=x, y=y, name=name)


def logical_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Element-wise `x OR y` of bool tensors (follows `tf.logical_or`)."""
    return apply_op("LogicalOr", x=x, y=y, name=name)


def logical_not(x: Any, name: str | None = None) -> Tensor:
    """Element-wise `NOT x` of a bool tensor (follows `tf.logical_not`)."""
    return apply_op("LogicalNot", x=x, name=name)


def logical_xor(x: Any, y: Any, name: str = "LogicalXor") -> Tensor:
    """Element-wise `x XOR y`, built as `(x | y) & ~(x & y)` (follows `tf.logical_xor`)."""
    return apply_op(
        "LogicalAnd",
        x=apply_op("LogicalOr", x=x, y=y),
        y=apply_op("LogicalNot", x=apply_op("LogicalAnd", x=x, y=y)),
        name=name,
    )


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Any:
    """`scalar * x` for a scalar and a Tensor or `IndexedSlices` (follows `tf.scalar_mul`).

    Raises:
      ValueError: if `scalar` is not 0-D.
    """
    base = x.dtype.base_dtype
    scalar = convert_to_tensor(scalar, dtype=base, name="scalar")
    shape = scalar.shape
    if shape.ndims != 0:
        raise ValueError(f"Only scalar multiply works, got shape {shape}")
    if isinstance(x, IndexedSlices):
        return IndexedSlices(
            apply_op("Mul", x=scalar, y=x.values, name=name), x.indices, x.dense_shape
        )
    return apply_op("Mul", x=scalar, y=x, name=name)


def broadcast_gradient_args(s0: Any, s1: Any, name: str | None = None) -> list[Tensor]:
    """`BroadcastGradientArgs`: the axes `(r0, r1)` that sum a gradient back to `s0`, `s1`.

    Args:
      s0: int32 or int64 vector, the shape of the first broadcast operand.
      s1: same dtype, the shape of the second.
      name: op name.
    """
    return apply_op("BroadcastGradientArgs", s0=s0, s1=s1, name=name)


__all__ = [
    "add",
    "atan2",
    "div",
    "div_no_nan",
    "divide",
    "equal",
    "floor_div",
    "floordiv",
    "floormod",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "not_equal",
    "pow",
    "realdiv",
    "scalar_mul",
    "squared_difference",
    "subtract",
    "truediv",
    "truncatediv",
    "truncatemod",
]
