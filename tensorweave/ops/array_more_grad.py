"""Gradients of `ReverseSequence`, `BroadcastTo` and `Roll` (follows TensorFlow's
`array_grad.py`); the index-valued ops of `array_ops_more` have none."""

from __future__ import annotations

from typing import Any

from tensorweave.ops import array_ops, cwise_ops, reduction_ops
from tensorweave.ops.array_ops_more import reverse_sequence, roll
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient


@RegisterGradient("ReverseSequence")
def _reverse_sequence_grad(op: Any, grad: Any) -> Any:
    lengths = op.inputs[1]
    return reverse_sequence(
        grad, lengths, seq_axis=op.get_attr("seq_dim"), batch_axis=op.get_attr("batch_dim")
    ), None


@RegisterGradient("BroadcastTo")
def _broadcast_to_grad(op: Any, grad: Any) -> Any:
    shape_in = array_ops.shape(op.inputs[0], out_type=op.inputs[1].dtype)
    _, axes = cwise_ops.broadcast_gradient_args(op.inputs[1], shape_in)
    summed = reduction_ops.reduce_sum(grad, axis=axes, keepdims=True)
    return array_ops.reshape(summed, shape_in), None


@RegisterGradient("IdentityN")
def _identity_n_grad(op: Any, *grads: Any) -> Any:
    return list(grads)


@RegisterGradient("Roll")
def _roll_grad(op: Any, grad: Any) -> Any:
    return roll(grad, cwise_ops.negative(op.inputs[1]), op.inputs[2]), None, None


for _op in ("LinSpace", "UniqueWithCounts", "ListDiff", "BroadcastArgs", "LowerBound",
            "UpperBound", "UnravelIndex"):
    no_gradient(_op)
