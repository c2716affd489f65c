"""Op definitions of `StringFormat` and `PrintV2`, the ops of `tf.print` (follows
`tensorflow/core/ops/string_ops.cc` and `logging_ops.cc`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import with_rank
from tensorweave.framework.tensor_shape import TensorShape


def _scalar(op: Any) -> list[TensorShape]:
    return [TensorShape([])]


def _print_v2_shape(op: Any) -> list[TensorShape]:
    with_rank(op, op.inputs[0].shape, 0)
    return []


register_op(
    "StringFormat",
    inputs=["inputs: T"],
    outputs=["output: string"],
    attrs=["T: list(type) >= 0", "template: string = '%s'", "placeholder: string = '%s'",
           "summarize: int = 3"],
    shape_fn=_scalar,
)
register_op(
    "PrintV2",
    inputs=["input: string"],
    # NOTE: TensorFlow's default `end` is a newline, which attr specs cannot spell; the
    # `tf.print` wrapper always sets it.
    attrs=["output_stream: string = 'stderr'", "end: string"],
    is_stateful=True,
    shape_fn=_print_v2_shape,
)
