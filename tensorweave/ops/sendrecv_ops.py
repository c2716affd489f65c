"""`_Send` / `_Recv`: the runtime's transfer ops (defined in `framework.op_defs.sendrecv`).

Graph partitioning inserts them at every edge that crosses devices (and, client-terminated,
for feeds and fetches). Attr names follow TensorFlow's `sendrecv_ops.cc`; `_recv_batch` (an
internal attr) groups receives that may be fetched from one sender in a single message.
"""

from __future__ import annotations

from tensorweave.ops.gradient_registry import no_gradient

no_gradient("_Send")
no_gradient("_Recv")

__all__: list[str] = []
