"""Fake quantization (follows TF 1.x `tf.fake_quant_with_min_max_args`,
`..._vars`, `..._vars_per_channel` and their `_gradient` functions): float32 inputs
rounded to `2^num_bits` levels over a range nudged so that 0.0 is exact; gradients pass
straight through inside the range (and, for the `vars` forms, to min/max outside it)."""

from __future__ import annotations

from typing import Any

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient


def fake_quant_with_min_max_args(inputs: Any, min: float = -6.0, max: float = 6.0,  # noqa: A002
                                 num_bits: int = 8, narrow_range: bool = False,
                                 name: str | None = None) -> Tensor:
    """`inputs` fake-quantized over the constant range [min, max] (op
    `FakeQuantWithMinMaxArgs`)."""
    return apply_op("FakeQuantWithMinMaxArgs", inputs=inputs, min=float(min), max=float(max),
                    num_bits=num_bits, narrow_range=narrow_range, name=name)


def fake_quant_with_min_max_args_gradient(gradients: Any, inputs: Any, min: float = -6.0,  # noqa: A002
                                          max: float = 6.0, num_bits: int = 8,  # noqa: A002
                                          narrow_range: bool = False,
                                          name: str | None = None) -> Tensor:
    """`gradients` where `inputs` lies in the nudged range, else 0."""
    return apply_op("FakeQuantWithMinMaxArgsGradient", gradients=gradients, inputs=inputs,
                    min=float(min), max=float(max), num_bits=num_bits,
                    narrow_range=narrow_range, name=name)


def fake_quant_with_min_max_vars(inputs: Any, min: Any, max: Any, num_bits: int = 8,  # noqa: A002
                                 narrow_range: bool = False, name: str | None = None) -> Tensor:
    """`inputs` fake-quantized over the scalar tensors [min, max] (op
    `FakeQuantWithMinMaxVars`)."""
    return apply_op("FakeQuantWithMinMaxVars", inputs=inputs, min=min, max=max,
                    num_bits=num_bits, narrow_range=narrow_range, name=name)


def fake_quant_with_min_max_vars_gradient(gradients: Any, inputs: Any, min: Any, max: Any,  # noqa: A002
                                          num_bits: int = 8, narrow_range: bool = False,
                                          name: str | None = None) -> list[Tensor]:
    """`(d_inputs, d_min, d_max)` of `fake_quant_with_min_max_vars`."""
    return apply_op("FakeQuantWithMinMaxVarsGradient", gradients=gradients, inputs=inputs,
                    min=min, max=max, num_bits=num_bits, narrow_range=narrow_range, name=name)


def fake_quant_with_min_max_vars_per_channel(inputs: Any, min: Any, max: Any,  # noqa: A002
                                             num_bits: int = 8, narrow_range: bool = False,
                                             name: str | None = None) -> Tensor:
    """Fake quantization with one [min, max] per last-dimension channel (`min`, `max`: [d])
    (op `FakeQuantWithMinMaxVarsPerChannel`)."""
    return apply_op("FakeQuantWithMinMaxVarsPerChannel", inputs=inputs, min=min, max=max,
                    num_bits=num_bits, narrow_range=narrow_range, name=name)


def fake_quant_with_min_max_vars_per_channel_gradient(gradients: Any, inputs: Any, min: Any,  # noqa: A002
                                                      max: Any, num_bits: int = 8,  # noqa: A002
                                                      narrow_range: bool = False,
                                                      name: str | None = None) -> list[Tensor]:
    """`(d_inputs, d_min [d], d_max [d])` of the per-channel fake quantization."""
    return apply_op("FakeQuantWithMinMaxVarsPerChannelGradient", gradients=gradients,
                    inputs=inputs, min=min, max=max, num_bits=num_bits,
                    narrow_range=narrow_range, name=name)


def _attrs(op: Any) -> dict[str, Any]:
    return {"num_bits": op.get_attr("num_bits"), "narrow_range": op.get_attr("narrow_range")}


@RegisterGradient("FakeQuantWithMinMaxArgs")
def _args_grad(op: Any, grad: Any) -> Any:
    return fake_quant_with_min_max_args_gradient(grad, op.inputs[0], op.get_attr("min"),
                                                 op.get_attr("max"), **_attrs(op))


@RegisterGradient("FakeQuantWithMinMaxVars")
def _vars_grad(op: Any, grad: Any) -> Any:
    return fake_quant_with_min_max_vars_gradient(grad, *op.inputs, **_attrs(op))


@RegisterGradient("FakeQuantWithMinMaxVarsPerChannel")
def _vars_per_channel_grad(op: Any, grad: Any) -> Any:
    return fake_quant_with_min_max_vars_per_channel_gradient(grad, *op.inputs, **_attrs(op))


for _op in ("FakeQuantWithMinMaxArgsGradient", "FakeQuantWithMinMaxVarsGradient",
            "FakeQuantWithMinMaxVarsPerChannelGradient"):
    no_gradient(_op)

__all__ = [
    "fake_quant_with_min_max_args",
    "fake_quant_with_min_max_args_gradient",
    "fake_quant_with_min_max_vars",
    "fake_quant_with_min_max_vars_gradient",
    "fake_quant_with_min_max_vars_per_channel",
    "fake_quant_with_min_max_vars_per_channel_gradient",
]
