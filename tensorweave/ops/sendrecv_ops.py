"""`_Send` / `_Recv`: the runtime's transfer ops.

Graph partitioning inserts them at every edge that crosses devices (and, client-terminated,
for feeds and fetches). Attr names follow TensorFlow's `sendrecv_ops.cc`; `_recv_batch` (an
internal attr) groups receives that may be fetched from one sender in a single message.
"""

from __future__ import annotations

__all__: list[str] = []
