"""Definitions of `DepthToSpace`, `SpaceToDepth`, `SpaceToBatchND`, `BatchToSpaceND`,
`Dilation2D` (+ backprops) and `CTCLoss` (TF 1.x `core/ops/array_ops.cc`, `nn_ops.cc`,
`ctc_ops.cc`), with TensorFlow's attrs and static shapes."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import op_error, static_value, with_rank
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_ALL = (
    "{half, float, double, int32, int64, uint8, int16, int8, uint16, uint32, uint64, bool, "
    "complex64, complex128, string}"
)


def _depth_shape(op: Any, to_space: bool) -> list[TensorShape]:
    x = with_rank(op, op.inputs[0].shape, 4)
    bs = op.get_attr("block_size")
    fmt = op.get_attr("data_format")
    fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
    n, a, b, c = x.as_list()
    h, w, depth = (b, c, a) if fmt == "NCHW" else (a, b, c)
    if to_space:
        if depth is not None and depth % (bs * bs):
            raise op_error(
                op, f"Dimension size must be evenly divisible by {bs * bs} but is {depth}"
            )
        h, w = (None if h is None else h * bs), (None if w is None else w * bs)
        depth = None if depth is None else depth // (bs * bs)
    else:
        for d in (h, w):
            if d is not None and d % bs:
                raise op_error(op, f"Dimension size must be evenly divisible by {bs} but is {d}")
        h, w = (None if h is None else h // bs), (None if w is None else w // bs)
        depth = None if depth is None else depth * bs * bs
    return [TensorShape([n, depth, h, w] if fmt == "NCHW" else [n, h, w, depth])]


for _name, _to_space in (("DepthToSpace", True), ("SpaceToDepth", False)):
    register_op(
        _name,
        inputs=["input: T"],
        outputs=["output: T"],
        attrs=[
            f"T: {_ALL}",
            "block_size: int >= 2",
            "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'",
        ],
        shape_fn=lambda op, s=_to_space: _depth_shape(op, s),
    )


def _batch_space_shape(op: Any, to_batch: bool) -> list[TensorShape]:
    x = op.inputs[0].shape
    block = static_value(op.inputs[1])
    pads = static_value(op.inputs[2])
    if x.ndims is None or block is None or pads is None:
        return [unknown_shape(x.ndims) if x.ndims is not None else unknown_shape()]
    block = np.asarray(block).reshape(-1)
    pads = np.asarray(pads).reshape(-1, 2)
    m = block.size
    dims = x.as_list()
    if len(dims) < m + 1:
        raise op_error(op, f"input rank should be >= {m + 1} instead of {len(dims)}")
    prod = int(np.prod(block))
    out = list(dims)
    if to_batch:
        out[0] = None if dims[0] is None else dims[0] * prod
        for i in range(m):
            d = dims[i + 1]
            if d is None:
                out[i + 1] = None
                continue
            padded = d + int(pads[i].sum())
            if padded % block[i]:
                raise op_error(
                    op,
                    f"padded_shape[{i}]={padded} is not divisible by block_shape[{i}]={block[i]}",
                )
            out[i + 1] = padded // int(block[i])
    else:
        if dims[0] is not None and dims[0] % prod:
            raise op_error(
                op,
                f"Input batch dimension ({dims[0]}) is not divisible by "
                f"product of block sizes ({prod})",
            )
        out[0] = None if dims[0] is None else dims[0] // prod
        for i in range(m):
            d = dims[i + 1]
            out[i + 1] = None if d is None else d * int(block[i]) - int(pads[i].sum())
    return [TensorShape(out)]


register_op(
    "SpaceToBatchND",
    inputs=["input: T", "block_shape: Tblock_shape", "paddings: Tpaddings"],
    outputs=["output: T"],
    attrs=[
        f"T: {_ALL}",
        "Tblock_shape: {int32, int64} = DT_INT32",
        "Tpaddings: {int32, int64} = DT_INT32",
    ],
    shape_fn=lambda op: _batch_space_shape(op, True),
)
register_op(
    "BatchToSpaceND",
    inputs=["input: T", "block_shape: Tblock_shape", "crops: Tcrops"],
    outputs=["output: T"],
    attrs=[
        f"T: {_ALL}",
        "Tblock_shape: {int32, int64} = DT_INT32",
        "Tcrops: {int32, int64} = DT_INT32",
    ],
    shape_fn=lambda op: _batch_space_shape(op, False),
)

_REAL = "{half, float, double, int32, int64, uint8, int16, int8, uint16, uint32, uint64}"
_DILATION_ATTRS = [
    f"T: {_REAL}",
    "strides: list(int) >= 4",
    "rates: list(int) >= 4",
    "padding: {'SAME', 'VALID'}",
]


def _dilation_shape(op: Any) -> list[TensorShape]:
    x = with_rank(op, op.inputs[0].shape, 4).as_list()
    f = with_rank(op, op.inputs[1].shape, 3).as_list()
    strides, rates = list(op.get_attr("strides")), list(op.get_attr("rates"))
    pad = op.get_attr("padding")
    pad = pad.decode() if isinstance(pad, bytes) else pad
    out = []
    for size, k, s, r in zip(x[1:3], f[:2], strides[1:3], rates[1:3]):
        if size is None or k is None:
            out.append(None)
            continue
        k_eff = (k - 1) * r + 1
        out.append((size + s - 1) // s if pad == "SAME" else (size - k_eff + s) // s)
    return [TensorShape([x[0], *out, x[3] if x[3] is not None else f[2]])]


register_op(
    "Dilation2D",
    inputs=["input: T", "filter: T"],
    outputs=["output: T"],
    attrs=_DILATION_ATTRS,
    shape_fn=_dilation_shape,
)
register_op(
    "Dilation2DBackpropInput",
    inputs=["input: T", "filter: T", "out_backprop: T"],
    outputs=["in_backprop: T"],
    attrs=_DILATION_ATTRS,
    shape_fn=lambda op: [op.inputs[0].shape],
)
register_op(
    "Dilation2DBackpropFilter",
    inputs=["input: T", "filter: T", "out_backprop: T"],
    outputs=["filter_backprop: T"],
    attrs=_DILATION_ATTRS,
    shape_fn=lambda op: [op.inputs[1].shape],
)


def _ctc_shape(op: Any) -> list[TensorShape]:
    logits = with_rank(op, op.inputs[0].shape, 3)
    with_rank(op, op.inputs[1].shape, 2)
    with_rank(op, op.inputs[2].shape, 1)
    with_rank(op, op.inputs[3].shape, 1)
    return [TensorShape([logits.as_list()[1]]), logits]


register_op(
    "CTCLoss",
    inputs=["inputs: T", "labels_indices: int64", "labels_values: int32", "sequence_length: int32"],
    outputs=["loss: T", "gradient: T"],
    attrs=[
        "preprocess_collapse_repeated: bool = false",
        "ctc_merge_repeated: bool = true",
        "ignore_longer_outputs_than_inputs: bool = false",
        "T: {float, double} = DT_FLOAT",
    ],
    shape_fn=_ctc_shape,
)


def _fractional_shape(op: Any) -> list[TensorShape]:
    x = with_rank(op, op.inputs[0].shape, 4).as_list()
    ratio = list(op.get_attr("pooling_ratio"))
    if len(ratio) != 4 or ratio[0] != 1.0 or ratio[3] != 1.0:
        raise op_error(op, "pooling_ratio must be 4 values with 1.0 for batch and channels")
    out = [None if d is None else int(d / r) for d, r in zip(x, ratio)]
    rows = None if out[1] is None else out[1] + 1
    cols = None if out[2] is None else out[2] + 1
    return [TensorShape(out), TensorShape([rows]), TensorShape([cols])]


_FRACTIONAL_ATTRS = [
    "pooling_ratio: list(float) >= 4",
    "pseudo_random: bool = false",
    "overlapping: bool = false",
    "deterministic: bool = false",
    "seed: int = 0",
    "seed2: int = 0",
    "T: {float, double, int32, int64}",
]
for _name in ("FractionalMaxPool", "FractionalAvgPool"):
    register_op(
        _name,
        inputs=["value: T"],
        outputs=["output: T", "row_pooling_sequence: int64", "col_pooling_sequence: int64"],
        attrs=_FRACTIONAL_ATTRS,
        shape_fn=_fractional_shape,
    )
register_op(
    "FractionalMaxPoolGrad",
    inputs=[
        "orig_input: T",
        "orig_output: T",
        "out_backprop: T",
        "row_pooling_sequence: int64",
        "col_pooling_sequence: int64",
    ],
    outputs=["output: T"],
    attrs=["overlapping: bool = false", "T: {float, double, int32, int64}"],
    shape_fn=lambda op: [with_rank(op, op.inputs[0].shape, 4)],
)
register_op(
    "FractionalAvgPoolGrad",
    inputs=[
        "orig_input_tensor_shape: int64",
        "out_backprop: T",
        "row_pooling_sequence: int64",
        "col_pooling_sequence: int64",
    ],
    outputs=["output: T"],
    attrs=["overlapping: bool = false", "T: {float, double, int32, int64}"],
    shape_fn=lambda op: [TensorShape([None] * 4)],
)
