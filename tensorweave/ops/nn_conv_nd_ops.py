"""1-D, 3-D, transposed, depthwise, separable and atrous convolutions and 1-D/3-D pooling
(follows TF 1.x `nn_ops.py` / `nn_impl.py`).

1-D ops insert a size-1 spatial dimension and run the 2-D op (as TensorFlow does:
`conv1d` is a `Conv2D` between two `ExpandDims`/`Squeeze`). Transposed convolutions are the
input gradients of convolutions (`Conv2DBackpropInput`, `Conv3DBackpropInputV2`). Op
definitions are in `framework/op_defs/nn_conv_nd.py`, kernels in
`kernels/nn_conv_nd_kernels.py`, gradients in `nn_conv_nd_grad.py`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.op_defs import nn_conv_nd as _defs  # noqa: F401
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, nn_conv_ops
from tensorweave.ops.nn_conv_ops import get_sequence


def _nd_attrs(n: int, strides: Any, dilations: Any, data_format: str) -> dict[str, Any]:
    channel_index = 1 if data_format.startswith("NC") else n + 1
    return {
        "strides": get_sequence(strides, n, channel_index, "strides"),
        "dilations": get_sequence(dilations, n, channel_index, "dilations"),
        "data_format": data_format,
    }


# ------------------------------------------------------------------------ 3-D ops
def conv3d(
    input,
    filter=None,
    strides=None,
    padding=None,
    data_format="NDHWC",  # noqa: A002
    dilations=(1, 1, 1, 1, 1),
    name=None,
    filters=None,
) -> Tensor:
    """3-D convolution (follows `tf.nn.conv3d`).

    Args:
      input: `T [batch, depth, height, width, in_channels]` (T half/float32/float64).
      filter: `T [fd, fh, fw, in_channels, out_channels]`.
      strides: 5 ints (1 for batch and channels).
      padding: "SAME" or "VALID".
      data_format: "NDHWC" (CPU kernel) or "NCDHW".
      dilations: 5 ints.
      name: op name.
      filters: alias of `filter`.

    Returns:
      `T [batch, out_d, out_h, out_w, out_channels]`.

    Raises:
      ValueError: for mismatched depths or windows larger than a VALID input.
    """
    filter = filters if filter is None else filter  # noqa: A001
    attrs = _nd_attrs(3, strides, dilations, data_format)
    return apply_op("Conv3D", input=input, filter=filter, padding=padding, name=name, **attrs)


def conv3d_backprop_input_v2(
    input_sizes,
    filter,
    out_backprop,
    strides,
    padding,  # noqa: A002
    data_format="NDHWC",
    dilations=(1, 1, 1, 1, 1),
    name=None,
):
    """The gradient of `conv3d` w.r.t. its input (`Conv3DBackpropInputV2`)."""
    attrs = _nd_attrs(3, strides, dilations, data_format)
    return apply_op(
        "Conv3DBackpropInputV2",
        input_sizes=input_sizes,
        filter=filter,
        out_backprop=out_backprop,
        padding=padding,
        name=name,
        **attrs,
    )


def conv3d_backprop_filter_v2(
    input,
    filter_sizes,
    out_backprop,
    strides,
    padding,  # noqa: A002
    data_format="NDHWC",
    dilations=(1, 1, 1, 1, 1),
    name=None,
):
    """The gradient of `conv3d` w.r.t. its filter (follows `tf.nn.conv3d_backprop_filter_v2`).

    Args:
      input: `T [batch, d, h, w, in_channels]`.
      filter_sizes: int32 [5], the filter's shape.
      out_backprop: `T [batch, out_d, out_h, out_w, out_channels]`.
      strides: as `conv3d`.
      padding: as `conv3d`.
      data_format: as `conv3d`.
      dilations: as `conv3d`.
      name: op name.

    Returns:
      `T` of shape `filter_sizes`.
    """
    attrs = _nd_attrs(3, strides, dilations, data_format)
    return apply_op(
        "Conv3DBackpropFilterV2",
        input=input,
        filter_sizes=filter_sizes,
        out_backprop=out_backprop,
        padding=padding,
        name=name,
        **attrs,
    )


conv3d_backprop_filter = conv3d_backprop_filter_v2


def _pool_nd(
    op_type: str,
    default: str,
    value: Any,
    n: int,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str,
    name: str | None,
) -> Tensor:
    with graph_mod.name_scope(name, default, [value]) as scope:
        value = convert_to_tensor(value, name="input")
        channel_index = 1 if data_format.startswith("NC") else n + 1
        return apply_op(
            op_type,
            input=value,
            ksize=get_sequence(ksize, n, channel_index, "ksize"),
            strides=get_sequence(strides, n, channel_index, "strides"),
            padding=padding,
            data_format=data_format,
            name=scope,
        )


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None) -> Tensor:  # noqa: A002
    """3-D max pooling (follows `tf.nn.max_pool3d`).

    `input`: half/float32 `[batch, d, h, w, channels]`; `ksize`, `strides`: an int or 1, 3
    or 5 ints; `padding`: "SAME"/"VALID". Returns `[batch, out_d, out_h, out_w, channels]`.
    """
    return _pool_nd("MaxPool3D", "MaxPool3D", input, 3, ksize, strides, padding, data_format, name)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None) -> Tensor:  # noqa: A002
    """3-D average pooling over real (unpadded) entries (follows `tf.nn.avg_pool3d`).

    Arguments as `max_pool3d`; `input` is half/float32/float64.
    """
    return _pool_nd("AvgPool3D", "AvgPool3D", input, 3, ksize, strides, padding, data_format, name)


# ------------------------------------------------------------------------ 1-D ops
def _spatial_axis(data_format: str) -> int:
    if data_format in ("NWC", "NHWC", None):
        return 1
    if data_format in ("NCW", "NCHW"):
        return 2
    raise ValueError(f"data_format must be 'NWC' or 'NCW', got {data_format}")


def conv1d(
    value=None,
    filters=None,
    stride=None,
    padding=None,
    use_cudnn_on_gpu=None,
    data_format=None,
    name=None,
    input=None,
    dilations=None,
) -> Tensor:  # noqa: A002
    """1-D convolution through `Conv2D` (follows `tf.nn.conv1d`).

    Args:
      value: `T [batch, in_width, in_channels]` ("NWC") or `[batch, in_channels, in_width]`.
      filters: `T [filter_width, in_channels, out_channels]`.
      stride: an int (or list of 1 or 3 ints).
      padding: "SAME" or "VALID".
      use_cudnn_on_gpu: ignored.
      data_format: "NWC" (default) or "NCW".
      name: name scope (default "conv1d").
      input: alias of `value`.
      dilations: an int (or list of 1 or 3 ints).

    Returns:
      `T [batch, out_width, out_channels]`.
    """
    value = input if value is None else value
    with graph_mod.name_scope(name, "conv1d", [value, filters]) as scope:
        axis = _spatial_axis(data_format)
        fmt = "NHWC" if axis == 1 else "NCHW"
        stride = _expand_1d(stride, axis, "stride")
        dilations = _expand_1d(1 if dilations is None else dilations, axis, "dilations")
        value = array_ops.expand_dims(value, axis)
        filters = array_ops.expand_dims(filters, 0)
        result = nn_conv_ops.conv2d(
            value, filters, strides=stride, padding=padding, data_format=fmt, dilations=dilations
        )
        return array_ops.squeeze(result, [axis], name=scope)


def _expand_1d(value: Any, axis: int, name: str) -> list[int]:
    values = [value] if isinstance(value, int) else [int(v) for v in value]
    if len(values) == 1:
        values = [1, values[0], 1] if axis == 1 else [1, 1, values[0]]
    if len(values) != 3:
        raise ValueError(f"{name} should be of length 1 or 3 but was {len(values)}")
    return [*values[:axis], 1, *values[axis:]]


def conv1d_transpose(
    input,
    filters,
    output_shape,
    strides,
    padding="SAME",  # noqa: A002
    data_format="NWC",
    dilations=None,
    name=None,
) -> Tensor:
    """The transpose of `conv1d` (follows `tf.nn.conv1d_transpose`).

    `filters`: `T [width, out_channels, in_channels]`; `output_shape`: the 3 ints of the
    result. Runs `Conv2DBackpropInput` on an inserted height of 1.
    """
    with graph_mod.name_scope(name, "conv1d_transpose", [input, filters, output_shape]) as scope:
        axis = _spatial_axis(data_format)
        fmt = "NHWC" if axis == 1 else "NCHW"
        if isinstance(output_shape, list | tuple):
            shape: Any = [*output_shape[:axis], 1, *output_shape[axis:]]
        else:
            shape = convert_to_tensor(output_shape, name="output_shape")
            shape = array_ops.concat([shape[:axis], [1], shape[axis:]], 0)
        result = nn_conv_ops.conv2d_backprop_input(
            shape,
            array_ops.expand_dims(filters, 0),
            array_ops.expand_dims(input, axis),
            strides=_expand_1d(strides, axis, "strides"),
            padding=padding,
            data_format=fmt,
            dilations=_expand_1d(1 if dilations is None else dilations, axis, "dilations"),
        )
        return array_ops.squeeze(result, [axis], name=scope)


def _pool1d(
    pool: Any,
    value: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str,
    name: str | None,
    default: str,
) -> Tensor:
    with graph_mod.name_scope(name, default, [value]) as scope:
        axis = _spatial_axis(data_format)
        fmt = "NHWC" if axis == 1 else "NCHW"
        value = array_ops.expand_dims(value, axis)
        result = pool(
            value,
            _expand_1d(ksize, axis, "ksize"),
            _expand_1d(strides, axis, "strides"),
            padding,
            data_format=fmt,
        )
        return array_ops.squeeze(result, [axis], name=scope)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None) -> Tensor:  # noqa: A002
    """1-D max pooling through `MaxPool` (follows `tf.nn.max_pool1d`).

    `input`: `[batch, width, channels]` ("NWC"); `ksize`, `strides`: an int or 1 or 3 ints.
    """
    return _pool1d(
        nn_conv_ops.max_pool, input, ksize, strides, padding, data_format, name, "MaxPool1d"
    )


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None) -> Tensor:  # noqa: A002
    """1-D average pooling through `AvgPool` (follows `tf.nn.avg_pool1d`)."""
    return _pool1d(
        nn_conv_ops.avg_pool, input, ksize, strides, padding, data_format, name, "AvgPool1D"
    )


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None) -> Tensor:  # noqa: A002
    """2-D max pooling (follows `tf.nn.max_pool2d`)."""
    return nn_conv_ops.max_pool(input, ksize, strides, padding, data_format, name)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None) -> Tensor:  # noqa: A002
    """2-D average pooling (follows `tf.nn.avg_pool2d`)."""
    return nn_conv_ops.avg_pool(input, ksize, strides, padding, data_format, name)


def _pool_by_rank(
    kind: str,
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,  # noqa: A002
    data_format: Any,
    name: Any,
) -> Tensor:
    rank = convert_to_tensor(input).shape.ndims
    if rank is None:
        raise ValueError("The rank of the input to pooling must be known.")
    fns = {
        "max": {3: max_pool1d, 4: max_pool2d, 5: max_pool3d},
        "avg": {3: avg_pool1d, 4: avg_pool2d, 5: avg_pool3d},
    }[kind]
    if rank not in fns:
        raise ValueError(f"Input tensor must be of rank 3, 4 or 5 but was {rank}.")
    formats = {3: "NWC", 4: "NHWC", 5: "NDHWC"}
    return fns[rank](input, ksize, strides, padding, data_format or formats[rank], name)


def max_pool_v2(input, ksize, strides, padding, data_format=None, name=None) -> Tensor:  # noqa: A002
    """Max pooling of rank 3, 4 or 5 inputs (follows `tf.nn.max_pool_v2`).

    Raises:
      ValueError: for another rank.
    """
    return _pool_by_rank("max", input, ksize, strides, padding, data_format, name)


def avg_pool_v2(input, ksize, strides, padding, data_format=None, name=None) -> Tensor:  # noqa: A002
    """Average pooling of rank 3, 4 or 5 inputs (follows `tf.nn.avg_pool_v2`)."""
    return _pool_by_rank("avg", input, ksize, strides, padding, data_format, name)


def pool(
    input,
    window_shape,
    pooling_type,
    padding,
    dilation_rate=None,
    strides=None,  # noqa: A002
    name=None,
    data_format=None,
    dilations=None,
) -> Tensor:
    """N-d max or average pooling (follows `tf.nn.pool`), for N = 1, 2, 3.

    Raises:
      ValueError: for an unknown `pooling_type`, or dilations other than 1 (deviation:
        TensorFlow supports dilated pooling through space_to_batch).
    """
    dilation_rate = dilations if dilation_rate is None else dilation_rate
    if dilation_rate is not None and any(int(d) != 1 for d in dilation_rate):
        raise NotImplementedError("tf.nn.pool with dilation_rate > 1")
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"Invalid pooling_type: {pooling_type}")
    window = [int(w) for w in window_shape]
    strides = [1] * len(window) if strides is None else [int(s) for s in strides]
    kind = "max" if pooling_type == "MAX" else "avg"
    return _pool_by_rank(kind, input, window, strides, padding, data_format, name)


# ----------------------------------------------------------------- transposed
def _transpose_attrs(n: int, strides: Any, dilations: Any, data_format: str) -> dict[str, Any]:
    return _nd_attrs(n, strides, 1 if dilations is None else dilations, data_format)


def conv2d_transpose(
    value=None,
    filter=None,
    output_shape=None,
    strides=None,  # noqa: A002
    padding="SAME",
    data_format="NHWC",
    name=None,
    input=None,
    filters=None,  # noqa: A002
    dilations=None,
) -> Tensor:
    """The transpose (input gradient) of `conv2d` (follows `tf.nn.conv2d_transpose`).

    Args:
      value: `T [batch, height, width, in_channels]`.
      filter: `T [fh, fw, output_channels, in_channels]` (note the order).
      output_shape: 4 ints (or an int32 Tensor), the result's shape.
      strides: an int or 1, 2 or 4 ints.
      padding: "SAME" or "VALID".
      data_format: "NHWC" or "NCHW".
      name: name scope (default "conv2d_transpose").
      input: alias of `value`.
      filters: alias of `filter`.
      dilations: an int or 1, 2 or 4 ints.

    Returns:
      `T` of `output_shape`.

    Raises:
      ValueError: if `filter`'s in_channels does not match `value`'s channels.
    """
    value = input if value is None else value
    filter = filters if filter is None else filter  # noqa: A001
    with graph_mod.name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        value, filter = convert_to_tensor(value, name="value"), convert_to_tensor(filter)  # noqa: A001
        axis = 1 if data_format.startswith("NC") else 3
        c, fc = value.shape.as_list()[axis] if value.shape.ndims else None, filter.shape[3]
        if c is not None and fc.value is not None and c != fc.value:
            raise ValueError(
                f"input channels does not match filter's input channels, {c} != {fc.value}"
            )
        return nn_conv_ops.conv2d_backprop_input(
            output_shape,
            filter,
            value,
            padding=padding,
            name=scope,
            **_transpose_attrs(2, strides, dilations, data_format),
        )


def conv3d_transpose(
    value=None,
    filter=None,
    output_shape=None,
    strides=None,  # noqa: A002
    padding="SAME",
    data_format="NDHWC",
    name=None,
    input=None,
    filters=None,  # noqa: A002
    dilations=None,
) -> Tensor:
    """The transpose of `conv3d` (follows `tf.nn.conv3d_transpose`); arguments as
    `conv2d_transpose` with 5-D tensors and `filter [fd, fh, fw, out_c, in_c]`."""
    value = input if value is None else value
    filter = filters if filter is None else filter  # noqa: A001
    with graph_mod.name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        return conv3d_backprop_input_v2(
            output_shape,
            filter,
            value,
            padding=padding,
            name=scope,
            **_transpose_attrs(3, strides, dilations, data_format),
        )


def conv_transpose(
    input,
    filters,
    output_shape,
    strides,
    padding="SAME",  # noqa: A002
    data_format=None,
    dilations=None,
    name=None,
) -> Tensor:
    """`conv1d/2d/3d_transpose` chosen by the rank of `output_shape` (`tf.nn.conv_transpose`).

    Raises:
      ValueError: if the rank is not 3, 4 or 5.
    """
    n = (
        len(output_shape)
        if isinstance(output_shape, list | tuple)
        else (convert_to_tensor(output_shape).shape.as_list()[0])
    )
    if n == 3:
        return conv1d_transpose(
            input, filters, output_shape, strides, padding, data_format or "NWC", dilations, name
        )
    if n == 4:
        return conv2d_transpose(
            input,
            filters,
            output_shape,
            strides,
            padding,
            data_format or "NHWC",
            name,
            dilations=dilations,
        )
    if n == 5:
        return conv3d_transpose(
            input,
            filters,
            output_shape,
            strides,
            padding,
            data_format or "NDHWC",
            name,
            dilations=dilations,
        )
    raise ValueError(f"output_shape must be of length 3, 4 or 5 but was {n}.")


__all__ = [
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "avg_pool_v2",
    "conv1d",
    "conv1d_transpose",
    "conv2d_transpose",
    "conv3d",
    "conv3d_backprop_filter",
    "conv3d_backprop_filter_v2",
    "conv3d_transpose",
    "conv_transpose",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_pool_v2",
    "pool",
]
