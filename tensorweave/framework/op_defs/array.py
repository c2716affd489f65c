"""Basic array op definitions: Identity, StopGradient, Placeholder, ...

Follows TensorFlow's `core/ops/array_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape


def _same_as_input(op: Any) -> list[TensorShape]:
    return [op.inputs[0].shape]


register_op(
    "Placeholder",
    outputs=["output: dtype"],
    attrs=["dtype: type", "shape: shape = unknown"],
    shape_fn=lambda op: [op.get_attr("shape")],
)
register_op(
    "PlaceholderWithDefault",
    inputs=["input: dtype"],
    outputs=["output: dtype"],
    attrs=["dtype: type", "shape: shape"],
    shape_fn=lambda op: [op.get_attr("shape")],
)
register_op(
    "Identity",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type"],
    shape_fn=_same_as_input,
)
register_op(
    "StopGradient",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type"],
    shape_fn=_same_as_input,
)
