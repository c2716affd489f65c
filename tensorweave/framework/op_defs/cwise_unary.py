"""Element-wise unary op definitions: math functions, casts and numerics checks.

Follows TensorFlow's `core/ops/math_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from tensorweave.framework.op_def import COMPLEX, FLOATS, register_op
from tensorweave.framework.shape_inference import unchanged_shape

_UNARY = f"{{{FLOATS}, int32, int64, {COMPLEX}}}"
_UNARY_WITH_SMALL_INTS = f"{{{FLOATS}, int8, int16, int32, int64, {COMPLEX}}}"
_UNARY_COMPLEX = f"{{{FLOATS}, {COMPLEX}}}"
_UNARY_REAL = f"{{{FLOATS}}}"


def _unary(name: str, types: str, out: str = "T") -> None:
    register_op(
        name,
        inputs=["x: T"],
        outputs=[f"y: {out}"],
        attrs=[f"T: {types}"],
        shape_fn=unchanged_shape,
    )


def _unary_grad(name: str) -> None:
    register_op(
        name,
        inputs=["y: T", "dy: T"],
        outputs=["z: T"],
        attrs=[f"T: {_UNARY_COMPLEX}"],
        shape_fn=unchanged_shape,
    )


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
