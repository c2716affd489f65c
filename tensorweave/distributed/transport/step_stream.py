r"""Streamed `RunGraph` over the same-host socket: the step's tensors ride on the call itself.

Why: in an asynchronous training step a ps partition and the worker exchange tensors both
ways (weights to the worker, gradients back). Pulled with `RecvTensors`, that is three
calls per ps per step, each parked on a handler thread and completed on a pool thread:
about ten thread hand-offs and six messages. A streamed `RunGraph` carries the same
tensors as extra frames of the `RunGraph` call between the master's task (the caller) and
the partition's task, read by the very threads that need them: four messages, no
hand-off (the caller's partition reads the ps's frames in its own thread, the ps's
handler thread reads the caller's).

When it applies (`MasterSession._start_parts`): the master runs a partition on its own task
(the inline one) and another partition lives on a task reached over a step-call socket
(`GrpcRemoteWorker.start_streamed`: the TCP one of `tcp_stream`, on one host as between
hosts), its feeds fit in the request, and the session did not
set `TensorweaveOptions.disable_step_streams`. Values between two *other* tasks are still
pulled (`RecvTensors`); `placer.relocate_control_relays` weighs that in.

Protocol (`local_rpc` framing): the caller sends the `methods.STREAMED_RUN_GRAPH` request (a
`RunGraphRequest` whose `tensorweave_stream_task` names the caller's task); then, in
either direction and in any order, frames `(status 0, KIND_TENSORS, length)` +
`tensor_frames` body carry the rendezvous values whose source is one end and destination
the other, each key exactly once. The partition's last frame is its answer
`(status, KIND_RESPONSE, length)` (a `RunGraphResponse`). The caller ends its side once per
call with `(0, KIND_END, 0)`, in the same write as its last values, or when its partition
ended (failed) without sending them all; after its answer the server reads (and drops)
frames up to that END, so the connection is clean for the next call. A server that gets
the END while it still waits for values fails its partition (`AbortedError`).

Batching: a partition that reads its streams itself (a straight-line plan) sends its
values to a peer in one frame when it is about to wait (`StreamPump.flush`, called by
`Receives.wait`), and the caller also when the last one is out; what the server sends at
the very end of its partition rides in front of its answer (`StreamConn.defer`). Other
plans get a reader thread (`StreamPump.start_background`) and send each value at once.

Flow control: a writer never blocks on a full socket (`stream_conn.StreamConn.send`).

Deadlock freedom: a partition's thread reads the streams only when the values it waits for
(`Receives.wait`) include keys that arrive on them, and flushes its batched sends before
any wait; it otherwise waits on its receive queue as before. Cancellation wakes a pump
blocked in `poll` through an eventfd; the step deadline bounds it; a dead peer ends it
with EOF (`UnavailableError` naming the task).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from google.protobuf.message import DecodeError

from tensorweave import errors
from tensorweave.distributed.transfer_stats import TransferStats, nbytes
from tensorweave.distributed.transport import tensor_frames
from tensorweave.distributed.transport.status import error_from_response, error_from_status
from tensorweave.distributed.transport.stream_conn import (
    FRAME,
    KIND_END,
    KIND_RESPONSE,
    KIND_TENSORS,
    StreamClosed,
    StreamConn,
    wait_any,
)
from tensorweave.framework.cancellation import derived
from tensorweave.protos import worker_pb2

_BACKGROUND_JOIN_S = 5.0
_END_FRAME = FRAME.pack(0, KIND_END, 0)


class _Leg:
    """One stream of a pump: the keys still to come on it (`expect`), those of this end
    not sent yet (`unsent`), and the values batched for it (`pending`)."""

    __slots__ = ("conn", "task", "pending", "batch", "send_keys", "expect", "unsent")

    def __init__(self, conn: StreamConn, task: str, batch: bool, recv_keys: list[str],
                 send_keys: list[str]):
        self.conn = conn
        self.task = task
        self.pending: list[tuple[str, Any]] = []
        self.batch = batch
        self.send_keys = send_keys
        self.expect = set(recv_keys)
        self.unsent = set(send_keys)


class StreamPump:
    """One partition run's end of its streams: forwards its sends to the peers, reads the
    peers' values into the step rendezvous.

    Args:
      rdv: the step's `StepRendezvous` on this worker.
      cancellation: the partition's `CancellationManager` (wakes a blocked read).
      deadline: the step's deadline (time.monotonic seconds), or None.
      server: True on the partition's task (reads END frames), False at the caller
        (reads answers).
      stats: the process's `TransferStats` (bytes streamed), or None.
      eventfds: the `ThreadEventFds` whose per-thread eventfd a waiting thread reuses
        (a `ProcessRuntime`'s); default: a new one (one eventfd per pump).
    """

    def __init__(self, rdv: Any, cancellation: Any, deadline: float | None, server: bool,
                 stats: TransferStats | None = None, eventfds: ThreadEventFds | None = None):
        self._stats = stats or TransferStats()
        self._eventfds = eventfds
        self._rdv = rdv
        self._cancellation = cancellation
        self._deadline = deadline
        self._server = server
        self._legs: list[_Leg] = []
        self._leg_of: dict[str, _Leg] = {}
        self._lock = threading.Lock()
        self._waker: _Waker | None = None
        self._background: threading.Event | None = None
        self._stopping = False

    def attach(self, conn: StreamConn, task: str, recv_keys: list[str],
               send_keys: list[str], batch: bool = True) -> None:
        """Streams `recv_keys` in from `conn` and forwards this partition's sends of
        `send_keys` to it (batched per leg when `batch`, flushed by `flush`)."""
        leg = _Leg(conn, task, batch, recv_keys, send_keys)
        self._legs.append(leg)
        for key in send_keys:
            self._leg_of[key] = leg
        self._rdv.route(send_keys, self)

    def poll_in_waiting_thread(self) -> None:
        """Lets the thread that waits for the step's values read the streams itself
        (`StepRendezvous.poll`), instead of a background reader."""
        self._rdv.add_polled(self)

    # --------------------------------------------------------------- sending
    def forward(self, key: str, value: Any) -> None:
        """A `_Send` of `key` to its leg's task (called through the rendezvous). Batched
        values go out when this thread is about to wait (`flush`), and at the caller also
        once the leg's last key was sent (with the call's END in the same write)."""
        leg = self._leg_of[key]
        with self._lock:
            leg.pending.append((key, value))
            leg.unsent.discard(key)
            if leg.batch and (leg.unsent or self._server):
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
        bufs, length = tensor_frames.encode(items, conn.layouts)
        frame = [FRAME.pack(0, KIND_TENSORS, length), *bufs]
        if defer:
            conn.defer(frame)
            return
        if not self._server and not leg.unsent and not conn.end_sent:
            conn.end_sent = True  # NOTE: the call's END rides in the same write
            frame.append(_END_FRAME)
        try:
            conn.send(frame)
        except StreamClosed as e:
            raise errors.UnavailableError(None, None, f"{leg.task} is unreachable: {e}") from None
        self._stats.add(sent=nbytes(v for _, v in items))

    # --------------------------------------------------------------- reading
    def wants(self, keys: Any) -> bool:
        """True when one of `keys` is still to arrive on a stream."""
        return any(k in leg.expect for leg in self._legs for k in keys)

    def poll(self) -> None:
        """Reads one frame from a stream that still owes values (blocking), delivering its
        values into the rendezvous; returns early if the partition was cancelled.

        Raises:
          DeadlineExceededError: the step's deadline passed.
          UnavailableError: a peer closed the connection.
          OpError: the peer's partition failed before sending what this one waits for.
        """
        self.flush()
        legs = [leg for leg in self._legs if leg.expect]
        if not legs:
            return
        if self._waker is None:
            if self._eventfds is None:
                self._eventfds = ThreadEventFds()
            self._waker = _Waker(self._cancellation, self._eventfds)
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
        ready = wait_any([leg.conn.sock.fileno() for leg in legs] + [waker], self._deadline)
        for leg in legs:
            if leg.conn.sock.fileno() in ready:
                return leg
        return None

    def _handle(self, leg: _Leg, status: int, kind: int, body: bytearray) -> None:
        conn = leg.conn
        if kind == KIND_TENSORS:
            items = tensor_frames.decode(body, conn.layouts)
            self._stats.add(received=nbytes(v for _, v in items))
            for key, value in items:
                leg.expect.discard(key)
                self._rdv.send(key, value)
            return
        missing = ", ".join(sorted(leg.expect))
        leg.expect.clear()  # NOTE: they will not come: stop reading for them
        if kind == KIND_END and self._server:
            conn.peer_ended = True
            raise derived(errors.AbortedError(
                None, None, f"The caller {leg.task} ended the step before sending {missing}"))
        if kind == KIND_RESPONSE and not self._server:
            conn.final = (status, bytes(body))
            if status:
                raise error_from_status(status, conn.final[1].decode(errors="replace"),
                                        leg.task, "")
            error = _error_in_answer(conn.final[1])
            if error is not None:
                raise error
            raise errors.InternalError(
                None, None, f"{leg.task} finished the step without sending {missing}")
        conn.broken = True
        raise errors.UnavailableError(None, None, f"Unexpected frame from {leg.task}")

    def start_background(self, pool: Any) -> None:
        """Reads on a `pool` thread until every expected value arrived (for plans that
        wait in their own way); a failure aborts the step rendezvous. `close` waits
        for that thread."""
        self._waker = _Waker(self._cancellation, None)  # NOTE: read on another thread
        self._background = threading.Event()
        pool.submit(self._run_background)

    def _run_background(self) -> None:
        try:
            while (any(leg.expect for leg in self._legs) and not self._stopping
                   and not self._cancellation.is_cancelled):
                self.poll()
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
        self._rdv.remove_polled(self)
        for leg in self._legs:
            self._rdv.unroute(leg.send_keys)
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
    return error_from_response(resp)


class _OwnedEventFd:
    """An eventfd closed when its owner drops it."""

    __slots__ = ("fd",)

    def __init__(self) -> None:
        self.fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)

    def __del__(self) -> None:
        os.close(self.fd)


class ThreadEventFds(threading.local):
    """One eventfd per thread, reused by the pumps that thread runs, and closed when the
    thread ends (its thread-local slot is dropped then; a `__del__` on this class itself
    would only run when its owner, e.g. a `ProcessRuntime`, goes, leaking one fd per
    finished thread)."""

    owned: _OwnedEventFd | None = None

    def get(self) -> _OwnedEventFd:
        """The calling thread's eventfd (made on first use)."""
        if self.owned is None:
            self.owned = _OwnedEventFd()
        return self.owned


class _Waker:
    """Makes an eventfd readable when `cancellation` fires (for `poll`): the calling
    thread's own of `eventfds` (reused by its next pump: `close` disarms and clears it),
    or, when `eventfds` is None, a new one that `close` closes."""

    def __init__(self, cancellation: Any, eventfds: ThreadEventFds | None):
        dedicated = eventfds is None
        self._dedicated = dedicated
        # NOTE: a waker may outlive the thread that made it: it keeps the fd open.
        self._owned = None if dedicated else eventfds.get()
        self.fd = (os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC) if dedicated
                   else self._owned.fd)
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
