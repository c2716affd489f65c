"""The NoOp op definition.

Follows TensorFlow's `core/ops/no_op.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from tensorweave.framework.op_def import register_op

register_op("NoOp")
