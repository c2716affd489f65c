"""The same-host transport: a peer on this host is called over its Unix domain socket for
the per-step calls (`local_rpc`, with step streams: `step_stream`) and over gRPC for the
rest; tensors move through /dev/shm files where the options allow (`shm`)."""

from __future__ import annotations

from typing import Any

from tensorweave.distributed.transport import grpc_client, local_rpc


def connect(peer: Any) -> Any:
    """A `GrpcRemoteWorker` with a same-host socket for `peer` (a `worker_cache.Peer`) on
    this host, or None (another host, no abstract sockets, or `local_rpc` off)."""
    if not (peer.options.local_rpc and local_rpc.supported()
            and peer.runtime.host.is_local_address(peer.address)):
        return None
    security = peer.options.security
    token = security.token if security is not None else None  # security: in every frame
    client = local_rpc.LocalRpcClient(peer.task, peer.address, token,
                                      options=peer.runtime.local_rpc_options)
    return grpc_client.GrpcRemoteWorker(
        peer.task, peer.address, grpc_client.shared_channel(peer),
        peer.options.shared_memory, client, peer.runtime)
