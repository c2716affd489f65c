"""Gradients of `GatherNd`, `ScatterNd` and `TensorScatter*` (follows TensorFlow's
`array_grad.py`); the variable updates have none."""

from __future__ import annotations

from typing import Any

from tensorweave.ops import array_ops, cwise_ops
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient
from tensorweave.ops.scatter_nd_ops import gather_nd, scatter_nd, tensor_scatter_nd_update


@RegisterGradient("GatherNd")
def _gather_nd_grad(op: Any, grad: Any) -> Any:
    params, indices = op.inputs
    shape = array_ops.shape(params, out_type=indices.dtype)
    return scatter_nd(indices, grad, shape), None


@RegisterGradient("ScatterNd")
def _scatter_nd_grad(op: Any, grad: Any) -> Any:
    return None, gather_nd(grad, op.inputs[0]), None


@RegisterGradient("TensorScatterUpdate")
def _tensor_scatter_update_grad(op: Any, grad: Any) -> Any:
    indices = op.inputs[1]
    updates_grad = gather_nd(grad, indices)
    tensor_grad = tensor_scatter_nd_update(grad, indices, array_ops.zeros_like(op.inputs[2]))
    return tensor_grad, None, updates_grad


@RegisterGradient("TensorScatterAdd")
def _tensor_scatter_add_grad(op: Any, grad: Any) -> Any:
    return grad, None, gather_nd(grad, op.inputs[1])


@RegisterGradient("TensorScatterSub")
def _tensor_scatter_sub_grad(op: Any, grad: Any) -> Any:
    return grad, None, cwise_ops.negative(gather_nd(grad, op.inputs[1]))


def _tensor_scatter_min_or_max_grad(op: Any, grad: Any) -> Any:
    tensor, indices, updates = op.inputs
    out = op.outputs[0]
    x_selected = cwise_ops.cast(cwise_ops.equal(tensor, out), grad.dtype)
    y_selected = cwise_ops.cast(cwise_ops.equal(updates, gather_nd(out, indices)), grad.dtype)
    count = x_selected + scatter_nd(
        indices, y_selected, array_ops.shape(tensor, out_type=indices.dtype)
    )
    share = grad / count
    return share * x_selected, None, gather_nd(share, indices) * y_selected


RegisterGradient("TensorScatterMax")(_tensor_scatter_min_or_max_grad)
RegisterGradient("TensorScatterMin")(_tensor_scatter_min_or_max_grad)
for _op in ("ScatterNdUpdate", "ScatterNdAdd", "ScatterNdSub"):
    no_gradient(_op)
for _op in ("ScatterMin", "ScatterMax", "ScatterMul", "ScatterDiv"):
    no_gradient(_op)
