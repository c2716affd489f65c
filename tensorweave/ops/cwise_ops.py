"""Element-wise math ops: arithmetic, comparisons, logic, casts and unary functions.

Follows TF 1.x `math_ops` / `gen_math_ops`.

Binary ops broadcast like NumPy; their static shapes follow TensorFlow's
`BroadcastBinaryOpShapeFn` (an unknown dimension paired with a known dimension > 1 is
assumed to be that dimension). The gradient helper ops (`SqrtGrad`, `TanhGrad`, ...) and
`BroadcastGradientArgs` live here too. Everything public is re-exported by `math_ops`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

# TensorFlow's type sets (bfloat16 and the quantized types are not supported here).
FLOATS = "half, float, double"
COMPLEX = "complex64, complex128"
REAL_NUMBER = f"{FLOATS}, int32, int64, uint8, int16, int8, uint16, uint32, uint64"
NUMBER = f"{REAL_NUMBER}, {COMPLEX}"
_UNARY = f"{{{FLOATS}, int32, int64, {COMPLEX}}}"
_UNARY_WITH_SMALL_INTS = f"{{{FLOATS}, int8, int16, int32, int64, {COMPLEX}}}"
_UNARY_COMPLEX = f"{{{FLOATS}, {COMPLEX}}}"
_UNARY_REAL = f"{{{FLOATS}}}"
_BINARY_MORE = f"{{{FLOATS}, uint8, int8, uint16, int16, int32, int64, {COMPLEX}}}"
_BINARY_FEWER = f"{{{FLOATS}, int32, int64, {COMPLEX}}}"


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


def _equality_shape_fn(op: Any) -> list[TensorShape]:
    if op.get_attr("incompatible_shape_error"):
        return broadcast_shape_fn(op)
    try:
        return broadcast_shape_fn(op)
    except ValueError:
        return [unknown_shape()]


def _bga_shape_fn(op: Any) -> list[TensorShape]:
    for t in op.inputs:
        if t.shape.ndims not in (None, 1):
            raise shape_error(op, f"Shape must be rank 1 but is rank {t.shape.ndims}")
    return [TensorShape([None]), TensorShape([None])]


# ------------------------------------------------------------------ registrations
def _unary(name: str, types: str, out: str = "T") -> None:
    register_op(
        name,
        inputs=["x: T"],
        outputs=[f"y: {out}"],
        attrs=[f"T: {types}"],
        shape_fn=unchanged_shape,
    )


def _binary(name: str, types: str, out: str = "T", commutative: bool = False) -> None:
    register_op(
        name,
        inputs=["x: T", "y: T"],
        outputs=[f"z: {out}"],
        attrs=[f"T: {types}"],
        shape_fn=broadcast_shape_fn,
        is_commutative=commutative,
    )


def _unary_grad(name: str) -> None:
    register_op(
        name,
        inputs=["y: T", "dy: T"],
        outputs=["z: T"],
        attrs=[f"T: {_UNARY_COMPLEX}"],
        shape_fn=unchanged_shape,
    )


_binary("Add", f"{{{FLOATS}, uint8, int8, int16, int32, int64, {COMPLEX}, string}}")
_binary("AddV2", f"{{{FLOATS}, uint8, int8, int16, int32, int64, {COMPLEX}}}", commutative=True)
_binary("Sub", _BINARY_MORE)
_binary("Mul", _BINARY_MORE, commutative=True)
_binary("Div", _BINARY_MORE)
_binary("RealDiv", _BINARY_MORE)
_binary("DivNoNan", f"{{{FLOATS}, {COMPLEX}}}")
_binary("FloorDiv", _BINARY_MORE)
_binary("TruncateDiv", _BINARY_MORE)
_binary("FloorMod", f"{{int32, int64, {FLOATS}}}")
_binary("TruncateMod", f"{{int32, int64, {FLOATS}}}")
_binary("Pow", f"{{{FLOATS}, int32, int64, {COMPLEX}}}")
_binary("Maximum", f"{{{FLOATS}, int32, int64}}", commutative=True)
_binary("Minimum", f"{{{FLOATS}, int32, int64}}", commutative=True)
_binary("SquaredDifference", _BINARY_FEWER, commutative=True)
register_op(
    "Atan2",
    inputs=["y: T", "x: T"],
    outputs=["z: T"],
    attrs=[f"T: {{{FLOATS}}}"],
    shape_fn=broadcast_shape_fn,
)
for _name in ("Less", "LessEqual", "Greater", "GreaterEqual"):
    _binary(_name, f"{{{REAL_NUMBER}}}", out="bool")
for _name in ("Equal", "NotEqual"):
    register_op(
        _name,
        inputs=["x: T", "y: T"],
        outputs=["z: bool"],
        attrs=[f"T: {{{NUMBER}, string, bool}}", "incompatible_shape_error: bool = true"],
        shape_fn=_equality_shape_fn,
        is_commutative=True,
    )
for _name in ("LogicalAnd", "LogicalOr"):
    register_op(
        _name,
        inputs=["x: bool", "y: bool"],
        outputs=["z: bool"],
        shape_fn=broadcast_shape_fn,
        is_commutative=True,
    )
register_op("LogicalNot", inputs=["x: bool"], outputs=["y: bool"], shape_fn=unchanged_shape)

_unary("Neg", _UNARY_WITH_SMALL_INTS)
_unary("Square", _UNARY_WITH_SMALL_INTS)
_unary("Reciprocal", _UNARY_WITH_SMALL_INTS)
_unary("Sign", _UNARY_WITH_SMALL_INTS)
_unary("Abs", f"{{{FLOATS}, int8, int16, int32, int64}}")
_unary("Round", _UNARY)
_unary("Rint", _UNARY_REAL)
_unary("Floor", _UNARY_REAL)
_unary("Ceil", _UNARY_REAL)
for _name in (
    "Sqrt",
    "Rsqrt",
    "Exp",
    "Expm1",
    "Log",
    "Log1p",
    "Tanh",
    "Sigmoid",
    "Sin",
    "Cos",
    "Sinh",
    "Cosh",
    "Asinh",
    "Acosh",
    "Atanh",
):
    _unary(_name, _UNARY_COMPLEX)
for _name in ("Tan", "Asin", "Acos", "Atan"):
    _unary(_name, _UNARY)
for _name in ("IsNan", "IsInf", "IsFinite"):
    _unary(_name, _UNARY_REAL, out="bool")
for _name in ("SqrtGrad", "RsqrtGrad", "TanhGrad", "SigmoidGrad", "ReciprocalGrad"):
    _unary_grad(_name)

register_op(
    "Cast",
    inputs=["x: SrcT"],
    outputs=["y: DstT"],
    attrs=["SrcT: type", "DstT: type", "Truncate: bool = false"],
    shape_fn=unchanged_shape,
)
register_op(
    "Conj",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: {complex64, complex128, variant} = DT_COMPLEX64"],
    shape_fn=unchanged_shape,
)
register_op(
    "CheckNumerics",
    inputs=["tensor: T"],
    outputs=["output: T"],
    attrs=[f"T: {{{FLOATS}}}", "message: string"],
    shape_fn=unchanged_shape,
)
register_op(
    "BroadcastGradientArgs",
    inputs=["s0: T", "s1: T"],
    outputs=["r0: T", "r1: T"],
    attrs=["T: {int32, int64} = DT_INT32"],
    shape_fn=_bga_shape_fn,
)


# -------------------------------------------------------------------- helpers
def _scope(name: str | None, default: str, values: list[Any]) -> Any:
    return graph_mod.name_scope(name, default, values)


def _base(t: Any) -> dtypes.DType:
    return t.dtype.base_dtype


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


# -------------------------------------------------------------- unary functions
def _unary_fn(op_type: str, doc: str) -> Any:
    def fn(x: Any, name: str | None = None) -> Tensor:
        return apply_op(op_type, x=x, name=name)

    fn.__doc__ = doc
    return fn


negative = _unary_fn("Neg", "`-x` element-wise (follows `tf.negative`, op `Neg`).")
square = _unary_fn("Square", "`x * x` element-wise (follows `tf.square`).")
sqrt = _unary_fn("Sqrt", "Square root; NaN for negative reals (follows `tf.sqrt`).")
rsqrt = _unary_fn("Rsqrt", "`1 / sqrt(x)` element-wise (follows `tf.rsqrt`).")
exp = _unary_fn("Exp", "`e ** x` element-wise (follows `tf.exp`).")
expm1 = _unary_fn("Expm1", "`e ** x - 1`, accurate near 0 (follows `tf.expm1`).")
log = _unary_fn("Log", "Natural logarithm; -inf at 0, NaN below (follows `tf.log`).")
log1p = _unary_fn("Log1p", "`log(1 + x)`, accurate near 0 (follows `tf.log1p`).")
sign = _unary_fn("Sign", "-1, 0 or 1 by the sign of `x`; `x/|x|` for complex (`tf.sign`).")
reciprocal = _unary_fn("Reciprocal", "`1 / x` element-wise (follows `tf.reciprocal`).")
floor = _unary_fn("Floor", "Largest integer not greater than `x` (follows `tf.floor`).")
ceil = _unary_fn("Ceil", "Smallest integer not less than `x` (follows `tf.ceil`).")
rint = _unary_fn("Rint", "Nearest integer, halves to even (follows `tf.rint`).")
sin = _unary_fn("Sin", "Sine element-wise (follows `tf.sin`).")
cos = _unary_fn("Cos", "Cosine element-wise (follows `tf.cos`).")
tan = _unary_fn("Tan", "Tangent element-wise (follows `tf.tan`).")
asin = _unary_fn("Asin", "Arcsine element-wise (follows `tf.asin`).")
acos = _unary_fn("Acos", "Arccosine element-wise (follows `tf.acos`).")
atan = _unary_fn("Atan", "Arctangent element-wise (follows `tf.atan`).")
sinh = _unary_fn("Sinh", "Hyperbolic sine element-wise (follows `tf.sinh`).")
cosh = _unary_fn("Cosh", "Hyperbolic cosine element-wise (follows `tf.cosh`).")
asinh = _unary_fn("Asinh", "Inverse hyperbolic sine element-wise (follows `tf.asinh`).")
acosh = _unary_fn("Acosh", "Inverse hyperbolic cosine; NaN below 1 (follows `tf.acosh`).")
atanh = _unary_fn("Atanh", "Inverse hyperbolic tangent element-wise (follows `tf.atanh`).")
is_nan = _unary_fn("IsNan", "bool: which elements are NaN (follows `tf.is_nan`).")
is_inf = _unary_fn("IsInf", "bool: which elements are +-inf (follows `tf.is_inf`).")
is_finite = _unary_fn("IsFinite", "bool: which elements are finite (follows `tf.is_finite`).")
for _fn, _name in (
    (negative, "negative"),
    (square, "square"),
    (sqrt, "sqrt"),
    (rsqrt, "rsqrt"),
    (exp, "exp"),
    (expm1, "expm1"),
    (log, "log"),
    (log1p, "log1p"),
    (sign, "sign"),
    (reciprocal, "reciprocal"),
    (floor, "floor"),
    (ceil, "ceil"),
    (rint, "rint"),
    (sin, "sin"),
    (cos, "cos"),
    (tan, "tan"),
    (asin, "asin"),
    (acos, "acos"),
    (atan, "atan"),
    (sinh, "sinh"),
    (cosh, "cosh"),
    (asinh, "asinh"),
    (acosh, "acosh"),
    (atanh, "atanh"),
    (is_nan, "is_nan"),
    (is_inf, "is_inf"),
    (is_finite, "is_finite"),
):
    _fn.__name__ = _fn.__qualname__ = _name
neg = negative


def abs(x: Any, name: str | None = None) -> Tensor:  # noqa: A001
    """`|x|` element-wise (follows `tf.abs`; complex inputs are not supported).

    Raises:
      TypeError: for dtypes `Abs` does not accept (unsigned, bool, complex, string).
    """
    with _scope(name, "Abs", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply_op("Abs", x=x, name=scope)


def round(x: Any, name: str | None = None) -> Tensor:  # noqa: A001
    """Rounds half to even (banker's rounding), as `tf.round`; ints are returned as is."""
    x = convert_to_tensor(x, name="x")
    if _base(x).is_integer:
        return x
    return apply_op("Round", x=x, name=name)


def tanh(x: Any, name: str | None = None) -> Tensor:
    """Hyperbolic tangent element-wise (follows `tf.tanh`)."""
    with _scope(name, "Tanh", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply_op("Tanh", x=x, name=scope)


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    """`1 / (1 + exp(-x))` element-wise (follows `tf.sigmoid`)."""
    with _scope(name, "Sigmoid", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply_op("Sigmoid", x=x, name=scope)


def conj(x: Any, name: str | None = None) -> Tensor:
    """Complex conjugate; real tensors are returned unchanged (follows `tf.conj`).

    Raises:
      TypeError: for non-numeric tensors.
    """
    x = convert_to_tensor(x, name="x") if not isinstance(x, Tensor) else x
    dt = _base(x)
    if dt.is_complex:
        return apply_op("Conj", input=x, name=name)
    if dt.is_floating or dt.is_integer:
        return x
    raise TypeError(f"Expected numeric or variant tensor, got dtype {dt!r}")


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Any:
    """`scalar * x` for a scalar and a Tensor or `IndexedSlices` (follows `tf.scalar_mul`).

    Raises:
      ValueError: if `scalar` is not 0-D.
    """
    from tensorweave.framework.indexed_slices import IndexedSlices

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


# ----------------------------------------------------------------------- casts
def cast(x: Any, dtype: Any, name: str | None = None) -> Any:
    """Casts `x` (Tensor, variable, IndexedSlices or value) to `dtype` (follows `tf.cast`).

    Returns `x` itself when it is already a Tensor of `dtype`. Float to int truncates
    toward zero; casting to bool tests `!= 0`; complex to real keeps the real part.

    Raises:
      TypeError: if `dtype` is not a valid type.
    """
    from tensorweave.framework.indexed_slices import IndexedSlices

    base = dtypes.as_dtype(dtype).base_dtype
    if isinstance(x, Tensor) and x.dtype is base:
        return x
    with _scope(name, "Cast", [x]) as scope:
        if isinstance(x, IndexedSlices):
            return IndexedSlices(cast(x.values, base, name=scope), x.indices, x.dense_shape)
        x = convert_to_tensor(x, name="x")
        if _base(x) is not base:
            x = apply_op("Cast", x=x, DstT=base, name=scope)
        return x


def _cast_fn(dt: dtypes.DType, default_name: str, api: str) -> Any:
    def fn(x: Any, name: str = default_name) -> Any:
        return cast(x, dt, name=name)

    fn.__doc__ = f"`cast(x, {dt.name})` (follows the deprecated `tf.{api}`)."
    fn.__name__ = fn.__qualname__ = api
    return fn


to_float = _cast_fn(dtypes.float32, "ToFloat", "to_float")
to_double = _cast_fn(dtypes.float64, "ToDouble", "to_double")
to_int32 = _cast_fn(dtypes.int32, "ToInt32", "to_int32")
to_int64 = _cast_fn(dtypes.int64, "ToInt64", "to_int64")


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Any:
    """Casts `value` to `dtype`, clamping to its range first (follows `tf.saturate_cast`)."""
    with _scope(name, "saturate_cast", [value]) as scope:
        value = convert_to_tensor(value, name="value")
        dt = dtypes.as_dtype(dtype).base_dtype
        src = _base(value)
        if (src.is_floating or src.is_integer) and (dt.is_floating or dt.is_integer):
            if src.min < dt.min:
                value = apply_op(
                    "Maximum", x=value, y=convert_to_tensor(dt.min, dtype=src, name="min")
                )
            if src.max > dt.max:
                value = apply_op(
                    "Minimum", x=value, y=convert_to_tensor(dt.max, dtype=src, name="max")
                )
        return cast(value, dt, name=scope)


# ----------------------------------------------------------- numerics checking
def check_numerics(tensor: Any, message: str, name: str | None = None) -> Tensor:
    """`tensor`, checked at run time for NaN and Inf (follows `tf.check_numerics`).

    Raises:
      errors.InvalidArgumentError: at run time, `"<message> : Tensor had NaN values"`
        (or `Inf`, or `Inf and NaN`).
    """
    return apply_op("CheckNumerics", tensor=tensor, message=message, name=name)


def broadcast_gradient_args(s0: Any, s1: Any, name: str | None = None) -> list[Tensor]:
    """`BroadcastGradientArgs`: the axes `(r0, r1)` that sum a gradient back to `s0`, `s1`.

    Args:
      s0: int32 or int64 vector, the shape of the first broadcast operand.
      s1: same dtype, the shape of the second.
      name: op name.
    """
    return apply_op("BroadcastGradientArgs", s0=s0, s1=s1, name=name)


__all__ = [
    "abs",
    "acos",
    "acosh",
    "add",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cast",
    "ceil",
    "check_numerics",
    "conj",
    "cos",
    "cosh",
    "div",
    "div_no_nan",
    "divide",
    "equal",
    "exp",
    "expm1",
    "floor",
    "floor_div",
    "floordiv",
    "floormod",
    "greater",
    "greater_equal",
    "is_finite",
    "is_inf",
    "is_nan",
    "less",
    "less_equal",
    "log",
    "log1p",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "not_equal",
    "pow",
    "realdiv",
    "reciprocal",
    "rint",
    "round",
    "rsqrt",
    "saturate_cast",
    "scalar_mul",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "squared_difference",
    "subtract",
    "tan",
    "tanh",
    "to_double",
    "to_float",
    "to_int32",
    "to_int64",
    "truediv",
    "truncatediv",
    "truncatemod",
]
