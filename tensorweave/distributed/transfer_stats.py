"""Counters of bytes moved over the wire (a metric, like a Prometheus counter), one per
`ProcessRuntime` (`process_runtime.default_runtime().stats` for the process's)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any


class TransferStats:
    """Bytes sent and received by this process's RPC clients (payloads, not framing), and
    how many `RunGraph`s this process's masters streamed (`transport.step_stream`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sent = 0
        self._received = 0
        self._streamed = 0

    def add_streamed_run(self) -> None:
        """Counts one streamed `RunGraph` answered."""
        with self._lock:
            self._streamed += 1

    @property
    def streamed_runs(self) -> int:
        """Streamed `RunGraph`s answered so far."""
        with self._lock:
            return self._streamed

    def add(self, sent: int = 0, received: int = 0) -> None:
        """Counts one exchange."""
        with self._lock:
            self._sent += sent
            self._received += received

    def totals(self) -> tuple[int, int]:
        """(bytes sent, bytes received) so far."""
        with self._lock:
            return self._sent, self._received


def nbytes(values: Iterable[Any]) -> int:
    """Total payload bytes of an iterable of arrays/scalars."""
    return sum(int(getattr(v, "nbytes", 0)) for v in values)
