"""`tf.reverse_sequence` (TF 1.x `array_ops.reverse_sequence`) and its gradient."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.ops.gradients_impl import RegisterGradient


def reverse_sequence(input: Any, seq_lengths: Any, seq_axis: int | None = None,  # noqa: A002
                     batch_axis: int | None = None, name: str | None = None,
                     seq_dim: int | None = None, batch_dim: int | None = None) -> Tensor:
    """Reverses the first `seq_lengths[b]` entries along `seq_axis` of each slice `b`
    along `batch_axis` (follows `tf.reverse_sequence`).

    Args:
      input: a tensor of rank >= 2.
      seq_lengths: int32/int64 vector, one length per batch entry (<= input.shape[seq]).
      seq_axis: the axis to reverse.
      batch_axis: the batch axis (default 0).
      name: op name.
      seq_dim: deprecated alias of `seq_axis`.
      batch_dim: deprecated alias of `batch_axis`.

    Raises:
      ValueError: axes out of range or equal.
      InvalidArgumentError: at run time, lengths out of range.
    """
    seq_axis = seq_axis if seq_axis is not None else seq_dim
    batch_axis = batch_axis if batch_axis is not None else (batch_dim or 0)
    if seq_axis is None:
        raise ValueError("reverse_sequence: seq_axis is required")
    with graph_mod.name_scope(name, "ReverseSequence", [input, seq_lengths]) as scope:
        return apply_op("ReverseSequence", input=input, seq_lengths=seq_lengths,
                        seq_dim=seq_axis, batch_dim=batch_axis, name=scope)


@RegisterGradient("ReverseSequence")
def _reverse_sequence_grad(op: Operation, grad: Any):
    lengths = op.inputs[1]
    return [reverse_sequence(grad, lengths, seq_axis=op.get_attr("seq_dim"),
                             batch_axis=op.get_attr("batch_dim")), None]


__all__ = ["reverse_sequence"]
