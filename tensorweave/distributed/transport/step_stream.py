r"""Streamed `RunGraph` over the same-host socket: the step's tensors ride on the call itself.

Why: in an asynchronous training step a ps partition and the worker exchange tensors both
ways (weights to the worker, gradients back). Pulled with `RecvTensors`, that is three
calls per ps per step, each parked on a handler thread and completed on a pool thread:
about ten thread hand-offs and six messages. A streamed `RunGraph` carries the same
tensors as extra frames of the `RunGraph` call between the master's task (the caller) and
the partition's task, read by the very threads that need them: four messages, no
hand-off (the caller's partition reads the ps's frames in its own thread, the ps's
handler thread reads the caller's).

Protocol (`local_rpc` framing): the caller sends the `STREAMED_METHOD` request (a
`RunGraphRequest` whose `tensorweave_stream_task` names the caller's task); then, in
either direction and in any order, frames `(status 0, KIND_TENSORS, length)` +
`tensor_frames` body carry the rendezvous values whose source is one end and destination
the other. The partition's last frame is its answer `(status, KIND_RESPONSE, length)`.
The caller sends each of its keys exactly once, or, if its partition ended without
sending all of them (it failed), `(0, KIND_END, 0)`: the server reads (and drops) frames
until it has every key or the END, so that the connection is clean for the next call.

Flow control: a writer never blocks on a full socket (both ends could be writing while
neither reads): what `sendmsg` cannot take at once goes to the connection's writer thread
(`StreamConn.send`), so the step's own thread moves on and reads what it waits for.

Deadlock freedom: a partition's thread reads the stream only when the values it waits for
(`Receives.wait`) include keys that arrive on it, and flushes its batched sends before any
wait (`StreamPump.flush`); it otherwise waits on its receive queue as before. Cancellation
wakes a pump blocked in `select` through an eventfd; a dead peer ends it with EOF.
"""

from __future__ import annotations

import collections
import functools
import os
import select
import socket
import struct
import threading
import time
from typing import Any

from google.protobuf.message import DecodeError

from tensorweave import errors
from tensorweave.distributed.transfer_stats import STATS, nbytes
from tensorweave.distributed.transport import tensor_frames
from tensorweave.distributed.transport.status import error_from_code, error_from_status
from tensorweave.protos import worker_pb2

STREAMED_METHOD = "/tensorweave.grpc.WorkerService/RunGraphStreamed"
FRAME = struct.Struct("<iIQ")  # status code, kind, body length (local_rpc's response)
KIND_RESPONSE = 0
KIND_TENSORS = 1
KIND_END = 2
# NOTE: the step's own thread tries to send without blocking; a bigger socket buffer
# makes the writer thread's hand-off rare (the kernel caps it at net.core.wmem_max).
SOCKET_BUFFER_BYTES = 4 << 20
_MAX_BODY_BYTES = 1 << 40
_BACKGROUND_JOIN_S = 5.0
_END_FRAME = FRAME.pack(0, KIND_END, 0)


class StreamClosed(Exception):
    """The connection ended or broke while a frame was expected."""


def _advance(bufs: list[memoryview], n: int) -> list[memoryview]:
    while n and bufs:
        first = bufs[0]
        if n >= len(first):
            n -= len(first)
            bufs.pop(0)
        else:
            bufs[0] = first[n:]
            n = 0
    return bufs


class StreamConn:
    """One same-host connection carrying streamed calls (either end).

    Per call it tracks what is still to come from the peer (`expect`), whether the peer
    ended its side (`peer_ended`), this end's keys still unsent (`unsent`), and a final
    answer read early by a pump (`final`).

    Args:
      sock: a connected stream socket in blocking mode.
      peer: the peer's task name, for error messages.
    """

    def __init__(self, sock: socket.socket, peer: str):
        self.sock = sock
        self.peer = peer
        for opt in (socket.SO_SNDBUF, socket.SO_RCVBUF):
            try:
                sock.setsockopt(socket.SOL_SOCKET, opt, SOCKET_BUFFER_BYTES)
            except OSError:
                pass
        self._cond = threading.Condition()
        self._deferred: list[Any] = []
        self._backlog: collections.deque[list[memoryview]] = collections.deque()
        self._writer: threading.Thread | None = None
        self._closed = False
        self.broken = False
        self.begin_call()

    def begin_call(self) -> None:
        """Resets the per-call state."""
        self.expect: set[str] = set()
        self.unsent: set[str] = set()
        self.peer_ended = False
        self.end_sent = False
        self.final: tuple[int, bytes] | None = None

    # ------------------------------------------------------------------ writing
    def send(self, buffers: list[Any]) -> None:
        """Sends `buffers` (one frame) in order, never blocking on a full socket.

        Raises:
          StreamClosed: if the connection broke.
        """
        with self._cond:
            if self._deferred:
                buffers = self._deferred + list(buffers)
                self._deferred = []
            bufs = [memoryview(b).cast("B") for b in buffers if len(b)]
            if self.broken or self._closed:
                raise StreamClosed(f"connection to {self.peer} is closed")
            if not self._backlog:
                try:
                    while bufs:
                        bufs = _advance(bufs, self.sock.sendmsg(bufs, (), socket.MSG_DONTWAIT))
                except BlockingIOError:
                    pass
                except OSError as e:
                    self.broken = True
                    raise StreamClosed(f"connection to {self.peer} broke: {e}") from None
                if not bufs:
                    return
            self._backlog.append(bufs)
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, daemon=True,
                                                name="tw-stream-writer")
                self._writer.start()
            self._cond.notify()

    def defer(self, buffers: list[Any]) -> None:
        """Keeps `buffers` (whole frames) to go out in front of the next `send` (server
        end: values sent at the very end of a partition ride with its answer)."""
        with self._cond:
            self._deferred.extend(buffers)

    def send_frame(self, kind: int, body: list[Any], status: int = 0) -> None:
        """Sends one framed message of `kind` with `body` buffers."""
        length = sum(len(b) for b in body)
        self.send([FRAME.pack(status, kind, length), *body])

    def send_end(self) -> None:
        """Caller side, once per call: no more values come from this end."""
        self.end_sent = True
        self.send_frame(KIND_END, [])

    def _write_loop(self) -> None:
        while True:
            with self._cond:
                while not self._backlog and not self._closed:
                    self._cond.wait()
                if not self._backlog:
                    return
                bufs = self._backlog[0]
            try:
                while bufs:
                    bufs = _advance(bufs, self.sock.sendmsg(bufs))
            except OSError:
                with self._cond:
                    self.broken = True
                    self._backlog.clear()
                    self._cond.notify_all()
                continue
            with self._cond:
                self._backlog.popleft()
                self._cond.notify_all()

    # ------------------------------------------------------------------ reading
    def wait_readable(self, waker: int | None, deadline: float | None) -> bool:
        """Blocks until the socket has data (True) or `waker` fired (False).

        Raises:
          TimeoutError: when `deadline` (time.monotonic) passes first.
        """
        fds = [self.sock] if waker is None else [self.sock, waker]
        timeout = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        ready, _, _ = select.select(fds, [], [], timeout)
        if not ready:
            raise TimeoutError
        return self.sock in ready

    def read_frame(self, deadline: float | None) -> tuple[int, int, bytearray]:
        """Reads one whole frame: (status, kind, body).

        Raises:
          StreamClosed: the peer closed or the connection broke.
          TimeoutError: `deadline` passed.
        """
        head = self._read_exact(FRAME.size, deadline)
        status, kind, length = FRAME.unpack(head)
        if kind > KIND_END or length > _MAX_BODY_BYTES:
            self.broken = True
            raise StreamClosed(f"malformed frame from {self.peer}")
        return status, kind, self._read_exact(length, deadline)

    def _read_exact(self, n: int, deadline: float | None) -> bytearray:
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            try:
                k = self.sock.recv_into(view[got:], 0, socket.MSG_DONTWAIT)
            except BlockingIOError:
                self.wait_readable(None, deadline)
                continue
            except OSError as e:
                self.broken = True
                raise StreamClosed(f"connection to {self.peer} broke: {e}") from None
            if not k:
                self.broken = True
                raise StreamClosed(f"{self.peer} closed the connection")
            got += k
        return buf

    def read_until_response(self, deadline: float | None) -> tuple[int, bytes]:
        """The call's final answer (status, body), dropping value frames before it."""
        while self.final is None:
            status, kind, body = self.read_frame(deadline)
            if kind == KIND_RESPONSE:
                self.final = (status, bytes(body))
        return self.final

    def drain(self) -> None:
        """Server side, after the answer: reads (and drops) the caller's frames of this
        call up to its END."""
        while not self.peer_ended:
            _, kind, _ = self.read_frame(None)
            if kind == KIND_END:
                self.peer_ended = True
            elif kind != KIND_TENSORS:
                self.broken = True
                raise StreamClosed(f"unexpected frame from {self.peer}")

    def close(self) -> None:
        """Closes the connection (the writer thread ends)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class _Leg:
    __slots__ = ("conn", "task", "pending", "batch", "send_keys")

    def __init__(self, conn: StreamConn, task: str, batch: bool, send_keys: list[str]):
        self.conn = conn
        self.task = task
        self.pending: list[tuple[str, Any]] = []
        self.batch = batch
        self.send_keys = send_keys


class StreamPump:
    """One partition run's end of its streams: forwards its sends to the peers, reads the
    peers' values into the step rendezvous.

    Args:
      rdv: the step's `StepRendezvous` on this worker.
      cancellation: the partition's `CancellationManager` (wakes a blocked read).
      deadline: the step's deadline (time.monotonic seconds), or None.
      server: True on the partition's task (reads END frames), False at the caller
        (reads answers).
    """

    def __init__(self, rdv: Any, cancellation: Any, deadline: float | None, server: bool):
        self._rdv = rdv
        self._cancellation = cancellation
        self._deadline = deadline
        self._server = server
        self._legs: list[_Leg] = []
        self._by_key: dict[str, _Leg] = {}  # keys still expected -> leg
        self._lock = threading.Lock()
        self._waker: _Waker | None = None
        self._background: threading.Event | None = None
        self._stopping = False

    def attach(self, conn: StreamConn, task: str, recv_keys: list[str],
               send_keys: list[str], batch: bool = True) -> None:
        """Streams `recv_keys` in from `conn` and forwards this partition's sends of
        `send_keys` to it (batched per leg when `batch`, flushed by `flush`)."""
        leg = _Leg(conn, task, batch, send_keys)
        self._legs.append(leg)
        conn.expect = set(recv_keys)
        conn.unsent = set(send_keys)
        for key in recv_keys:
            self._by_key[key] = leg
        forward = self._rdv.forward
        for key in send_keys:
            forward[key] = functools.partial(self.forward, leg, key)

    # --------------------------------------------------------------- sending
    def forward(self, leg: _Leg, key: str, value: Any) -> None:
        """A `_Send` of `key` to the leg's task (called through the rendezvous). Batched
        values go out when this thread is about to wait (`flush`), and at the caller also
        once the leg's last key was sent (with the call's END in the same write)."""
        with self._lock:
            leg.pending.append((key, value))
            leg.conn.unsent.discard(key)
            if leg.batch and (leg.conn.unsent or self._server):
                return
            items, leg.pending = leg.pending, []
        self._send(leg, items)

    def flush(self, final: bool = False) -> None:
        """Sends every batched value (before this thread waits for anything). With
        `final` (the partition ended), the server end leaves them to go out with its
        answer (`StreamConn.defer`)."""
        for leg in self._legs:
            if leg.pending:
                with self._lock:
                    items, leg.pending = leg.pending, []
                if items:
                    self._send(leg, items, defer=final and self._server)

    def _send(self, leg: _Leg, items: list[tuple[str, Any]], defer: bool = False) -> None:
        conn = leg.conn
        bufs, length = tensor_frames.encode(items)
        frame = [FRAME.pack(0, KIND_TENSORS, length), *bufs]
        if defer:
            conn.defer(frame)
            return
        if not self._server and not conn.unsent and not conn.end_sent:
            conn.end_sent = True  # NOTE: the call's END rides in the same write
            frame.append(_END_FRAME)
        try:
            conn.send(frame)
        except StreamClosed as e:
            raise errors.UnavailableError(None, None, f"{leg.task} is unreachable: {e}") from None
        STATS.add(sent=nbytes(v for _, v in items))

    # --------------------------------------------------------------- reading
    def wants(self, keys: Any) -> bool:
        """True when one of `keys` is still to arrive on a stream."""
        by_key = self._by_key
        return any(k in by_key for k in keys)

    def step(self) -> None:
        """Reads one frame from a stream that still owes values (blocking), delivering its
        values into the rendezvous; returns early if the partition was cancelled.

        Raises:
          DeadlineExceededError: the step's deadline passed.
          UnavailableError: a peer closed the connection.
          OpError: the peer's partition failed before sending what this one waits for.
        """
        self.flush()
        legs = [leg for leg in self._legs if leg.conn.expect and leg.conn.final is None
                and not leg.conn.peer_ended]
        if not legs:
            return
        if self._waker is None:
            self._waker = _Waker(self._cancellation)
        waker = self._waker.fd
        try:
            leg = self._readable(legs, waker)
            if leg is None:
                return  # cancelled: the receive queue has the error
            status, kind, body = leg.conn.read_frame(self._deadline)
        except TimeoutError:
            raise errors.DeadlineExceededError(
                None, None, f"Timed out waiting for tensors from {legs[0].task}") from None
        except StreamClosed as e:
            raise errors.UnavailableError(None, None, f"{leg.task} is unreachable: {e}") from None
        self._handle(leg, status, kind, body)

    def _readable(self, legs: list[_Leg], waker: int) -> _Leg | None:
        if len(legs) == 1:
            return legs[0] if legs[0].conn.wait_readable(waker, self._deadline) else None
        timeout = None if self._deadline is None else max(self._deadline - time.monotonic(), 0)
        ready, _, _ = select.select([leg.conn.sock for leg in legs] + [waker], [], [], timeout)
        if not ready:
            raise TimeoutError
        for leg in legs:
            if leg.conn.sock in ready:
                return leg
        return None

    def _handle(self, leg: _Leg, status: int, kind: int, body: bytearray) -> None:
        conn = leg.conn
        if kind == KIND_TENSORS:
            items = tensor_frames.decode(body)
            STATS.add(received=nbytes(v for _, v in items))
            for key, value in items:
                conn.expect.discard(key)
                self._by_key.pop(key, None)
                self._rdv.send(key, value)
            return
        for key in conn.expect:
            self._by_key.pop(key, None)  # NOTE: they will not come: stop reading for them
        if kind == KIND_END and self._server:
            conn.peer_ended = True
            raise errors.AbortedError(
                None, None, f"The caller {leg.task} ended the step before sending "
                f"{', '.join(sorted(conn.expect))}")
        if kind == KIND_RESPONSE and not self._server:
            conn.final = (status, bytes(body))
            if status:
                raise error_from_status(status, conn.final[1].decode(errors="replace"),
                                        leg.task, "")
            error = _error_in_answer(conn.final[1])
            if error is not None:
                raise error
            raise errors.InternalError(
                None, None, f"{leg.task} finished the step without sending "
                f"{', '.join(sorted(conn.expect))}")
        conn.broken = True
        raise errors.UnavailableError(None, None, f"Unexpected frame from {leg.task}")

    def start_background(self, pool: Any) -> None:
        """Reads on a `pool` thread until every expected value arrived (for plans that
        wait in their own way); a failure aborts the step rendezvous. `close` waits
        for that thread."""
        self._waker = _Waker(self._cancellation, dedicated=True)  # NOTE: read on another thread
        self._background = threading.Event()
        pool.submit(self._run_background)

    def _run_background(self) -> None:
        try:
            while self._by_key and not self._stopping and not self._cancellation.is_cancelled:
                self.step()
        except errors.OpError as e:
            self._rdv.abort(e)
        except Exception as e:  # noqa: BLE001  (a reader must never die silently)
            self._rdv.abort(errors.InternalError(None, None, f"{type(e).__name__}: {e}"))
        finally:
            self._background.set()

    def close(self) -> None:
        """End of the partition: sends what is batched, ENDs (at the caller) the legs
        whose keys were not all sent, and forgets the forwards."""
        if self._background is not None and self._waker is not None:
            self._stopping = True
            self._waker.fire()
            if not self._background.wait(_BACKGROUND_JOIN_S):
                # NOTE: stuck mid-frame: these connections cannot be trusted any more.
                for leg in self._legs:
                    leg.conn.broken = True
                self._waker = None  # NOTE: still in use by that thread
        try:
            self.flush(final=True)
        except errors.OpError:
            pass  # NOTE: the broken leg reports itself when its answer is read
        forward = self._rdv.forward
        for leg in self._legs:
            for key in leg.send_keys:
                forward.pop(key, None)
            if not self._server and not leg.conn.end_sent and not leg.conn.broken:
                try:
                    leg.conn.send_end()
                except StreamClosed:
                    pass
        if self._waker is not None:
            self._waker.close()
            self._waker = None


def _error_in_answer(body: bytes) -> errors.OpError | None:
    """The error a `RunGraphResponse` carries in its body, if any."""
    try:
        resp = worker_pb2.RunGraphResponse.FromString(body)
    except DecodeError:
        return errors.DataLossError(None, None, "Malformed RunGraphResponse")
    return error_from_code(resp.status_code, resp.status_error_message)


class _ThreadEventFd(threading.local):
    """One eventfd per thread, reused by the pumps that thread runs (closed with it)."""

    fd = -1

    def get(self) -> int:
        if self.fd < 0:
            self.fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        return self.fd

    def __del__(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)


_EVENTFDS = _ThreadEventFd()


class _Waker:
    """Makes an eventfd readable when `cancellation` fires (for `select`): the calling
    thread's own (reused by its next pump: `close` disarms and clears it), or with
    `dedicated` a new one that `close` closes."""

    def __init__(self, cancellation: Any, dedicated: bool = False):
        self._dedicated = dedicated
        self.fd = (os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC) if dedicated
                   else _EVENTFDS.get())
        self._lock = threading.Lock()
        self._live = True
        self._fired = False
        self._cancellation = cancellation
        self._token = cancellation.register(self._fire)
        if self._token is None:
            self.fire()

    def _fire(self, error: Any) -> None:
        self.fire()

    def fire(self) -> None:
        """Makes `fd` readable (idempotent; a no-op after `close`)."""
        with self._lock:
            if self._live:
                self._fired = True
                os.eventfd_write(self.fd, 1)

    def close(self) -> None:
        self._cancellation.deregister(self._token)
        with self._lock:
            # NOTE: under the lock: a cancellation running late never writes after this.
            self._live = False
            if self._dedicated:
                os.close(self.fd)
            elif self._fired:
                try:
                    os.eventfd_read(self.fd)
                except BlockingIOError:
                    pass
