"""Neural-network op definitions: activations, softmax, bias, cross-entropy, L2 loss, top-k.

Follows TensorFlow's `core/ops/nn_ops.cc` (op types, input/attr names and defaults). The
gradient helper ops (`ReluGrad`, `BiasAddGrad`, ...) are defined here too.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import (
    merge_shapes,
    op_error,
    unchanged_shape,
    with_rank,
    with_rank_at_least,
)
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.framework.tensor_util import constant_value

# TensorFlow's `realnumbertypes` and `floatingpoint` (bfloat16/quantized types excluded).
REAL = "half, float, double, int32, int64, uint8, int16, int8, uint16, uint32, uint64"
FLOATS = "half, float, double"
_NUMBER = f"{REAL}, complex64, complex128"


def _merged_inputs(op: Any) -> list[TensorShape]:
    return [merge_shapes(op, op.inputs[0].shape, op.inputs[1].shape)]


def _softmax_shape(op: Any) -> list[TensorShape]:
    return [with_rank_at_least(op, op.inputs[0].shape, 1)]


def _channel_axis(op: Any, rank: int) -> int:
    fmt = op.get_attr("data_format")
    return 1 if fmt in (b"NCHW", "NCHW") and rank >= 3 else rank - 1


def _bias_add_shape(op: Any) -> list[TensorShape]:
    value = with_rank_at_least(op, op.inputs[0].shape, 2)
    bias = with_rank(op, op.inputs[1].shape, 1)
    if value.ndims is None:
        return [unknown_shape()]
    dims = value.as_list()
    axis = _channel_axis(op, len(dims))
    merged = merge_shapes(op, TensorShape([dims[axis]]), bias)
    dims[axis] = merged.as_list()[0]
    return [TensorShape(dims)]


def _bias_add_grad_shape(op: Any) -> list[TensorShape]:
    grad = with_rank_at_least(op, op.inputs[0].shape, 2)
    if grad.ndims is None:
        return [TensorShape([None])]
    return [TensorShape([grad.as_list()[_channel_axis(op, grad.ndims)]])]


def _xent_shape(op: Any) -> list[TensorShape]:
    features = with_rank(op, op.inputs[0].shape, 2)
    labels = with_rank(op, op.inputs[1].shape, 2)
    merged = []
    for a, b in zip(features.as_list(), labels.as_list()):
        if a is not None and b is not None and a != b and 1 not in (a, b):
            raise op_error(op, f"Dimensions must be equal, but are {a} and {b}")
        merged.append(a if b in (None, 1) else b)
    return [TensorShape(merged[:1]), TensorShape(merged)]


def _sparse_xent_shape(op: Any) -> list[TensorShape]:
    features = with_rank(op, op.inputs[0].shape, 2)
    labels = with_rank(op, op.inputs[1].shape, 1)
    batch = merge_shapes(op, TensorShape(features.as_list()[:1]), labels)
    return [batch, batch.concatenate(features.as_list()[1:])]


def _in_top_k_shape(op: Any) -> list[TensorShape]:
    predictions = with_rank(op, op.inputs[0].shape, 2)
    targets = with_rank(op, op.inputs[1].shape, 1)
    with_rank(op, op.inputs[2].shape, 0)
    return [merge_shapes(op, TensorShape(predictions.as_list()[:1]), targets)]


def _top_k_shape(op: Any) -> list[TensorShape]:
    inp = with_rank_at_least(op, op.inputs[0].shape, 1)
    with_rank(op, op.inputs[1].shape, 0)
    k = constant_value(op.inputs[1])
    if k is not None and int(k) < 0:
        raise op_error(
            op, f"Dimension size, given by scalar input 1, must be non-negative but is {int(k)}"
        )
    if inp.ndims is None:
        return [unknown_shape(), unknown_shape()]
    dims = inp.as_list()
    last = dims[-1]
    if k is not None and last is not None and last < int(k):
        raise op_error(op, f"input must have last dimension >= k = {int(k)} but is {last}")
    out = TensorShape(dims[:-1] + [None if k is None else int(k)])
    return [out, out]


def _activation(name: str, types: str, extra: tuple[str, ...] = ()) -> None:
    register_op(
        name,
        inputs=["features: T"],
        outputs=["activations: T"],
        attrs=[*extra, f"T: {{{types}}}"],
        shape_fn=unchanged_shape,
    )


def _activation_grad(name: str, types: str, second: str, extra: tuple[str, ...] = ()) -> None:
    register_op(
        name,
        inputs=["gradients: T", f"{second}: T"],
        outputs=["backprops: T"],
        attrs=[*extra, f"T: {{{types}}}"],
        shape_fn=_merged_inputs,
    )


_activation("Relu", REAL)
_activation("Relu6", REAL)
_activation("Elu", FLOATS)
_activation("LeakyRelu", FLOATS, ("alpha: float = 0.2",))
_activation("Softplus", FLOATS)
_activation("Softsign", FLOATS)
_activation_grad("ReluGrad", REAL, "features")
_activation_grad("Relu6Grad", REAL, "features")
_activation_grad("EluGrad", FLOATS, "outputs")
_activation_grad("LeakyReluGrad", FLOATS, "features", ("alpha: float = 0.2",))
_activation_grad("SoftplusGrad", FLOATS, "features")
_activation_grad("SoftsignGrad", FLOATS, "features")
register_op(
    "Softmax",
    inputs=["logits: T"],
    outputs=["softmax: T"],
    attrs=[f"T: {{{FLOATS}}}"],
    shape_fn=_softmax_shape,
)
register_op(
    "LogSoftmax",
    inputs=["logits: T"],
    outputs=["logsoftmax: T"],
    attrs=[f"T: {{{FLOATS}}}"],
    shape_fn=_softmax_shape,
)
register_op(
    "BiasAdd",
    inputs=["value: T", "bias: T"],
    outputs=["output: T"],
    attrs=[f"T: {{{_NUMBER}}}", "data_format: {'NHWC', 'NCHW'} = 'NHWC'"],
    shape_fn=_bias_add_shape,
)
register_op(
    "BiasAddGrad",
    inputs=["out_backprop: T"],
    outputs=["output: T"],
    attrs=[f"T: {{{_NUMBER}}}", "data_format: {'NHWC', 'NCHW'} = 'NHWC'"],
    shape_fn=_bias_add_grad_shape,
)
register_op(
    "SoftmaxCrossEntropyWithLogits",
    inputs=["features: T", "labels: T"],
    outputs=["loss: T", "backprop: T"],
    attrs=[f"T: {{{FLOATS}}}"],
    shape_fn=_xent_shape,
)
register_op(
    "SparseSoftmaxCrossEntropyWithLogits",
    inputs=["features: T", "labels: Tlabels"],
    outputs=["loss: T", "backprop: T"],
    attrs=[f"T: {{{FLOATS}}}", "Tlabels: {int32, int64} = DT_INT64"],
    shape_fn=_sparse_xent_shape,
)
register_op(
    "L2Loss",
    inputs=["t: T"],
    outputs=["output: T"],
    attrs=[f"T: {{{FLOATS}}}"],
    shape_fn=lambda op: [TensorShape([])],
)
register_op(
    "InTopKV2",
    inputs=["predictions: float", "targets: T", "k: T"],
    outputs=["precision: bool"],
    attrs=["T: {int32, int64} = DT_INT32"],
    shape_fn=_in_top_k_shape,
)
register_op(
    "TopKV2",
    inputs=["input: T", "k: int32"],
    outputs=["values: T", "indices: int32"],
    attrs=["sorted: bool = true", f"T: {{{REAL}}}"],
    shape_fn=_top_k_shape,
)
