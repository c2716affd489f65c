"""The functional convolution layers built on the layer classes (follows TF 1.x
`tf.layers.conv1d`, `conv3d`, `separable_conv1d`, `separable_conv2d`, `conv2d_transpose`,
`conv3d_transpose`): each makes a layer named `name` (reused with `reuse=True`) and calls
it once."""

from __future__ import annotations

from typing import Any

from tensorweave.ops import init_ops
from tensorweave.ops import layers_conv as conv

_ZEROS = init_ops.zeros_initializer()


def _apply(cls: Any, inputs: Any, name: Any, reuse: Any, **config: Any) -> Any:
    """Builds layer `cls` from a functional wrapper's arguments (its `locals()`) and calls it."""
    return cls(name=name, _reuse=reuse, _scope=name, **config).apply(inputs)


def conv1d(
    inputs,
    filters,
    kernel_size,
    strides=1,
    padding="valid",
    data_format="channels_last",
    dilation_rate=1,
    activation=None,
    use_bias=True,
    kernel_initializer=None,
    bias_initializer=_ZEROS,
    kernel_regularizer=None,
    bias_regularizer=None,
    activity_regularizer=None,
    kernel_constraint=None,
    bias_constraint=None,
    trainable=True,
    name=None,
    reuse=None,
):
    """A 1-D convolution layer (follows `tf.layers.conv1d`); see `Conv1D`."""
    return _apply(conv.Conv1D, **locals())


def conv3d(
    inputs,
    filters,
    kernel_size,
    strides=(1, 1, 1),
    padding="valid",
    data_format="channels_last",
    dilation_rate=(1, 1, 1),
    activation=None,
    use_bias=True,
    kernel_initializer=None,
    bias_initializer=_ZEROS,
    kernel_regularizer=None,
    bias_regularizer=None,
    activity_regularizer=None,
    kernel_constraint=None,
    bias_constraint=None,
    trainable=True,
    name=None,
    reuse=None,
):
    """A 3-D convolution layer (follows `tf.layers.conv3d`); see `Conv3D`."""
    return _apply(conv.Conv3D, **locals())


def separable_conv1d(
    inputs,
    filters,
    kernel_size,
    strides=1,
    padding="valid",
    data_format="channels_last",
    dilation_rate=1,
    depth_multiplier=1,
    activation=None,
    use_bias=True,
    depthwise_initializer=None,
    pointwise_initializer=None,
    bias_initializer=_ZEROS,
    depthwise_regularizer=None,
    pointwise_regularizer=None,
    bias_regularizer=None,
    activity_regularizer=None,
    depthwise_constraint=None,
    pointwise_constraint=None,
    bias_constraint=None,
    trainable=True,
    name=None,
    reuse=None,
):
    """A depthwise-separable 1-D convolution layer (`tf.layers.separable_conv1d`)."""
    return _apply(conv.SeparableConv1D, **locals())


def separable_conv2d(
    inputs,
    filters,
    kernel_size,
    strides=(1, 1),
    padding="valid",
    data_format="channels_last",
    dilation_rate=(1, 1),
    depth_multiplier=1,
    activation=None,
    use_bias=True,
    depthwise_initializer=None,
    pointwise_initializer=None,
    bias_initializer=_ZEROS,
    depthwise_regularizer=None,
    pointwise_regularizer=None,
    bias_regularizer=None,
    activity_regularizer=None,
    depthwise_constraint=None,
    pointwise_constraint=None,
    bias_constraint=None,
    trainable=True,
    name=None,
    reuse=None,
):
    """A depthwise-separable 2-D convolution layer (`tf.layers.separable_conv2d`)."""
    return _apply(conv.SeparableConv2D, **locals())


def conv2d_transpose(
    inputs,
    filters,
    kernel_size,
    strides=(1, 1),
    padding="valid",
    data_format="channels_last",
    activation=None,
    use_bias=True,
    kernel_initializer=None,
    bias_initializer=_ZEROS,
    kernel_regularizer=None,
    bias_regularizer=None,
    activity_regularizer=None,
    kernel_constraint=None,
    bias_constraint=None,
    trainable=True,
    name=None,
    reuse=None,
):
    """A transposed 2-D convolution layer (follows `tf.layers.conv2d_transpose`)."""
    return _apply(conv.Conv2DTranspose, **locals())


def conv3d_transpose(
    inputs,
    filters,
    kernel_size,
    strides=(1, 1, 1),
    padding="valid",
    data_format="channels_last",
    activation=None,
    use_bias=True,
    kernel_initializer=None,
    bias_initializer=_ZEROS,
    kernel_regularizer=None,
    bias_regularizer=None,
    activity_regularizer=None,
    kernel_constraint=None,
    bias_constraint=None,
    trainable=True,
    name=None,
    reuse=None,
):
    """A transposed 3-D convolution layer (follows `tf.layers.conv3d_transpose`)."""
    return _apply(conv.Conv3DTranspose, **locals())


__all__ = [
    "conv1d",
    "conv2d_transpose",
    "conv3d",
    "conv3d_transpose",
    "separable_conv1d",
    "separable_conv2d",
]
