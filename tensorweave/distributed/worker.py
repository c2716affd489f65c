"""The worker service of a task: sessions, registered partitions, step execution and tensor
transfer (follows TensorFlow's `Worker` / `GrpcWorker`).

Variables live in the device's resource manager, whose default container is the job name;
they are shared by every session of the task unless the session is isolated.
"""

from __future__ import annotations

import collections
import concurrent.futures
import itertools
import random
import threading
import time
from typing import Any

from tensorweave import errors
from tensorweave.distributed.graph_mgr import RegisteredGraph
from tensorweave.distributed.interfaces import Canceller, Done, RunGraphCall, RunGraphResult
from tensorweave.distributed.tensor_stash import TensorStash
from tensorweave.distributed.transfer_stats import STATS, nbytes
from tensorweave.distributed.transport import shm
from tensorweave.distributed.transport.step_stream import StreamPump
from tensorweave.framework.cancellation import CancellationManager
from tensorweave.framework.rendezvous import RendezvousMgr, parse_key
from tensorweave.framework.resource_mgr import ResourceMgr
from tensorweave.kernels.context import StepContext, rollback_undo_log
from tensorweave.runtime.executor import StepStatsCollector

# NOTE: a step's variable writes are kept this long so the master can roll back a step that
# failed on another task after succeeding here (best effort, bounded in bytes too).
_UNDO_KEEP_S = 10.0
_KEY_CACHE_SIZE = 4096
_UNDO_KEEP_BYTES = 256 << 20
_STASH_TTL_S = 120.0


class WorkerSession:
    """Per-session state on one worker."""

    def __init__(self, handle: str, resource_mgr: ResourceMgr, master_task: str):
        self.handle = handle
        self.resource_mgr = resource_mgr
        self.master_task = master_task
        self.graphs: dict[str, RegisteredGraph] = {}


class Worker:
    """The worker service of `/job:<job>/replica:0/task:<task>`.

    Args:
      job: the job name (also the default resource container).
      task: the task index.
      worker_cache: resolves peer task names to `WorkerInterface`s (set by the server).
    """

    def __init__(self, job: str, task: int, worker_cache: Any = None):
        self.job = job
        self.task = task
        self.task_name = f"/job:{job}/replica:0/task:{task}"
        self.device_name = f"{self.task_name}/device:CPU:0"
        self.incarnation = random.getrandbits(63) | 1
        self.resource_mgr = ResourceMgr(job)
        self.worker_cache = worker_cache
        self.file_sandbox: Any = None  # security: set by the server (framework.file_sandbox)
        self.rendezvous = RendezvousMgr()
        self._sessions: dict[str, WorkerSession] = {}
        self._lock = threading.Lock()
        self._graph_ids = itertools.count(1)
        self._undo: collections.OrderedDict[int, tuple[float, list, int]] = (
            collections.OrderedDict()
        )
        self._undo_bytes = 0
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=64, thread_name_prefix=f"worker-{job}-{task}"
        )
        self._stopped = False
        self.tensor_stash = TensorStash(self.task_name, ttl_s=_STASH_TTL_S)  # security: capped
        # NOTE: tensors handed to co-located peers as /dev/shm files that they have not
        # read yet (see transport.shm); unlinked after a TTL and on stop.
        self.shm_outbox = shm.Outbox()
        self._key_sources: dict[str, tuple[str, int]] = {}
        self._running: dict[int, list[CancellationManager]] = {}

    # ------------------------------------------------------------- sessions
    def get_status(self, timeout_s: float | None = None) -> list[Any]:
        """The `DeviceAttributes` of this task's CPU device."""
        from tensorweave.protos import device_attributes_pb2

        self._check_serving()
        return [device_attributes_pb2.DeviceAttributes(
            name=self.device_name, device_type="CPU", memory_limit=268435456,
            incarnation=self.incarnation,
        )]

    def create_worker_session(self, session_handle: str, server_def: Any = None,
                              isolate_session_state: bool = False,
                              master_task: str = "") -> None:
        """Creates a session; isolated sessions get a private resource manager."""
        self._check_serving()
        rm = ResourceMgr(self.job) if isolate_session_state else self.resource_mgr
        with self._lock:
            self._sessions[session_handle] = WorkerSession(session_handle, rm, master_task)

    def delete_worker_session(self, session_handle: str) -> None:
        """Drops a session (no-op when unknown)."""
        with self._lock:
            sess = self._sessions.pop(session_handle, None)
        if sess is not None and sess.resource_mgr is not self.resource_mgr:
            sess.resource_mgr.clear()

    def _check_serving(self) -> None:
        if self._stopped:
            raise errors.UnavailableError(
                None, None, f"{self.task_name} is unreachable: its server was stopped")

    def _session(self, handle: str) -> WorkerSession:
        self._check_serving()
        sess = self._sessions.get(handle)
        if sess is None:
            raise errors.AbortedError(
                None, None,
                f"Session handle is not found: {handle}. Possibly this worker "
                f"(\"{self.task_name}\") just restarted.",
            )
        return sess

    def register_graph(self, session_handle: str, graph_def: Any) -> str:
        """Builds the partition's plan and returns its handle.

        Raises:
          AbortedError: unknown session; NotFoundError/InvalidArgumentError: bad graph.
        """
        sess = self._session(session_handle)
        graph = RegisteredGraph(graph_def, self.device_name, self.task_name)
        handle = f"{next(self._graph_ids):016x}"
        with self._lock:
            sess.graphs[handle] = graph
        return handle

    def deregister_graph(self, session_handle: str, graph_handle: str) -> None:
        """Removes a partition.

        Raises:
          AbortedError: if the session or graph handle is unknown.
        """
        sess = self._session(session_handle)
        with self._lock:
            if sess.graphs.pop(graph_handle, None) is None:
                raise errors.AbortedError(
                    None, None, f"Graph handle is not found: {graph_handle}. Possibly, this "
                    "worker just restarted.",
                )

    def cleanup_all(self, containers: list[str], master_task: str = "") -> None:
        """Clears `containers` (the job's default container when empty) and drops the
        sessions created through `master_task` (follows `Session.reset`)."""
        for c in containers or [self.job]:
            self.resource_mgr.cleanup(c)
        if master_task:
            with self._lock:
                doomed = [h for h, s in self._sessions.items() if s.master_task == master_task]
            for h in doomed:
                self.delete_worker_session(h)

    # ---------------------------------------------------------------- steps
    def run_graph_async(self, call: RunGraphCall, done: Done) -> Canceller:
        """Runs `call` on a pool thread; see `run_graph`."""
        cancellation = call.cancellation or CancellationManager()
        call.cancellation = cancellation

        def work() -> None:
            try:
                result = self.run_graph(call)
            except errors.OpError as e:
                done(None, e)
            except Exception as e:  # noqa: BLE001  (report, never lose a step)
                done(None, errors.InternalError(None, None, f"{type(e).__name__}: {e}"))
            else:
                done(result, None)

        self._pool.submit(work)
        return cancellation.start_cancel

    def run_graph(self, call: RunGraphCall) -> RunGraphResult:
        """Runs one partition for one step in the calling thread.

        Raises:
          AbortedError: unknown session or graph handle (the worker restarted).
          OpError: the step's first error; its variable writes here are rolled back.
        """
        sess = self._session(call.session_handle)
        graph = sess.graphs.get(call.graph_handle)
        if graph is None:
            raise errors.AbortedError(
                None, None, f"Graph handle is not found: {call.graph_handle}. Possibly, this "
                f"worker (\"{self.task_name}\") just restarted.",
            )
        step_id = call.step_id
        cancellation = call.cancellation or CancellationManager()
        rdv = self.rendezvous.begin_local(step_id)
        deadline = time.monotonic() + call.timeout_s if call.timeout_s else None
        ctx = StepContext(sess.resource_mgr, step_id, rdv, cancellation, deadline,
                          self.device_name)
        ctx.file_sandbox = self.file_sandbox  # security: the server's file sandbox
        token = cancellation.register(rdv.abort)
        self._track(step_id, cancellation, True)
        pump = None
        try:
            if call.streams:
                pump = self._attach_streams(call, graph, rdv, ctx)
            for task, keys in graph.recv_groups:
                if not call.streams or task not in call.streams:
                    self._start_remote_recv(task, step_id, keys, rdv, ctx)
            feeds = [self._feed(call, rdv, k) for k in graph.feed_keys]
            stats = StepStatsCollector(self.device_name) if call.record_timeline else None
            values = graph.plan.run(ctx, feeds, stats)
            if pump is not None:
                pump.flush(final=True)  # NOTE: errors of the last sends belong to the step
        except errors.OpError as e:
            cancellation.start_cancel(e)
            self.rendezvous.cleanup(step_id, e)
            raise
        finally:
            if pump is not None:
                pump.close()
            cancellation.deregister(token)
            self._track(step_id, cancellation, False)
            self.rendezvous.end_local(step_id)
        if not call.single_partition:
            # NOTE: kept for a rollback the master may ask for (another partition failed);
            # a single-partition step has none, and old values of big variables would
            # otherwise stay alive for the whole window.
            self._remember_undo(step_id, ctx.undo_log)
        recvs = dict(zip(graph.fetch_keys, values))
        return RunGraphResult(
            {k: recvs[k] for k in call.recv_keys if k in recvs},
            stats.to_proto() if stats is not None else None,
        )

    def _attach_streams(self, call: RunGraphCall, graph: RegisteredGraph, rdv: Any,
                        ctx: StepContext) -> StreamPump:
        """The pump of the call's step streams: values to and from their tasks travel on
        them. A plan that waits in its own thread reads them itself (and batches its
        sends per peer); any other plan gets a reader on the pool."""
        inline = graph.plan.waits_in_own_thread(call.record_timeline)
        pump = StreamPump(rdv, ctx.cancellation, ctx.deadline, call.stream_server)
        for task, conn in call.streams.items():
            pump.attach(conn, task, graph.recv_keys.get(task, []),
                        graph.send_keys.get(task, []), batch=inline)
        if inline:
            ctx.pump = pump
        else:
            pump.start_background(self._pool)
        return pump

    def _feed(self, call: RunGraphCall, rdv: Any, key: str) -> Any:
        if key in call.sends:
            return call.sends[key]
        # NOTE: large feeds are pushed into the stash before RunGraph.
        return self.take_stashed(call.step_id, key)

    def stash(self, step_id: int, key: str, value: Any) -> None:
        """Keeps a large tensor until a stream pulls it (or for `_STASH_TTL_S` seconds).

        Raises:
          ResourceExhaustedError: the stash's byte cap would be exceeded.
        """
        self.tensor_stash.put(step_id, key, value)

    def check_push(self, session_handle: str, nbytes: int) -> None:
        """Admits a `PushTensorStream` of `nbytes` before its chunks are read.

        Raises:
          AbortedError: `session_handle` names no session of this worker.
          ResourceExhaustedError: the stash's byte cap would be exceeded.
        """
        self._session(session_handle)
        self.tensor_stash.reserve_check("PushTensorStream", nbytes)

    def take_stashed(self, step_id: int, key: str) -> Any:
        """Removes and returns a stashed tensor, or one this worker handed over as a shared
        memory file that its receiver could not read (the receiver's fallback).

        Raises:
          NotFoundError: if nothing is stashed under (step_id, key).
        """
        value = self.tensor_stash.take(step_id, key)
        if value is not None:
            return value
        msg = self.shm_outbox.take((step_id, key))
        if msg is not None:
            try:
                return shm.read(msg)
            except shm.ShmError as e:
                shm.unlink(msg)
                raise errors.DataLossError(
                    None, None, f"Tensor {key} of step {step_id} on {self.task_name} was "
                    f"lost: {e}") from None
        raise errors.NotFoundError(
            None, None, f"No tensor {key} of step {step_id} on {self.task_name}"
        )

    def _start_remote_recv(self, task: str, step_id: int, keys: list[str], rdv: Any,
                           ctx: StepContext) -> None:
        peer = self.worker_cache.get(task)

        def on_done(values: Any, error: Any) -> None:
            if error is not None:
                rdv.abort(error)
                ctx.cancellation.start_cancel(error)
                return
            if not isinstance(peer, Worker):
                STATS.add(received=nbytes(values))
            try:
                for k, v in zip(keys, values):
                    rdv.send(k, v)
            except errors.OpError:
                pass  # the step was aborted meanwhile

        cancel = peer.recv_tensors_async(step_id, keys, on_done, ctx.remaining_s())
        token = ctx.cancellation.register(cancel)
        if token is None:
            cancel(ctx.cancellation.error)

    def recv_tensors_async(self, step_id: int, keys: list[str], done: Done,
                           timeout_s: float | None = None) -> Canceller:
        """Serves a peer's (or client's) pull of `keys` for `step_id` (see
        `WorkerInterface`).

        Raises (through `done`):
          AbortedError: if a key names another incarnation of this worker (it restarted).
          UnavailableError: if this worker's server was stopped.
        """
        if self._stopped:
            done(None, errors.UnavailableError(
                None, None, f"{self.task_name} is unreachable: its server was stopped"))
            return lambda err: None
        for key in keys:
            src_device, incarnation = self._source_of(key)
            if src_device == self.device_name and incarnation != self.incarnation:
                done(None, errors.AbortedError(
                    None, None,
                    f"RecvTensor expects a different device incarnation: {incarnation} vs. "
                    f"{self.incarnation}. Your worker job (\"{self.task_name}\") was probably "
                    "restarted. Check your worker job for the reason why it was restarted.",
                ))
                return lambda err: None
        rdv = self.rendezvous.find_or_create(step_id)

        def deliver(values: Any, error: Any) -> None:
            self.rendezvous.maybe_release(step_id)
            if error is None:
                STATS.add(sent=nbytes(values))
            done(values, error)

        waiter = rdv.recv_many_async(keys, deliver)
        return lambda err: rdv.cancel_waiter(waiter, err or errors.CancelledError(
            None, None, "RecvTensor cancelled"))

    def _source_of(self, key: str) -> tuple[str, int]:
        """(src_device, src_incarnation) of a rendezvous key, cached: the keys of a
        registered graph repeat every step."""
        hit = self._key_sources.get(key)
        if hit is None:
            src_device, incarnation, _, _, _ = parse_key(key)
            if len(self._key_sources) >= _KEY_CACHE_SIZE:
                self._key_sources.clear()
            hit = self._key_sources[key] = (src_device, incarnation)
        return hit

    def _track(self, step_id: int, cancellation: CancellationManager, running: bool) -> None:
        with self._lock:
            if running:
                self._running.setdefault(step_id, []).append(cancellation)
            else:
                lst = self._running.get(step_id, [])
                if cancellation in lst:
                    lst.remove(cancellation)
                if not lst:
                    self._running.pop(step_id, None)

    def cleanup_graph(self, step_id: int, rollback: bool = False) -> None:
        """Cancels the step's running partitions here, drops its rendezvous, and with
        `rollback` restores the variables it wrote (the step failed elsewhere)."""
        error = errors.AbortedError(None, None, f"Step {step_id} was aborted by the master")
        with self._lock:
            running = list(self._running.get(step_id, []))
        for cancellation in running:
            cancellation.start_cancel(error)
        self.rendezvous.cleanup(step_id, error)
        if rollback:
            with self._lock:
                entry = self._undo.pop(step_id, None)
                if entry is not None:
                    self._undo_bytes -= entry[2]
            if entry is not None:
                rollback_undo_log(entry[1])

    def _remember_undo(self, step_id: int, undo_log: list) -> None:
        if not undo_log:
            return
        size = sum(getattr(old, "nbytes", 0) for _, old, _ in undo_log)
        now = time.monotonic()
        with self._lock:
            self._undo[step_id] = (now, undo_log, size)
            self._undo_bytes += size
            while self._undo and (
                self._undo_bytes > _UNDO_KEEP_BYTES or now - next(iter(self._undo.values()))[0]
                > _UNDO_KEEP_S
            ):
                _, (_, _, s) = self._undo.popitem(last=False)
                self._undo_bytes -= s

    def stop(self) -> None:
        """Cancels running steps, including those blocked in queues (server shutdown)."""
        self._stopped = True
        error = errors.UnavailableError(None, None, f"Worker {self.task_name} is shutting down")
        with self._lock:
            running = [c for lst in self._running.values() for c in lst]
        for cancellation in running:
            cancellation.start_cancel(error)
        self.rendezvous.abort_all(error)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.shm_outbox.close()

