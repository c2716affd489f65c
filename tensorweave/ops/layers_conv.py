"""Convolution layers (follows TF 1.x `layers/convolutional.py`): `Conv1D`, `Conv2D`,
`Conv3D`, `SeparableConv1D`, `SeparableConv2D`, `Conv2DTranspose`, `Conv3DTranspose` and
their functional forms. Weights are `<scope>/kernel` (`depthwise_kernel` and
`pointwise_kernel` for separable convolutions) and `<scope>/bias`.

Deviation: `channels_first` inputs are transposed to channels-last and back (the CPU
kernels are channels-last only, as TensorFlow's).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array_ops, init_ops, math_ops, nn_conv_ops, nn_ops
from tensorweave.ops import nn_conv_depthwise_ops as dw
from tensorweave.ops import nn_conv_nd_ops as nd
from tensorweave.ops.layers_base import InputSpec, Layer
from tensorweave.ops.layers_impl import _channels_first, _normalize_padding, _normalize_tuple

_ZEROS = init_ops.zeros_initializer()


def _to_last(x: Any, rank: int) -> Any:
    return array_ops.transpose(x, [0, *range(2, rank + 2), 1])


def _to_first(x: Any, rank: int) -> Any:
    return array_ops.transpose(x, [0, rank + 1, *range(1, rank + 1)])


def _out_length(size: Any, k: int, padding: str, stride: int, dilation: int = 1) -> Any:
    if size is None:
        return None
    k = k + (k - 1) * (dilation - 1)
    if padding == "SAME":
        return (size + stride - 1) // stride
    return (size - k + stride) // stride


class _Conv(Layer):
    """N-d convolution layer; subclasses fix `rank`."""

    rank = 2

    def __init__(
        self,
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
        **kwargs,
    ):
        super().__init__(
            trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs
        )
        n = self.rank
        self.filters = int(filters)
        self.kernel_size = _normalize_tuple(kernel_size, n, "kernel_size")
        self.strides = _normalize_tuple(strides, n, "strides")
        self.padding = _normalize_padding(padding).lower()
        self.data_format = "channels_first" if _channels_first(data_format) else "channels_last"
        self.dilation_rate = _normalize_tuple(dilation_rate, n, "dilation_rate")
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = InputSpec(ndim=n + 2)
        self.kernel: Any = None
        self.bias: Any = None

    @property
    def _channel_axis(self) -> int:
        return 1 if self.data_format == "channels_first" else -1

    def _input_dim(self, input_shape: Any) -> int:
        shape = TensorShape(input_shape)
        dim = shape.as_list()[self._channel_axis] if shape.ndims else None
        if dim is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        return dim

    def _kernel_shape(self, input_dim: int) -> list[int]:
        return [*self.kernel_size, input_dim, self.filters]

    def build(self, input_shape: Any) -> None:
        """Creates `kernel` and `bias`.

        Raises:
          ValueError: if the channel dimension is unknown.
        """
        input_dim = self._input_dim(input_shape)
        self.kernel = self.add_weight(
            "kernel",
            shape=self._kernel_shape(input_dim),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
            trainable=True,
            dtype=self._dtype,
        )
        self._add_bias()
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={self._channel_axis: input_dim})
        self.built = True

    def _add_bias(self) -> None:
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                shape=[self.filters],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
                trainable=True,
                dtype=self._dtype,
            )

    def _convolve(self, x: Any) -> Any:
        pad = self.padding.upper()
        if self.rank == 1:
            return nd.conv1d(x, self.kernel, self.strides[0], pad, dilations=self.dilation_rate[0])
        if self.rank == 2:
            return nn_conv_ops.conv2d(
                x, self.kernel, [1, *self.strides, 1], pad, dilations=[1, *self.dilation_rate, 1]
            )
        return nd.conv3d(
            x, self.kernel, [1, *self.strides, 1], pad, dilations=[1, *self.dilation_rate, 1]
        )

    def call(self, inputs: Any) -> Any:
        """The convolution (+ bias, activation) in `data_format`."""
        first = self.data_format == "channels_first"
        x = math_ops.cast(inputs, self._dtype)
        x = _to_last(x, self.rank) if first else x
        outputs = self._convolve(x)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        if first:
            outputs = _to_first(outputs, self.rank)
        return self.activation(outputs) if self.activation is not None else outputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        """The output shape of the convolution."""
        dims = TensorShape(input_shape).as_list()
        first = self.data_format == "channels_first"
        spatial = dims[2:] if first else dims[1:-1]
        out = [
            _out_length(s, k, self.padding.upper(), st, d)
            for s, k, st, d in zip(spatial, self.kernel_size, self.strides, self.dilation_rate)
        ]
        return TensorShape(
            [dims[0], self.filters, *out] if first else [dims[0], *out, self.filters]
        )


class Conv1D(_Conv):
    """1-D convolution layer (follows `tf.layers.Conv1D`); arguments as `Conv2D`."""

    rank = 1


class Conv2D(_Conv):
    """2-D convolution layer (follows `tf.layers.Conv2D`).

    Args:
      filters: the number of output channels.
      kernel_size: an int or a pair.
      strides: an int or a pair.
      padding: "valid" or "same".
      data_format: "channels_last" or "channels_first".
      dilation_rate: an int or a pair.
      activation: a function applied to the output, or None.
      use_bias: whether to add a bias.
      kernel_initializer: initializer of `kernel [kh, kw, in, filters]` (None: Glorot).
      bias_initializer: initializer of `bias [filters]`.
      kernel_regularizer: function of the kernel returning a loss.
      bias_regularizer: same for the bias.
      activity_regularizer: same for the output.
      kernel_constraint: projection applied by optimizers to the kernel.
      bias_constraint: same for the bias.
      trainable: whether the weights are trainable.
      name: the layer's name and scope.
      **kwargs: `Layer` arguments.
    """

    rank = 2


class Conv3D(_Conv):
    """3-D convolution layer (follows `tf.layers.Conv3D`); arguments as `Conv2D`."""

    rank = 3


class _SeparableConv(_Conv):
    def __init__(
        self,
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
        **kwargs,
    ):
        super().__init__(
            filters,
            kernel_size,
            strides,
            padding,
            data_format,
            dilation_rate,
            activation,
            use_bias,
            None,
            bias_initializer,
            None,
            bias_regularizer,
            activity_regularizer,
            None,
            bias_constraint,
            trainable,
            name,
            **kwargs,
        )
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = depthwise_initializer
        self.pointwise_initializer = pointwise_initializer
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.depthwise_constraint = depthwise_constraint
        self.pointwise_constraint = pointwise_constraint
        self.depthwise_kernel: Any = None
        self.pointwise_kernel: Any = None

    def build(self, input_shape: Any) -> None:
        """Creates `depthwise_kernel`, `pointwise_kernel` and `bias`."""
        input_dim = self._input_dim(input_shape)
        ones = [1] * self.rank
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel",
            shape=[*self.kernel_size, input_dim, self.depth_multiplier],
            initializer=self.depthwise_initializer,
            regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint,
            trainable=True,
            dtype=self._dtype,
        )
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            shape=[*ones, input_dim * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer,
            regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint,
            trainable=True,
            dtype=self._dtype,
        )
        self._add_bias()
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={self._channel_axis: input_dim})
        self.built = True

    def _convolve(self, x: Any) -> Any:
        pad = self.padding.upper()
        if self.rank == 2:
            return dw.separable_conv2d(
                x,
                self.depthwise_kernel,
                self.pointwise_kernel,
                [1, *self.strides, 1],
                pad,
                rate=list(self.dilation_rate),
            )
        x = array_ops.expand_dims(x, 1)
        out = dw.separable_conv2d(
            x,
            array_ops.expand_dims(self.depthwise_kernel, 0),
            array_ops.expand_dims(self.pointwise_kernel, 0),
            [1, 1, self.strides[0], 1],
            pad,
            rate=[1, self.dilation_rate[0]],
        )
        return array_ops.squeeze(out, [1])


class SeparableConv1D(_SeparableConv):
    """Depthwise-separable 1-D convolution layer (follows `tf.layers.SeparableConv1D`)."""

    rank = 1


class SeparableConv2D(_SeparableConv):
    """Depthwise-separable 2-D convolution layer (follows `tf.layers.SeparableConv2D`).

    Args as `Conv2D`, with `depth_multiplier` and `depthwise_*`/`pointwise_*` initializers,
    regularizers and constraints instead of `kernel_*`.
    """

    rank = 2


class _ConvTranspose(_Conv):
    def _kernel_shape(self, input_dim: int) -> list[int]:
        return [*self.kernel_size, self.filters, input_dim]

    def _convolve(self, x: Any) -> Any:
        shape = array_ops.shape(x)
        spatial = x.shape.as_list()[1:-1]
        sizes = []
        for i, (k, s) in enumerate(zip(self.kernel_size, self.strides)):
            size = spatial[i] if spatial[i] is not None else shape[i + 1]
            if self.padding == "valid":
                sizes.append(size * s + max(k - s, 0))
            else:
                sizes.append(size * s)
        output_shape = array_ops.stack([shape[0], *sizes, self.filters])
        fn = nn_conv_ops.conv2d_backprop_input if self.rank == 2 else nd.conv3d_backprop_input_v2
        out = fn(output_shape, self.kernel, x, [1, *self.strides, 1], self.padding.upper())
        static = [d if isinstance(d, int) else None for d in sizes]
        out.set_shape([x.shape.as_list()[0], *static, self.filters])
        return out

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        """The transposed convolution's output shape."""
        dims = TensorShape(input_shape).as_list()
        first = self.data_format == "channels_first"
        spatial = dims[2:] if first else dims[1:-1]
        out = []
        for size, k, s in zip(spatial, self.kernel_size, self.strides):
            if size is None:
                out.append(None)
            else:
                out.append(size * s + max(k - s, 0) if self.padding == "valid" else size * s)
        return TensorShape(
            [dims[0], self.filters, *out] if first else [dims[0], *out, self.filters]
        )


class Conv2DTranspose(_ConvTranspose):
    """Transposed 2-D convolution layer (follows `tf.layers.Conv2DTranspose`).

    `kernel [kh, kw, filters, in_channels]`; output size `in * stride` ("same") or
    `in * stride + max(k - stride, 0)` ("valid"). Other arguments as `Conv2D`.
    """

    rank = 2


class Conv3DTranspose(_ConvTranspose):
    """Transposed 3-D convolution layer (follows `tf.layers.Conv3DTranspose`)."""

    rank = 3


__all__ = [
    "Conv1D",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "SeparableConv1D",
    "SeparableConv2D",
]
