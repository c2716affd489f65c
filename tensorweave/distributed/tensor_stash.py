"""`TensorStash`: large tensors a worker keeps until a stream takes them, with a byte cap.

Two kinds of entries: results a worker produced for a caller that pulls them with
`RecvTensorStream`, and feeds a caller pushed with `PushTensorStream` before its
`RunGraph`. Entries expire after `ttl_s` seconds. The total is capped (`max_bytes`):
without a cap, any client could make a server hold unbounded memory with pushes nobody
takes (40 pushes held +289 MiB before). A push must name a session the worker knows
(`Worker.check_push`), so an anonymous caller cannot stash at all.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from tensorweave import errors
from tensorweave.framework import limits

DEFAULT_TTL_S = 300.0


def _nbytes(value: Any) -> int:
    return int(getattr(value, "nbytes", 0))


class TensorStash:
    """Keyed by (step_id, rendezvous key).

    Args:
      owner: the task name, in errors.
      max_bytes: cap on the bytes held (None/0: `framework.limits` default).
      ttl_s: entries older than this are dropped.
    """

    def __init__(self, owner: str, max_bytes: int | None = None,
                 ttl_s: float = DEFAULT_TTL_S):
        self._owner = owner
        self.max_bytes = limits.effective(max_bytes)
        self._ttl_s = ttl_s
        self._entries: dict[tuple[int, str], tuple[float, Any]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Bytes held now."""
        return self._bytes

    def _expire(self, now: float) -> None:
        for k in [k for k, (t, _) in self._entries.items() if now - t > self._ttl_s]:
            self._bytes -= _nbytes(self._entries.pop(k)[1])

    def reserve_check(self, what: str, nbytes: int) -> None:
        """Raises `ResourceExhaustedError` naming `what` if `nbytes` more would not fit
        (checked before a push's chunks are read)."""
        with self._lock:
            self._expire(time.monotonic())
            if self._bytes + nbytes > self.max_bytes:
                raise errors.ResourceExhaustedError(
                    None, None, f"{what}: {self._owner} holds {self._bytes} bytes of tensors "
                    f"not yet taken; {nbytes} more would exceed its limit of "
                    f"{self.max_bytes} bytes")

    def put(self, step_id: int, key: str, value: Any, what: str = "stash") -> None:
        """Keeps `value` (replacing an entry under the same key).

        Raises:
          ResourceExhaustedError: when the cap would be exceeded.
        """
        n = _nbytes(value)
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            old = self._entries.pop((step_id, key), None)
            if old is not None:
                self._bytes -= _nbytes(old[1])
            if self._bytes + n > self.max_bytes:
                raise errors.ResourceExhaustedError(
                    None, None, f"{what}: {self._owner} holds {self._bytes} bytes of tensors "
                    f"not yet taken; {n} more would exceed its limit of {self.max_bytes} "
                    "bytes")
            self._entries[(step_id, key)] = (now, value)
            self._bytes += n

    def take(self, step_id: int, key: str) -> Any | None:
        """Removes and returns an entry, or None."""
        with self._lock:
            entry = self._entries.pop((step_id, key), None)
            if entry is None:
                return None
            self._bytes -= _nbytes(entry[1])
            return entry[1]

    def clear(self) -> None:
        """Drops everything."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0
