"""The worker service of a task: sessions, registered partitions, step execution and tensor
transfer (follows TensorFlow's `Worker` / `GrpcWorker`).

Variables live in the device's resource manager, whose default container is the job name;
they are shared by every session of the task unless the session is isolated.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import random
import threading
import time
from typing import Any

from tensorweave import errors
from tensorweave.distributed.cluster_propagation import session_identity
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.graph_mgr import RegisteredGraph, task_of
from tensorweave.distributed.interfaces import (
    TENSORWEAVE_DEVICE_DESC,
    Canceller,
    Done,
    RunGraphCall,
    RunGraphResult,
    StepStreamPump,
    WorkerTransfers,
)
from tensorweave.framework import cancellation as cancellation_lib
from tensorweave.framework.cancellation import CancellationManager
from tensorweave.framework.device_spec import CPU_MEMORY_LIMIT_BYTES
from tensorweave.framework.rendezvous import RendezvousMgr, parse_key
from tensorweave.framework.resource_mgr import ResourceMgr
from tensorweave.kernels.context import StepContext, rollback_undo_log
from tensorweave.runtime.executor import StepStatsCollector

_KEY_CACHE_SIZE = 4096
UNDO_LOG_CAP_BYTES = 256 << 20


class WorkerSession:
    """Per-session state on one worker."""

    def __init__(self, handle: str, resource_mgr: ResourceMgr, master_task: str,
                 task_name: str, worker_cache: Any = None, own_cache: bool = False):
        self.handle = handle
        self.resource_mgr = resource_mgr
        self.master_task = master_task
        self.graphs: dict[str, RegisteredGraph] = {}
        # The name the worker has in this session (another one under ClusterSpec
        # propagation), and the cache that reaches the session's peers.
        self.task_name = task_name
        self.device_name = f"{task_name}/device:CPU:0"
        self.worker_cache = worker_cache
        self.own_cache = own_cache


class Worker:
    """The worker service of `/job:<job>/replica:0/task:<task>`.

    Args:
      job: the job name (also the default resource container).
      task: the task index.
      worker_cache: resolves peer task names to `WorkerInterface`s (set by the server).
      transfers: the transport-owned state the server gives it (`WorkerTransfers`: stash of
        large tensors, /dev/shm outbox, step stream pumps); None for a worker that only
        in-process callers reach.
      undo_log_cap_bytes: the most bytes of old variable values this worker keeps for the
        rollback of multi-partition steps the master has not ended yet; a step that would
        exceed it fails with `ResourceExhaustedError` (its writes here undone).

    A multi-partition step's undo log lives until the master ends the step: committed by
    a later `RunGraphCall.committed` (or the session's deletion), or rolled back by
    `cleanup_graph(step_id, rollback=True)`.
    """

    in_process = True
    streaming = None

    def __init__(self, job: str, task: int, worker_cache: Any = None,
                 transfers: WorkerTransfers | None = None,
                 undo_log_cap_bytes: int = UNDO_LOG_CAP_BYTES):
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
        # step id -> (session handle, undo log, bytes of old values it keeps alive)
        self._undo: dict[int, tuple[str, list, int]] = {}
        self._undo_bytes = 0
        self._undo_cap = undo_log_cap_bytes
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=64, thread_name_prefix=f"worker-{job}-{task}"
        )
        self._stopped = False
        self.transfers = transfers
        self._key_sources: dict[str, tuple[str, int]] = {}
        self._running: dict[int, list[CancellationManager]] = {}

    # ------------------------------------------------------------- sessions
    def get_status(self, timeout_s: float | None = None) -> list[Any]:
        """The `DeviceAttributes` of this task's CPU device."""
        from tensorweave.protos import device_attributes_pb2

        self._check_serving()
        return [device_attributes_pb2.DeviceAttributes(
            name=self.device_name, device_type="CPU", memory_limit=CPU_MEMORY_LIMIT_BYTES,
            incarnation=self.incarnation, physical_device_desc=TENSORWEAVE_DEVICE_DESC,
        )]

    def create_worker_session(self, session_handle: str, server_def: Any = None,
                              isolate_session_state: bool = False,
                              master_task: str = "") -> None:
        """Creates a session; isolated sessions get a private resource manager. A
        `server_def` naming another task or cluster than this worker's makes it that task
        of that cluster for the session (ClusterSpec propagation)."""
        self._check_serving()
        rm = ResourceMgr(self.job) if isolate_session_state else self.resource_mgr
        cache, own_cache = self.worker_cache, False
        if server_def is not None and server_def.cluster.job and cache is not None:
            cluster = ClusterSpec(server_def.cluster)
            if cluster != cache.cluster:
                cache, own_cache = cache.for_cluster(cluster), True
        task = session_identity(server_def, self.task_name) or self.task_name
        sess = WorkerSession(session_handle, rm, master_task, task, cache, own_cache)
        with self._lock:
            old = self._sessions.get(session_handle)
            self._sessions[session_handle] = sess
        if old is not None and old.own_cache:
            old.worker_cache.close()

    def delete_worker_session(self, session_handle: str) -> None:
        """Drops a session (no-op when unknown)."""
        with self._lock:
            sess = self._sessions.pop(session_handle, None)
            for step_id in [s for s, entry in self._undo.items() if entry[0] == session_handle]:
                self._undo_bytes -= self._undo.pop(step_id)[2]
        if sess is not None and sess.resource_mgr is not self.resource_mgr:
            sess.resource_mgr.clear()
        if sess is not None and sess.own_cache:
            sess.worker_cache.close()

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
        graph = RegisteredGraph(graph_def, sess.device_name, sess.task_name)
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
        if call.committed:
            self._commit(call.committed)
        cancellation = call.cancellation or CancellationManager()
        rdv = self.rendezvous.begin_local(step_id)
        deadline = time.monotonic() + call.timeout_s if call.timeout_s else None
        ctx = StepContext(sess.resource_mgr, step_id, rdv, cancellation, deadline,
                          sess.device_name)
        ctx.file_sandbox = self.file_sandbox  # security: the server's file sandbox
        token = cancellation.register(rdv.abort)
        self._track(step_id, cancellation, True)
        pump = None
        try:
            if call.streams:
                pump = self._attach_streams(call, graph, rdv, ctx)
            for task, keys in graph.recv_groups:
                if not call.streams or task not in call.streams:
                    self._start_remote_recv(sess.worker_cache, task, step_id, keys, rdv, ctx)
            if graph.in_frame_recvs:
                ctx.fetch_remote = self._remote_fetcher(sess, step_id, rdv, ctx)
            feeds = [self._feed(call, k) for k in graph.feed_keys]
            stats = StepStatsCollector(sess.device_name) if call.record_timeline else None
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
            # a single-partition step has none.
            self._remember_undo(step_id, call.session_handle, ctx.undo_log)
        recvs = dict(zip(graph.fetch_keys, values))
        return RunGraphResult(
            {k: recvs[k] for k in call.recv_keys if k in recvs},
            stats.to_proto() if stats is not None else None,
        )

    def _attach_streams(self, call: RunGraphCall, graph: RegisteredGraph, rdv: Any,
                        ctx: StepContext) -> StepStreamPump:
        """The pump of the call's step streams: values to and from their tasks travel on
        them. A plan that waits in its own thread reads them itself (and batches its
        sends per peer); any other plan gets a reader on the pool.

        Raises:
          UnimplementedError: this worker was given no transport that streams.
        """
        if self.transfers is None or self.transfers.open_pump is None:
            raise errors.UnimplementedError(
                None, None, f"{self.task_name} has no transport for step streams")
        inline = graph.plan.waits_in_own_thread(call.record_timeline)
        pump = self.transfers.open_pump(rdv, ctx.cancellation, ctx.deadline,
                                        call.stream_server)
        for task, conn in call.streams.items():
            pump.attach(conn, task, graph.recv_keys.get(task, []),
                        graph.send_keys.get(task, []), batch=inline)
        if inline:
            pump.poll_in_waiting_thread()
        else:
            pump.start_background(self._pool)
        return pump

    def check_push(self, session_handle: str, nbytes: int) -> None:
        """Admits a `PushTensorStream` of `nbytes` before its chunks are read (security:
        only callers with a session of this worker may stash, within the stash's cap).

        Raises:
          AbortedError: `session_handle` names no session of this worker.
          ResourceExhaustedError: the transport's stash would exceed its byte cap.
        """
        self._session(session_handle)
        if self.transfers is not None:
            self.transfers.stash.reserve_check("PushTensorStream", nbytes)

    def _feed(self, call: RunGraphCall, key: str) -> Any:
        """A feed of `call`: in the call, or (large feeds) pushed into the transport's
        stash before it.

        Raises:
          NotFoundError: if it is in neither.
        """
        if key in call.sends:
            return call.sends[key]
        value = self.transfers.stash.take(call.step_id, key) if self.transfers else None
        if value is None:
            raise errors.NotFoundError(
                None, None, f"No tensor {key} of step {call.step_id} on {self.task_name}")
        return value

    def _remote_fetcher(self, sess: WorkerSession, step_id: int, rdv: Any,
                        ctx: StepContext) -> Any:
        """`StepContext.fetch_remote` of a step: pulls one key from its sender's task
        (a receive inside a loop frame, its key known once its iteration runs)."""
        local = sess.task_name

        def fetch(key: str, send_device: str) -> None:
            task = task_of(send_device)
            if task != local:
                self._start_remote_recv(sess.worker_cache, task, step_id, [key], rdv, ctx)

        return fetch

    def _start_remote_recv(self, cache: Any, task: str, step_id: int, keys: list[str],
                           rdv: Any, ctx: StepContext) -> None:
        peer = cache.get(task)

        def on_done(values: Any, error: Any) -> None:
            if error is not None:
                rdv.abort(error)
                ctx.cancellation.start_cancel(error)
                return
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
        """Cancels the step's running partitions here and drops its rendezvous; with
        `rollback` the step has ended in failure: restores the variables it wrote and drops
        its undo log. Without, the undo log stays for the master's verdict."""
        with self._lock:
            running = list(self._running.get(step_id, []))
        error = cancellation_lib.derived(
            errors.AbortedError(None, None, f"Step {step_id} was aborted by the master"))
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

    def _commit(self, step_ids: list[int]) -> None:
        """Drops the undo logs of steps the master ended successfully."""
        with self._lock:
            for step_id in step_ids:
                entry = self._undo.pop(step_id, None)
                if entry is not None:
                    self._undo_bytes -= entry[2]

    def _remember_undo(self, step_id: int, session_handle: str, undo_log: list) -> None:
        """Keeps a step's undo log until the master ends the step.

        Raises:
          ResourceExhaustedError: keeping it would exceed `undo_log_cap_bytes`; the step's
            writes here are undone first (the master rolls back the other partitions).
        """
        if not undo_log:
            return
        size = sum(getattr(old, "nbytes", 0) for _, old, _ in undo_log)
        with self._lock:
            kept = self._undo_bytes + size <= self._undo_cap
            if kept:
                self._undo[step_id] = (session_handle, undo_log, size)
                self._undo_bytes += size
        if not kept:
            rollback_undo_log(undo_log)
            raise errors.ResourceExhaustedError(
                None, None,
                f"{self.task_name} cannot keep the undo log of step {step_id} ({size} bytes): "
                f"{self._undo_bytes} bytes of other steps the master has not ended yet "
                f"already use its cap of {self._undo_cap} bytes; the step was rolled back")

    def close(self) -> None:
        """Nothing to release for an in-process caller (the server stops the worker)."""

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
        if self.transfers is not None:
            self.transfers.close()

