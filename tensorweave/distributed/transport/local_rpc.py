r"""The step-call socket's protocol: per-step worker calls beside gRPC, over TCP.

Why: a gRPC Python round trip costs ~450 us on loopback on a 2-core machine (~200 us of
client CPU and ~300 us of server CPU, most of it in gRPC's thread hand-offs), and an
asynchronous training step needs three calls between a worker and its ps (`RunGraph`, the
worker pulling the weights, the ps pulling the gradients). The same protobuf messages travel
over a plain socket with a small frame header instead, the handler running on the thread
that read the request.

Where it applies: a started `Server` listens on a TCP port of its own host (`tcp_stream`:
`add_listener` with its handshake as the admission check; the only listener) and serves
`LOCAL_METHODS` (the per-step worker calls) with the very handlers of its gRPC service. A
client reaches it through a `connector` (`tcp_stream.TcpConnector`, for every peer, on this
host or another) and uses gRPC when it has none or cannot connect. Control calls
(`GetStatus` with wait-for-ready, `RegisterGraph`, sessions, tensor streams) always use
gRPC. Sessions turn it off with `ConfigProto.tensorweave.disable_local_rpc` (or
`disable_tcp_streams`: the same socket), servers through their default session config.
Until issue 15 peers of one host used an abstract Unix domain socket instead; a same-run
A/B showed no gain over TCP loopback above noise (docs/scaling.md), so it was removed.

Protocol: one call at a time per connection; a client keeps up to `IDLE_PER_PEER` idle
connections per peer and checks an idle one is still open before reusing it. A streamed
`RunGraph` (`methods.STREAMED_RUN_GRAPH`) also carries tensor frames both ways before
its answer; its connections are pooled apart (`open_stream`/`release_stream`).
  request:  u32 method length, u32 token length, f64 timeout in seconds (< 0: none),
            u64 payload length, method path (UTF-8), token (the cluster secret, see
            `security`; empty without one), payload (a serialized request message)
  response: i32 status (gRPC's canonical code, 0 = OK), u32 flags (`FLAG_DERIVED`: the
            error only reports a step's cancellation), u64 body length, body (the
            serialized response, or the UTF-8 error message)

Failures: a connection that closes or fails once the request was sent is
`UnavailableError` naming the task and address (what gRPC's UNAVAILABLE maps to); a
timeout is `DeadlineExceededError`. Server side, `context.add_callback` callbacks run when
the call ends; unlike gRPC, a client that goes away while its call waits is only noticed
when the answer is written (the master's `CleanupGraph` or the step's own failure ends
such waits).
"""

from __future__ import annotations

import dataclasses
import hmac
import logging
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

from tensorweave import errors
from tensorweave.distributed.transport.methods import STREAMED_RUN_GRAPH
from tensorweave.distributed.transport.security import TOKEN_MAX_BYTES
from tensorweave.distributed.transport.status import DERIVED_METADATA, error_from_status
from tensorweave.distributed.transport.stream_conn import (
    KIND_RESPONSE,
    StreamClosed,
    StreamConn,
)

log = logging.getLogger("tensorweave.transport")

_REQUEST = struct.Struct("<IIdQ")
_RESPONSE = struct.Struct("<iIQ")
IDLE_PER_PEER = 8
# NOTE: payloads up to this size are joined with their header into one send.
_JOIN_MAX_BYTES = 64 << 10
PREALLOC_MAX_BYTES = 64 << 20
CONNECT_TIMEOUT_S = 5.0
_METHOD_MAX_BYTES = 4096
# security: a request is one protobuf message (< 2 GiB); a longer declared length is
# garbage or an attack and drops the connection before anything is buffered.
PAYLOAD_MAX_BYTES = (2 << 30) - 1
# security: connections (each served by its own thread) one server accepts at a time.
MAX_CONNECTIONS = 256
_UNIMPLEMENTED = 12
# Response header flags (the u32 after the status).
FLAG_DERIVED = 1
_UNAUTHENTICATED = 16
_INTERNAL = 13

Handler = Callable[[bytes, Any], bytes]


@dataclasses.dataclass(frozen=True)
class LocalRpcOptions:
    """Limits of the step-call sockets of one `ProcessRuntime` (defaults: the constants).

    Attributes:
      max_connections: connections one server accepts at a time (each has a thread).
      prealloc_max_bytes: a frame of at most this many bytes is read into a buffer sized
        from its header; a longer one grows in chunks of this size as its bytes arrive.
    """

    max_connections: int = MAX_CONNECTIONS
    prealloc_max_bytes: int = PREALLOC_MAX_BYTES


def _recv_exact(sock: socket.socket, n: int,
                prealloc_max: int = PREALLOC_MAX_BYTES) -> bytearray:
    if n > prealloc_max:
        # NOTE: a (garbage) length is not trusted with memory before the bytes arrive.
        grown = bytearray()
        while len(grown) < n:
            chunk = sock.recv(min(n - len(grown), prealloc_max))
            if not chunk:
                raise EOFError("connection closed")
            grown += chunk
        return grown
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if not k:
            raise EOFError("connection closed")
        got += k
    return buf


def _still_open(sock: socket.socket) -> bool:
    """True for an idle connection its server has not closed (nothing to read yet)."""
    try:
        sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)  # NOTE: end of stream or junk
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def _send_frame(sock: socket.socket, header: bytes, body: bytes) -> None:
    if len(body) <= _JOIN_MAX_BYTES:
        sock.sendall(header + body)
    else:
        sock.sendall(header)
        sock.sendall(body)


# ------------------------------------------------------------------------------- server
class _Abort(Exception):
    def __init__(self, code: int, details: str, flags: int = 0):
        super().__init__(details)
        self.code = code
        self.details = details
        self.flags = flags


class _Context:
    """The part of `grpc.ServicerContext` the worker handlers use (`step_call`: tells
    them the call came over the step-call socket)."""

    step_call = True

    def __init__(self, timeout_s: float, stream: StreamConn | None = None):
        self._deadline = time.monotonic() + timeout_s if timeout_s >= 0 else None
        self.callbacks: list[Callable[[], Any]] = []
        # NOTE: the connection of a streamed call (`step_stream`), for its handler.
        self.stream = stream
        self.flags = 0

    def time_remaining(self) -> float | None:
        if self._deadline is None:
            return None
        return max(self._deadline - time.monotonic(), 0.0)

    def add_callback(self, callback: Callable[[], Any]) -> bool:
        self.callbacks.append(callback)
        return True

    def set_trailing_metadata(self, metadata: Any) -> None:
        if DERIVED_METADATA in tuple(metadata):
            self.flags |= FLAG_DERIVED

    def abort(self, code: Any, details: str) -> None:
        number = code.value[0] if hasattr(code, "value") else int(code)
        raise _Abort(number, details, self.flags)

    def is_active(self) -> bool:
        return True


Admit = Callable[[socket.socket], bool]


class LocalRpcServer:
    """Serves `handlers` (method path -> `handler(request_bytes, context) -> bytes`) on the
    listeners given to `add_listener` (the TCP step-call socket of `tcp_stream`).

    Args:
      handlers: the unary handlers to serve, by gRPC method path.
      port: the server's gRPC port (names its threads and log lines).
      token: the cluster secret every request frame must carry, or None (see `security`).
      options: `LocalRpcOptions` (connection and buffer limits).
    """

    def __init__(self, handlers: dict[str, Handler], port: int, token: bytes | None = None,
                 options: LocalRpcOptions | None = None):
        self._options = options or LocalRpcOptions()
        self._handlers = handlers
        self._port = port
        self._token = token  # security: every request must carry it
        # NOTE: (listening socket, admission check run on the connection's own thread)
        self._listeners: list[tuple[socket.socket, Admit]] = []
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopped = False
        self._acceptors: list[threading.Thread] = []
        self.calls = 0  # calls answered (a statistic)

    def add_listener(self, listener: socket.socket, admit: Admit) -> None:
        """Also serves the connections of `listener` (bound and listening) that `admit`
        accepts (it may read a handshake; False closes the connection). Before `start`."""
        self._listeners.append((listener, admit))

    def start(self) -> bool:
        """Starts serving the added listeners; False (and gRPC only) when there are none."""
        for listener, admit in self._listeners:
            acceptor = threading.Thread(target=self._accept_loop, args=(listener, admit),
                                        daemon=True, name=f"tw-local-rpc-{self._port}")
            self._acceptors.append(acceptor)
            acceptor.start()
        return bool(self._listeners)

    def _accept_loop(self, listener: socket.socket, admit: Admit) -> None:
        while not self._stopped:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed by stop()
            with self._lock:
                if self._stopped:
                    conn.close()
                    return
                limit = self._options.max_connections
                if len(self._conns) >= limit:  # security: bounded threads
                    log.warning("Refusing a step-call connection: %d open", limit)
                    conn.close()
                    continue
                self._conns.add(conn)
            threading.Thread(target=self._serve, args=(conn, admit), daemon=True,
                             name=f"tw-local-rpc-{self._port}-conn").start()

    def _serve(self, conn: socket.socket, admit: Admit) -> None:
        stream: StreamConn | None = None
        try:
            if not admit(conn):
                return
            while not self._stopped:
                method_len, token_len, timeout_s, payload_len = _REQUEST.unpack(
                    _recv_exact(conn, _REQUEST.size, self._options.prealloc_max_bytes))
                if (token_len > TOKEN_MAX_BYTES or method_len > _METHOD_MAX_BYTES
                        or timeout_s != timeout_s
                        or payload_len > PAYLOAD_MAX_BYTES):  # security: declared length
                    log.warning("Dropping a step-call connection: malformed frame")
                    return
                rest = _recv_exact(conn, method_len + token_len + payload_len,
                                   self._options.prealloc_max_bytes)
                method = bytes(rest[:method_len]).decode()
                token = bytes(rest[method_len:method_len + token_len])
                payload = bytes(rest[method_len + token_len:])
                streamed = method == STREAMED_RUN_GRAPH and method in self._handlers
                if streamed:
                    if stream is None:
                        stream = StreamConn(conn, "the calling task")
                    stream.begin_call()
                if self._token is not None and not hmac.compare_digest(token, self._token):
                    code, flags, body = _UNAUTHENTICATED, 0, (  # security: no handler runs
                        f"Unauthenticated call to {method}: missing or wrong cluster token "
                        "(see --auth-token-file)").encode()
                else:
                    code, flags, body = self._dispatch(method, payload, timeout_s,
                                                       stream if streamed else None)
                self.calls += 1
                if stream is None:
                    _send_frame(conn, _RESPONSE.pack(code, flags, len(body)), body)
                else:
                    # NOTE: behind whatever the stream's writer thread still sends
                    stream.send_frame(KIND_RESPONSE, [body], code)
                if streamed:
                    stream.drain()
        except (EOFError, OSError, struct.error, UnicodeDecodeError, StreamClosed,
                errors.DataLossError):
            pass  # the client went away, or stop() closed the connection
        finally:
            with self._lock:
                self._conns.discard(conn)
            if stream is not None:
                stream.close()  # NOTE: ends its writer thread too
            else:
                conn.close()

    def _dispatch(self, method: str, payload: bytes, timeout_s: float,
                  stream: StreamConn | None = None) -> tuple[int, int, bytes]:
        handler = self._handlers.get(method)
        if handler is None:
            return (_UNIMPLEMENTED, 0,
                    f"Method {method} is not served over the step-call socket".encode())
        context = _Context(timeout_s, stream)
        try:
            return 0, 0, handler(payload, context)
        except _Abort as e:
            return e.code or _INTERNAL, e.flags, e.details.encode()
        except Exception as e:  # noqa: BLE001  (a bug must not take the server down)
            return _INTERNAL, 0, f"{type(e).__name__}: {e}".encode()
        finally:
            for callback in context.callbacks:
                try:
                    callback()
                except Exception:  # noqa: BLE001
                    log.exception("local RPC callback failed")

    def stop(self) -> None:
        """Stops listening and closes every connection (their callers see the peer go)."""
        with self._lock:
            self._stopped = True
            listeners = [listener for listener, _ in self._listeners]
            self._listeners = []
            conns, self._conns = list(self._conns), set()
        for s in listeners + conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        # NOTE: the listeners are closed only once the accept() in progress has returned.
        for acceptor in self._acceptors:
            if acceptor is not threading.current_thread():
                acceptor.join(5.0)


# ------------------------------------------------------------------------------- client
class LocalRpcClient:
    """Calls one peer task over the step-call sockets `connector` opens.

    Args:
      task: the peer's task name (in error messages).
      address: the peer's `host:port`.
      token: the cluster secret sent in every request frame, or None.
      connector: opens a new connection to the peer's step-call socket, or returns None
        when there is none (gRPC then carries the call); None: no socket (every call
        returns None).
      options: `LocalRpcOptions` (buffer limits).
    """

    def __init__(self, task: str, address: str, token: bytes | None = None,
                 connector: Callable[[], socket.socket | None] | None = None,
                 options: LocalRpcOptions | None = None):
        self._options = options or LocalRpcOptions()
        self.task = task
        self.address = address
        self._token = token or b""  # security: sent in every request frame
        self._connector = connector
        self._idle: list[socket.socket] = []
        self._idle_streams: list[StreamConn] = []
        self._lock = threading.Lock()

    def _connection(self) -> socket.socket | None:
        while True:
            with self._lock:
                sock = self._idle.pop() if self._idle else None
            if sock is None:
                break
            if _still_open(sock):
                return sock
            sock.close()
        return self._connector()

    def call(self, method: str, payload: bytes, timeout_s: float | None) -> bytes | None:
        """Sends one call and waits for its answer.

        Returns:
          The response bytes, or None when the peer has no step-call socket (use gRPC).

        Raises:
          UnavailableError: the connection broke once the request was sent.
          DeadlineExceededError: no answer within `timeout_s` seconds.
          OpError: the error the handler answered with.
        """
        if self._connector is None:
            return None
        sock = self._connection()
        if sock is None:
            return None
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        method_bytes = method.encode()
        header = _REQUEST.pack(len(method_bytes), len(self._token),
                               -1.0 if timeout_s is None else timeout_s, len(payload))
        try:
            sock.settimeout(timeout_s)
            _send_frame(sock, header + method_bytes + self._token, payload)
            code, flags, length = _RESPONSE.unpack(self._recv(sock, _RESPONSE.size, deadline))
            body = bytes(self._recv(sock, length, deadline))
        except TimeoutError:
            sock.close()
            raise error_from_status(errors.DEADLINE_EXCEEDED, "Deadline Exceeded", self.task,
                                    self.address, method) from None
        except (EOFError, OSError) as e:
            sock.close()
            raise error_from_status(errors.UNAVAILABLE, str(e), self.task, self.address,
                                    method) from None
        self._release(sock)
        if code:
            raise error_from_status(code, body.decode(errors="replace"), self.task,
                                    self.address, method, bool(flags & FLAG_DERIVED))
        return body

    def _recv(self, sock: socket.socket, n: int, deadline: float | None) -> bytearray:
        if deadline is not None:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
        return _recv_exact(sock, n, self._options.prealloc_max_bytes)

    def _release(self, sock: socket.socket) -> None:
        sock.settimeout(None)
        with self._lock:
            if len(self._idle) < IDLE_PER_PEER:
                self._idle.append(sock)
                return
        sock.close()

    def open_stream(self, method: str, payload: bytes,
                    timeout_s: float | None) -> StreamConn | None:
        """Starts a streamed call (see `step_stream`): sends the request and returns its
        connection, on which the caller then exchanges frames and reads the answer
        (`StreamConn.read_until_response`), then hands it back with `release_stream`.

        Returns:
          None when the peer has no step-call socket or it cannot be reached (use gRPC).
        """
        if self._connector is None:
            return None
        method_bytes = method.encode()
        header = _REQUEST.pack(len(method_bytes), len(self._token),
                               -1.0 if timeout_s is None else timeout_s, len(payload))
        for _ in range(2):  # NOTE: an idle connection may have been closed by a restart
            conn = self._stream_connection()
            if conn is None:
                return None
            conn.begin_call()
            try:
                conn.send([header + method_bytes + self._token, payload])
                return conn
            except StreamClosed:
                conn.close()
        return None

    def _stream_connection(self) -> StreamConn | None:
        while True:
            with self._lock:
                conn = self._idle_streams.pop() if self._idle_streams else None
            if conn is None:
                break
            if not conn.broken:
                return conn  # NOTE: one its server closed fails the request's send: retried
            conn.close()
        sock = self._connection()
        if sock is None:
            return None
        sock.settimeout(None)
        return StreamConn(sock, self.task)

    def release_stream(self, conn: StreamConn) -> None:
        """Keeps a streamed call's connection for the next call (closes a broken one)."""
        if not conn.broken:
            with self._lock:
                if len(self._idle_streams) < IDLE_PER_PEER:
                    self._idle_streams.append(conn)
                    return
        conn.close()

    def close(self) -> None:
        """Closes the idle connections."""
        with self._lock:
            idle, self._idle = self._idle, []
            streams, self._idle_streams = self._idle_streams, []
        for sock in idle:
            sock.close()
        for conn in streams:
            conn.close()
