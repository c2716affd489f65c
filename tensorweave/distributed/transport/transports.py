"""The transports a `WorkerCache` tries for each peer, in order: the first factory that
returns a connection wins. Adding a transport is one module with a `connect(peer)` factory
(returning a `WorkerInterface`, or None where it does not apply) plus one line here; see
docs/internals.md for a worked example."""

from __future__ import annotations

from tensorweave.distributed.transport import (
    grpc_client,
    grpc_master_client,
    in_process,
    tcp_stream,
)

WORKER_TRANSPORTS = (
    in_process.connect,  # the peer's server runs in this process
    tcp_stream.connect,  # another process: TCP step-call socket (+ gRPC for the rest)
    grpc_client.connect,  # anything else
)

MASTER_TRANSPORTS = (
    in_process.connect_master,
    grpc_master_client.connect_master,
)
