"""The executor: runs one partition's plan, a precomputed topological list of kernel calls
with resolved input slots (in the spirit of JAX's `eval_jaxpr`).

Dead entries (their outputs unused, free of side effects: Grappler's dependency optimizer
makes them NoOps) are never run. Two ways to run one plan:
* plans of synchronous kernels (the hot path of local training) are compiled once into a
  straight-line Python function (`_StraightLine`): one statement per kernel call, values in
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
from tensorweave.framework.resource_mgr import ResourceMgr, Var, freeze
from tensorweave.kernels.context import StepContext
from tensorweave.kernels.registry import AsyncKernel, KernelNode, lookup_builder
from tensorweave.runtime.node_spec import NodeSpec, split_tensor_name

_NO_DEREF = ()


class _Entry:
    __slots__ = ("node", "fn", "ins", "out", "nout", "deref", "is_async", "label", "dead")

    def __init__(self, node: NodeSpec, fn: Any, ins: tuple[int, ...], out: int, nout: int,
                 deref: tuple[int, ...]):
        self.node = node
        self.fn = fn
        self.ins = ins
        self.out = out
        self.nout = nout
        self.deref = deref
        self.is_async = isinstance(fn, AsyncKernel)
        self.label = ""
        self.dead = False


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
        self._entries: list[_Entry] = []
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
            self._straight = _StraightLine(self._entries, len(self.feeds), self._fetch,
                                           self._ref_slots)
        elif all(e.node.op == "_Recv" and isinstance(e.node.attrs.get("_recv_batch"), int)
                 for e in self._entries if e.is_async):
            entries, levels = self._staged_order(index_of)
            self._straight = _StraightLine(entries, len(self.feeds), self._fetch,
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
        deref = tuple(k for k in range(len(ins)) if not (k < len(refs) and refs[k]))
        entry = _Entry(node, fn, tuple(ins), base, nout, deref)
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

    def _staged_order(self, index_of: dict[str, int]) -> tuple[list[_Entry], list[int]]:
        """The entries ordered by level, and their levels, for a plan whose only
        asynchronous kernels are `_Recv`s (see `_StraightLine`).

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
                e.deref = _NO_DEREF

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

    def run(self, ctx: StepContext, feeds: list[Any], stats: StepStatsCollector | None = None):
        """Runs one step; returns the fetched values (refs read) in `fetches` order.

        Raises:
          OpError: the first kernel error, with the failing node named; variables written
            by this run are rolled back first.
        """
        try:
            if self._straight is not None and stats is None:
                if not self._has_async:
                    return self._straight.run(ctx, feeds)
                try:
                    return self._straight.run(ctx, feeds)
                except BaseException as e:
                    ctx.cancellation.start_cancel(
                        e if isinstance(e, errors.OpError)
                        else errors.CancelledError(None, None, str(e)))
                    raise
            vals = self._run_dynamic(ctx, feeds, stats)
            return [_read(vals[s]) for s in self._fetch]
        except BaseException:
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
                        args = _gather_deref(vals, entry)
                        if entry.is_async:
                            start = _now_us()
                            waiting.add(i)
                            entry.fn.start(ctx, args, _Done(completions, i, start))
                            continue
                        start = _now_us() if stats is not None else 0
                        try:
                            r = entry.fn(ctx, *args)
                        except Exception as e:
                            raise _wrap_error(e, entry.node) from e
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
                        raise _wrap_error(err, entry.node) from err
                    if stats is not None:
                        stats.add(entry.node.name, entry.node.op, start, _now_us(), tid,
                                  entry.label)
                    self._store(vals, entry, r)
                    remaining -= 1
                    self._release(i, pending, ready)
        except BaseException as e:
            ctx.cancellation.start_cancel(
                e if isinstance(e, errors.OpError) else errors.CancelledError(None, None, str(e))
            )
            raise
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
    def _store(vals: list[Any], entry: _Entry, r: Any) -> None:
        if entry.nout == 1:
            vals[entry.out] = r
        elif entry.nout:
            vals[entry.out : entry.out + entry.nout] = r

    def _release(self, i: int, pending: list[int], ready: collections.deque) -> None:
        for c in self._consumers[i]:
            pending[c] -= 1
            if pending[c] == 0:
                ready.append(c)


class _StraightLine:
    """A plan of synchronous kernels (and `_Recv`s) compiled to one Python function.

    The generated function (`run(ctx, feeds) -> fetched values`) has one line per kernel
    call, `s<slot> = k<entry>(ctx, s<a>, _read(s<b>), c<slot>)`, in topological order:
    values live in local variables and are deleted right after their last use (fetched
    ones are kept), refs are read where a consumer takes a value, constants are globals
    bound once. Folded away, since running them could not fail or change anything:
    * `NoOp` (control edges are already honoured by the order),
    * `Identity`/`StopGradient` of a value that is not a ref (its consumers use the input's
      variable, as the kernel returns its input unchanged); one of a ref becomes `_read`,
    * a stateless op whose inputs are all constants and whose kernel succeeds on them: its
      (read-only) result becomes a constant. One that fails stays, to fail when it runs.
    * dead entries (see `Plan._mark_dead`).
    A kernel error is attributed to its node through the line it was raised on.

    With `levels` (a partition whose only asynchronous kernels are `_Recv`s, ordered by
    `Plan._staged_order`), every `_Recv` is started when the step starts and the function
    waits for those of batch L (`_Recvs.wait`, honouring the step's deadline and
    cancellation) right before its first level-(L+1) line, and for any left at the end.
    """

    # NOTE: the kernels of these ops return their (non-ref) input unchanged.
    _ALIAS_OPS = frozenset({"Identity", "StopGradient"})
    # Folded results larger than this stay computed per step (as Grappler's limit).
    _FOLD_MAX_BYTES = 1 << 20

    def __init__(self, entries: list[_Entry], num_feeds: int, fetch: list[int],
                 ref_slots: set[int], levels: list[int] | None = None, device: str = ""):
        name: dict[int, str] = {}  # slot -> expression naming its value
        env: dict[str, Any] = {"_read": _read}
        calls: list[tuple[int, _Entry, list[str]]] = []
        self._device = device
        self._recvs: list[tuple[int, _Entry]] = []  # (position, entry) of each `_Recv`
        level_of: dict[int, int] = {}
        for i in range(num_feeds):
            name[i] = f"s{i}"
        for i, e in enumerate(entries):
            op = e.node.op
            if levels is not None:
                level_of[i] = levels[i]
            if e.is_async:
                self._recvs.append((i, e))
                name[e.out] = f"s{e.out}"
                continue
            if e.dead or (op == "NoOp" and not e.nout):
                continue
            args = [
                f"_read({name[s]})" if k in e.deref and s in ref_slots else name[s]
                for k, s in enumerate(e.ins)
            ]
            if op in self._ALIAS_OPS and e.nout == 1 and len(args) == 1:
                if e.ins[0] in ref_slots:
                    # A read of a variable: its own statement, at its place in the order.
                    calls.append((i, e, args))
                    name[e.out] = f"s{e.out}"
                else:
                    name[e.out] = args[0]
                continue
            if op == "Const" and e.nout == 1 and not e.ins:
                env[f"c{e.out}"] = e.fn(None)
                name[e.out] = f"c{e.out}"
                continue
            if e.ins and all(a.startswith("c") for a in args) and e.nout == 1:
                value = self._fold(e, [env[a] for a in args])
                if value is not None:
                    env[f"c{e.out}"] = value
                    name[e.out] = f"c{e.out}"
                    continue
            for j in range(e.nout):
                name[e.out + j] = f"s{e.out + j}"
            env[f"k{i}"] = e.fn
            calls.append((i, e, args))
        fetched = [name[s] for s in fetch]
        kept = set(fetched)
        waits = self._wait_points(calls, level_of)
        last_use: dict[str, int] = {}
        for n, (_, _, args) in enumerate(calls):
            for a in args:
                last_use[a.removeprefix("_read(").removesuffix(")")] = n
        used = set(last_use) | kept

        def target(slot: int) -> str:
            return name[slot] if name[slot] in used else "_"

        lines = ["def run(ctx, feeds, _w):"]
        if num_feeds:
            lines.append("    " + "".join(target(i) + ", " for i in range(num_feeds)) + "= feeds")
        frees: dict[int, list[str]] = collections.defaultdict(list)
        for a, n in last_use.items():
            if a not in kept and a.startswith("s"):
                frees[n].append(a)
        self._line_entry: dict[int, _Entry] = {}

        def wait_line(group: list[tuple[int, _Entry]]) -> str:
            outs = "".join(target(e.out) + ", " for _, e in group)
            return f"    {outs}= _w.wait(({''.join(f'{i}, ' for i, _ in group)}))"

        for n, (i, e, args) in enumerate(calls):
            for group in waits.get(n, ()):
                lines.append(wait_line(group))
            if e.node.op in self._ALIAS_OPS:
                call = args[0]
            else:
                call = f"k{i}(" + ", ".join(["ctx", *args]) + ")"
            outs = [target(e.out + j) for j in range(e.nout)]
            if not outs or outs == ["_"]:
                lines.append(f"    {call}")
            else:
                lines.append(f"    {', '.join(outs)}{',' if len(outs) > 1 else ''} = {call}")
            self._line_entry[len(lines)] = e
            if frees[n]:
                lines.append(f"    del {', '.join(sorted(frees[n]))}")
        for group in waits.get(len(calls), ()):
            lines.append(wait_line(group))
        lines.append(f"    return [{', '.join(_read_expr(f, ref_slots) for f in fetched)}]")
        self.source = "\n".join(lines) + "\n"
        self._code = compile(self.source, "<tensorweave plan>", "exec")
        exec(self._code, env)  # noqa: S102  (source generated above from slot numbers)
        self._fn = env["run"]

    def _wait_points(self, calls: list[tuple[int, _Entry, list[str]]],
                     level_of: dict[int, int]) -> dict[int, list[list[tuple[int, _Entry]]]]:
        """Call index -> the `_Recv` groups (by batch) to wait for right before it; index
        `len(calls)`: those still to wait for at the end."""
        by_batch: dict[int, list[tuple[int, _Entry]]] = collections.defaultdict(list)
        for i, e in self._recvs:
            by_batch[level_of[i] - 1].append((i, e))
        pending = sorted(by_batch)
        waits: dict[int, list[list[tuple[int, _Entry]]]] = collections.defaultdict(list)
        for n, (i, _, _) in enumerate(calls):
            while pending and pending[0] < level_of.get(i, 0):
                waits[n].append(by_batch[pending.pop(0)])
        waits[len(calls)].extend(by_batch[b] for b in pending)
        return waits

    @classmethod
    def _fold(cls, e: _Entry, args: list[Any]) -> Any:
        """The value of stateless `e` on constant `args`, or None when it must run."""
        if e.is_async or e.node.is_stateful or e.node.op_def is None:
            return None
        ctx = StepContext(ResourceMgr("constant_folding"))
        try:
            with np.errstate(all="ignore"):
                value = e.fn(ctx, *args)
        except Exception:  # noqa: BLE001  (it fails again, with its node named, when run)
            return None
        if ctx.undo_log:
            return None
        if type(value) is np.ndarray:
            return freeze(value) if value.nbytes <= cls._FOLD_MAX_BYTES else None
        return value if isinstance(value, np.generic) else None

    def run(self, ctx: StepContext, feeds: list[Any]) -> list[Any]:
        """Runs the step; returns the fetched values (refs read).

        Raises:
          OpError: the first kernel error, with the failing node named.
        """
        recvs = _Recvs(ctx, self._recvs, self._device) if self._recvs else None
        try:
            with np.errstate(all="ignore"):
                return self._fn(ctx, feeds, recvs)
        except Exception as e:
            node = self._failed_node(e)
            if node is None and isinstance(e, errors.OpError):
                raise  # NOTE: from a wait: already names its node, or is the step's own
            raise _wrap_error(e, node) from e
        finally:
            if recvs is not None:
                recvs.close()

    def _failed_node(self, e: BaseException) -> NodeSpec | None:
        code = self._fn.__code__
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code is not code:
            tb = tb.tb_next
        entry = self._line_entry.get(tb.tb_lineno) if tb is not None else None
        return entry.node if entry is not None else None


class _Recvs:
    """The `_Recv`s of one straight-line step: all started at once, awaited by batch."""

    def __init__(self, ctx: StepContext, recvs: list[tuple[int, _Entry]], device: str):
        self._ctx = ctx
        self._device = device
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._got: dict[int, Any] = {}
        self._nodes = {i: e.node for i, e in recvs}
        self._token = ctx.cancellation.register(lambda err: self._q.put((-1, None, err, 0)))
        if self._token is None:
            ctx.cancellation.check()
        for i, e in recvs:
            e.fn.start(ctx, [], _Done(self._q, i, 0))

    def wait(self, ids: tuple[int, ...]) -> tuple[Any, ...]:
        """The values of the `_Recv`s at positions `ids`, once all arrived.

        Raises:
          OpError: a receive's error (naming its node), the step's cancellation, or
            DeadlineExceededError when the step's deadline passes first.
        """
        got = self._got
        while any(i not in got for i in ids):
            timeout = self._ctx.remaining_s()
            try:
                i, r, err, _ = self._q.get(
                    timeout=max(timeout, 0.0) if timeout is not None else None)
            except queue.Empty:
                names = sorted(self._nodes[i].name for i in ids if i not in got)
                raise errors.DeadlineExceededError(
                    None, None, f"Timed out waiting for {', '.join(names)} on {self._device}",
                ) from None
            if i == -1:
                raise err
            if err is not None:
                raise _wrap_error(err, self._nodes[i]) from err
            got[i] = r
        return tuple(got.pop(i) for i in ids)

    def close(self) -> None:
        """Stops listening to the step's cancellation."""
        if self._token is not None:
            self._ctx.cancellation.deregister(self._token)


class _Done:
    """The completion callback handed to an `AsyncKernel`."""

    __slots__ = ("_q", "_i", "_start", "_called")

    def __init__(self, q: queue.SimpleQueue, i: int, start: int):
        self._q, self._i, self._start, self._called = q, i, start, False

    def __call__(self, outputs: Any = None, error: BaseException | None = None) -> None:
        if self._called:
            return
        self._called = True
        self._q.put((self._i, outputs, error, self._start))


def _gather_deref(vals: list[Any], entry: _Entry) -> list[Any]:
    args = [vals[s] for s in entry.ins]
    for k in entry.deref:
        a = args[k]
        if type(a) is Var:
            args[k] = a.read()
    return args


def _read(value: Any) -> Any:
    return value.read() if type(value) is Var else value


def _read_expr(expr: str, ref_slots: set[int]) -> str:
    # A fetched ref slot is read; aliases and constants are never refs.
    if expr.startswith("s") and int(expr[1:]) in ref_slots:
        return f"_read({expr})"
    return expr


def _ref_slots(entry: _Entry) -> list[int]:
    return [entry.out + i for i, t in enumerate(entry.node.output_dtypes) if t._is_ref_dtype]


def _timeline_label(node: NodeSpec) -> str:
    # NOTE: TensorFlow's format; the timeline pairs `_Send`/`_Recv` by these labels.
    if node.op == "_Send":
        return f"{node.name} = _Send({node.attrs['tensor_name']} @{node.attrs['recv_device']})"
    if node.op == "_Recv":
        return f"{node.name} = _Recv({node.attrs['tensor_name']} @{node.attrs['send_device']})"
    inputs = ", ".join(n for n in node.inputs if not n.startswith("^"))
    return f"{node.name} = {node.op}({inputs})"


def _input_dtypes(node: NodeSpec) -> list[Any]:
    return node.op_def.input_dtypes(node.attrs) if node.op_def is not None else []


def _wrap_error(e: BaseException, node: NodeSpec | None) -> errors.OpError:
    name = node.name if node is not None else "<unknown>"
    if isinstance(e, errors.OpError):
        return errors.with_node(e, name)
    if isinstance(e, ValueError | IndexError | TypeError | ZeroDivisionError | OverflowError):
        cls: type[errors.OpError] = errors.InvalidArgumentError
    elif isinstance(e, MemoryError):
        cls = errors.ResourceExhaustedError
    else:
        cls = errors.UnknownError
    op = node.op if node is not None else "?"
    return cls(None, None, f"{op}: {e}\n\t [[{{{{node {name}}}}}]]")


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
