"""`ReverseSequence` (TensorFlow's `core/ops/array_ops.cc`): reverses the first
`seq_lengths[b]` entries along `seq_dim` of each slice `b` along `batch_dim`."""

from __future__ import annotations

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import op_error


def _shape(op):
    shape = op.inputs[0].shape
    seq, batch = op.get_attr("seq_dim"), op.get_attr("batch_dim")
    if shape.ndims is not None:
        if seq >= shape.ndims or batch >= shape.ndims:
            raise op_error(op, f"seq_dim ({seq}) and batch_dim ({batch}) must be < input "
                               f"rank ({shape.ndims})")
        if seq == batch:
            raise op_error(op, f"seq_dim and batch_dim must not be equal, got {seq}")
    return [shape]


register_op(
    "ReverseSequence", inputs=["input: T", "seq_lengths: Tlen"], outputs=["output: T"],
    attrs=["seq_dim: int", "batch_dim: int = 0", "T: type",
           "Tlen: {int32, int64} = DT_INT64"],
    shape_fn=_shape)
