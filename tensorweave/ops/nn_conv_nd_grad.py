"""Gradients of the 3-D convolution/pooling, depthwise convolution and
`MaxPoolWithArgmax` ops (follow TF 1.x `nn_grad.py`).

Second derivatives: the convolution backprops are differentiable (each is linear in both
inputs); `MaxPool3DGrad` and `MaxPoolGradWithArgmax` are declared `no_gradient` (TensorFlow
has `*GradGrad` ops for them, not ported).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops import nn_conv_depthwise_ops as dw
from tensorweave.ops import nn_conv_nd_ops as nd
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient

no_gradient("MaxPool3DGrad")
no_gradient("MaxPoolGradWithArgmax")


def _dense(grad: Any) -> Any:
    if isinstance(grad, IndexedSlices):
        return math_ops.unsorted_segment_sum(grad.values, grad.indices, grad.dense_shape[0])
    return grad


def _s(op: Any, name: str) -> Any:
    value = op.get_attr(name)
    return value.decode() if isinstance(value, bytes) else value


def _conv_attrs(op: Any) -> dict[str, Any]:
    return {
        "strides": list(op.get_attr("strides")),
        "padding": _s(op, "padding"),
        "data_format": _s(op, "data_format"),
        "dilations": list(op.get_attr("dilations")),
    }


@RegisterGradient("Conv3D")
def _conv3d_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    x, f = op.inputs
    a = _conv_attrs(op)
    grad = _dense(grad)
    return (
        nd.conv3d_backprop_input_v2(array_ops.shape(x), f, grad, **a),
        nd.conv3d_backprop_filter_v2(x, array_ops.shape(f), grad, **a),
    )


@RegisterGradient("Conv3DBackpropInputV2")
def _conv3d_backprop_input_grad(op: Any, grad: Any) -> tuple[None, Any, Any]:
    _, f, dy = op.inputs
    a = _conv_attrs(op)
    grad = _dense(grad)
    return (
        None,
        nd.conv3d_backprop_filter_v2(grad, array_ops.shape(f), dy, **a),
        nd.conv3d(grad, f, **a),
    )


@RegisterGradient("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter_grad(op: Any, grad: Any) -> tuple[Any, None, Any]:
    x, _, dy = op.inputs
    a = _conv_attrs(op)
    grad = _dense(grad)
    return (
        nd.conv3d_backprop_input_v2(array_ops.shape(x), grad, dy, **a),
        None,
        nd.conv3d(x, grad, **a),
    )


@RegisterGradient("DepthwiseConv2dNative")
def _depthwise_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    x, f = op.inputs
    a = _conv_attrs(op)
    grad = _dense(grad)
    return (
        dw.depthwise_conv2d_native_backprop_input(array_ops.shape(x), f, grad, **a),
        dw.depthwise_conv2d_native_backprop_filter(x, array_ops.shape(f), grad, **a),
    )


@RegisterGradient("DepthwiseConv2dNativeBackpropInput")
def _depthwise_input_grad(op: Any, grad: Any) -> tuple[None, Any, Any]:
    _, f, dy = op.inputs
    a = _conv_attrs(op)
    grad = _dense(grad)
    return (
        None,
        dw.depthwise_conv2d_native_backprop_filter(grad, array_ops.shape(f), dy, **a),
        dw.depthwise_conv2d_native(grad, f, **a),
    )


@RegisterGradient("DepthwiseConv2dNativeBackpropFilter")
def _depthwise_filter_grad(op: Any, grad: Any) -> tuple[Any, None, Any]:
    x, _, dy = op.inputs
    a = _conv_attrs(op)
    grad = _dense(grad)
    return (
        dw.depthwise_conv2d_native_backprop_input(array_ops.shape(x), grad, dy, **a),
        None,
        dw.depthwise_conv2d_native(x, grad, **a),
    )


def _pool_attrs(op: Any) -> dict[str, Any]:
    return {
        "ksize": list(op.get_attr("ksize")),
        "strides": list(op.get_attr("strides")),
        "padding": _s(op, "padding"),
        "data_format": _s(op, "data_format"),
    }


@RegisterGradient("MaxPool3D")
def _max_pool3d_grad(op: Any, grad: Any) -> Any:
    return apply_op(
        "MaxPool3DGrad",
        orig_input=op.inputs[0],
        orig_output=op.outputs[0],
        grad=_dense(grad),
        **_pool_attrs(op),
    )


@RegisterGradient("AvgPool3D")
def _avg_pool3d_grad(op: Any, grad: Any) -> Any:
    return apply_op(
        "AvgPool3DGrad",
        orig_input_shape=array_ops.shape(op.inputs[0]),
        grad=_dense(grad),
        **_pool_attrs(op),
    )


@RegisterGradient("AvgPool3DGrad")
def _avg_pool3d_grad_grad(op: Any, grad: Any) -> tuple[None, Any]:
    a = _pool_attrs(op)
    return None, nd.avg_pool3d(
        _dense(grad), a["ksize"], a["strides"], a["padding"], a["data_format"]
    )


@RegisterGradient("MaxPoolWithArgmax")
def _max_pool_with_argmax_grad(op: Any, grad: Any, unused_argmax_grad: Any) -> Any:
    return apply_op(
        "MaxPoolGradWithArgmax",
        input=op.inputs[0],
        grad=_dense(grad),
        argmax=op.outputs[1],
        ksize=list(op.get_attr("ksize")),
        strides=list(op.get_attr("strides")),
        padding=_s(op, "padding"),
        include_batch_in_index=op.get_attr("include_batch_in_index"),
    )
