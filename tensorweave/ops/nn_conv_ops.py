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
from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.shape_inference import op_error, with_rank
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.framework.tensor_util import constant_value_as_shape

_CONV_TYPES = "{half, float, double}"
_POOL_TYPES = "{half, float, double, int32, int64, uint8, int16, int8, uint16}"
_REAL = "{half, float, double, int32, int64, uint8, int16, int8, uint16, uint32, uint64}"
_CONV_ATTRS = [
    f"T: {_CONV_TYPES}",
    "strides: list(int)",
    "use_cudnn_on_gpu: bool = true",
    "padding: {'SAME', 'VALID'}",
    "explicit_paddings: list(int) = []",
    "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
    "dilations: list(int) = [1, 1, 1, 1]",
]


def _pool_attrs(types: str, formats: str = "{'NHWC', 'NCHW'}", default: str = "") -> list[str]:
    return [
        "ksize: list(int) >= 4",
        "strides: list(int) >= 4",
        "padding: {'SAME', 'VALID'}",
        f"data_format: {formats} = 'NHWC'",
        f"T: {types}{default}",
    ]


# ----------------------------------------------------------------- shape functions
def _str_attr(op: Any, name: str) -> str:
    value = op.get_attr(name)
    return value.decode() if isinstance(value, bytes) else value


_ATTR_WORD = {"strides": "stride", "dilations": "dilation", "ksize": "ksize"}


def _hw(op: Any, name: str, nchw: bool) -> tuple[int, int]:
    values = list(op.get_attr(name))
    if len(values) != 4:
        raise op_error(
            op,
            f"{op.type} requires the {_ATTR_WORD[name]} attribute to contain 4 values, but "
            f"got: {len(values)}",
        )
    return (values[2], values[3]) if nchw else (values[1], values[2])


def window_size(op: Any, size: int | None, k: int | None, s: int, d: int, pad: str) -> Any:
    """One spatial output dimension, as TensorFlow's `GetWindowedOutputSize`.

    Raises:
      ValueError: for VALID windows larger than the input ("Negative dimension size ...").
    """
    if size is None:
        return None
    if pad == "SAME":
        return (size + s - 1) // s
    if k is None:
        return None
    k_eff = (k - 1) * d + 1
    if size < k_eff:
        raise op_error(op, f"Negative dimension size caused by subtracting {k_eff} from {size}")
    return (size - k_eff + s) // s


def _layout(shape: TensorShape, nchw: bool) -> tuple[Any, Any, Any, Any]:
    n, a, b, c = shape.as_list()
    return (n, b, c, a) if nchw else (n, a, b, c)


def _assemble(n: Any, h: Any, w: Any, c: Any, nchw: bool) -> TensorShape:
    return TensorShape([n, c, h, w] if nchw else [n, h, w, c])


def _conv_output(op: Any, inp: TensorShape, flt: TensorShape) -> TensorShape:
    nchw = _str_attr(op, "data_format") == "NCHW"
    sh, sw = _hw(op, "strides", nchw)
    dh, dw = _hw(op, "dilations", nchw)
    pad = _str_attr(op, "padding")
    inp, flt = with_rank(op, inp, 4), with_rank(op, flt, 4)
    n, h, w, c = _layout(inp, nchw)
    kh, kw, fc, out = flt.as_list()
    if c is not None and fc is not None and c != fc:
        raise op_error(op, f"Dimensions must be equal, but are {c} and {fc}")
    oh = window_size(op, h, kh, sh, dh, pad)
    ow = window_size(op, w, kw, sw, dw, pad)
    return _assemble(n, oh, ow, out, nchw)


def _conv2d_shape(op: Any) -> list[TensorShape]:
    return [_conv_output(op, op.inputs[0].shape, op.inputs[1].shape)]


def _sizes_shape(op: Any, index: int) -> list[TensorShape]:
    with_rank(op, op.inputs[index].shape, 1)
    shape = constant_value_as_shape(op.inputs[index])
    return [with_rank(op, shape, 4) if shape.ndims is not None else unknown_shape(4)]


def _pool_output(op: Any, inp: TensorShape) -> TensorShape:
    nchw = _str_attr(op, "data_format") == "NCHW"
    kh, kw = _hw(op, "ksize", nchw)
    sh, sw = _hw(op, "strides", nchw)
    pad = _str_attr(op, "padding")
    n, h, w, c = _layout(with_rank(op, inp, 4), nchw)
    oh = window_size(op, h, kh, sh, 1, pad)
    ow = window_size(op, w, kw, sw, 1, pad)
    return _assemble(n, oh, ow, c, nchw)


# ------------------------------------------------------------------ registrations
register_op(
    "Conv2D",
    inputs=["input: T", "filter: T"],
    outputs=["output: T"],
    attrs=_CONV_ATTRS,
    shape_fn=_conv2d_shape,
)
register_op(
    "Conv2DBackpropInput",
    inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
    outputs=["output: T"],
    attrs=_CONV_ATTRS,
    shape_fn=lambda op: _sizes_shape(op, 0),
)
register_op(
    "Conv2DBackpropFilter",
    inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"],
    attrs=_CONV_ATTRS,
    shape_fn=lambda op: _sizes_shape(op, 1),
)
register_op(
    "MaxPool",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=_pool_attrs(_POOL_TYPES, "{'NHWC', 'NCHW', 'NCHW_VECT_C'}", " = DT_FLOAT"),
    shape_fn=lambda op: [_pool_output(op, op.inputs[0].shape)],
)
register_op(
    "MaxPoolGrad",
    inputs=["orig_input: T", "orig_output: T", "grad: T"],
    outputs=["output: T"],
    attrs=_pool_attrs(_REAL, default=" = DT_FLOAT"),
    shape_fn=lambda op: [with_rank(op, op.inputs[0].shape, 4)],
)
register_op(
    "MaxPoolGradGrad",
    inputs=["orig_input: T", "orig_output: T", "grad: T"],
    outputs=["output: T"],
    attrs=_pool_attrs(_REAL),
    shape_fn=lambda op: [with_rank(op, op.inputs[1].shape, 4)],
)
register_op(
    "AvgPool",
    inputs=["value: T"],
    outputs=["output: T"],
    attrs=_pool_attrs(_CONV_TYPES),
    shape_fn=lambda op: [_pool_output(op, op.inputs[0].shape)],
)
register_op(
    "AvgPoolGrad",
    inputs=["orig_input_shape: int32", "grad: T"],
    outputs=["output: T"],
    attrs=_pool_attrs(_CONV_TYPES),
    shape_fn=lambda op: _sizes_shape(op, 0),
)


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
