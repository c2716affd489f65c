"""Element-wise binary op definitions: arithmetic, comparisons, logic, BroadcastGradientArgs.

Follows TensorFlow's `core/ops/math_ops.cc`; static shapes broadcast as its
`BroadcastBinaryOpShapeFn` does.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import COMPLEX, FLOATS, NUMBER, REAL_NUMBER, register_op
from tensorweave.framework.shape_inference import broadcast_shape_fn, op_error, unchanged_shape
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_BINARY_MORE = f"{{{FLOATS}, uint8, int8, uint16, int16, int32, int64, {COMPLEX}}}"
_BINARY_FEWER = f"{{{FLOATS}, int32, int64, {COMPLEX}}}"


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
            raise op_error(op, f"Shape must be rank 1 but is rank {t.shape.ndims}")
    return [TensorShape([None]), TensorShape([None])]


def _binary(name: str, types: str, out: str = "T", commutative: bool = False) -> None:
    register_op(
        name,
        inputs=["x: T", "y: T"],
        outputs=[f"z: {out}"],
        attrs=[f"T: {types}"],
        shape_fn=broadcast_shape_fn,
        is_commutative=commutative,
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
register_op(
    "BroadcastGradientArgs",
    inputs=["s0: T", "s1: T"],
    outputs=["r0: T", "r1: T"],
    attrs=["T: {int32, int64} = DT_INT32"],
    shape_fn=_bga_shape_fn,
)
