"""Gradient-check cases of the 3-D convolution/pooling, depthwise convolution and
`MaxPoolWithArgmax` ops (and of the nn ops added with them). `MaxPool3D` has no float64
kernel (as TensorFlow), so its case runs in float32 between casts."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import math_ops, nn_impl_extra, nn_misc_ops, nn_norm_ops
from tensorweave.ops import nn_conv_depthwise_ops as dw
from tensorweave.ops import nn_conv_nd_ops as nd
from tensorweave.testing.gradient_case import GradientCase


def _conv3d(strides: Any, padding: str, dilations: Any = 1) -> Any:
    return lambda x, f: nd.conv3d(x, f, strides, padding, dilations=dilations)


def _dw(strides: Any, padding: str, rate: Any = None) -> Any:
    return lambda x, f: dw.depthwise_conv2d(x, f, strides, padding, rate=rate)


def _float32(fn: Any) -> Any:
    def build(x: Any) -> Any:
        return math_ops.cast(fn(math_ops.cast(x, dtypes.float32)), dtypes.float64)

    return build


CONV_ND_CASES: list[GradientCase] = [
    GradientCase("Conv3D", _conv3d(1, "SAME"), ((1, 3, 3, 2, 2), (2, 2, 2, 2, 2)), "same"),
    GradientCase(
        "Conv3D", _conv3d([1, 2, 1], "VALID"), ((1, 4, 3, 3, 1), (2, 2, 2, 1, 2)), "valid_s2"
    ),
    GradientCase(
        "Conv3D", _conv3d(1, "SAME", [2, 1, 1]), ((1, 4, 2, 2, 1), (2, 1, 2, 1, 2)), "dilated"
    ),
    GradientCase(
        "Conv3DBackpropInputV2",
        lambda f, dy: nd.conv3d_backprop_input_v2([1, 3, 4, 2, 2], f, dy, [1, 1, 2, 1, 1], "SAME"),
        ((2, 2, 2, 2, 3), (1, 3, 2, 2, 3)),
        "same_s2",
    ),
    GradientCase(
        "Conv3DBackpropFilterV2",
        lambda x, dy: nd.conv3d_backprop_filter_v2(x, [2, 2, 1, 2, 2], dy, 1, "VALID"),
        ((1, 3, 3, 2, 2), (1, 2, 2, 2, 2)),
        "valid",
    ),
    GradientCase(
        "DepthwiseConv2dNative", _dw([1, 1, 1, 1], "SAME"), ((1, 4, 3, 2), (2, 2, 2, 2)), "same"
    ),
    GradientCase(
        "DepthwiseConv2dNative",
        _dw([1, 2, 2, 1], "VALID"),
        ((2, 5, 4, 2), (3, 2, 2, 1)),
        "valid_s2",
    ),
    GradientCase(
        "DepthwiseConv2dNative",
        _dw([1, 1, 1, 1], "SAME", [2, 2]),
        ((1, 5, 4, 1), (2, 2, 1, 3)),
        "rate2",
    ),
    GradientCase(
        "DepthwiseConv2dNativeBackpropInput",
        lambda f, dy: dw.depthwise_conv2d_native_backprop_input(
            [1, 4, 4, 2], f, dy, [1, 2, 2, 1], "SAME"
        ),
        ((3, 3, 2, 2), (1, 2, 2, 4)),
        "same_s2",
    ),
    GradientCase(
        "DepthwiseConv2dNativeBackpropFilter",
        lambda x, dy: dw.depthwise_conv2d_native_backprop_filter(
            x, [2, 2, 2, 1], dy, [1, 1, 1, 1], "VALID"
        ),
        ((1, 3, 3, 2), (1, 2, 2, 2)),
        "valid",
    ),
]

POOL_ND_CASES: list[GradientCase] = [
    GradientCase(
        "MaxPool3D",
        _float32(lambda x: nd.max_pool3d(x, 2, 2, "VALID")),
        ((1, 4, 4, 2, 2),),
        "2x2x2",
    ),
    GradientCase(
        "MaxPool3D",
        _float32(lambda x: nd.max_pool3d(x, [2, 3, 1], 1, "SAME")),
        ((1, 3, 3, 2, 1),),
        "same_s1",
    ),
    GradientCase(
        "AvgPool3D", lambda x: nd.avg_pool3d(x, 2, 2, "VALID"), ((1, 4, 4, 2, 2),), "2x2x2"
    ),
    GradientCase(
        "AvgPool3D", lambda x: nd.avg_pool3d(x, [3, 2, 2], 1, "SAME"), ((2, 3, 3, 2, 1),), "same_s1"
    ),
    GradientCase(
        "AvgPool3DGrad",
        lambda g: apply_op(
            "AvgPool3DGrad",
            orig_input_shape=[1, 3, 4, 2, 1],
            grad=g,
            ksize=[1, 2, 2, 2, 1],
            strides=[1, 1, 2, 1, 1],
            padding="SAME",
        ),
        ((1, 3, 2, 2, 1),),
        "same",
    ),
    GradientCase(
        "MaxPoolWithArgmax",
        lambda x: dw.max_pool_with_argmax(x, 2, 2, "VALID")[0],
        ((2, 4, 4, 2),),
        "2x2",
    ),
    GradientCase(
        "MaxPoolWithArgmax",
        lambda x: dw.max_pool_with_argmax(x, 3, 2, "SAME")[0],
        ((1, 5, 4, 1),),
        "same",
    ),
]


def _fused(training: bool, data_format: str = "NHWC") -> Any:
    def build(x: Any, scale: Any, offset: Any) -> Any:
        mean = variance = None
        if not training:
            mean = math_ops.cast([0.1, -0.2], dtypes.float64)
            variance = math_ops.cast([0.5, 1.5], dtypes.float64)
        return nn_norm_ops.fused_batch_norm(
            x, scale, offset, mean, variance, data_format=data_format, is_training=training
        )[0]

    return build


NORM_CASES: list[GradientCase] = [
    GradientCase("FusedBatchNormV3", _fused(True), ((2, 3, 2, 2), (2,), (2,)), "training"),
    GradientCase("FusedBatchNormV3", _fused(False), ((2, 2, 3, 2), (2,), (2,)), "inference"),
    GradientCase("FusedBatchNormV3", _fused(True, "NCHW"), ((2, 2, 3, 2), (2,), (2,)), "nchw"),
    GradientCase(
        "LRN",
        _float32(lambda x: nn_norm_ops.lrn(x, depth_radius=1, bias=1.5, alpha=0.4, beta=0.75)),
        ((1, 2, 2, 4),),
        "r1",
    ),
    GradientCase("LRN", _float32(nn_norm_ops.lrn), ((1, 2, 1, 3),), "default", (0.5, 1.0)),
    GradientCase("Selu", nn_impl_extra.selu, ((2, 3),), "matrix", (-2.0, 2.0)),
]


def _ctc(x: Any) -> Any:
    labels = math_ops.cast([[1, 2], [3, 0]], dtypes.int32)
    return nn_misc_ops.ctc_loss_v2(labels, x, [2, 1], [4, 3], blank_index=-1)


MISC_CASES: list[GradientCase] = [
    GradientCase("DepthToSpace", lambda x: nn_misc_ops.depth_to_space(x, 2), ((1, 2, 2, 8),)),
    GradientCase("SpaceToDepth", lambda x: nn_misc_ops.space_to_depth(x, 2), ((1, 4, 2, 2),)),
    GradientCase(
        "SpaceToBatchND",
        lambda x: nn_misc_ops.space_to_batch_nd(x, [2, 1], [[1, 1], [0, 1]]),
        ((1, 4, 3, 2),),
    ),
    GradientCase(
        "BatchToSpaceND",
        lambda x: nn_misc_ops.batch_to_space_nd(x, [2, 2], [[0, 1], [1, 0]]),
        ((4, 2, 3, 1),),
    ),
    GradientCase(
        "Dilation2D",
        lambda x, f: nn_misc_ops.dilation2d(x, f, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
        ((1, 3, 4, 2), (2, 2, 2)),
        "same",
    ),
    GradientCase(
        "Dilation2D",
        lambda x, f: nn_misc_ops.dilation2d(x, f, [1, 2, 1, 1], [1, 1, 2, 1], "VALID"),
        ((2, 5, 5, 1), (2, 2, 1)),
        "strided",
    ),
    GradientCase("CTCLoss", _ctc, ((4, 2, 5),), "dense_labels"),
]

FRACTIONAL_CASES: list[GradientCase] = [
    GradientCase(
        "FractionalMaxPool",
        lambda x: nn_misc_ops.fractional_max_pool(
            x, [1.0, 1.5, 2.0, 1.0], overlapping=True, deterministic=True, seed=1, seed2=2
        )[0],
        ((1, 5, 6, 2),),
        "overlapping",
    ),
    GradientCase(
        "FractionalAvgPool",
        lambda x: nn_misc_ops.fractional_avg_pool(
            x, [1.0, 1.5, 1.5, 1.0], pseudo_random=True, deterministic=True, seed=1, seed2=2
        )[0],
        ((2, 4, 5, 1),),
        "pseudo",
    ),
]
