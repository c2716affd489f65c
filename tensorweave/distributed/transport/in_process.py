"""The in-process transport: a peer whose server runs in this process is called directly
(no serialization, no threads; see `worker_cache`)."""

from __future__ import annotations

from typing import Any


def _server(peer: Any) -> Any:
    if not peer.options.prefer_local:
        return None
    server = peer.runtime.servers.lookup(peer.address)
    if server is None or server.worker.task_name != peer.task:
        return None
    return server


def connect(peer: Any) -> Any:
    """The `Worker` of `peer` (a `worker_cache.Peer`) when its server runs in this process
    and the options allow it, else None."""
    server = _server(peer)
    return server.worker if server is not None else None


def connect_master(peer: Any) -> Any:
    """The `Master` of `peer` when its server runs in this process, else None."""
    server = _server(peer)
    return server.master if server is not None else None
