"""Transfer op definitions: _Send and _Recv (inserted by graph partitioning).

Follows TensorFlow's `core/ops/sendrecv_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from tensorweave.framework.op_def import register_op

_TRANSFER_ATTRS = [
    "tensor_name: string",
    "send_device: string",
    "send_device_incarnation: int",
    "recv_device: string",
    "client_terminated: bool = false",
]
register_op("_Send", inputs=["tensor: T"], attrs=["T: type", *_TRANSFER_ATTRS], is_stateful=True)
register_op(
    "_Recv",
    outputs=["tensor: tensor_type"],
    attrs=["tensor_type: type", *_TRANSFER_ATTRS],
    is_stateful=True,
)
