"""The executor: runs one partition's plan, a precomputed topological list of kernel calls
with resolved input slots (in the spirit of JAX's `eval_jaxpr`).

Dead entries (their outputs unused, free of side effects: Grappler's dependency optimizer
makes them NoOps) are never run. Two ways to run one plan:
* plans of synchronous kernels (the hot path of local training) are compiled once into a
  straight-line Python function (`StraightLine`): one statement per kernel call, values in
  local variables, each deleted after its last use. Entries that cannot do anything are
  folded away there: `NoOp`s (the topological order already honours their control edges),
  `Identity`/`StopGradient` of a value (an alias of their input), `Const`s (their value
  is bound once) and stateless ops of constants (computed once, as Grappler's constant
  folding does);
* a ready-queue loop for plans with asynchronous kernels (`_Recv`, blocking queue ops) or
  when tracing: it runs every other entry, one ready op at a time while an asynchronous
  one waits, and honours the step's cancellation and deadline; traces report every node.

Values that come out of variables are `Var` references until a consumer that takes a value
reads them ("deref"), as TensorFlow's ref tensors.
"""

from __future__ import annotations

import collections
import queue
import threading
import time
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.kernels.context import StepContext
from tensorweave.kernels.registry import KernelNode, lookup_builder
from tensorweave.runtime.node_spec import NodeSpec, split_tensor_name
from tensorweave.runtime.plan_entry import (
    NO_DEREF,
    Done,
    Entry,
    gather_deref,
    read,
    wrap_error,
)
from tensorweave.runtime.straight_line import PlanStep, StraightLine


class StepStatsCollector:
    """Collects per-node timings of one partition run (for `RunOptions.FULL_TRACE`)."""

    def __init__(self, device: str):
        self.device = device
        self.nodes: list[tuple[str, str, int, int, int, str]] = []

    def add(self, name: str, op: str, start_us: int, end_us: int, thread_id: int, label: str):
        """Records one node execution (times in microseconds since the epoch)."""
        self.nodes.append((name, op, start_us, end_us, thread_id, label))

    def to_proto(self) -> Any:
        """A `DeviceStepStats` proto; the first entry is `_SOURCE`, as TensorFlow's."""
        from tensorweave.protos import step_stats_pb2

        dev = step_stats_pb2.DeviceStepStats(device=self.device)
        for name, op, start, end, tid, label in self.nodes:
            ns = dev.node_stats.add(
                node_name=name, all_start_micros=start, op_start_rel_micros=0,
                op_end_rel_micros=end - start, all_end_rel_micros=end - start,
                timeline_label=label or f"{name} = {op}()", thread_id=tid,
            )
            ns.all_start_nanos = start * 1000
            ns.op_end_rel_nanos = ns.all_end_rel_nanos = (end - start) * 1000
        return dev


def _now_us() -> int:
    return time.time_ns() // 1000


class Plan:
    """An executable partition: nodes in topological order with resolved slots.

    Args:
      nodes: the pruned, placed nodes of one device.
      feeds: tensor names whose values are passed to `run` (in this order).
      fetches: tensor names whose values `run` returns (in this order).
      device: the full device name the kernels run on.

    Raises:
      NotFoundError: if an op has no CPU kernel.
      InvalidArgumentError: if an input names a node outside the plan, or the graph has a
        cycle.
    """

    def __init__(self, nodes: list[NodeSpec], feeds: list[str], fetches: list[str], device: str):
        self.device = device
        self.feeds = list(feeds)
        self.fetches = list(fetches)
        slot_of: dict[str, int] = {name: i for i, name in enumerate(self.feeds)}
        order = _topological_order(nodes, slot_of)
        self._num_slots = len(self.feeds)
        self._entries: list[Entry] = []
        index_of: dict[str, int] = {}
        for node in order:
            base = self._num_slots
            outs = node.output_dtypes
            for i in range(len(outs)):
                slot_of.setdefault(f"{node.name}:{i}", base + i)
            self._num_slots += len(outs)
            index_of[node.name] = len(self._entries)
            self._entries.append(self._make_entry(node, slot_of, base, len(outs)))
        self._ref_slots = {s for e in self._entries for s in _ref_slots(e)}
        self._fetch = []
        for name in self.fetches:
            if name not in slot_of:
                raise errors.InvalidArgumentError(None, None, f"Fetch {name} is not in the plan")
            self._fetch.append(slot_of[name])
        self._build_schedule(index_of)
        self._has_async = any(e.is_async for e in self._entries)
        self._trim_derefs()
        self._mark_dead()
        self._straight = None
        if not self._has_async:
            self._straight = StraightLine(self._entries, len(self.feeds), self._fetch,
                                           self._ref_slots)
        elif all(e.node.op == "_Recv" and isinstance(e.node.attrs.get("_recv_batch"), int)
                 for e in self._entries if e.is_async):
            entries, levels = self._staged_order(index_of)
            self._straight = StraightLine(entries, len(self.feeds), self._fetch,
                                           self._ref_slots, levels, device)

    # --------------------------------------------------------------- building
    def _make_entry(self, node: NodeSpec, slot_of: dict[str, int], base: int, nout: int):
        try:
            builder = lookup_builder(node.op, "CPU")
        except LookupError:
            raise errors.NotFoundError(
                None, None,
                f"No registered '{node.op}' OpKernel for CPU devices compatible with node "
                f"{{{{node {node.name}}}}}",
            ) from None
        data = node.data_inputs()
        ins = []
        for src, idx in data:
            key = f"{src}:{idx}"
            if key not in slot_of:
                raise errors.InvalidArgumentError(
                    None, None, f"Node {node.name}: input {key} is not produced in this plan"
                )
            ins.append(slot_of[key])
        refs = node.ref_inputs
        kn = KernelNode(
            node.name, node.op, node.attrs, self.device,
            tuple(_input_dtypes(node)), tuple(node.output_dtypes),
        )
        try:
            fn = builder(kn)
        except errors.OpError as e:
            raise errors.with_node(e, node.name) from None
        except (ValueError, TypeError, KeyError) as e:
            raise errors.InvalidArgumentError(
                None, None, f"{e}\n\t [[{{{{node {node.name}}}}}]]"
            ) from e
        # NOTE: a ref input and a resource handle (whose value is a `Var` too) stay unread.
        deref = tuple(
            k for k in range(len(ins))
            if not (k < len(refs) and refs[k]) and kn.input_dtypes[k:k + 1] != (_RESOURCE,)
        )
        entry = Entry(node, fn, tuple(ins), base, nout, deref)
        entry.label = _timeline_label(node)
        return entry

    def _build_schedule(self, index_of: dict[str, int]) -> None:
        n = len(self._entries)
        self._consumers: list[list[int]] = [[] for _ in range(n)]
        self._pending = [0] * n
        for i, e in enumerate(self._entries):
            preds = set()
            for src, _ in e.node.data_inputs():
                if src in index_of:
                    preds.add(index_of[src])
            for src in e.node.control_inputs():
                if src in index_of:
                    preds.add(index_of[src])
            self._pending[i] = len(preds)
            for p in preds:
                self._consumers[p].append(i)
        self._roots = [i for i in range(n) if self._pending[i] == 0]

    def _staged_order(self, index_of: dict[str, int]) -> tuple[list[Entry], list[int]]:
        """The entries ordered by level, and their levels, for a plan whose only
        asynchronous kernels are `_Recv`s (see `StraightLine`).

        Level of an entry: 0 without a `_Recv` among its ancestors, else one more than the
        largest `_recv_batch` among them (a `_Recv` of batch b itself: b + 1). Running
        every level-L entry before waiting for the `_Recv`s of batch L cannot deadlock: a
        batch-L value depends only on sends of this partition whose level is below L
        (a send's level is at most its crossing count, which is below its consumer's
        batch; see `graph_partition`).
        """
        levels = [0] * len(self._entries)
        for i, e in enumerate(self._entries):
            if e.is_async:
                levels[i] = e.node.attrs["_recv_batch"] + 1
                continue
            preds = [index_of[src] for src, _ in e.node.data_inputs() if src in index_of]
            preds += [index_of[src] for src in e.node.control_inputs() if src in index_of]
            levels[i] = max((levels[p] for p in preds), default=0)
        order = sorted(range(len(self._entries)), key=lambda i: (levels[i], i))
        return [self._entries[i] for i in order], [levels[i] for i in order]

    def _trim_derefs(self) -> None:
        # NOTE: only slots produced as refs can hold a `Var`; an entry that reads none of
        # them takes its inputs as they are.
        for e in self._entries:
            if not any(e.ins[k] in self._ref_slots for k in e.deref):
                e.deref = NO_DEREF

    # NOTE: stateless ops that must still run (as in Grappler): a placeholder fails when
    # not fed, CheckNumerics exists for its error.
    _KEEP_OPS = frozenset({"Placeholder", "CheckNumerics"})

    def _mark_dead(self) -> None:
        """Marks the entries that are not run: unused and free of side effects.

        Their outputs no fetch or live entry uses, and they do nothing else (Grappler's
        dependency optimizer turns them into NoOps): typically the gradient of an input
        that is not trained, there only because `GATE_OP` gating depends on it. Traces
        still list them.

        Free of effects (Grappler's `IsFreeOfSideEffect`): stateless, synchronous, with
        outputs, no ref or resource input, no variable read (which may fail), not a queue
        op, a placeholder or CheckNumerics.
        """
        used = set(self._fetch)
        for e in reversed(self._entries):
            node = e.node
            e.dead = bool(
                e.nout
                and not any(e.out + j in used for j in range(e.nout))
                and not e.is_async
                and node.op_def is not None
                and not node.is_stateful
                and node.op not in self._KEEP_OPS
                and "Queue" not in node.op
                and not any(node.ref_inputs)
                and not any(e.ins[k] in self._ref_slots for k in e.deref)
                and not any(t.base_dtype == dtypes.resource for t in _input_dtypes(node))
            )
            if not e.dead:
                used.update(e.ins)

    # ---------------------------------------------------------------- running
    @property
    def node_names(self) -> list[str]:
        """Names of the nodes, in execution order."""
        return [e.node.name for e in self._entries]

    def steps(self) -> list[PlanStep]:
        """What an untraced step runs, as data: the compiled statements of a straight-line
        plan (folded entries absent), else one "kernel" step per live entry in order."""
        if self._straight is not None:
            return list(self._straight.steps)
        return [PlanStep("kernel", (e.node.name,)) for e in self._entries if not e.dead]

    def waits_in_own_thread(self, traced: bool) -> bool:
        """True when `run` waits for its receives in the calling thread, through
        `Receives.wait` (a straight-line plan, untraced): it can then poll the step
        rendezvous's receive sources itself (`StepRendezvous.poll`)."""
        return self._straight is not None and not traced

    def run(self, ctx: StepContext, feeds: list[Any], stats: StepStatsCollector | None = None):
        """Runs one step; returns the fetched values (refs read) in `fetches` order.

        Raises:
          OpError: the first kernel error, with the failing node named; variables written
            by this run are rolled back first.
        """
        straight = self._straight is not None and stats is None
        try:
            if straight:
                return self._straight.run(ctx, feeds)
            vals = self._run_dynamic(ctx, feeds, stats)
            return [read(vals[s]) for s in self._fetch]
        except BaseException as e:
            # NOTE: the step is cancelled so that waits still in flight (receives, queue
            # ops) end; a straight-line plan of synchronous kernels has none.
            if self._has_async or not straight:
                ctx.cancellation.start_cancel(
                    e if isinstance(e, errors.OpError)
                    else errors.CancelledError(None, None, str(e)))
            ctx.rollback()
            raise

    def _run_dynamic(self, ctx: StepContext, feeds: list[Any], stats: Any) -> list[Any]:
        vals: list[Any] = [None] * self._num_slots
        vals[: len(feeds)] = feeds
        pending = list(self._pending)
        ready = collections.deque(self._roots)
        completions: queue.SimpleQueue = queue.SimpleQueue()
        remaining = len(self._entries)
        waiting: set[int] = set()
        token = ctx.cancellation.register(lambda err: completions.put((-1, None, err, 0)))
        tid = threading.get_ident() & 0xFFFF
        try:
            with np.errstate(all="ignore"):
                if token is None:
                    ctx.cancellation.check()
                if stats is not None:
                    t = _now_us()
                    stats.add("_SOURCE", "NoOp", t, t, tid, "_SOURCE = NoOp()")
                while remaining:
                    while ready:
                        i = ready.popleft()
                        entry = self._entries[i]
                        if entry.dead:
                            if stats is not None:
                                t = _now_us()
                                stats.add(entry.node.name, entry.node.op, t, t, tid, entry.label)
                            remaining -= 1
                            self._release(i, pending, ready)
                            continue
                        args = gather_deref(vals, entry)
                        if entry.is_async:
                            start = _now_us()
                            waiting.add(i)
                            entry.fn.start(ctx, args, Done(completions, i, start))
                            continue
                        start = _now_us() if stats is not None else 0
                        try:
                            r = entry.fn(ctx, *args)
                        except Exception as e:
                            raise wrap_error(e, entry.node) from e
                        if stats is not None:
                            stats.add(entry.node.name, entry.node.op, start, _now_us(), tid,
                                      entry.label)
                        self._store(vals, entry, r)
                        remaining -= 1
                        self._release(i, pending, ready)
                    if not remaining:
                        break
                    i, r, err, start = self._wait(ctx, completions, waiting)
                    waiting.discard(i)
                    entry = self._entries[i]
                    if err is not None:
                        raise wrap_error(err, entry.node) from err
                    if stats is not None:
                        stats.add(entry.node.name, entry.node.op, start, _now_us(), tid,
                                  entry.label)
                    self._store(vals, entry, r)
                    remaining -= 1
                    self._release(i, pending, ready)
        finally:
            ctx.cancellation.deregister(token)
        return vals

    def _wait(self, ctx: StepContext, completions: queue.SimpleQueue, waiting: set[int]):
        timeout = ctx.remaining_s()
        try:
            item = completions.get(timeout=max(timeout, 0.0) if timeout is not None else None)
        except queue.Empty:
            names = sorted(self._entries[i].node.name for i in waiting)
            raise errors.DeadlineExceededError(
                None, None,
                f"Timed out waiting for {', '.join(names) or 'the step'} on {self.device}",
            ) from None
        if item[0] == -1:
            raise item[2]
        return item

    @staticmethod
    def _store(vals: list[Any], entry: Entry, r: Any) -> None:
        if entry.nout == 1:
            vals[entry.out] = r
        elif entry.nout:
            vals[entry.out : entry.out + entry.nout] = r

    def _release(self, i: int, pending: list[int], ready: collections.deque) -> None:
        for c in self._consumers[i]:
            pending[c] -= 1
            if pending[c] == 0:
                ready.append(c)


def _ref_slots(entry: Entry) -> list[int]:
    return [entry.out + i for i, t in enumerate(entry.node.output_dtypes) if t._is_ref_dtype]


def _timeline_label(node: NodeSpec) -> str:
    # NOTE: TensorFlow's format; the timeline pairs `_Send`/`_Recv` by these labels.
    if node.op == "_Send":
        return f"{node.name} = _Send({node.attrs['tensor_name']} @{node.attrs['recv_device']})"
    if node.op == "_Recv":
        return f"{node.name} = _Recv({node.attrs['tensor_name']} @{node.attrs['send_device']})"
    inputs = ", ".join(n for n in node.inputs if not n.startswith("^"))
    return f"{node.name} = {node.op}({inputs})"


_RESOURCE = dtypes.resource


def _input_dtypes(node: NodeSpec) -> list[Any]:
    return node.op_def.input_dtypes(node.attrs) if node.op_def is not None else []


def _topological_order(nodes: list[NodeSpec], fed: dict[str, int]) -> list[NodeSpec]:
    by_name = {n.name: n for n in nodes}
    indegree = {n.name: 0 for n in nodes}
    consumers: dict[str, list[str]] = collections.defaultdict(list)
    for n in nodes:
        preds = set()
        for src, idx in n.data_inputs():
            if f"{src}:{idx}" in fed:
                continue
            preds.add(src)
        preds.update(n.control_inputs())
        for p in preds:
            if p not in by_name:
                raise errors.InvalidArgumentError(
                    None, None, f"Node {n.name} has input {p}, which is not in the plan"
                )
            indegree[n.name] += 1
            consumers[p].append(n.name)
    ready = collections.deque(n.name for n in nodes if indegree[n.name] == 0)
    order = []
    while ready:
        name = ready.popleft()
        order.append(by_name[name])
        for c in consumers[name]:
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
    if len(order) != len(nodes):
        stuck = sorted(k for k, v in indegree.items() if v > 0)[:5]
        raise errors.InvalidArgumentError(None, None, f"Graph has a cycle through {stuck}")
    return order


def tensor_of(name: str) -> tuple[str, int]:
    """Splits a tensor name (re-exported for the session layers)."""
    return split_tensor_name(name)
