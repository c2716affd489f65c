"""Queue op definitions: FIFOQueueV2, RandomShuffleQueueV2 and their enqueue/dequeue/close/size ops.

Follows TensorFlow's `core/ops/data_flow_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape


def _scalar(op: Any) -> list[TensorShape]:
    return [TensorShape([])]


def _unknown_components(op: Any) -> list[TensorShape]:
    return [unknown_shape() for _ in op.outputs]


_QUEUE_ATTRS = [
    "component_types: list(type) >= 1",
    "shapes: list(shape) >= 0 = []",
    "capacity: int = -1",
]
_CONTAINER_ATTRS = ["container: string = ''", "shared_name: string = ''"]
register_op(
    "FIFOQueueV2",
    outputs=["handle: resource"],
    attrs=_QUEUE_ATTRS + _CONTAINER_ATTRS,
    is_stateful=True,
    shape_fn=_scalar,
)
register_op(
    "RandomShuffleQueueV2",
    outputs=["handle: resource"],
    attrs=_QUEUE_ATTRS
    + ["min_after_dequeue: int = 0", "seed: int = 0", "seed2: int = 0"]
    + _CONTAINER_ATTRS,
    is_stateful=True,
    shape_fn=_scalar,
)
for _name in ("QueueEnqueueV2", "QueueEnqueueManyV2"):
    register_op(
        _name,
        inputs=["handle: resource", "components: Tcomponents"],
        attrs=["Tcomponents: list(type) >= 1", "timeout_ms: int = -1"],
        shape_fn=lambda op: [],
    )
register_op(
    "QueueDequeueV2",
    inputs=["handle: resource"],
    outputs=["components: component_types"],
    attrs=["component_types: list(type) >= 1", "timeout_ms: int = -1"],
    shape_fn=_unknown_components,
)
for _name in ("QueueDequeueManyV2", "QueueDequeueUpToV2"):
    register_op(
        _name,
        inputs=["handle: resource", "n: int32"],
        outputs=["components: component_types"],
        attrs=["component_types: list(type) >= 1", "timeout_ms: int = -1"],
        shape_fn=_unknown_components,
    )
register_op(
    "QueueCloseV2",
    inputs=["handle: resource"],
    attrs=["cancel_pending_enqueues: bool = false"],
    shape_fn=lambda op: [],
)
register_op(
    "QueueIsClosedV2", inputs=["handle: resource"], outputs=["is_closed: bool"], shape_fn=_scalar
)
register_op("QueueSizeV2", inputs=["handle: resource"], outputs=["size: int32"], shape_fn=_scalar)
