"""Stack ops (TensorFlow's `core/ops/data_flow_ops.cc`: `StackV2`, `StackPushV2`,
`StackPopV2`, `StackCloseV2`): the accumulators that keep forward loop values for the
gradient loop."""

from __future__ import annotations

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

register_op("StackV2", inputs=["max_size: int32"], outputs=["handle: resource"],
            attrs=["elem_type: type", "stack_name: string = ''"], is_stateful=True,
            shape_fn=lambda op: [TensorShape([])])
register_op("StackPushV2", inputs=["handle: resource", "elem: T"], outputs=["output: T"],
            attrs=["T: type", "swap_memory: bool = false"], is_stateful=True,
            shape_fn=lambda op: [op.inputs[1].shape])
register_op("StackPopV2", inputs=["handle: resource"], outputs=["elem: elem_type"],
            attrs=["elem_type: type"], is_stateful=True, shape_fn=lambda op: [unknown_shape()])
register_op("StackCloseV2", inputs=["handle: resource"], is_stateful=True,
            shape_fn=lambda op: [])
