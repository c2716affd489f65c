"""A master session: one client graph run across the tasks of a cluster (follows
TensorFlow's `MasterSession`).

Per run signature (feeds, fetches, targets) the graph is pruned, placed, partitioned by
task and each partition registered once with its worker (`RegisterGraph`). A step then
sends one `RunGraph` per partition concurrently (the partition on an in-process worker runs
in the calling thread), collects fetches, and on failure cancels the other partitions and
rolls back the variable writes of those that already succeeded.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import sys
import threading
import time
from typing import Any

from tensorweave import errors
from tensorweave.distributed.cluster_propagation import (
    isolates_state,
    propagated_cluster,
    renamed_devices,
    server_def_for,
    task_at,
)
from tensorweave.distributed.graph_mgr import task_of
from tensorweave.distributed.interfaces import (
    TENSORWEAVE_DEVICE_DESC,
    RunGraphCall,
    WorkerInterface,
)
from tensorweave.framework.cancellation import CancellationManager, is_derived
from tensorweave.framework.device_spec import CPU_MEMORY_LIMIT_BYTES, DeviceSpec
from tensorweave.runtime.direct_session import FULL_TRACE, step_deadline
from tensorweave.runtime.graph_partition import partition
from tensorweave.runtime.node_spec import NodeSpec
from tensorweave.runtime.placer import place, relocate_control_relays
from tensorweave.runtime.pruning import prune

log = logging.getLogger("tensorweave.master")
_WAIT_LOG_INTERVAL_S = 5.0
# NOTE: as `_Step.wait`: a partition's answer may come a little after the step deadline
# (it reports the deadline itself).
_STREAM_GRACE_S = 5.0
# NOTE: a crossing between two tasks other than the streaming master's costs a pull (a
# request, a handler parked until the value is there, the answer: ~3 stream frames' worth
# of CPU, measured with the digits trainer); see `placer.relocate_control_relays`.
_PULL_COST = 4


def filtered_tasks(tasks: list[str], device_filters: list[str], client_task: str) -> list[str]:
    """The tasks matching any of `device_filters` (all when empty), plus the client task."""
    if not device_filters:
        return list(tasks)
    specs = [DeviceSpec.from_string(f) for f in device_filters]
    chosen = []
    for t in tasks:
        d = DeviceSpec.from_string(t)
        if t == client_task or any(
            (s.job is None or s.job == d.job) and (s.task is None or s.task == d.task)
            and (s.replica is None or s.replica == d.replica)
            for s in specs
        ):
            chosen.append(t)
    return chosen


def find_devices(cache: Any, tasks: list[str], timeout_s: float | None) -> dict[str, list]:
    """`GetStatus` of every task, waiting for tasks that are not up yet and logging which
    one it waits for (TensorFlow's "CreateSession still waiting for response from worker").

    Raises:
      DeadlineExceededError: naming the missing tasks, when `timeout_s` passes.
    """
    deadline = time.monotonic() + timeout_s if timeout_s else None
    found: dict[str, list] = {}
    next_log = time.monotonic() + _WAIT_LOG_INTERVAL_S
    while len(found) < len(tasks):
        for task in tasks:
            if task in found:
                continue
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                missing = [t for t in tasks if t not in found]
                raise errors.DeadlineExceededError(
                    None, None,
                    f"Timed out after {timeout_s:.1f} s waiting for worker(s) "
                    f"{', '.join(missing)} to respond (operation_timeout_in_ms)",
                )
            slice_s = 1.0 if remaining is None else max(0.01, min(1.0, remaining))
            try:
                found[task] = cache.get(task).get_status(timeout_s=slice_s)
            except (errors.DeadlineExceededError, errors.UnavailableError):
                if time.monotonic() >= next_log:
                    log.warning("CreateSession still waiting for response from worker: %s", task)
                    next_log = time.monotonic() + _WAIT_LOG_INTERVAL_S
    return found


@dataclasses.dataclass
class _Part:
    task: str
    worker: WorkerInterface
    graph_handle: str
    feed_keys: dict[str, str]  # tensor -> key
    fetch_keys: dict[str, str]  # tensor -> key
    graph_def: Any


class MasterSession:
    """Runs one client graph on a cluster.

    Args:
      handle: the session handle (unique string).
      cache: `WorkerCache` of the cluster.
      client_task: the task whose CPU is the client end of feeds and fetches (the target).
      config: `ConfigProto` (device_filters, isolate_session_state, allow_soft_placement,
        operation_timeout_in_ms).
      devices: task -> `DeviceAttributes` list, from `find_devices`.
      owns_cache: close `cache` with the session (a session's own cluster, see
        `cluster_propagation`).
    """

    def __init__(self, handle: str, cache: Any, client_task: str, config: Any,
                 devices: dict[str, list], owns_cache: bool = False):
        self.handle = handle
        self._cache = cache
        self._client_task = client_task
        self._client_device = f"{client_task}/device:CPU:0"
        self._client_incarnation = random.getrandbits(63) | 1
        self._config = config
        self._soft = bool(config is not None and config.allow_soft_placement)
        self._streams = not (config is not None and config.tensorweave.disable_step_streams)
        # NOTE: named after the cache's tasks, as TensorFlow's `NewRemoteDevices` does.
        attrs = [d for task, lst in devices.items() for d in renamed_devices(task, lst)]
        self._devices = sorted(d.name for d in attrs)
        self._incarnations = {d.name: d.incarnation for d in attrs}
        # Devices of plain TensorFlow tasks: their feeds and fetches go through ours.
        self._relayed = frozenset(
            d.name for d in attrs if d.physical_device_desc != TENSORWEAVE_DEVICE_DESC)
        self._tasks = sorted(devices)
        self._nodes: dict[str, NodeSpec] = {}
        self._graphs: dict[Any, list[_Part]] = {}
        self._lock = threading.Lock()
        self._cancel = CancellationManager()
        # task -> successful multi-partition steps not reported to it yet (see `_committed`)
        self._ended: dict[str, list[int]] = {}
        self._owns_cache = owns_cache
        isolate = isolates_state(config, owns_cache)
        for task in self._tasks:
            server_def = server_def_for(cache.cluster, task) if owns_cache else None
            cache.get(task).create_worker_session(handle, server_def, isolate, client_task)

    @classmethod
    def create(cls, cache: Any, client_task: str, config: Any,
               timeout_s: float | None) -> MasterSession:
        """Waits for the tasks the session needs (all, or those matching
        `config.device_filters`), then creates worker sessions on them.

        Raises:
          DeadlineExceededError: if a task does not come up within `timeout_s`.
        """
        cluster = propagated_cluster(config)
        if cluster is not None:  # the session's own cluster: `client_task` is ours there
            client_task = task_at(cluster, cache.address(client_task))
            cache = cache.for_cluster(cluster)
        filters = list(config.device_filters) if config is not None else []
        tasks = filtered_tasks(cache.tasks(), filters, client_task)
        try:
            devices = find_devices(cache, tasks, timeout_s)
        except errors.OpError:
            if cluster is not None:
                cache.close()
            raise
        handle = f"{random.getrandbits(64):016x}"
        return cls(handle, cache, client_task, config, devices, cluster is not None)

    @property
    def devices(self) -> list[Any]:
        """`DeviceAttributes` known to this session."""
        from tensorweave.protos import device_attributes_pb2

        return [
            device_attributes_pb2.DeviceAttributes(
                name=n, device_type="CPU", memory_limit=CPU_MEMORY_LIMIT_BYTES,
                incarnation=self._incarnations[n])
            for n in self._devices
        ]

    @property
    def version(self) -> int:
        """Number of nodes received so far."""
        return len(self._nodes)

    def extend(self, nodes: list[NodeSpec]) -> int:
        """Adds nodes to the session's graph; returns the new version.

        Raises:
          InvalidArgumentError: if a node name already exists.
        """
        with self._lock:
            for n in nodes:
                if n.name in self._nodes:
                    raise errors.InvalidArgumentError(
                        None, None, f"Duplicate node name in graph: '{n.name}'")
            for n in nodes:
                self._nodes[n.name] = n
            return len(self._nodes)

    # -------------------------------------------------------------- building
    def _parts(self, feeds: list[str], fetches: list[str], targets: list[str]) -> list[_Part]:
        key = (tuple(feeds), tuple(fetches), tuple(targets))
        parts = self._graphs.get(key)
        if parts is None:
            with self._lock:
                parts = self._graphs.get(key)
                if parts is None:
                    parts = self._graphs[key] = self._build(feeds, fetches, targets)
        return parts

    def _build(self, feeds: list[str], fetches: list[str], targets: list[str]) -> list[_Part]:
        nodes = prune(self._nodes, set(feeds), fetches, targets)
        placement = place(nodes, self._devices, self._soft, all_nodes=self._nodes,
                          tensorflow_devices=self._relayed)
        # NOTE: without streams no crossing is cheap, and uniform costs rank as before.
        near = {d for d in self._devices if self._streams and self._streamable(task_of(d))}
        relocate_control_relays(nodes, placement, self._client_device, near, _PULL_COST)
        partitions = partition(nodes, placement, feeds, fetches, self._client_device,
                               self._client_incarnation, self._incarnations, self._nodes,
                               self._relayed)
        parts = []
        for device, p in sorted(partitions.items()):
            task = task_of(device)
            worker = self._cache.get(task)
            graph_def = p.graph_def()
            handle = worker.register_graph(self.handle, graph_def)
            parts.append(_Part(task, worker, handle, p.feed_keys, p.fetch_keys, graph_def))
        return parts

    def _streamable(self, task: str) -> bool:
        """True when steps stream values between the client task and `task`'s partitions
        (a same-host task with a local socket; see `transport.step_stream`)."""
        if task == self._client_task:
            return False
        return self._cache.get(task).streaming is not None

    # --------------------------------------------------------------- running
    def run(self, feeds: dict[str, Any], fetches: list[str], targets: list[str],
            options: Any = None, run_metadata: Any = None) -> list[Any]:
        """Runs one step; returns the fetched values in `fetches` order.

        Raises:
          OpError: the root-cause error of the step (others are cancelled and rolled back).
        """
        unique = list(dict.fromkeys(f for f in fetches if f not in feeds))
        parts = self._parts(sorted(feeds), unique, sorted(set(targets)))
        trace = options is not None and options.trace_level >= FULL_TRACE
        deadline = step_deadline(options, self._config)
        results = self._execute(parts, feeds, trace, deadline) if parts else {}
        values: dict[str, Any] = {}
        for part in parts:
            recvs = results[part.task].recvs
            for tensor, key in part.fetch_keys.items():
                values[tensor] = recvs[key]
        if run_metadata is not None:
            self._fill_metadata(parts, results, trace, options, run_metadata)
        return [feeds[f] if f in feeds else values[f] for f in fetches]

    def _execute(self, parts: list[_Part], feeds: dict[str, Any], trace: bool,
                 deadline: float | None) -> dict[str, Any]:
        """Runs one step: every partition but one started (streamed or on worker
        threads), one run in this thread (`_inline_part`), then the answers collected.
        A failed step is rolled back on the partitions that succeeded; a successful
        multi-partition step is committed with the next call to each task."""
        step_id = random.getrandbits(56) | 1
        step = _Step(len(parts))
        token = self._cancel.register(step.cancellation.start_cancel)
        if token is None:
            raise self._cancel.error
        streamed: list[tuple[_Part, Any]] = []
        try:
            if len(parts) == 1:
                inline = parts[0]
            else:
                inline = self._inline_part(parts)
                streamed = self._start_parts(parts, inline, feeds, step_id, trace, deadline,
                                             step)
            call = self._call(inline, feeds, step_id, trace, deadline, step)
            if streamed:
                call.streams = {p.task: run.conn for p, run in streamed}
            if not inline.worker.in_process:
                step.cancellation.register(
                    lambda err, w=inline.worker: w.cleanup_graph(step_id))
            self._collect(step, inline, call, streamed, deadline)
        finally:
            for _, run in streamed:
                run.abandon()  # NOTE: a no-op once finished (an interrupted step: closed)
            self._cancel.deregister(token)
        if step.errors:
            self._abort(parts, step, step_id)
        if len(parts) > 1:
            with self._lock:
                for part in parts:
                    self._ended.setdefault(part.task, []).append(step_id)
        return step.results

    @staticmethod
    def _collect(step: _Step, inline: _Part, call: RunGraphCall,
                 streamed: list[tuple[_Part, Any]], deadline: float | None) -> None:
        """Runs the inline partition, then reads the streamed partitions' answers and
        waits for the others."""
        try:
            result = inline.worker.run_graph(call)
        except errors.OpError as e:
            step.done(inline, None, e)
        else:
            step.done(inline, result, None)
        if streamed:
            finish_by = None if deadline is None else deadline + _STREAM_GRACE_S
            for part, run in streamed:
                try:
                    result = run.finish(finish_by)
                except errors.OpError as e:
                    step.done(part, None, e)
                else:
                    step.done(part, result, None)
        step.wait(deadline)

    def _committed(self, task: str) -> list[int] | None:
        """The ended steps to report to `task` with its next `RunGraph` (its workers then
        drop their undo logs: the commit rides on the next call, no message of its own)."""
        if not self._ended.get(task):
            return None
        with self._lock:
            return self._ended.pop(task, None)

    def _start_parts(self, parts: list[_Part], inline: _Part, feeds: dict[str, Any],
                     step_id: int, trace: bool, deadline: float | None,
                     step: _Step) -> list[tuple[_Part, Any]]:
        """Starts every partition but `inline`: as a same-host streamed `RunGraph` where it
        applies (the inline partition runs on this process's worker; see
        `transport.step_stream`), else on a worker thread. Returns the streamed ones."""
        streamed = []
        stream_to = inline.task if self._streams and inline.worker.in_process else None
        for part in parts:
            if part is inline:
                continue
            call = self._call(part, feeds, step_id, trace, deadline, step)
            streaming = part.worker.streaming if stream_to else None
            run = streaming.start_streamed(call, stream_to) if streaming is not None else None
            if run is not None:
                streamed.append((part, run))
                cancel = lambda err, w=part.worker: w.cleanup_graph(step_id)  # noqa: E731
            else:
                cancel = part.worker.run_graph_async(call, step.done_fn(part))
            step.cancellation.register(cancel)
        return streamed

    def _call(self, part: _Part, feeds: dict[str, Any], step_id: int, trace: bool,
              deadline: float | None, step: _Step) -> RunGraphCall:
        sends = {key: feeds[t] for t, key in part.feed_keys.items()}
        single = step.size == 1
        if single:
            cancellation = step.cancellation
        else:
            cancellation = CancellationManager()
            step.cancellation.register(cancellation.start_cancel)
        timeout = None if deadline is None else max(deadline - time.monotonic(), 0.001)
        return RunGraphCall(self.handle, part.graph_handle, step_id, sends,
                            list(part.fetch_keys.values()), trace, timeout, cancellation,
                            single_partition=single, committed=self._committed(part.task))

    def _inline_part(self, parts: list[_Part]) -> _Part:
        """The partition run in the calling thread: the client's own in-process task if
        any, else another in-process one, else a remote one (a blocking RPC)."""
        local = [p for p in parts if p.worker.in_process]
        for p in local:
            if p.task == self._client_task:
                return p
        return local[0] if local else parts[0]

    def _abort(self, parts: list[_Part], step: _Step, step_id: int) -> None:
        """Rolls back the partitions that succeeded (and stops the others), then raises
        the step's root error. A one-partition step has nothing to undo elsewhere."""
        for part in parts if len(parts) > 1 else ():
            ok = part.task in step.results
            try:
                part.worker.cleanup_graph(step_id, rollback=ok)
            except errors.OpError:
                pass  # that task is gone; nothing to undo there
        raise step.root_error()

    def _fill_metadata(self, parts: list[_Part], results: dict[str, Any], trace: bool,
                       options: Any, run_metadata: Any) -> None:
        if trace:
            from tensorweave.protos import step_stats_pb2

            stats = [results[p.task].step_stats for p in parts]
            if not any(p.task == self._client_task for p in parts):
                src = step_stats_pb2.DeviceStepStats(device=self._client_device)
                now = int(time.time() * 1e6)
                src.node_stats.add(node_name="_SOURCE", all_start_micros=now,
                                   timeline_label="_SOURCE = NoOp()")
                stats.insert(0, src)
            stats.sort(key=lambda s: s.device != self._client_device)
            for s in stats:
                if s is not None:
                    run_metadata.step_stats.dev_stats.add().CopyFrom(s)
        if options is not None and options.output_partition_graphs:
            for p in parts:
                run_metadata.partition_graphs.add().CopyFrom(p.graph_def)

    def close(self) -> None:
        """Cancels running steps and frees worker state (in the background: a dead task
        must not block `close`)."""
        self._cancel.start_cancel(errors.CancelledError(
            None, None, "Step was cancelled by an explicit call to `Session::Close()`."))
        with self._lock:
            registered = [p for parts in self._graphs.values() for p in parts]
            self._graphs.clear()
        if sys.is_finalizing():
            return  # NOTE: no new threads at interpreter exit; the tasks drop the state later
        threading.Thread(target=self._release, args=(registered,), daemon=True).start()

    def _release(self, registered: list[_Part]) -> None:
        for p in registered:
            try:
                p.worker.deregister_graph(self.handle, p.graph_handle)
            except errors.OpError:
                pass
        for task in self._tasks:
            try:
                self._cache.get(task).delete_worker_session(self.handle)
            except errors.OpError:
                pass
        if self._owns_cache:
            self._cache.close()


class _Step:
    """Completion bookkeeping of one distributed step."""

    __slots__ = ("size", "cancellation", "results", "errors", "_pending", "_lock", "_event")

    def __init__(self, n: int):
        self.size = n
        self.cancellation = CancellationManager()
        self.results: dict[str, Any] = {}
        self.errors: list[errors.OpError] = []
        self._pending = n
        self._lock = threading.Lock()
        # NOTE: made only when `wait` has to block (a one-partition step never does).
        self._event: threading.Event | None = None

    def done(self, part: _Part, result: Any, error: Any) -> None:
        """Records a partition's outcome (`result`, or `error`, which cancels the step)."""
        with self._lock:
            if error is not None:
                self.errors.append(error)
            else:
                self.results[part.task] = result
            self._pending -= 1
            event = self._event if self._pending == 0 else None
        if error is not None:
            self.cancellation.start_cancel(error)
        if event is not None:
            event.set()

    def done_fn(self, part: _Part) -> Any:
        """`done` for one partition, as a `Done` callback."""
        return lambda result, error: self.done(part, result, error)

    def wait(self, deadline: float | None) -> None:
        """Blocks until every partition reported (or the deadline plus a grace passed)."""
        if self._pending == 0:
            return  # NOTE: final once 0 (a one-partition step ends in the calling thread)
        with self._lock:
            if self._pending == 0:
                return
            self._event = event = threading.Event()
        timeout = None if deadline is None else max(deadline - time.monotonic(), 0) + 5.0
        if not event.wait(timeout):
            err = errors.DeadlineExceededError(None, None, "Timed out waiting for the step")
            with self._lock:
                self.errors.append(err)
            self.cancellation.start_cancel(err)
            event.wait(5.0)

    def root_error(self) -> errors.OpError:
        """The first error that is not a consequence of cancelling the step (errors created
        by a cancellation are marked so where they are made: `cancellation.derived`)."""
        for e in self.errors:
            if not is_derived(e):
                return e
        return self.cancellation.error or self.errors[0]
