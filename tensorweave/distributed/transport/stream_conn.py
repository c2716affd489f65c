"""A same-host connection carrying streamed calls (`step_stream`): framing, per-call
state, and writes that never block the step's thread.

Frames are `local_rpc`'s response header `(i32 status, u32 kind, u64 body length)` and a
body; `kind` says what the body is (`KIND_RESPONSE`: a call's answer, `KIND_TENSORS`: a
`tensor_frames` body, `KIND_END`: the caller's end of a call, no body).

A writer never blocks on a full socket (both ends could be writing while neither reads):
what `sendmsg` cannot take at once goes, in order, to the connection's writer thread
(started on first need), so the step's own thread moves on and reads what it waits for.
Reads are whole frames, bounded by a deadline, with `poll` for the wait.
"""

from __future__ import annotations

import collections
import select
import socket
import struct
import threading
import time
from typing import Any

from tensorweave.distributed.transport.tensor_frames import LayoutCache

FRAME = struct.Struct("<iIQ")  # status code, kind, body length (local_rpc's response)
KIND_RESPONSE = 0
KIND_TENSORS = 1
KIND_END = 2
# NOTE: the step's own thread tries to send without blocking; a bigger socket buffer
# makes the writer thread's hand-off rare (the kernel caps it at net.core.wmem_max).
SOCKET_BUFFER_BYTES = 4 << 20
_MAX_BODY_BYTES = 1 << 40
# NOTE: buffers per sendmsg call: Linux refuses more than IOV_MAX (1024).
_IOV_MAX = 512


def wait_any(fds: list[int], deadline: float | None) -> set[int]:
    """Blocks until one of `fds` is readable (or closed); returns those that are. `poll`,
    not `select`: a busy process may hold descriptors above FD_SETSIZE.

    Raises:
      TimeoutError: when `deadline` (time.monotonic seconds) passes first.
    """
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    timeout_ms = None if deadline is None else max(deadline - time.monotonic(), 0.0) * 1e3
    ready = poller.poll(timeout_ms)
    if not ready:
        raise TimeoutError
    return {fd for fd, _ in ready}


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

    Per call it tracks whether the peer ended its side (`peer_ended`), whether this end
    sent its END (`end_sent`), and a final answer read early by a pump (`final`).
    `layouts` keeps the tables of the tensor frames it carried (the same every step).

    Args:
      sock: a connected stream socket in blocking mode.
      peer: the peer's task name, for error messages.
    """

    def __init__(self, sock: socket.socket, peer: str):
        self.sock = sock
        self.peer = peer
        self.layouts = LayoutCache()
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
                        bufs = _advance(bufs, self.sock.sendmsg(bufs[:_IOV_MAX], (),
                                                                socket.MSG_DONTWAIT))
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
                    bufs = _advance(bufs, self.sock.sendmsg(bufs[:_IOV_MAX]))
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
        fd = self.sock.fileno()
        return fd in wait_any([fd] if waker is None else [fd, waker], deadline)

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
        try:
            buf = bytearray(n)
        except MemoryError:
            self.broken = True
            raise StreamClosed(f"no memory for a {n}-byte frame from {self.peer}") from None
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
