"""TensorArray ops (TensorFlow's `core/ops/data_flow_ops.cc`, the `TensorArray*V3` family).

A TensorArray is a resource holding a list of tensors; every op that changes it takes and
returns a float `flow` scalar so that the graph orders its uses.
"""

from __future__ import annotations

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape, as_shape, unknown_shape

_SCALAR = TensorShape([])


def _gather_shape(op) -> list[TensorShape]:
    elem = as_shape(op.get_attr("element_shape"))
    if elem.ndims is None:
        return [unknown_shape()]
    n = op.inputs[1].shape
    return [TensorShape([n.dims[0].value if n.ndims == 1 else None, *elem.as_list()])]


def _concat_shape(op) -> list[TensorShape]:
    elem = as_shape(op.get_attr("element_shape_except0"))
    if elem.ndims is None:
        return [unknown_shape(), TensorShape([None])]
    return [TensorShape([None, *elem.as_list()]), TensorShape([None])]


register_op(
    "TensorArrayV3", inputs=["size: int32"], outputs=["handle: resource", "flow: float"],
    attrs=["dtype: type", "element_shape: shape = unknown", "dynamic_size: bool = false",
           "clear_after_read: bool = true", "identical_element_shapes: bool = false",
           "tensor_array_name: string = ''"],
    is_stateful=True, shape_fn=lambda op: [_SCALAR, _SCALAR])
register_op(
    "TensorArrayGradV3", inputs=["handle: resource", "flow_in: float"],
    outputs=["grad_handle: resource", "flow_out: float"], attrs=["source: string"],
    is_stateful=True, shape_fn=lambda op: [_SCALAR, _SCALAR])
register_op(
    "TensorArrayWriteV3",
    inputs=["handle: resource", "index: int32", "value: T", "flow_in: float"],
    outputs=["flow_out: float"], attrs=["T: type"], is_stateful=True,
    shape_fn=lambda op: [_SCALAR])
register_op(
    "TensorArrayReadV3", inputs=["handle: resource", "index: int32", "flow_in: float"],
    outputs=["value: dtype"], attrs=["dtype: type"], is_stateful=True,
    shape_fn=lambda op: [unknown_shape()])
register_op(
    "TensorArrayGatherV3", inputs=["handle: resource", "indices: int32", "flow_in: float"],
    outputs=["value: dtype"], attrs=["dtype: type", "element_shape: shape = unknown"],
    is_stateful=True, shape_fn=_gather_shape)
register_op(
    "TensorArrayScatterV3",
    inputs=["handle: resource", "indices: int32", "value: T", "flow_in: float"],
    outputs=["flow_out: float"], attrs=["T: type"], is_stateful=True,
    shape_fn=lambda op: [_SCALAR])
register_op(
    "TensorArrayConcatV3", inputs=["handle: resource", "flow_in: float"],
    outputs=["value: dtype", "lengths: int64"],
    attrs=["dtype: type", "element_shape_except0: shape = unknown"], is_stateful=True,
    shape_fn=_concat_shape)
register_op(
    "TensorArraySplitV3",
    inputs=["handle: resource", "value: T", "lengths: int64", "flow_in: float"],
    outputs=["flow_out: float"], attrs=["T: type"], is_stateful=True,
    shape_fn=lambda op: [_SCALAR])
register_op(
    "TensorArraySizeV3", inputs=["handle: resource", "flow_in: float"],
    outputs=["size: int32"], is_stateful=True, shape_fn=lambda op: [_SCALAR])
register_op("TensorArrayCloseV3", inputs=["handle: resource"], is_stateful=True,
            shape_fn=lambda op: [])
