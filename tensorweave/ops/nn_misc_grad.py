"""Gradients of `DepthToSpace`, `SpaceToDepth`, `SpaceToBatchND`, `BatchToSpaceND`,
`Dilation2D` and `CTCLoss` (follow TF 1.x `array_grad.py`, `nn_grad.py`, `ctc_ops.py`).

`CTCLoss` has no second derivative (its gradient output is used through
`stop_gradient`); the `Dilation2DBackprop*` ops are not differentiable (as TensorFlow)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import array_ops
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient

no_gradient("Dilation2DBackpropInput")
no_gradient("Dilation2DBackpropFilter")
no_gradient("FractionalMaxPoolGrad")
no_gradient("FractionalAvgPoolGrad")


def _s(op: Any, name: str) -> Any:
    value = op.get_attr(name)
    return value.decode() if isinstance(value, bytes) else value


@RegisterGradient("DepthToSpace")
def _depth_to_space_grad(op: Any, grad: Any) -> Any:
    return apply_op(
        "SpaceToDepth",
        input=grad,
        block_size=op.get_attr("block_size"),
        data_format=_s(op, "data_format"),
    )


@RegisterGradient("SpaceToDepth")
def _space_to_depth_grad(op: Any, grad: Any) -> Any:
    return apply_op(
        "DepthToSpace",
        input=grad,
        block_size=op.get_attr("block_size"),
        data_format=_s(op, "data_format"),
    )


@RegisterGradient("SpaceToBatchND")
def _space_to_batch_grad(op: Any, grad: Any) -> tuple[Any, None, None]:
    return (
        apply_op("BatchToSpaceND", input=grad, block_shape=op.inputs[1], crops=op.inputs[2]),
        None,
        None,
    )


@RegisterGradient("BatchToSpaceND")
def _batch_to_space_grad(op: Any, grad: Any) -> tuple[Any, None, None]:
    return (
        apply_op("SpaceToBatchND", input=grad, block_shape=op.inputs[1], paddings=op.inputs[2]),
        None,
        None,
    )


@RegisterGradient("Dilation2D")
def _dilation2d_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    attrs = {
        "strides": list(op.get_attr("strides")),
        "rates": list(op.get_attr("rates")),
        "padding": _s(op, "padding"),
    }
    x, f = op.inputs
    return (
        apply_op("Dilation2DBackpropInput", input=x, filter=f, out_backprop=grad, **attrs),
        apply_op("Dilation2DBackpropFilter", input=x, filter=f, out_backprop=grad, **attrs),
    )


@RegisterGradient("CTCLoss")
def _ctc_loss_grad(op: Any, grad_loss: Any, _: Any) -> tuple[Any, None, None, None]:
    gradient = array_ops.stop_gradient(op.outputs[1])
    scale = array_ops.expand_dims(array_ops.expand_dims(grad_loss, 0), -1)
    return scale * gradient, None, None, None


@RegisterGradient("FractionalMaxPool")
def _fractional_max_pool_grad(op: Any, grad: Any, *unused: Any) -> Any:
    return apply_op(
        "FractionalMaxPoolGrad",
        orig_input=op.inputs[0],
        orig_output=op.outputs[0],
        out_backprop=grad,
        row_pooling_sequence=op.outputs[1],
        col_pooling_sequence=op.outputs[2],
        overlapping=op.get_attr("overlapping"),
    )


@RegisterGradient("FractionalAvgPool")
def _fractional_avg_pool_grad(op: Any, grad: Any, *unused: Any) -> Any:
    return apply_op(
        "FractionalAvgPoolGrad",
        orig_input_tensor_shape=array_ops.shape(op.inputs[0], out_type=dtypes.int64),
        out_backprop=grad,
        row_pooling_sequence=op.outputs[1],
        col_pooling_sequence=op.outputs[2],
        overlapping=op.get_attr("overlapping"),
    )
