"""Gradients of `SelectV2`, `DynamicPartition`, `EnsureShape`, `GuaranteeConst` and the
space/batch/depth rearrangements (follows TensorFlow's `array_grad.py`/`math_grad.py`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.ops import array_ops, constant_op, cwise_ops, reduction_ops
from tensorweave.ops.array_ops_misc import (
    batch_to_space_nd,
    dynamic_partition,
    space_to_batch_nd,
    where_v2,
)
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient


def _unbroadcast(grad: Any, x: Any) -> Any:
    """`grad` summed to `x`'s shape over the dimensions broadcasting added or stretched."""
    shape_x = array_ops.shape(x)
    rx, _ = cwise_ops.broadcast_gradient_args(shape_x, array_ops.shape(grad))
    return array_ops.reshape(reduction_ops.reduce_sum(grad, rx), shape_x)


@RegisterGradient("SelectV2")
def _select_v2_grad(op: Any, grad: Any) -> Any:
    cond, x, y = op.inputs
    zeros = array_ops.zeros_like(grad)
    return (None, _unbroadcast(where_v2(cond, grad, zeros), x),
            _unbroadcast(where_v2(cond, zeros, grad), y))


@RegisterGradient("DynamicPartition")
def _dynamic_partition_grad(op: Any, *grads: Any) -> Any:
    data, partitions = op.inputs
    n = op.get_attr("num_partitions")
    positions = array_ops.reshape(
        array_ops.range(array_ops.size(partitions)), array_ops.shape(partitions))
    parts = dynamic_partition(positions, partitions, n)
    stitched = array_ops.dynamic_stitch(parts, list(grads))
    return array_ops.reshape(stitched, array_ops.shape(data)), None


RegisterGradient("EnsureShape")(lambda op, grad: grad)
RegisterGradient("GuaranteeConst")(lambda op, grad: grad)


def _block_attrs(op: Any) -> dict[str, Any]:
    fmt = op.get_attr("data_format")
    return {"block_size": op.get_attr("block_size"),
            "data_format": fmt.decode() if isinstance(fmt, bytes) else fmt}


def _square_block(op: Any) -> Any:
    b = op.get_attr("block_size")
    return constant_op.constant([b, b], dtypes.int32)


RegisterGradient("SpaceToBatch")(
    lambda op, g: (batch_to_space_nd(g, _square_block(op), op.inputs[1]), None))
RegisterGradient("BatchToSpace")(
    lambda op, g: (space_to_batch_nd(g, _square_block(op), op.inputs[1]), None))
for _op in ("Bitcast", "CountUpTo", "HistogramFixedWidth"):
    no_gradient(_op)
