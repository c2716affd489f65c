"""Gradients of the neural-network ops (follows TensorFlow's `nn_grad.py`).

Every gradient is built from ops; the `*Grad` helper ops have gradients too, so second
derivatives work. Where TensorFlow skips the second-order term of the cross-entropy ops
for a zero `grad_grad` (`_is_zeros_tensor`), this module checks for a `ZerosLike` op or a
constant zero tensor, which is what `gradients()` feeds for an unused output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import (
    array_ops,
    constant_op,
    cwise_ops,
    matmul_ops,
    nn_conv_ops,
    nn_ops,
    reduction_ops,
)
from tensorweave.ops.gradient_registry import RegisterGradient, no_gradient


def _dense(grad: Any) -> Any:
    if isinstance(grad, IndexedSlices):
        return convert_to_tensor(grad)
    return grad


def _str(op: Any, name: str) -> str:
    value = op.get_attr(name)
    return value.decode() if isinstance(value, bytes) else value


def _is_zeros(t: Any) -> bool:
    if t is None:
        return True
    if t.op.type == "ZerosLike":
        return True
    value = constant_value(t)
    return value is not None and not np.any(value)


def _grad_op(op_type: str, gradients: Any, second: Tensor, name: str, **attrs: Any) -> Tensor:
    return apply_op(op_type, gradients=_dense(gradients), **{name: second}, **attrs)


# ------------------------------------------------------------------ activations
@RegisterGradient("Relu")
def _relu_grad(op: Any, grad: Any) -> Tensor:
    return _grad_op("ReluGrad", grad, op.outputs[0], "features")


@RegisterGradient("ReluGrad")
def _relu_grad_grad(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    x = op.inputs[1]
    return _grad_op("ReluGrad", grad, x, "features"), array_ops.zeros_like(x)


@RegisterGradient("Relu6")
def _relu6_grad(op: Any, grad: Any) -> Tensor:
    return _grad_op("Relu6Grad", grad, op.outputs[0], "features")


@RegisterGradient("Relu6Grad")
def _relu6_grad_grad(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    x = op.inputs[1]
    return _grad_op("Relu6Grad", grad, x, "features"), array_ops.zeros_like(x)


@RegisterGradient("Elu")
def _elu_grad(op: Any, grad: Any) -> Tensor:
    return _grad_op("EluGrad", grad, op.outputs[0], "outputs")


@RegisterGradient("EluGrad")
def _elu_grad_grad(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    gradients, elu_y = op.inputs
    grad = _dense(grad)
    zero = constant_op.constant(0, dtype=elu_y.dtype.base_dtype)
    second = array_ops.where(
        cwise_ops.less(elu_y, zero),
        cwise_ops.multiply(grad, gradients),
        array_ops.zeros_like(elu_y),
    )
    return _grad_op("EluGrad", grad, elu_y, "outputs"), second


@RegisterGradient("LeakyRelu")
def _leaky_relu_grad(op: Any, grad: Any) -> Tensor:
    alpha = op.get_attr("alpha")
    return _grad_op("LeakyReluGrad", grad, op.inputs[0], "features", alpha=alpha)


@RegisterGradient("LeakyReluGrad")
def _leaky_relu_grad_grad(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    x = op.inputs[1]
    alpha = op.get_attr("alpha")
    first = _grad_op("LeakyReluGrad", grad, x, "features", alpha=alpha)
    return first, array_ops.zeros_like(x)


@RegisterGradient("Softplus")
def _softplus_grad(op: Any, grad: Any) -> Tensor:
    return _grad_op("SoftplusGrad", grad, op.inputs[0], "features")


@RegisterGradient("SoftplusGrad")
def _softplus_grad_grad(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    # dx = dy / (1 + exp(-x)); d(dx)/d(dy) = sigmoid(x), d(dx)/dx = dy / (e^-x + 2 + e^x).
    dy, x = op.inputs
    grad = _dense(grad)
    two = constant_op.constant(2.0, dtype=x.dtype.base_dtype)
    denominator = cwise_ops.add(
        cwise_ops.add(cwise_ops.exp(cwise_ops.negative(x)), two), cwise_ops.exp(x)
    )
    d2x = cwise_ops.divide(cwise_ops.multiply(grad, dy), denominator)
    return _grad_op("SoftplusGrad", grad, x, "features"), d2x


@RegisterGradient("Softsign")
def _softsign_grad(op: Any, grad: Any) -> Tensor:
    return _grad_op("SoftsignGrad", grad, op.inputs[0], "features")


@RegisterGradient("SoftsignGrad")
def _softsign_grad_grad(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    # dx = dy / (1 + |x|)^2; d(dx)/dx = -2 dy sign(x) / (1 + |x|)^3.
    dy, x = op.inputs
    grad = _dense(grad)
    dt = x.dtype.base_dtype
    one_plus = cwise_ops.add(cwise_ops.abs(x), constant_op.constant(1.0, dtype=dt))
    cube = cwise_ops.multiply(cwise_ops.square(one_plus), one_plus)
    numerator = cwise_ops.multiply(
        cwise_ops.multiply(grad, dy),
        cwise_ops.multiply(constant_op.constant(-2.0, dtype=dt), cwise_ops.sign(x)),
    )
    return _grad_op("SoftsignGrad", grad, x, "features"), cwise_ops.divide(numerator, cube)


# ---------------------------------------------------------------------- softmax
@RegisterGradient("Softmax")
def _softmax_grad(op: Any, grad: Any) -> Tensor:
    softmax = op.outputs[0]
    grad = _dense(grad)
    total = reduction_ops.reduce_sum(cwise_ops.multiply(grad, softmax), -1, keepdims=True)
    return cwise_ops.multiply(cwise_ops.subtract(grad, total), softmax)


@RegisterGradient("LogSoftmax")
def _log_softmax_grad(op: Any, grad: Any) -> Tensor:
    grad = _dense(grad)
    softmax = cwise_ops.exp(op.outputs[0])
    total = reduction_ops.reduce_sum(grad, -1, keepdims=True)
    return cwise_ops.subtract(grad, cwise_ops.multiply(total, softmax))


# ------------------------------------------------------------------------- bias
@RegisterGradient("BiasAdd")
def _bias_add_grad(op: Any, grad: Any) -> tuple[Any, Tensor]:
    grad = _dense(grad)
    return grad, nn_ops.bias_add_grad(grad, data_format=_str(op, "data_format"))


@RegisterGradient("BiasAddGrad")
def _bias_add_grad_grad(op: Any, grad: Any) -> Tensor:
    """Broadcasts the bias gradient back over the other dimensions (reshape + tile)."""
    grad = _dense(grad)
    out_backprop = op.inputs[0]
    rank = out_backprop.shape.ndims
    nchw = _str(op, "data_format") == "NCHW"
    if rank is not None:
        axis = 1 if nchw and rank >= 3 else rank - 1
        expanded = array_ops.reshape(grad, [-1 if i == axis else 1 for i in range(rank)])
        dims = out_backprop.shape.as_list()
        if None not in dims:
            return array_ops.tile(expanded, [1 if i == axis else d for i, d in enumerate(dims)])
        ones = array_ops.ones_like(out_backprop)
        return cwise_ops.multiply(expanded, ones)
    shape = array_ops.shape(out_backprop)
    bias_shape = array_ops.shape(grad)
    if nchw:
        expanded_shape = array_ops.concat(
            [array_ops.ones_like(shape[:1]), bias_shape, array_ops.ones_like(shape[2:])], 0
        )
        multiples = array_ops.concat([shape[:1], [1], shape[2:]], 0)
    else:
        expanded_shape = array_ops.concat([array_ops.ones_like(shape[:-1]), bias_shape], 0)
        multiples = array_ops.concat([shape[:-1], [1]], 0)
    return array_ops.tile(array_ops.reshape(grad, expanded_shape), multiples)


# ---------------------------------------------------------------- cross-entropy
def _broadcast_mul(vec: Tensor, mat: Tensor) -> Tensor:
    """`vec [D0] * mat [D0, D1]`, broadcasting vec along the second dimension."""
    return cwise_ops.multiply(array_ops.expand_dims(vec, -1), mat)


def _xent_logits_grad(op: Any, grad_loss: Any, grad_grad: Any) -> Tensor:
    grad = _broadcast_mul(_dense(grad_loss), op.outputs[1])
    if not _is_zeros(grad_grad):
        grad_grad = _dense(grad_grad)
        softmax = nn_ops.softmax(op.inputs[0])
        inner = array_ops.squeeze(
            matmul_ops.matmul(
                array_ops.expand_dims(grad_grad, 1), array_ops.expand_dims(softmax, 2)
            ),
            axis=[1],
        )
        grad = cwise_ops.add(
            grad, cwise_ops.multiply(cwise_ops.subtract(grad_grad, inner), softmax)
        )
    return grad


@RegisterGradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_grad(op: Any, grad_loss: Any, grad_grad: Any) -> tuple[Tensor, Tensor]:
    labels_grad = _broadcast_mul(
        _dense(grad_loss), cwise_ops.negative(nn_ops.log_softmax(op.inputs[0]))
    )
    return _xent_logits_grad(op, grad_loss, grad_grad), labels_grad


@RegisterGradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_grad(op: Any, grad_loss: Any, grad_grad: Any) -> tuple[Tensor, None]:
    return _xent_logits_grad(op, grad_loss, grad_grad), None


@RegisterGradient("L2Loss")
def _l2_loss_grad(op: Any, grad: Any) -> Tensor:
    return cwise_ops.multiply(op.inputs[0], _dense(grad))


# ------------------------------------------------------------------ convolution
def _conv_attrs(op: Any) -> dict[str, Any]:
    return {
        "strides": list(op.get_attr("strides")),
        "padding": _str(op, "padding"),
        "use_cudnn_on_gpu": op.get_attr("use_cudnn_on_gpu"),
        "data_format": _str(op, "data_format"),
        "dilations": list(op.get_attr("dilations")),
    }


@RegisterGradient("Conv2D")
def _conv2d_grad(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    grad = _dense(grad)
    x, f = op.inputs
    attrs = _conv_attrs(op)
    return (
        nn_conv_ops.conv2d_backprop_input(array_ops.shape(x), f, grad, **attrs),
        nn_conv_ops.conv2d_backprop_filter(x, array_ops.shape(f), grad, **attrs),
    )


@RegisterGradient("Conv2DBackpropInput")
def _conv2d_backprop_input_grad(op: Any, grad: Any) -> tuple[None, Tensor, Tensor]:
    grad = _dense(grad)
    _, f, dy = op.inputs
    attrs = _conv_attrs(op)
    return (
        None,
        nn_conv_ops.conv2d_backprop_filter(grad, array_ops.shape(f), dy, **attrs),
        nn_conv_ops.conv2d(grad, f, **attrs),
    )


@RegisterGradient("Conv2DBackpropFilter")
def _conv2d_backprop_filter_grad(op: Any, grad: Any) -> tuple[Tensor, None, Tensor]:
    grad = _dense(grad)
    x, _, dy = op.inputs
    attrs = _conv_attrs(op)
    return (
        nn_conv_ops.conv2d_backprop_input(array_ops.shape(x), grad, dy, **attrs),
        None,
        nn_conv_ops.conv2d(x, grad, **attrs),
    )


# ---------------------------------------------------------------------- pooling
def _pool_attrs(op: Any) -> dict[str, Any]:
    return {
        "ksize": list(op.get_attr("ksize")),
        "strides": list(op.get_attr("strides")),
        "padding": _str(op, "padding"),
        "data_format": _str(op, "data_format"),
    }


@RegisterGradient("AvgPool")
def _avg_pool_grad(op: Any, grad: Any) -> Tensor:
    shape = array_ops.shape(op.inputs[0])
    return apply_op("AvgPoolGrad", orig_input_shape=shape, grad=_dense(grad), **_pool_attrs(op))


@RegisterGradient("AvgPoolGrad")
def _avg_pool_grad_grad(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    return (
        array_ops.stop_gradient(op.inputs[0]),
        apply_op("AvgPool", value=_dense(grad), **_pool_attrs(op)),
    )


@RegisterGradient("MaxPool")
def _max_pool_grad(op: Any, grad: Any) -> Tensor:
    return apply_op(
        "MaxPoolGrad",
        orig_input=op.inputs[0],
        orig_output=op.outputs[0],
        grad=_dense(grad),
        **_pool_attrs(op),
    )


def _max_pool_second(op_type: str) -> Any:
    def grad_fn(op: Any, grad: Any) -> tuple[Tensor, Tensor, Tensor]:
        x, y = op.inputs[0], op.inputs[1]
        out = apply_op(op_type, orig_input=x, orig_output=y, grad=_dense(grad), **_pool_attrs(op))
        return array_ops.zeros_like(x), array_ops.zeros_like(y), out

    return grad_fn


RegisterGradient("MaxPoolGrad")(_max_pool_second("MaxPoolGradGrad"))
RegisterGradient("MaxPoolGradGrad")(_max_pool_second("MaxPoolGrad"))


# ------------------------------------------------------------------------ top k
@RegisterGradient("TopKV2")
def _top_k_grad(op: Any, grad: Any, _: Any) -> tuple[Tensor, None]:
    """Scatters the values' gradient back to the selected input positions."""
    grad = _dense(grad)
    in_shape = array_ops.shape(op.inputs[0])
    indices = op.outputs[1]
    ind_shape = array_ops.shape(indices)
    ind_lastdim = ind_shape[-1]
    ind_2d = array_ops.reshape(indices, array_ops.stack([-1, ind_lastdim]))
    in_lastdim = in_shape[-1]
    outer = array_ops.shape(ind_2d)[0]
    offsets = array_ops.expand_dims(
        array_ops.range(0, cwise_ops.multiply(outer, in_lastdim), in_lastdim), -1
    )
    flat = array_ops.reshape(cwise_ops.add(ind_2d, offsets), [-1])
    total = reduction_ops.reduce_prod(in_shape)
    scattered = reduction_ops.unsorted_segment_sum(array_ops.reshape(grad, [-1]), flat, total)
    return array_ops.reshape(scattered, in_shape), None


for _op_type in ("InTopKV2",):
    no_gradient(_op_type)
