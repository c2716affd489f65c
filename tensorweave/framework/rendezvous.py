"""Rendezvous: where `_Send` leaves a tensor and `_Recv` picks it up, per step.

Keys follow TensorFlow's format (`framework/rendezvous.cc`):
`<src_device>;<src_incarnation as 16 hex digits>;<dst_device>;<tensor_name>;<frame>:<iter>`.

A `StepRendezvous` is a table of values and waiters for one step on one worker; a
`RendezvousMgr` owns the tables of all running steps and drops each once the step's local
partitions are done and every value sent has been received.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from tensorweave import errors
from tensorweave.framework.cancellation import derived

Callback = Callable[[Any, Any], None]  # (values or None, error or None)


class Dead:
    """The value of a dead tensor (its branch or loop iteration was not taken).

    A `_Send` of a dead value deposits `DEAD` under its key; transports carry it as a
    flag, never as a tensor (TensorFlow's `Rendezvous::Args`/`is_dead`: `RecvTensorResponse.
    is_dead`, a flag bit in the same-host tensor frames), so no tensor value is reserved.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEAD"

    def __reduce__(self) -> str:
        return "DEAD"  # NOTE: a singleton, also after pickling


DEAD = Dead()


def create_key(
    src_device: str,
    src_incarnation: int,
    dst_device: str,
    tensor_name: str,
    frame_iter: tuple[int, int] = (0, 0),
) -> str:
    """TensorFlow's rendezvous key string."""
    return "{};{:016x};{};{};{}:{}".format(
        src_device, src_incarnation & 0xFFFFFFFFFFFFFFFF, dst_device, tensor_name, *frame_iter
    )


def parse_key(key: str) -> tuple[str, int, str, str, tuple[int, int]]:
    """Splits a key into (src_device, src_incarnation, dst_device, tensor_name, frame_iter).

    Raises:
      InvalidArgumentError: for a malformed key.
    """
    parts = key.split(";")
    if len(parts) != 5:
        raise errors.InvalidArgumentError(None, None, f"Invalid rendezvous key: {key}")
    try:
        frame, it = parts[4].split(":")
        return parts[0], int(parts[1], 16), parts[2], parts[3], (int(frame), int(it))
    except ValueError:
        raise errors.InvalidArgumentError(None, None, f"Invalid rendezvous key: {key}") from None


class _ManyWaiter:
    """Collects several keys and calls back once all arrived (or on the first error)."""

    __slots__ = ("keys", "values", "missing", "callback", "done")

    def __init__(self, keys: list[str], callback: Callback):
        self.keys = keys
        self.values: dict[str, Any] = {}
        self.missing = len(set(keys))
        self.callback = callback
        self.done = False


class ReceiveSource(Protocol):
    """A transport that carries some of a step's values while the step runs (the same-host
    step streams, `distributed.transport.step_stream.StreamPump`): it takes the sends of
    the keys routed to it (`StepRendezvous.route`), and delivers values from its peer into
    the rendezvous with `send`, read in the thread that waits for them when the step polls
    it (`StepRendezvous.add_polled`)."""

    def forward(self, key: str, value: Any) -> None:
        """Takes a `send` of a key routed to this source (it may batch it)."""

    def flush(self) -> None:
        """Sends what it batched (the waiting thread is about to block)."""

    def wants(self, keys: Iterable[str]) -> bool:
        """True when one of `keys` is still to arrive through this source."""

    def poll(self) -> None:
        """Blocks until one batch of values arrived (delivered with `send`), the step was
        cancelled, or its deadline passed.

        Raises:
          OpError: the transport failed, or the deadline passed.
        """


class StepRendezvous:
    """Values and waiters of one step. Each sent key is received exactly once."""

    def __init__(self, step_id: int):
        self.step_id = step_id
        self._lock = threading.Lock()
        self._values: dict[str, Any] = {}
        self._waiters: dict[str, list[_ManyWaiter]] = {}
        self._error: errors.OpError | None = None
        self.created_s = time.monotonic()
        self.local_runs = 0
        self.local_done = False
        # NOTE: key -> the `ReceiveSource` its value leaves on instead of waiting here to
        # be pulled; and the sources the waiting thread reads itself (`poll`).
        self._routes: dict[str, ReceiveSource] = {}
        self._polled: list[ReceiveSource] = []

    @property
    def error(self) -> errors.OpError | None:
        """The abort error, or None."""
        return self._error

    def send(self, key: str, value: Any) -> None:
        """Deposits `value` under `key`, waking a waiter if one is there.

        Raises:
          The abort error if the step was aborted; InternalError on a duplicate send.
        """
        source = self._routes.get(key) if self._routes else None
        if source is not None:
            if self._error is not None:
                raise self._error
            source.forward(key, value)
            return
        ready: list[_ManyWaiter] = []
        with self._lock:
            if self._error is not None:
                raise self._error
            if key in self._values:
                raise errors.InternalError(None, None, f"Duplicated send: {key}")
            waiters = self._waiters.get(key)
            if waiters:
                w = waiters.pop(0)
                if not waiters:
                    del self._waiters[key]
                w.values[key] = value
                w.missing -= 1
                if w.missing == 0 and not w.done:
                    w.done = True
                    ready.append(w)
            else:
                self._values[key] = value
        for w in ready:
            w.callback([w.values[k] for k in w.keys], None)

    # ------------------------------------------------------------ receive sources
    def route(self, keys: Iterable[str], source: ReceiveSource) -> None:
        """Sends of `keys` go to `source` from now on."""
        for key in keys:
            self._routes[key] = source

    def unroute(self, keys: Iterable[str]) -> None:
        """Sends of `keys` stay here again."""
        for key in keys:
            self._routes.pop(key, None)

    def add_polled(self, source: ReceiveSource) -> None:
        """The thread waiting for this step's values reads `source` itself (`poll`)."""
        self._polled.append(source)

    def remove_polled(self, source: ReceiveSource) -> None:
        """Stops polling `source`."""
        if source in self._polled:
            self._polled.remove(source)

    @property
    def polled(self) -> bool:
        """True when a waiting thread should `poll` (a source is attached)."""
        return bool(self._polled)

    def flush_polled(self) -> None:
        """Lets every polled source send what it batched (before the caller blocks)."""
        for source in self._polled:
            source.flush()

    def poll(self, keys: Iterable[str]) -> bool:
        """Reads one batch from a polled source that still owes one of `keys` (blocking);
        False when none does (the values come through `send` from elsewhere).

        Raises:
          OpError: the source failed, or the step's deadline passed.
        """
        keys = list(keys)
        for source in self._polled:
            if source.wants(keys):
                source.poll()
                return True
        return False

    def recv_many_async(self, keys: list[str], callback: Callback) -> Any:
        """Calls `callback(values, None)` once every key arrived, or `callback(None, err)`
        on abort. Returns a handle for `cancel_waiter`."""
        w = _ManyWaiter(list(keys), callback)
        fire = False
        with self._lock:
            if self._error is not None:
                err = self._error
            else:
                err = None
                for key in dict.fromkeys(keys):
                    if key in self._values:
                        w.values[key] = self._values.pop(key)
                        w.missing -= 1
                    else:
                        self._waiters.setdefault(key, []).append(w)
                if w.missing == 0:
                    w.done = fire = True
        if err is not None:
            callback(None, err)
        elif fire:
            callback([w.values[k] for k in w.keys], None)
        return w

    def cancel_waiter(self, waiter: Any, error: errors.OpError) -> None:
        """Fails one waiter (e.g. its RPC was cancelled) without aborting the step."""
        with self._lock:
            if waiter.done:
                return
            waiter.done = True
            for key in waiter.keys:
                lst = self._waiters.get(key)
                if lst and waiter in lst:
                    lst.remove(waiter)
                    if not lst:
                        del self._waiters[key]
        waiter.callback(None, error)

    def abort(self, error: errors.OpError) -> None:
        """Fails every current and future waiter and send with `error`."""
        with self._lock:
            if self._error is not None:
                return
            self._error = error
            waiters = {id(w): w for lst in self._waiters.values() for w in lst}
            self._waiters.clear()
            self._values.clear()
        for w in waiters.values():
            if not w.done:
                w.done = True
                w.callback(None, error)

    def idle(self) -> bool:
        """True when nothing is stored and nobody waits."""
        with self._lock:
            return not self._values and not self._waiters


class RendezvousMgr:
    """Step id -> `StepRendezvous` for one worker.

    A table is created by whichever comes first: the step's local partition, or a peer's
    request for one of its tensors. It is dropped when the local partitions finished and
    it is idle, on `cleanup(step_id)`, or (abandoned steps) after `ttl_s` seconds.
    """

    def __init__(self, ttl_s: float = 600.0):
        self._lock = threading.Lock()
        self._steps: dict[int, StepRendezvous] = {}
        self._ttl_s = ttl_s
        self._created = 0

    def find_or_create(self, step_id: int) -> StepRendezvous:
        """The table of `step_id`, created if needed."""
        stale: list[StepRendezvous] = []
        with self._lock:
            rdv = self._steps.get(step_id)
            if rdv is None:
                rdv = self._steps[step_id] = StepRendezvous(step_id)
                self._created += 1
                if self._created % 256 == 0:
                    stale = self._pop_stale_locked()
        for r in stale:
            r.abort(derived(errors.AbortedError(None, None, f"Step {r.step_id} abandoned")))
        return rdv

    def begin_local(self, step_id: int) -> StepRendezvous:
        """Marks a local partition of `step_id` as running and returns its table."""
        with self._lock:
            rdv = self._steps.get(step_id)
            if rdv is None:
                rdv = self._steps[step_id] = StepRendezvous(step_id)
            rdv.local_runs += 1
            return rdv

    def end_local(self, step_id: int) -> None:
        """Marks a local partition done; drops the table if nothing is left in it."""
        with self._lock:
            rdv = self._steps.get(step_id)
            if rdv is None:
                return
            rdv.local_runs -= 1
            if rdv.local_runs <= 0:
                rdv.local_done = True
                if rdv.idle():
                    del self._steps[step_id]

    def maybe_release(self, step_id: int) -> None:
        """Drops the table if its local partitions are done and it is idle."""
        with self._lock:
            rdv = self._steps.get(step_id)
            if rdv is not None and rdv.local_done and rdv.idle():
                del self._steps[step_id]

    def cleanup(self, step_id: int, error: errors.OpError | None = None) -> None:
        """Aborts and drops the table of `step_id` (no-op if absent)."""
        with self._lock:
            rdv = self._steps.pop(step_id, None)
        if rdv is not None:
            rdv.abort(
                error
                or errors.AbortedError(
                    None, None, f"Step {step_id} cancelled. Cancelling rendezvous."
                )
            )

    def abort_all(self, error: errors.OpError) -> None:
        """Aborts every step (server shutdown)."""
        with self._lock:
            steps, self._steps = list(self._steps.values()), {}
        for rdv in steps:
            rdv.abort(error)

    def _pop_stale_locked(self) -> list[StepRendezvous]:
        now = time.monotonic()
        stale = [s for s, r in self._steps.items() if now - r.created_s > self._ttl_s]
        return [self._steps.pop(s) for s in stale]

    def __len__(self) -> int:
        with self._lock:
            return len(self._steps)
