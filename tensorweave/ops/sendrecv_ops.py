"""`_Send` / `_Recv`: the runtime's transfer ops.

Graph partitioning inserts them at every edge that crosses devices (and, client-terminated,
for feeds and fetches). Attr names follow TensorFlow's `sendrecv_ops.cc`; `_recv_batch` (an
internal attr) groups receives that may be fetched from one sender in a single message.
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

__all__: list[str] = []
