"""Constant op definition: Const.

Follows TensorFlow's `core/ops/array_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from tensorweave.framework.op_def import register_op

register_op(
    "Const",
    outputs=["output: dtype"],
    attrs=["value: tensor", "dtype: type"],
    shape_fn=lambda op: [op.get_attr("value").shape],
)
