"""2-D convolution and pooling ops (follows TF 1.x `nn_ops` / `gen_nn_ops`).

`Conv2D`, `Conv2DBackpropInput`, `Conv2DBackpropFilter`, `MaxPool`, `MaxPoolGrad`,
`MaxPoolGradGrad`, `AvgPool` and `AvgPoolGrad`, with TensorFlow's attrs and static shapes
(NHWC and NCHW shapes are inferred; the CPU kernels compute NHWC only, as TensorFlow's).
Re-exported by `nn_ops` and `tensorweave.nn`.
"""

from __future__ import annotations

from collections.abc import Sized
from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor


# -------------------------------------------------------------------- helpers
def get_sequence(value: Any, n: int, channel_index: int, name: str) -> list[int]:
    """`value` (an int or a list of 1, n or n + 2 ints) as an (n + 2)-list (TF's helper).

    Raises:
      ValueError: for a list of another length.
    """
    if value is None:
        value = [1]
    elif not isinstance(value, Sized):
        value = [value]
    value = [int(v) for v in value]
    if len(value) == n + 2:
        return value
    if len(value) == 1:
        value = value * n
    elif len(value) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2} but was {len(value)}")
    return [1, 1, *value] if channel_index == 1 else [1, *value, 1]


def _conv_attrs(strides: Any, padding: str, data_format: str, dilations: Any, cudnn: bool):
    channel_index = 1 if data_format.startswith("NC") else 3
    return {
        "strides": get_sequence(strides, 2, channel_index, "strides"),
        "padding": padding,
        "use_cudnn_on_gpu": bool(cudnn),
        "data_format": data_format,
        "dilations": get_sequence(dilations, 2, channel_index, "dilations"),
    }


# ------------------------------------------------------------------ convolution
def conv2d(
    input: Any,  # noqa: A002
    filter: Any = None,  # noqa: A002
    strides: Any = None,
    padding: str | None = None,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
    """2-D convolution (cross-correlation) of `input` with `filter` (follows `tf.nn.conv2d`).

    Args:
      input: `T [batch, in_height, in_width, in_channels]` (NHWC; NCHW is accepted while
        building but has no CPU kernel, as in TensorFlow).
      filter: `T [filter_height, filter_width, in_channels, out_channels]`.
      strides: an int or a list of 1, 2 or 4 ints, the window stride per dimension.
      padding: "SAME" (output size `ceil(in / stride)`) or "VALID".
      use_cudnn_on_gpu: ignored.
      data_format: "NHWC" or "NCHW".
      dilations: an int or a list of 1, 2 or 4 ints.
      name: op name.
      filters: alias of `filter` (TF 1.14+).

    Returns:
      `T [batch, out_height, out_width, out_channels]`.

    Raises:
      ValueError: for mismatched depths, windows larger than a VALID input, or malformed
        strides/dilations.
    """
    if filter is not None and filters is not None:
        raise ValueError("Cannot specify both 'filter' and 'filters'")
    filter = filters if filter is None else filter  # noqa: A001
    attrs = _conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu)
    return apply_op("Conv2D", input=input, filter=filter, name=name, **attrs)


def conv2d_backprop_input(
    input_sizes: Any,
    filter: Any,  # noqa: A002
    out_backprop: Any,
    strides: Any,
    padding: str,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
) -> Tensor:
    """The gradient of `conv2d` w.r.t. its input (follows `tf.nn.conv2d_backprop_input`).

    Args:
      input_sizes: int32 [4], the shape of the convolution's input.
      filter: `T [fh, fw, in_channels, out_channels]`.
      out_backprop: `T [batch, out_height, out_width, out_channels]`.
      strides: as `conv2d`.
      padding: as `conv2d`.
      use_cudnn_on_gpu: ignored.
      data_format: as `conv2d`.
      dilations: as `conv2d`.
      name: op name.

    Returns:
      `T` of shape `input_sizes`.
    """
    attrs = _conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu)
    return apply_op(
        "Conv2DBackpropInput",
        input_sizes=input_sizes,
        filter=filter,
        out_backprop=out_backprop,
        name=name,
        **attrs,
    )


def conv2d_backprop_filter(
    input: Any,  # noqa: A002
    filter_sizes: Any,
    out_backprop: Any,
    strides: Any,
    padding: str,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
) -> Tensor:
    """The gradient of `conv2d` w.r.t. its filter (`tf.nn.conv2d_backprop_filter`).

    Args:
      input: `T [batch, in_height, in_width, in_channels]`.
      filter_sizes: int32 [4], the filter's shape.
      out_backprop: `T [batch, out_height, out_width, out_channels]`.
      strides: as `conv2d`.
      padding: as `conv2d`.
      use_cudnn_on_gpu: ignored.
      data_format: as `conv2d`.
      dilations: as `conv2d`.
      name: op name.

    Returns:
      `T` of shape `filter_sizes`.
    """
    attrs = _conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu)
    return apply_op(
        "Conv2DBackpropFilter",
        input=input,
        filter_sizes=filter_sizes,
        out_backprop=out_backprop,
        name=name,
        **attrs,
    )


# ---------------------------------------------------------------------- pooling
def _pool_kwargs(ksize: Any, strides: Any, padding: str, data_format: str) -> dict[str, Any]:
    channel_index = 1 if data_format.startswith("NC") else 3
    return {
        "ksize": get_sequence(ksize, 2, channel_index, "ksize"),
        "strides": get_sequence(strides, 2, channel_index, "strides"),
        "padding": padding,
        "data_format": data_format,
    }


def max_pool(
    value: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,  # noqa: A002
) -> Tensor:
    """Max pooling over windows (follows TF 1.x `tf.nn.max_pool`).

    Args:
      value: `T [batch, height, width, channels]` (NHWC).
      ksize: an int or a list of 1, 2 or 4 ints, the window size per dimension.
      strides: an int or a list of 1, 2 or 4 ints.
      padding: "SAME" (padded entries never win) or "VALID".
      data_format: "NHWC" (the only format with a CPU kernel), "NCHW" or "NCHW_VECT_C".
      name: name scope of the op.
      input: alias of `value`.

    Returns:
      `T [batch, out_height, out_width, channels]`.

    Raises:
      ValueError: for malformed `ksize`/`strides` or VALID windows larger than the input.
    """
    value = input if value is None else value
    with graph_mod.name_scope(name, "MaxPool", [value]) as scope:
        value = convert_to_tensor(value, name="input")
        kwargs = _pool_kwargs(ksize, strides, padding, data_format)
        return apply_op("MaxPool", input=value, name=scope, **kwargs)


def avg_pool(
    value: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,  # noqa: A002
) -> Tensor:
    """Average pooling over windows (follows TF 1.x `tf.nn.avg_pool`).

    With SAME padding each output averages only the input entries inside its window (the
    padding is not counted). Arguments as `max_pool`; `value` is half/float32/float64.
    """
    value = input if value is None else value
    with graph_mod.name_scope(name, "AvgPool", [value]) as scope:
        value = convert_to_tensor(value, name="input")
        kwargs = _pool_kwargs(ksize, strides, padding, data_format)
        return apply_op("AvgPool", value=value, name=scope, **kwargs)


__all__ = ["avg_pool", "conv2d", "conv2d_backprop_filter", "conv2d_backprop_input", "max_pool"]
