"""Element-wise unary ops: math functions, casts and numerics checks.

Follows TF 1.x `math_ops` / `gen_math_ops`. The gradient helper ops (`SqrtGrad`,
`TanhGrad`, ...) are declared here too. Everything public is re-exported by `cwise_ops` and
`math_ops`.
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


# ----------------------------------------------------------------------- casts
def cast(x: Any, dtype: Any, name: str | None = None) -> Any:
    """Casts `x` (Tensor, variable, IndexedSlices or value) to `dtype` (follows `tf.cast`).

    Returns `x` itself when it is already a Tensor of `dtype`. Float to int truncates
    toward zero; casting to bool tests `!= 0`; complex to real keeps the real part.

    Raises:
      TypeError: if `dtype` is not a valid type.
    """
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


__all__ = [
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "cast",
    "ceil",
    "check_numerics",
    "conj",
    "cos",
    "cosh",
    "exp",
    "expm1",
    "floor",
    "is_finite",
    "is_inf",
    "is_nan",
    "log",
    "log1p",
    "negative",
    "reciprocal",
    "rint",
    "round",
    "rsqrt",
    "saturate_cast",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "tan",
    "tanh",
    "to_double",
    "to_float",
    "to_int32",
    "to_int64",
]
