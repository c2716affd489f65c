"""A worker's stash of large tensors (`interfaces.TensorStash`): feeds pushed with
`PushTensorStream` before their `RunGraph`, and results a caller pulls with
`RecvTensorStream`, including those handed over as /dev/shm files the caller could not
read (they stay registered in the worker's `shm.Outbox`)."""

from __future__ import annotations

import threading
import time
from typing import Any

from tensorweave import errors
from tensorweave.distributed.transport import shm

STASH_TTL_S = 120.0


class Stash:
    """Tensors by (step id, rendezvous key), dropped after `ttl_s` seconds unclaimed.

    Args:
      outbox: the worker's `shm.Outbox` (files handed to peers), or None.
      task: the worker's task name (in error messages).
      ttl_s: seconds an unclaimed tensor is kept.
    """

    def __init__(self, outbox: shm.Outbox | None = None, task: str = "",
                 ttl_s: float = STASH_TTL_S):
        self._outbox = outbox
        self._task = task
        self._ttl_s = ttl_s
        self._items: dict[tuple[int, str], tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def put(self, step_id: int, key: str, value: Any) -> None:
        """Keeps `value` until `take` (or for `ttl_s` seconds)."""
        now = time.monotonic()
        with self._lock:
            if len(self._items) % 64 == 63:
                for k in [k for k, (t, _) in self._items.items() if now - t > self._ttl_s]:
                    del self._items[k]
            self._items[(step_id, key)] = (now, value)

    def take(self, step_id: int, key: str) -> Any:
        """Removes and returns a stashed tensor (or one handed over as a file), or None.

        Raises:
          DataLossError: the file holding it cannot be read.
        """
        with self._lock:
            entry = self._items.pop((step_id, key), None)
        if entry is not None:
            return entry[1]
        msg = self._outbox.take((step_id, key)) if self._outbox is not None else None
        if msg is None:
            return None
        try:
            return shm.read(msg)
        except shm.ShmError as e:
            shm.unlink(msg)
            raise errors.DataLossError(
                None, None, f"Tensor {key} of step {step_id} on {self._task} was lost: {e}"
            ) from None
