"""Fake quantization ops (follows `tensorflow/core/ops/array_ops.cc`): float -> float
rounding to a uniform grid over a nudged [min, max], with straight-through gradients."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape

_Q = ["num_bits: int = 8", "narrow_range: bool = false"]


def _same(op: Any) -> list[TensorShape]:
    return [op.inputs[0].shape]


def _vars_grad(op: Any) -> list[TensorShape]:
    return [op.inputs[1].shape, op.inputs[2].shape, op.inputs[3].shape]


register_op(
    "FakeQuantWithMinMaxArgs",
    inputs=["inputs: float"],
    outputs=["outputs: float"],
    attrs=["min: float = -6.0", "max: float = 6.0", *_Q],
    shape_fn=_same,
)
register_op(
    "FakeQuantWithMinMaxArgsGradient",
    inputs=["gradients: float", "inputs: float"],
    outputs=["backprops: float"],
    attrs=["min: float = -6.0", "max: float = 6.0", *_Q],
    shape_fn=_same,
)
for _suffix in ("", "PerChannel"):
    register_op(
        f"FakeQuantWithMinMaxVars{_suffix}",
        inputs=["inputs: float", "min: float", "max: float"],
        outputs=["outputs: float"],
        attrs=_Q,
        shape_fn=_same,
    )
    register_op(
        f"FakeQuantWithMinMaxVars{_suffix}Gradient",
        inputs=["gradients: float", "inputs: float", "min: float", "max: float"],
        outputs=["backprops_wrt_input: float", "backprop_wrt_min: float",
                 "backprop_wrt_max: float"],
        attrs=_Q,
        shape_fn=_vars_grad,
    )
