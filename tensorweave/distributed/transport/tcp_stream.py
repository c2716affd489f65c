"""The step-call socket over TCP: a data plane beside gRPC for peers in other processes.

Why: between hosts every per-step call went through gRPC Python (a `RunGraph` round trip
costs ~1 ms of CPU on both ends here, and values between the client task and a partition
took extra `RecvTensors` calls). TensorFlow offered data planes beside gRPC for the same
reason (`Server(protocol="grpc+verbs" | "grpc+mpi")`). This transport carries `local_rpc`'s
protocol (its framing, the same protobuf messages and handlers, and `step_stream`'s streamed
`RunGraph` with raw tensor frames both ways) over TCP, so an asynchronous training step is
one streamed call per ps task. Peers on the same host use it too, over loopback (an
abstract Unix socket they had until issue 15 gained nothing measurable over it; large
tensors between them still go as /dev/shm files, see `shm`). gRPC keeps everything else:
control calls (`GetStatus`, `RegisterGraph`, sessions), tensor streams of large values, and
every call to a TensorFlow peer.

Where it applies: a started `Server` (unless `TensorweaveOptions.disable_tcp_streams` or
`disable_local_rpc` is set in its default session config) also listens on TCP at its own
host, on a port the kernel picks, and answers the extension `GetStepStreamPort` (over gRPC)
with it: ASCII decimal digits, or empty when it has none. A client asks each peer once
(`TcpConnector`); a TensorFlow peer answers UNIMPLEMENTED and gets gRPC only.
When the port cannot be reached (a firewall that passes only the gRPC port, a restart), the
call goes over gRPC as before; the port is asked for again after a back-off that doubles
from `_RETRY_DISCOVERY_S` up to `_MAX_RETRY_S` while attempts keep failing, and a connect
waits at most `_CONNECT_TIMEOUT_S` (a firewall that drops packets costs a step that much,
once per back-off period; `disable_tcp_streams` turns the socket off).

Handshake (authentication's place): a new connection first sends `HELLO` (magic `TWSS`, u32
version 1, u32 token length) and the token; the server answers one byte (0: admitted, else
closes). The token is the cluster secret of `TransportOptions.security` (the one gRPC calls
carry in their metadata, see `security`); a server with one compares it with
`hmac.compare_digest` and closes the connection on a mismatch, and every request frame on
the connection carries it again (`local_rpc`'s per-frame check). A server without a token
admits only an empty one: this is the one admission rule of every step-call connection,
same host or not. The socket carries no encryption: like insecure gRPC it is for a trusted
network; where the cluster's gRPC uses TLS this socket stays off (`connect` declines and
`Server._listen_tcp` opens no listener), so every call goes over TLS gRPC (on one host
too: a TLS cluster pays gRPC's per-call cost, see docs/scaling.md).
"""

from __future__ import annotations

import hmac
import socket
import struct
import threading
import time
from typing import Any

import grpc

from tensorweave.distributed.transport import grpc_client, host_locality, local_rpc, methods

HELLO = struct.Struct("<4sII")
MAGIC = b"TWSS"
VERSION = 1
_ADMITTED = b"\x00"
_HANDSHAKE_TIMEOUT_S = 5.0
_TOKEN_MAX_BYTES = 4096
_RETRY_DISCOVERY_S = 1.0
_MAX_RETRY_S = 300.0
_CONNECT_TIMEOUT_S = 1.0


def listen(host: str) -> socket.socket:
    """A TCP socket listening on `host` (the server's own host; all addresses when empty),
    port chosen by the kernel.

    Raises:
      OSError: when it cannot be bound.
    """
    host = host or "0.0.0.0"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if host == "localhost":
        host = "127.0.0.1"
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.bind((host, 0))
        listener.listen(64)
    except OSError:
        listener.close()
        raise
    return listener


def _tune(sock: socket.socket) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        # NOTE: small frames (a step's request) must not wait for Nagle's timer.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def admit(conn: socket.socket, token: bytes | None = None) -> bool:
    """The server's handshake check (see the module docstring); True admits `conn`.

    Args:
      conn: the accepted connection (the handshake is read from it).
      token: the server's cluster secret (None: none configured, and only an empty
        offered token is admitted; a client configured with a token then uses gRPC).
    """
    try:
        conn.settimeout(_HANDSHAKE_TIMEOUT_S)
        magic, version, length = HELLO.unpack(_recv_exact(conn, HELLO.size))
        if magic != MAGIC or version != VERSION or length > _TOKEN_MAX_BYTES:
            return False
        offered = _recv_exact(conn, length)
        if not hmac.compare_digest(offered, token or b""):  # security: the cluster token
            return False
        _tune(conn)
        conn.sendall(_ADMITTED)
        conn.settimeout(None)
        return True
    except (OSError, EOFError, struct.error):
        return False


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("connection closed")
        data += chunk
    return data


def dial(host: str, port: int, token: bytes | None = None) -> socket.socket | None:
    """An admitted connection to the step-call socket at `host:port` (the handshake sent
    with `token`, None: an empty one), or None when it cannot be reached or refuses it."""
    try:
        sock = socket.create_connection((host, port), _CONNECT_TIMEOUT_S)
    except OSError:
        return None
    token = token or b""  # security: the handshake's token
    try:
        _tune(sock)
        sock.sendall(HELLO.pack(MAGIC, VERSION, len(token)) + token)
        if _recv_exact(sock, 1) != _ADMITTED:
            raise EOFError("not admitted")
        sock.settimeout(None)
    except (OSError, EOFError):
        sock.close()
        return None
    return sock


class TcpConnector:
    """Opens admitted TCP connections to one peer's step-call socket (a `LocalRpcClient`
    connector), learning its port with `GetStepStreamPort` over `channel`.

    Args:
      address: the peer's `host:port`.
      channel: a gRPC channel to it.
      token: the cluster secret sent in the handshake (None: an empty one).
    """

    def __init__(self, address: str, channel: grpc.Channel, token: bytes | None = None):
        self._host = host_locality.host_of(address) or ""
        self._probe = channel.unary_unary(methods.GET_STEP_STREAM_PORT)
        self._token = token or b""  # security: the handshake's token
        self._lock = threading.Lock()
        self._port: int | None = None
        self._absent = False  # the peer has no such socket (or is a TensorFlow task)
        self._retry_at = 0.0
        self._backoff = _RETRY_DISCOVERY_S

    def _discover(self) -> int | None:
        with self._lock:
            if self._port is not None or self._absent:
                return self._port
            if time.monotonic() < self._retry_at:
                return None
        try:
            answer = self._probe(b"", timeout=grpc_client.PROBE_TIMEOUT_S)
        except grpc.RpcError as e:
            with self._lock:
                if e.code() == grpc.StatusCode.UNIMPLEMENTED:
                    self._absent = True
                else:
                    self._retry_at = time.monotonic() + _RETRY_DISCOVERY_S
            return None
        with self._lock:
            if answer.isdigit():
                self._port = int(answer)
            else:
                self._absent = True
            return self._port

    def __call__(self) -> socket.socket | None:
        """A new admitted connection, or None (the call then goes over gRPC)."""
        port = self._discover()
        if port is None:
            return None
        sock = dial(self._host, port, self._token)
        if sock is None:
            self._forget()
            return None
        with self._lock:
            self._backoff = _RETRY_DISCOVERY_S
        return sock

    def _forget(self) -> None:
        with self._lock:
            self._port = None
            self._retry_at = time.monotonic() + self._backoff
            self._backoff = min(self._backoff * 2, _MAX_RETRY_S)


def connect(peer: Any) -> Any:
    """A `GrpcRemoteWorker` whose per-step calls and step streams go over the peer's TCP
    step-call socket (`peer`: a `worker_cache.Peer` in another process, on this host or
    another), or None where the options turn it off or the cluster uses TLS (the socket is
    plaintext: gRPC over TLS then carries every call)."""
    if not (peer.options.local_rpc and peer.options.tcp_streams):
        return None
    security = peer.options.security
    if security is not None and security.tls:  # security: never plaintext beside TLS
        return None
    token = security.token if security is not None else None  # security: handshake+frames
    channel = grpc_client.shared_channel(peer)
    client = local_rpc.LocalRpcClient(peer.task, peer.address, token,
                                      TcpConnector(peer.address, channel, token),
                                      options=peer.runtime.local_rpc_options)
    return grpc_client.GrpcRemoteWorker(peer.task, peer.address, channel,
                                        peer.options.shared_memory, client, peer.runtime)
