"""Depthwise, separable, atrous and generic convolutions and `max_pool_with_argmax`
(follows TF 1.x `nn_impl.py` / `nn_ops.py`).

`depthwise_conv2d` is one `DepthwiseConv2dNative` op (with `dilations` for `rate`),
`separable_conv2d` a depthwise op followed by a 1x1 `Conv2D`, `atrous_conv2d` a dilated
`Conv2D`, `atrous_conv2d_transpose` a dilated `Conv2DBackpropInput` (TensorFlow builds
these last ones from space_to_batch; the results are the same).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.op_defs import nn_conv_nd as _defs  # noqa: F401
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import nn_conv_nd_ops, nn_conv_ops
from tensorweave.ops.nn_conv_ops import get_sequence


def _attrs_2d(strides: Any, padding: str, data_format: str, dilations: Any) -> dict[str, Any]:
    channel_index = 1 if data_format.startswith("NC") else 3
    return {
        "strides": get_sequence(strides, 2, channel_index, "strides"),
        "padding": padding,
        "data_format": data_format,
        "dilations": get_sequence(dilations, 2, channel_index, "dilations"),
    }


def depthwise_conv2d_native(
    input,
    filter,
    strides,
    padding,
    data_format="NHWC",  # noqa: A002
    dilations=(1, 1, 1, 1),
    name=None,
) -> Tensor:
    """Depthwise 2-D convolution (`DepthwiseConv2dNative`, `tf.nn.depthwise_conv2d_native`).

    Args:
      input: `T [batch, h, w, in_channels]` (T half/float32/float64).
      filter: `T [fh, fw, in_channels, channel_multiplier]`.
      strides: 4 ints (or 1 or 2).
      padding: "SAME" or "VALID".
      data_format: "NHWC" (CPU kernel) or "NCHW".
      dilations: 4 ints (or 1 or 2).
      name: op name.

    Returns:
      `T [batch, out_h, out_w, in_channels * channel_multiplier]`; channel `c * m + k`
      convolves input channel `c` with `filter[:, :, c, k]`.
    """
    attrs = _attrs_2d(strides, padding, data_format, dilations)
    return apply_op("DepthwiseConv2dNative", input=input, filter=filter, name=name, **attrs)


def depthwise_conv2d_native_backprop_input(
    input_sizes,
    filter,
    out_backprop,
    strides,  # noqa: A002
    padding,
    data_format="NHWC",
    dilations=(1, 1, 1, 1),
    name=None,
) -> Tensor:
    """The gradient of `depthwise_conv2d_native` w.r.t. its input; `input_sizes`: int32 [4]."""
    attrs = _attrs_2d(strides, padding, data_format, dilations)
    return apply_op(
        "DepthwiseConv2dNativeBackpropInput",
        input_sizes=input_sizes,
        filter=filter,
        out_backprop=out_backprop,
        name=name,
        **attrs,
    )


def depthwise_conv2d_native_backprop_filter(
    input,
    filter_sizes,
    out_backprop,
    strides,  # noqa: A002
    padding,
    data_format="NHWC",
    dilations=(1, 1, 1, 1),
    name=None,
) -> Tensor:
    """The gradient of `depthwise_conv2d_native` w.r.t. its filter; `filter_sizes`: int32 [4]."""
    attrs = _attrs_2d(strides, padding, data_format, dilations)
    return apply_op(
        "DepthwiseConv2dNativeBackpropFilter",
        input=input,
        filter_sizes=filter_sizes,
        out_backprop=out_backprop,
        name=name,
        **attrs,
    )


depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input
depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter


def _rate(rate: Any, dilations: Any) -> list[int]:
    value = dilations if rate is None else rate
    if value is None:
        return [1, 1]
    values = [int(value)] * 2 if isinstance(value, int) else [int(v) for v in value]
    if len(values) != 2:
        raise ValueError(f"rate must be two-element, got {value}")
    return values


def depthwise_conv2d(
    input,
    filter,
    strides,
    padding,
    rate=None,
    name=None,  # noqa: A002
    data_format=None,
    dilations=None,
) -> Tensor:
    """Depthwise 2-D convolution (follows `tf.nn.depthwise_conv2d`).

    Args:
      input: `T [batch, h, w, in_channels]`.
      filter: `T [fh, fw, in_channels, channel_multiplier]`.
      strides: 4 ints.
      padding: "SAME" or "VALID".
      rate: 2 ints, the dilation (atrous) rate; strides must be 1 when it is above 1.
      name: name scope (default "depthwise").
      data_format: "NHWC" (default) or "NCHW".
      dilations: alias of `rate`.

    Returns:
      `T [batch, out_h, out_w, in_channels * channel_multiplier]`.

    Raises:
      ValueError: for a rate above 1 with strides above 1.
    """
    rate = _rate(rate, dilations)
    data_format = data_format or "NHWC"
    with graph_mod.name_scope(name, "depthwise", [input, filter]) as scope:
        if max(rate) > 1 and max(get_sequence(strides, 2, 3, "strides")) > 1:
            raise ValueError("strides > 1 not supported in conjunction with rate > 1")
        return depthwise_conv2d_native(
            input, filter, strides, padding, data_format, dilations=rate, name=scope
        )


def separable_conv2d(
    input,
    depthwise_filter,
    pointwise_filter,
    strides,
    padding,  # noqa: A002
    rate=None,
    name=None,
    data_format=None,
    dilations=None,
) -> Tensor:
    """A depthwise convolution followed by a 1x1 convolution (`tf.nn.separable_conv2d`).

    Args:
      input: `T [batch, h, w, in_channels]`.
      depthwise_filter: `T [fh, fw, in_channels, channel_multiplier]`.
      pointwise_filter: `T [1, 1, in_channels * channel_multiplier, out_channels]`.
      strides: 4 ints (of the depthwise step).
      padding: "SAME" or "VALID".
      rate: 2 ints, the depthwise dilation.
      name: name scope (default "separable_conv2d").
      data_format: "NHWC" (default) or "NCHW".
      dilations: alias of `rate`.

    Returns:
      `T [batch, out_h, out_w, out_channels]`.

    Raises:
      ValueError: for a pointwise filter that is not 1x1 or of the wrong depth.
    """
    data_format = data_format or "NHWC"
    with graph_mod.name_scope(
        name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]
    ) as scope:
        depthwise_filter = convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pointwise_filter = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        pw = pointwise_filter.shape.as_list() if pointwise_filter.shape.ndims else None
        dw = depthwise_filter.shape.as_list() if depthwise_filter.shape.ndims else None
        if pw is not None and (pw[0] != 1 or pw[1] != 1):
            raise ValueError(f"Pointwise filter must be 1x1, got {pw[:2]}")
        if pw is not None and dw is not None and None not in (dw[2], dw[3], pw[2]):
            if dw[2] * dw[3] != pw[2]:
                raise ValueError(
                    f"Pointwise filter depth {pw[2]} must be in_channels * channel_multiplier "
                    f"= {dw[2] * dw[3]}"
                )
        depthwise = depthwise_conv2d(
            input,
            depthwise_filter,
            strides,
            padding,
            rate=rate,
            name="depthwise",
            data_format=data_format,
            dilations=dilations,
        )
        return nn_conv_ops.conv2d(
            depthwise,
            pointwise_filter,
            [1, 1, 1, 1],
            padding="VALID",
            data_format=data_format,
            name=scope,
        )


def atrous_conv2d(value, filters, rate, padding, name=None) -> Tensor:
    """Dilated ("atrous") 2-D convolution (follows `tf.nn.atrous_conv2d`).

    `value`: `T [batch, h, w, in_c]`; `filters`: `T [fh, fw, in_c, out_c]`; `rate`: a
    positive int.

    Raises:
      ValueError: for `rate < 1`.
    """
    if rate < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return nn_conv_ops.conv2d(
        value, filters, [1, 1, 1, 1], padding, dilations=[1, rate, rate, 1], name=name
    )


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None) -> Tensor:
    """The transpose of `atrous_conv2d` (follows `tf.nn.atrous_conv2d_transpose`).

    `filters`: `T [fh, fw, out_c, in_c]`; `output_shape`: 4 ints.

    Raises:
      ValueError: for `rate < 1` or a bad `padding`.
    """
    if rate < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"padding must be either VALID or SAME: {padding}")
    with graph_mod.name_scope(name, "atrous_conv2d_transpose", [value, filters]) as scope:
        return nn_conv_ops.conv2d_backprop_input(
            output_shape,
            filters,
            value,
            [1, 1, 1, 1],
            padding,
            dilations=[1, rate, rate, 1],
            name=scope,
        )


def convolution(
    input,
    filter,
    padding,
    strides=None,
    dilation_rate=None,
    name=None,  # noqa: A002
    data_format=None,
    filters=None,
    dilations=None,
) -> Tensor:
    """N-d convolution for N = 1, 2, 3, chosen by the input's rank (`tf.nn.convolution`).

    `strides` and `dilation_rate` have one int per spatial dimension.

    Raises:
      ValueError: for an input of unknown rank or rank other than 3, 4, 5.
    """
    filter = filters if filter is None else filter  # noqa: A001
    dilation_rate = dilations if dilation_rate is None else dilation_rate
    input = convert_to_tensor(input, name="input")  # noqa: A001
    rank = input.shape.ndims
    if rank not in (3, 4, 5):
        raise ValueError(f"input must have rank 3, 4 or 5 (known), got {rank}")
    n = rank - 2
    strides = [1] * n if strides is None else list(strides)
    dilation_rate = [1] * n if dilation_rate is None else list(dilation_rate)
    with graph_mod.name_scope(name, "convolution", [input, filter]) as scope:
        if n == 1:
            return nn_conv_nd_ops.conv1d(
                input,
                filter,
                strides,
                padding,
                data_format=data_format or "NWC",
                dilations=dilation_rate,
                name=scope,
            )
        if n == 2:
            return nn_conv_ops.conv2d(
                input,
                filter,
                strides,
                padding,
                data_format=data_format or "NHWC",
                dilations=dilation_rate,
                name=scope,
            )
        return nn_conv_nd_ops.conv3d(
            input,
            filter,
            strides,
            padding,
            data_format=data_format or "NDHWC",
            dilations=dilation_rate,
            name=scope,
        )


def max_pool_with_argmax(
    input,
    ksize,
    strides,
    padding,
    data_format="NHWC",  # noqa: A002
    Targmax=None,
    name=None,
    output_dtype=None,  # noqa: N803
    include_batch_in_index=False,
) -> tuple[Tensor, Tensor]:
    """Max pooling that also returns the flat index of each maximum (`MaxPoolWithArgmax`).

    Follows `tf.nn.max_pool_with_argmax`: the index of `[b, y, x, c]` is
    `((b * height + y) * width + x) * channels + c` with `include_batch_in_index`, else
    without the `b` term.

    Args:
      input: `T [batch, height, width, channels]`.
      ksize: 4 ints (or 1 or 2).
      strides: 4 ints (or 1 or 2).
      padding: "SAME" or "VALID".
      data_format: must be "NHWC".
      Targmax: int32 or int64 (default int64); `output_dtype` is its alias.
      name: op name.
      output_dtype: alias of `Targmax`.
      include_batch_in_index: see above.

    Returns:
      `(output T, argmax Targmax)`, both `[batch, out_h, out_w, channels]`.

    Raises:
      ValueError: for a data_format other than NHWC.
    """
    if data_format != "NHWC":
        raise ValueError("Data formats other than 'NHWC' are not yet supported")
    dtype = Targmax if Targmax is not None else output_dtype
    kwargs = {} if dtype is None else {"Targmax": dtype}
    output, argmax = apply_op(
        "MaxPoolWithArgmax",
        input=input,
        ksize=get_sequence(ksize, 2, 3, "ksize"),
        strides=get_sequence(strides, 2, 3, "strides"),
        padding=padding,
        include_batch_in_index=include_batch_in_index,
        name=name,
        **kwargs,
    )
    return output, argmax


__all__ = [
    "atrous_conv2d",
    "atrous_conv2d_transpose",
    "convolution",
    "depthwise_conv2d",
    "depthwise_conv2d_backprop_filter",
    "depthwise_conv2d_backprop_input",
    "depthwise_conv2d_native",
    "depthwise_conv2d_native_backprop_filter",
    "depthwise_conv2d_native_backprop_input",
    "max_pool_with_argmax",
    "separable_conv2d",
]
