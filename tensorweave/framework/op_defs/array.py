"""Basic array op definitions: Identity, StopGradient, Placeholder, ...

Follows TensorFlow's `core/ops/array_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import unchanged_shape

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
    shape_fn=unchanged_shape,
)
register_op(
    "StopGradient",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type"],
    shape_fn=unchanged_shape,
)
