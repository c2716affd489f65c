"""Definitions of the 3-D convolution and pooling ops, the depthwise convolution ops and
`MaxPoolWithArgmax` (TF 1.x `core/ops/nn_ops.cc`), with TensorFlow's attrs and static
shapes (channels-first shapes are inferred; the CPU kernels are channels-last only)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import op_error, static_shape_value, with_rank
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_FLOAT3 = "{half, float, double}"
_POOL3D_MAX = "{half, float}"
_REAL = "{half, float, double, int32, int64, uint8, int16, int8, uint16, uint32, uint64}"


def _str(op: Any, name: str) -> str:
    value = op.get_attr(name)
    return value.decode() if isinstance(value, bytes) else value


def _out_size(op: Any, size: Any, k: Any, s: int, d: int, pad: str) -> Any:
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


def _split(shape: TensorShape, channels_first: bool) -> tuple[Any, list[Any], Any]:
    dims = shape.as_list()
    if channels_first:
        return dims[0], dims[2:], dims[1]
    return dims[0], dims[1:-1], dims[-1]


def _join(n: Any, spatial: list[Any], c: Any, channels_first: bool) -> TensorShape:
    return TensorShape([n, c, *spatial] if channels_first else [n, *spatial, c])


def _spatial_attr(op: Any, name: str, rank: int, channels_first: bool) -> list[int]:
    values = [int(v) for v in op.get_attr(name)]
    if len(values) != rank:
        raise op_error(op, f"{op.type} requires the {name} attribute to contain {rank} values")
    return values[2:] if channels_first else values[1:-1]


def _channels_first(op: Any) -> bool:
    return "data_format" in op.attrs and _str(op, "data_format").startswith("NC")


def _windowed(op: Any, inp: TensorShape, window: list[Any], out_c: Any, rank: int) -> TensorShape:
    first = _channels_first(op)
    n, spatial, c = _split(with_rank(op, inp, rank), first)
    strides = _spatial_attr(op, "strides", rank, first)
    dilations = (
        _spatial_attr(op, "dilations", rank, first) if "dilations" in op.attrs else [1] * (rank - 2)
    )
    pad = _str(op, "padding")
    outs = [
        _out_size(op, size, k, s, d, pad)
        for size, k, s, d in zip(spatial, window, strides, dilations)
    ]
    return _join(n, outs, c if out_c is None else out_c, first)


def _conv_shape(op: Any, rank: int, depthwise: bool) -> list[TensorShape]:
    f = with_rank(op, op.inputs[1].shape, rank).as_list()
    first = _channels_first(op)
    in_c = _split(with_rank(op, op.inputs[0].shape, rank), first)[2]
    if in_c is not None and f[-2] is not None and in_c != f[-2]:
        raise op_error(op, f"Dimensions must be equal, but are {in_c} and {f[-2]}")
    if depthwise:
        out_c = None if f[-2] is None or f[-1] is None else f[-2] * f[-1]
    else:
        out_c = f[-1]
    return [_windowed(op, op.inputs[0].shape, f[:-2], out_c, rank)]


def _pool_shape(op: Any, rank: int) -> TensorShape:
    first = _channels_first(op)
    ksize = _spatial_attr(op, "ksize", rank, first)
    return _windowed(op, op.inputs[0].shape, ksize, None, rank)


def _sizes_shape(op: Any, index: int, rank: int) -> list[TensorShape]:
    with_rank(op, op.inputs[index].shape, 1)
    shape = static_shape_value(op.inputs[index])
    return [with_rank(op, shape, rank) if shape.ndims is not None else unknown_shape(rank)]


def _conv_attrs(formats: str, rank: int, types: str = _FLOAT3) -> list[str]:
    ones = ", ".join(["1"] * rank)
    return [
        f"T: {types}",
        f"strides: list(int) >= {rank}",
        "padding: {'SAME', 'VALID'}",
        f"data_format: {formats}",
        f"dilations: list(int) = [{ones}]",
    ]


_3D = "{'NDHWC', 'NCDHW'} = 'NDHWC'"
_2D = "{'NHWC', 'NCHW'} = 'NHWC'"

register_op(
    "Conv3D",
    inputs=["input: T", "filter: T"],
    outputs=["output: T"],
    attrs=_conv_attrs(_3D, 5),
    shape_fn=lambda op: _conv_shape(op, 5, False),
)
register_op(
    "Conv3DBackpropInputV2",
    inputs=["input_sizes: Tshape", "filter: T", "out_backprop: T"],
    outputs=["output: T"],
    attrs=[*_conv_attrs(_3D, 5), "Tshape: {int32, int64} = DT_INT32"],
    shape_fn=lambda op: _sizes_shape(op, 0, 5),
)
register_op(
    "Conv3DBackpropFilterV2",
    inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"],
    attrs=_conv_attrs(_3D, 5),
    shape_fn=lambda op: _sizes_shape(op, 1, 5),
)
_DEPTHWISE_ATTRS = [
    "T: {half, float, double}",
    "strides: list(int)",
    "padding: {'SAME', 'VALID', 'EXPLICIT'}",
    "explicit_paddings: list(int) = []",
    f"data_format: {_2D}",
    "dilations: list(int) = [1, 1, 1, 1]",
]
register_op(
    "DepthwiseConv2dNative",
    inputs=["input: T", "filter: T"],
    outputs=["output: T"],
    attrs=_DEPTHWISE_ATTRS,
    shape_fn=lambda op: _conv_shape(op, 4, True),
)
register_op(
    "DepthwiseConv2dNativeBackpropInput",
    inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
    outputs=["output: T"],
    attrs=_DEPTHWISE_ATTRS,
    shape_fn=lambda op: _sizes_shape(op, 0, 4),
)
register_op(
    "DepthwiseConv2dNativeBackpropFilter",
    inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"],
    attrs=_DEPTHWISE_ATTRS,
    shape_fn=lambda op: _sizes_shape(op, 1, 4),
)


def _pool3d_attrs(types: str) -> list[str]:
    return [
        "ksize: list(int) >= 5",
        "strides: list(int) >= 5",
        "padding: {'SAME', 'VALID'}",
        f"data_format: {_3D}",
        f"T: {types}",
    ]


register_op(
    "MaxPool3D",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=_pool3d_attrs(_POOL3D_MAX),
    shape_fn=lambda op: [_pool_shape(op, 5)],
)
register_op(
    "MaxPool3DGrad",
    inputs=["orig_input: TInput", "orig_output: TInput", "grad: T"],
    outputs=["output: T"],
    attrs=[*_pool3d_attrs(f"{_POOL3D_MAX} = DT_FLOAT"), f"TInput: {_POOL3D_MAX} = DT_FLOAT"],
    shape_fn=lambda op: [with_rank(op, op.inputs[0].shape, 5)],
)
register_op(
    "AvgPool3D",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=_pool3d_attrs(_FLOAT3),
    shape_fn=lambda op: [_pool_shape(op, 5)],
)
register_op(
    "AvgPool3DGrad",
    inputs=["orig_input_shape: int32", "grad: T"],
    outputs=["output: T"],
    attrs=_pool3d_attrs(_FLOAT3),
    shape_fn=lambda op: _sizes_shape(op, 0, 5),
)


def _argmax_pool_shape(op: Any) -> list[TensorShape]:
    ksize = [int(k) for k in op.get_attr("ksize")]
    if len(ksize) != 4:
        raise op_error(op, "MaxPoolWithArgmax requires the ksize attribute to contain 4 values")
    out = _windowed(op, op.inputs[0].shape, ksize[1:-1], None, 4)
    return [out, out]


register_op(
    "MaxPoolWithArgmax",
    inputs=["input: T"],
    outputs=["output: T", "argmax: Targmax"],
    attrs=[
        "ksize: list(int) >= 4",
        "strides: list(int) >= 4",
        "Targmax: {int32, int64} = DT_INT64",
        "padding: {'SAME', 'VALID'}",
        "include_batch_in_index: bool = false",
        f"T: {_REAL}",
    ],
    shape_fn=_argmax_pool_shape,
)
register_op(
    "MaxPoolGradWithArgmax",
    inputs=["input: T", "grad: T", "argmax: Targmax"],
    outputs=["output: T"],
    attrs=[
        "ksize: list(int) >= 4",
        "strides: list(int) >= 4",
        "padding: {'SAME', 'VALID'}",
        "include_batch_in_index: bool = false",
        "Targmax: {int32, int64}",
        f"T: {_REAL}",
    ],
    shape_fn=lambda op: [with_rank(op, op.inputs[0].shape, 4)],
)
