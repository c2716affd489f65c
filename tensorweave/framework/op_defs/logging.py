"""Logging op definitions: Print and Assert.

Follows TensorFlow's `core/ops/logging_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import unchanged_shape

register_op(
    "Print",
    inputs=["input: T", "data: U"],
    outputs=["output: T"],
    attrs=[
        "T: type",
        "U: list(type)",
        "message: string = ''",
        "first_n: int = -1",
        "summarize: int = 3",
    ],
    is_stateful=True,
    shape_fn=unchanged_shape,
)
register_op(
    "Assert",
    inputs=["condition: bool", "data: T"],
    attrs=["T: list(type)", "summarize: int = 3"],
    is_stateful=True,
    shape_fn=lambda op: [],
)
