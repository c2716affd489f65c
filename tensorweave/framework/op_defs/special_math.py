"""Special functions: `Lgamma`, `Digamma`, `Erf`, `Erfc`, `Erfinv`, `Ndtri`,
`BesselI0|I1|I0e|I1e`, `Betainc`, `Igamma`, `Igammac`, `Zeta`, `Polygamma`, `NextAfter`
(follows `tensorflow/core/ops/math_ops.cc` and `special_math_ops.cc`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_defs.array_more import _binary_same
from tensorweave.framework.shape_inference import op_error
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape


def _same(op: Any) -> list[TensorShape]:
    return [op.inputs[0].shape]


def _betainc_shape(op: Any) -> list[TensorShape]:
    known = [t.shape for t in op.inputs if t.shape.ndims not in (None, 0)]
    if any(t.shape.ndims is None for t in op.inputs):
        return [unknown_shape()]
    if not known:
        return [TensorShape([])]
    out = known[0]
    for s in known[1:]:
        try:
            out = out.merge_with(s)
        except ValueError:
            raise op_error(
                op, "Shapes of a, b and x are inconsistent"
            ) from None
    return [out]


for _name in ("Lgamma", "Digamma", "Erf", "Erfc", "Erfinv", "Ndtri", "BesselI0", "BesselI1",
              "BesselI0e", "BesselI1e"):
    register_op(
        _name,
        inputs=["x: T"],
        outputs=["y: T"],
        attrs=["T: {half, float, double}"],
        shape_fn=_same,
    )
for _name, _args in (
    ("Igamma", ("a", "x")),
    ("Igammac", ("a", "x")),
    ("Zeta", ("x", "q")),
    ("Polygamma", ("a", "x")),
):
    register_op(
        _name,
        inputs=[f"{_args[0]}: T", f"{_args[1]}: T"],
        outputs=["z: T"],
        attrs=["T: {float, double}"],
        shape_fn=_binary_same,
    )
register_op(
    "Betainc",
    inputs=["a: T", "b: T", "x: T"],
    outputs=["z: T"],
    attrs=["T: {float, double}"],
    shape_fn=_betainc_shape,
)
register_op(
    "NextAfter",
    inputs=["x1: T", "x2: T"],
    outputs=["output: T"],
    attrs=["T: {double, float} = DT_FLOAT"],
    shape_fn=_binary_same,
)
