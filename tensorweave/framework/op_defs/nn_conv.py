"""Convolution and pooling op definitions: Conv2D (+ backprops), MaxPool, AvgPool (+ grads).

Follows TensorFlow's `core/ops/nn_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import op_error, with_rank
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
