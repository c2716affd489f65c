"""A worker's stash of large tensors (`interfaces.TensorStash`): feeds pushed with
`PushTensorStream` before their `RunGraph`, and results a caller pulls with
`RecvTensorStream`, including those handed over as /dev/shm files the caller could not
read (they stay registered in the worker's `shm.Outbox`).

The bytes held are capped (`max_bytes`): without a cap, any client could make a server
hold unbounded memory with pushes nobody takes (40 pushes held +289 MiB before). A push
must also name a session the worker knows (`Worker.check_push`, before its chunks are
read), so an anonymous caller cannot stash at all.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from tensorweave import errors
from tensorweave.distributed.transport import shm
from tensorweave.framework import limits

STASH_TTL_S = 120.0


def _nbytes(value: Any) -> int:
    return int(getattr(value, "nbytes", 0))


class Stash:
    """Tensors by (step id, rendezvous key), dropped after `ttl_s` seconds unclaimed.

    Args:
      outbox: the worker's `shm.Outbox` (files handed to peers), or None.
      task: the worker's task name (in error messages).
      ttl_s: seconds an unclaimed tensor is kept.
      max_bytes: cap on the bytes held (None/0: the `framework.limits` default); may be
        changed later through the attribute.
    """

    def __init__(self, outbox: shm.Outbox | None = None, task: str = "",
                 ttl_s: float = STASH_TTL_S, max_bytes: int | None = None):
        self._outbox = outbox
        self._task = task
        self._ttl_s = ttl_s
        self.max_bytes = limits.effective(max_bytes)  # security: capped
        self._items: dict[tuple[int, str], tuple[float, Any]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Bytes held now."""
        return self._bytes

    def _expire(self, now: float) -> None:
        for k in [k for k, (t, _) in self._items.items() if now - t > self._ttl_s]:
            self._bytes -= _nbytes(self._items.pop(k)[1])

    def _over(self, what: str, nbytes: int) -> errors.ResourceExhaustedError:
        return errors.ResourceExhaustedError(
            None, None, f"{what}: {self._task} holds {self._bytes} bytes of tensors not yet "
            f"taken; {nbytes} more would exceed its limit of {self.max_bytes} bytes")

    def reserve_check(self, what: str, nbytes: int) -> None:
        """Raises `ResourceExhaustedError` naming `what` if `nbytes` more would not fit
        (checked before a push's chunks are read)."""
        with self._lock:
            self._expire(time.monotonic())
            if self._bytes + nbytes > self.max_bytes:
                raise self._over(what, nbytes)

    def put(self, step_id: int, key: str, value: Any, what: str = "stash") -> None:
        """Keeps `value` until `take` (or for `ttl_s` seconds), replacing an entry under
        the same key.

        Raises:
          ResourceExhaustedError: naming `what`, when the cap would be exceeded.
        """
        n = _nbytes(value)
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            old = self._items.pop((step_id, key), None)
            if old is not None:
                self._bytes -= _nbytes(old[1])
            if self._bytes + n > self.max_bytes:
                raise self._over(what, n)
            self._items[(step_id, key)] = (now, value)
            self._bytes += n

    def take(self, step_id: int, key: str) -> Any:
        """Removes and returns a stashed tensor (or one handed over as a file), or None.

        Raises:
          DataLossError: the file holding it cannot be read.
        """
        with self._lock:
            entry = self._items.pop((step_id, key), None)
            if entry is not None:
                self._bytes -= _nbytes(entry[1])
        if entry is not None:
            return entry[1]
        msg = self._outbox.take((step_id, key)) if self._outbox is not None else None
        if msg is None:
            return None
        try:
            return shm.read(msg, outbox=self._outbox)
        except shm.ShmError as e:
            shm.unlink(msg)
            raise errors.DataLossError(
                None, None, f"Tensor {key} of step {step_id} on {self._task} was lost: {e}"
            ) from None

    def clear(self) -> None:
        """Drops every stashed tensor."""
        with self._lock:
            self._items.clear()
            self._bytes = 0
