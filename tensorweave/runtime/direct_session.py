"""The in-process session backend: prune -> place -> plan, cached per run signature
(follows TensorFlow's `DirectSession`). Each DirectSession owns its device and therefore its
variables: two local sessions never share state."""

from __future__ import annotations

import itertools
import random
import threading
import time
from typing import Any

from tensorweave import errors
from tensorweave.framework.cancellation import CancellationManager
from tensorweave.framework.device_spec import CPU_MEMORY_LIMIT_BYTES
from tensorweave.framework.file_sandbox import sandbox_from_options
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.resource_mgr import ResourceMgr
from tensorweave.kernels.context import StepContext
from tensorweave.runtime.executor import Plan, StepStatsCollector
from tensorweave.runtime.frame_executor import frame_plan
from tensorweave.runtime.node_spec import NodeSpec
from tensorweave.runtime.placer import place
from tensorweave.runtime.pruning import prune

LOCAL_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
FULL_TRACE = 3


def step_deadline(options: Any, config: Any) -> float | None:
    """The monotonic deadline of a step from `RunOptions.timeout_in_ms`, else
    `ConfigProto.operation_timeout_in_ms`, else None."""
    ms = options.timeout_in_ms if options is not None and options.timeout_in_ms > 0 else 0
    if not ms and config is not None and config.operation_timeout_in_ms > 0:
        ms = config.operation_timeout_in_ms
    return time.monotonic() + ms / 1000.0 if ms else None


class _CachedPlan:
    __slots__ = ("plan", "feed_order")

    def __init__(self, plan: Plan, feed_order: list[int] | None):
        self.plan = plan
        self.feed_order = feed_order


class DirectSession:
    """Runs a Python `Graph` on this process's CPU device."""

    def __init__(self, graph: Any, config: Any = None):
        self._graph = graph
        self._config = config
        self.device_name = LOCAL_DEVICE
        self.incarnation = random.getrandbits(63) | 1
        self.resource_mgr = ResourceMgr("localhost")
        self._plans: dict[Any, _CachedPlan] = {}
        self._lock = threading.Lock()
        self._cancel = CancellationManager()
        self._step_ids = itertools.count(1)
        self._soft = bool(config is not None and config.allow_soft_placement)
        self._file_sandbox = sandbox_from_options(
            config.tensorweave.security if config is not None else None, server=False)

    def list_devices(self) -> list[tuple[str, str, int, int]]:
        """(name, device_type, memory_limit_bytes, incarnation) of the local CPU."""
        return [(self.device_name, "CPU", CPU_MEMORY_LIMIT_BYTES, self.incarnation)]

    def close(self) -> None:
        """Cancels running steps with CancelledError; later runs are refused by the client."""
        self._cancel.start_cancel(errors.CancelledError(
            None, None, "Step was cancelled by an explicit call to `Session::Close()`."
        ))

    def run(self, feeds: list[Tensor], feed_values: list[Any], fetches: list[Tensor],
            targets: list[Operation], options: Any = None, run_metadata: Any = None) -> list[Any]:
        """Runs one step; returns the fetched values (refs read, not yet user-safe copies).

        Raises:
          OpError: from a kernel, placement, a missing feed, cancellation or the deadline.
        """
        # NOTE: ids are positive, so -1 separates the three groups unambiguously.
        key = (*map(id, feeds), -1, *map(id, fetches), -1, *map(id, targets))
        cached = self._plans.get(key)
        if cached is None:
            cached = self._build(key, feeds, fetches, targets)
        order = cached.feed_order
        values = feed_values if order is None else [feed_values[i] for i in order]
        ctx = StepContext(
            self.resource_mgr, next(self._step_ids), None, CancellationManager(),
            step_deadline(options, self._config), self.device_name,
        )
        ctx.file_sandbox = self._file_sandbox
        token = self._cancel.register(ctx.cancellation.start_cancel)
        if token is None:
            raise self._cancel.error or errors.CancelledError(None, None, "Session closed")
        try:
            trace = options is not None and options.trace_level >= FULL_TRACE
            stats = StepStatsCollector(self.device_name) if trace else None
            result = cached.plan.run(ctx, values, stats)
        finally:
            self._cancel.deregister(token)
        if run_metadata is not None and options is not None:
            self._fill_metadata(cached.plan, stats, options, run_metadata)
        return result

    def _fill_metadata(self, plan: Plan, stats: Any, options: Any, run_metadata: Any) -> None:
        if stats is not None:
            run_metadata.step_stats.dev_stats.add().CopyFrom(stats.to_proto())
        if options.output_partition_graphs:
            from tensorweave.protos import graph_pb2

            gd = graph_pb2.GraphDef()
            gd.node.extend(e.node.to_node_def() for e in plan._entries)
            run_metadata.partition_graphs.add().CopyFrom(gd)

    def _build(self, key: Any, feeds: list[Tensor], fetches: list[Tensor],
               targets: list[Operation]) -> _CachedPlan:
        with self._lock:
            cached = self._plans.get(key)
            if cached is not None:
                return cached
            specs = {op.name: NodeSpec.from_operation(op) for op in self._graph.get_operations()}
            feed_names = [t.name for t in feeds]
            unique_feeds = list(dict.fromkeys(feed_names))
            fetch_names = [t.name for t in fetches]
            nodes = prune(specs, set(unique_feeds), fetch_names, [op.name for op in targets])
            devices = place(nodes, [self.device_name], self._soft)
            nodes = [n.copy(device=devices[n.name]) for n in nodes]
            plan = frame_plan(nodes, unique_feeds, fetch_names, self.device_name)
            order: list[int] | None = [feed_names.index(name) for name in unique_feeds]
            if order == list(range(len(feed_names))):
                order = None  # the values are passed as they come
            cached = _CachedPlan(plan, order)
            self._plans[key] = cached
            return cached
