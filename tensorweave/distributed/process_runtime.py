"""The distributed runtime state of a process, held by one object instead of module globals:
the registry of started servers, the transfer counters, the /dev/shm outboxes of the
process's clients and workers, and the cached answers about which addresses are local.

Every `Server` and `Session` takes a `runtime` (default: `default_runtime()`, created at
import, the only instance a program normally needs). Tests make their own to get a fresh
registry and fresh counters.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from typing import Any

from tensorweave.distributed.transfer_stats import TransferStats
from tensorweave.distributed.transport import local_rpc, shm
from tensorweave.distributed.transport.host_locality import HostLocality
from tensorweave.distributed.transport.step_stream import ThreadEventFds

_LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0", "[::]", ""}


def normalize_address(address: str) -> str:
    """`host:port` with every loopback spelling written as `localhost`."""
    host, _, port = address.rpartition(":")
    return f"localhost:{port}" if host in _LOOPBACK else address


class LocalServers:
    """Started servers of one process (its `Runtime`), by normalized address (weak
    references)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._servers: dict[str, weakref.ref] = {}

    def register(self, address: str, server: Any) -> None:
        """Records `server` as serving `address`."""
        with self._lock:
            self._servers[normalize_address(address)] = weakref.ref(server)

    def unregister(self, address: str, server: Any) -> None:
        """Forgets `address` if it still maps to `server`."""
        with self._lock:
            key = normalize_address(address)
            ref = self._servers.get(key)
            if ref is not None and ref() in (server, None):
                del self._servers[key]

    def lookup(self, address: str) -> Any:
        """The live server of `address`, or None."""
        with self._lock:
            ref = self._servers.get(normalize_address(address))
        return ref() if ref is not None else None




class ProcessRuntime:
    """Servers, transfer statistics and shared-memory outboxes of one process (or test).

    Args:
      undo_log_cap_bytes: per worker of this runtime, the most bytes of undo logs kept for
        steps the master has not ended (see `worker.Worker`).
      outbox_options: frozen `shm.OutboxOptions` of its readers, writers and outboxes
        (directory, I/O sizes, file lifetimes).
      local_rpc_options: frozen `local_rpc.LocalRpcOptions` of its servers' and clients'
        step-call sockets (connection and buffer limits).

    Attributes:
      servers: started servers by address (`LocalServers`): a session targeting one of
        them talks to it without RPCs.
      stats: bytes this process moved over the wire (`TransferStats`).
      host: which peer addresses are on this host (`HostLocality`, cached answers).
      eventfds: the per-thread eventfds its step-stream pumps wait on
        (`step_stream.ThreadEventFds`).
    """

    def __init__(self, undo_log_cap_bytes: int = 256 << 20,
                 outbox_options: shm.OutboxOptions | None = None,
                 local_rpc_options: local_rpc.LocalRpcOptions | None = None) -> None:
        self.undo_log_cap_bytes = undo_log_cap_bytes
        self.outbox_options = outbox_options or shm.OutboxOptions()
        self.local_rpc_options = local_rpc_options or local_rpc.LocalRpcOptions()
        self.servers = LocalServers()
        self.stats = TransferStats()
        self.host = HostLocality()
        self.eventfds = ThreadEventFds()
        self._outboxes: list[shm.Outbox] = []
        self._client_outbox: shm.Outbox | None = None
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def new_outbox(self) -> shm.Outbox:
        """A new `shm.Outbox` (for a worker), closed with this runtime at the latest."""
        box = shm.Outbox(options=self.outbox_options)
        with self._lock:
            self._outboxes = [b for b in self._outboxes if not b.closed]
            self._outboxes.append(box)
        return box

    def client_outbox(self) -> shm.Outbox:
        """The outbox of the files this process's clients write (feeds, pushed tensors)."""
        with self._lock:
            if self._client_outbox is None:
                self._client_outbox = shm.Outbox(options=self.outbox_options)
                self._outboxes.append(self._client_outbox)
            return self._client_outbox

    def close(self) -> None:
        """Unlinks every file still in this runtime's outboxes (at exit, for the default)."""
        # NOTE: a forked child exiting must not remove its parent's files.
        if os.getpid() != self._pid:
            return
        with self._lock:
            boxes, self._outboxes, self._client_outbox = self._outboxes, [], None
        for box in boxes:
            box.close()


_DEFAULT = ProcessRuntime()
atexit.register(_DEFAULT.close)


def default_runtime() -> ProcessRuntime:
    """The process's default `ProcessRuntime`."""
    return _DEFAULT
