"""Gradient-check cases of the neural-network ops (consumed by the gradient checker tests).

Each case builds a small float64 graph around one nn op: activations (and their `*Grad`
helper ops, for second derivatives), softmax, bias, cross-entropy (w.r.t. logits and
labels, and the second-order path through the `backprop` output), convolutions and pools
with SAME and VALID padding and strides 1 and 2, top-k and embedding lookups. `dynamic`
cases hide static shapes behind `placeholder_with_default`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.op_def_library import apply_op
from tensorweave.kernels import nn_conv_kernels, nn_kernels  # noqa: F401  (until wired)
from tensorweave.ops import array_ops, constant_op, embedding_ops, nn_conv_ops, nn_impl, nn_ops
from tensorweave.testing.gradient_case import GradientCase

_WIDE = (-3.0, 3.0)


def _unknown(x: Any) -> Any:
    """`x` with an unknown static shape of the same rank."""
    return array_ops.placeholder_with_default(x, [None] * x.shape.ndims)


def _op(op_type: str, **inputs: Any) -> Any:
    return apply_op(op_type, **inputs)


def _activation_cases(op_type: str, fn: Any, input_range=(-1.0, 1.0)) -> list[GradientCase]:
    return [
        GradientCase(op_type, fn, ((2, 3),), "matrix", input_range),
        GradientCase(op_type, fn, ((2, 2, 3),), "rank3", input_range),
        GradientCase(op_type, lambda x: fn(_unknown(x)), ((3, 2),), "dynamic", input_range),
    ]


def _second(op_type: str, second: str, input_range=(-1.0, 1.0), **attrs: Any) -> GradientCase:
    def build(g: Any, x: Any) -> Any:
        return _op(op_type, gradients=g, **{second: x}, **attrs)

    return GradientCase(op_type, build, ((2, 3), (2, 3)), "", input_range)


ACTIVATION_CASES: list[GradientCase] = [
    *_activation_cases("Relu", nn_ops.relu),
    *_activation_cases("Relu6", nn_ops.relu6, (-2.0, 8.0)),
    *_activation_cases("Elu", nn_ops.elu, _WIDE),
    *_activation_cases("LeakyRelu", nn_ops.leaky_relu),
    GradientCase("LeakyRelu", lambda x: nn_ops.leaky_relu(x, alpha=0.5), ((2, 3),), "alpha"),
    *_activation_cases("Softplus", nn_ops.softplus, _WIDE),
    *_activation_cases("Softsign", nn_ops.softsign, _WIDE),
    _second("ReluGrad", "features"),
    _second("Relu6Grad", "features", (-2.0, 8.0)),
    _second("EluGrad", "outputs", (-0.9, 2.0)),
    _second("LeakyReluGrad", "features", alpha=0.3),
    _second("SoftplusGrad", "features", _WIDE),
    _second("SoftsignGrad", "features", _WIDE),
]

SOFTMAX_CASES: list[GradientCase] = [
    GradientCase("Softmax", nn_ops.softmax, ((2, 4),), "matrix", _WIDE),
    GradientCase("Softmax", nn_ops.softmax, ((2, 2, 3),), "rank3", _WIDE),
    GradientCase("Softmax", lambda x: nn_ops.softmax(x, axis=0), ((3, 2),), "axis0", _WIDE),
    GradientCase("Softmax", lambda x: nn_ops.softmax(_unknown(x)), ((2, 3),), "dynamic", _WIDE),
    GradientCase("LogSoftmax", nn_ops.log_softmax, ((2, 4),), "matrix", _WIDE),
    GradientCase(
        "LogSoftmax", lambda x: nn_ops.log_softmax(x, axis=1), ((2, 3, 2),), "axis1", _WIDE
    ),
]

BIAS_CASES: list[GradientCase] = [
    GradientCase("BiasAdd", nn_ops.bias_add, ((3, 4), (4,)), "matrix"),
    GradientCase("BiasAdd", nn_ops.bias_add, ((2, 2, 3, 2), (2,)), "nhwc"),
    GradientCase(
        "BiasAdd",
        lambda v, b: nn_ops.bias_add(v, b, data_format="NCHW"),
        ((2, 3, 2, 2), (3,)),
        "nchw",
    ),
    GradientCase(
        "BiasAdd", lambda v, b: nn_ops.bias_add(_unknown(v), b), ((3, 2), (2,)), "dynamic"
    ),
    GradientCase("BiasAddGrad", nn_ops.bias_add_grad, ((3, 4),), "matrix"),
    GradientCase("BiasAddGrad", nn_ops.bias_add_grad, ((2, 2, 2, 3),), "nhwc"),
    GradientCase("BiasAddGrad", lambda g: nn_ops.bias_add_grad(g, "NCHW"), ((2, 3, 2, 2),), "nchw"),
    GradientCase(
        "BiasAddGrad", lambda g: nn_ops.bias_add_grad(_unknown(g)), ((2, 2, 3),), "dynamic"
    ),
    GradientCase(
        "BiasAddGrad",
        lambda g: nn_ops.bias_add_grad(array_ops.placeholder_with_default(g, None), "NCHW"),
        ((2, 3, 2),),
        "unknown_rank_nchw",
    ),
]


def _distribution(x: Any) -> Any:
    """A probability distribution per row from any real input (so labels stay valid)."""
    return nn_ops.softmax(x)


_SPARSE_LABELS = np.array([2, 0, 3], dtype=np.int64)

XENT_CASES: list[GradientCase] = [
    GradientCase(
        "SoftmaxCrossEntropyWithLogits",
        lambda logits, labels: nn_impl.softmax_cross_entropy_with_logits_v2(
            labels=_distribution(labels), logits=logits
        ),
        ((3, 4), (3, 4)),
        "logits_and_labels",
        _WIDE,
    ),
    GradientCase(
        "SoftmaxCrossEntropyWithLogits",
        lambda logits: nn_impl.softmax_cross_entropy_with_logits(
            labels=constant_op.constant([[0.1, 0.2, 0.7], [1.0, 0.0, 0.0]], dtypes.float64),
            logits=logits,
        ),
        ((2, 3),),
        "v1_logits",
        _WIDE,
    ),
    GradientCase(
        "SoftmaxCrossEntropyWithLogits",
        lambda logits, labels: nn_impl.softmax_cross_entropy_with_logits_v2(
            labels=nn_ops.softmax(labels, axis=0), logits=logits, axis=0
        ),
        ((3, 2), (3, 2)),
        "axis0",
        _WIDE,
    ),
    GradientCase(
        "SoftmaxCrossEntropyWithLogits",
        lambda logits: nn_impl.softmax_cross_entropy_with_logits_v2(
            labels=constant_op.constant(np.full((2, 2, 3), 1 / 3)), logits=logits
        ),
        ((2, 2, 3),),
        "rank3",
        _WIDE,
    ),
    GradientCase(
        "SoftmaxCrossEntropyWithLogits",
        lambda logits: _op(
            "SoftmaxCrossEntropyWithLogits",
            features=logits,
            labels=constant_op.constant([[0.2, 0.3, 0.5], [0.0, 1.0, 0.0]], dtypes.float64),
        )[1],
        ((2, 3),),
        "second_order",
        _WIDE,
    ),
    GradientCase(
        "SparseSoftmaxCrossEntropyWithLogits",
        lambda logits: nn_impl.sparse_softmax_cross_entropy_with_logits(
            labels=constant_op.constant(_SPARSE_LABELS), logits=logits
        ),
        ((3, 4),),
        "matrix",
        _WIDE,
    ),
    GradientCase(
        "SparseSoftmaxCrossEntropyWithLogits",
        lambda logits: nn_impl.sparse_softmax_cross_entropy_with_logits(
            labels=constant_op.constant([[1, 0], [2, 2]], dtypes.int32), logits=logits
        ),
        ((2, 2, 3),),
        "rank3",
        _WIDE,
    ),
    GradientCase(
        "SparseSoftmaxCrossEntropyWithLogits",
        lambda logits: _op(
            "SparseSoftmaxCrossEntropyWithLogits",
            features=logits,
            labels=constant_op.constant(_SPARSE_LABELS),
        )[1],
        ((3, 4),),
        "second_order",
        _WIDE,
    ),
    GradientCase("L2Loss", nn_ops.l2_loss, ((2, 3),), "matrix"),
    GradientCase("L2Loss", nn_ops.l2_loss, ((),), "scalar"),
]


def _conv(strides: int, padding: str, dilation: int = 1) -> Any:
    def build(x: Any, f: Any) -> Any:
        return nn_conv_ops.conv2d(x, f, strides, padding, dilations=dilation)

    return build


def _conv_backprop_input(sizes: list[int], strides: int, padding: str) -> Any:
    def build(f: Any, dy: Any) -> Any:
        return nn_conv_ops.conv2d_backprop_input(sizes, f, dy, strides, padding)

    return build


def _conv_backprop_filter(sizes: list[int], strides: int, padding: str) -> Any:
    def build(x: Any, dy: Any) -> Any:
        return nn_conv_ops.conv2d_backprop_filter(x, sizes, dy, strides, padding)

    return build


CONV_CASES: list[GradientCase] = [
    GradientCase("Conv2D", _conv(1, "SAME"), ((1, 4, 4, 2), (3, 3, 2, 2)), "same_s1"),
    GradientCase("Conv2D", _conv(1, "VALID"), ((2, 4, 3, 2), (2, 2, 2, 3)), "valid_s1"),
    GradientCase("Conv2D", _conv(2, "SAME"), ((1, 5, 5, 1), (3, 3, 1, 2)), "same_s2"),
    GradientCase("Conv2D", _conv(2, "VALID"), ((1, 5, 6, 2), (3, 2, 2, 2)), "valid_s2"),
    GradientCase("Conv2D", _conv([1, 2], "SAME"), ((1, 4, 5, 1), (2, 3, 1, 2)), "same_strides_1x2"),
    GradientCase("Conv2D", _conv(1, "SAME", 2), ((1, 5, 5, 1), (2, 2, 1, 2)), "dilated"),
    GradientCase(
        "Conv2D",
        lambda x, f: nn_conv_ops.conv2d(_unknown(x), f, 1, "SAME"),
        ((2, 3, 3, 1), (2, 2, 1, 2)),
        "dynamic",
    ),
    GradientCase(
        "Conv2DBackpropInput",
        _conv_backprop_input([1, 4, 4, 2], 1, "SAME"),
        ((3, 3, 2, 2), (1, 4, 4, 2)),
        "same_s1",
    ),
    GradientCase(
        "Conv2DBackpropInput",
        _conv_backprop_input([1, 5, 5, 1], 2, "VALID"),
        ((3, 3, 1, 2), (1, 2, 2, 2)),
        "valid_s2",
    ),
    GradientCase(
        "Conv2DBackpropFilter",
        _conv_backprop_filter([3, 3, 2, 2], 1, "SAME"),
        ((1, 4, 4, 2), (1, 4, 4, 2)),
        "same_s1",
    ),
    GradientCase(
        "Conv2DBackpropFilter",
        _conv_backprop_filter([2, 2, 1, 2], 2, "VALID"),
        ((1, 5, 5, 1), (1, 2, 2, 2)),
        "valid_s2",
    ),
]


def _pool(fn: Any, ksize: int, strides: int, padding: str) -> Any:
    return lambda x: fn(x, ksize, strides, padding)


def _pool_attrs(ksize: int, strides: int, padding: str) -> dict[str, Any]:
    return {
        "ksize": [1, ksize, ksize, 1],
        "strides": [1, strides, strides, 1],
        "padding": padding,
    }


def _max_pool_grad(ksize: int, strides: int, padding: str) -> Any:
    def build(x: Any, g: Any) -> Any:
        y = nn_conv_ops.max_pool(x, ksize, strides, padding)
        attrs = _pool_attrs(ksize, strides, padding)
        return _op("MaxPoolGrad", orig_input=x, orig_output=y, grad=g, **attrs)

    return build


def _max_pool_grad_grad(ksize: int, strides: int, padding: str) -> Any:
    def build(x: Any, g: Any) -> Any:
        y = nn_conv_ops.max_pool(x, ksize, strides, padding)
        attrs = _pool_attrs(ksize, strides, padding)
        return _op("MaxPoolGradGrad", orig_input=x, orig_output=y, grad=g, **attrs)

    return build


def _avg_pool_grad(shape: list[int], ksize: int, strides: int, padding: str) -> Any:
    def build(g: Any) -> Any:
        attrs = _pool_attrs(ksize, strides, padding)
        return _op("AvgPoolGrad", orig_input_shape=shape, grad=g, **attrs)

    return build


POOL_CASES: list[GradientCase] = [
    GradientCase("MaxPool", _pool(nn_conv_ops.max_pool, 2, 2, "VALID"), ((1, 4, 4, 2),), "2x2"),
    GradientCase("MaxPool", _pool(nn_conv_ops.max_pool, 3, 1, "SAME"), ((1, 3, 4, 1),), "same_s1"),
    GradientCase("MaxPool", _pool(nn_conv_ops.max_pool, 3, 2, "SAME"), ((2, 5, 5, 1),), "same_s2"),
    GradientCase(
        "MaxPool", _pool(nn_conv_ops.max_pool, 2, 1, "VALID"), ((1, 3, 3, 2),), "valid_s1"
    ),
    GradientCase("AvgPool", _pool(nn_conv_ops.avg_pool, 2, 2, "VALID"), ((1, 4, 4, 2),), "2x2"),
    GradientCase("AvgPool", _pool(nn_conv_ops.avg_pool, 3, 1, "SAME"), ((1, 3, 4, 1),), "same_s1"),
    GradientCase("AvgPool", _pool(nn_conv_ops.avg_pool, 3, 2, "SAME"), ((2, 5, 5, 1),), "same_s2"),
    GradientCase(
        "AvgPool", _pool(nn_conv_ops.avg_pool, 2, 1, "VALID"), ((1, 3, 3, 2),), "valid_s1"
    ),
    GradientCase("MaxPoolGrad", _max_pool_grad(2, 2, "VALID"), ((1, 4, 4, 1), (1, 2, 2, 1))),
    GradientCase(
        "MaxPoolGrad", _max_pool_grad(3, 2, "SAME"), ((1, 5, 5, 1), (1, 3, 3, 1)), "same_s2"
    ),
    GradientCase(
        "MaxPoolGradGrad", _max_pool_grad_grad(2, 2, "VALID"), ((1, 4, 4, 1), (1, 4, 4, 1))
    ),
    GradientCase(
        "MaxPoolGradGrad",
        _max_pool_grad_grad(3, 1, "SAME"),
        ((1, 3, 3, 1), (1, 3, 3, 1)),
        "same_s1",
    ),
    GradientCase("AvgPoolGrad", _avg_pool_grad([1, 4, 4, 1], 2, 2, "VALID"), ((1, 2, 2, 1),)),
    GradientCase(
        "AvgPoolGrad", _avg_pool_grad([1, 5, 5, 1], 3, 2, "SAME"), ((1, 3, 3, 1),), "same_s2"
    ),
]

OTHER_CASES: list[GradientCase] = [
    GradientCase("TopKV2", lambda x: nn_ops.top_k(x, 2)[0], ((3, 4),), "matrix"),
    GradientCase("TopKV2", lambda x: nn_ops.top_k(x, 1)[0], ((2, 2, 3),), "rank3"),
    GradientCase(
        "Log1p",
        lambda x, z: nn_impl.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
        ((2, 3), (2, 3)),
        "sigmoid_cross_entropy",
        _WIDE,
    ),
    GradientCase(
        "Log1p",
        lambda x, z: nn_impl.weighted_cross_entropy_with_logits(labels=z, logits=x, pos_weight=2.5),
        ((2, 3), (2, 3)),
        "weighted_cross_entropy",
        _WIDE,
    ),
    GradientCase(
        "Mean", lambda x: list(nn_impl.moments(x, [0, 1])), ((3, 2, 2),), "moments", _WIDE
    ),
    GradientCase(
        "Rsqrt", lambda x: nn_impl.l2_normalize(x, axis=1), ((2, 3),), "l2_normalize", _WIDE
    ),
    GradientCase(
        "GatherV2",
        lambda p: embedding_ops.embedding_lookup(p, constant_op.constant([[0, 3], [3, 1]])),
        ((4, 2),),
        "embedding_single",
    ),
    GradientCase(
        "GatherV2",
        lambda a, b, c: embedding_ops.embedding_lookup(
            [a, b, c], constant_op.constant([4, 0, 7, 4, 2])
        ),
        ((3, 2), (3, 2), (2, 2)),
        "embedding_mod",
    ),
    GradientCase(
        "GatherV2",
        lambda a, b, c: embedding_ops.embedding_lookup(
            [a, b, c], constant_op.constant([[6, 0], [7, 3]]), partition_strategy="div"
        ),
        ((3, 2), (3, 2), (2, 2)),
        "embedding_div",
    ),
    GradientCase(
        "GatherV2",
        lambda p: embedding_ops.embedding_lookup(p, constant_op.constant([0, 2]), max_norm=0.5),
        ((3, 2),),
        "embedding_max_norm",
    ),
]

CASES: list[GradientCase] = [
    *ACTIVATION_CASES,
    *SOFTMAX_CASES,
    *BIAS_CASES,
    *XENT_CASES,
    *CONV_CASES,
    *POOL_CASES,
    *OTHER_CASES,
]
