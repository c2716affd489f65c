"""Plans compiled to straight-line Python (see `executor`): `StraightLine`, and `Receives`
for partitions whose only asynchronous kernels are `_Recv`s."""

from __future__ import annotations

import collections
import dataclasses
import queue
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.file_sandbox import NO_FILES
from tensorweave.framework.resource_mgr import ResourceMgr, freeze
from tensorweave.kernels.context import StepContext
from tensorweave.runtime.node_spec import NodeSpec
from tensorweave.runtime.plan_entry import (
    Done,
    Entry,
    assignment,
    raising_line,
    read,
    read_expr,
    wrap_error,
)


@dataclasses.dataclass(frozen=True)
class PlanStep:
    """One statement of a compiled plan, as data (for tests and debugging).

    `kind` is "kernel" (a kernel call), "read" (a variable read) or "wait" (waiting for a
    group of `_Recv`s); `nodes` names the node(s); `frees` the slots whose values are
    dropped right after it (their last use).
    """

    kind: str
    nodes: tuple[str, ...]
    frees: tuple[int, ...] = ()


class StraightLine:
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
    waits for those of batch L (`Receives.wait`, honouring the step's deadline and
    cancellation) right before its first level-(L+1) line, and for any left at the end.
    """

    # NOTE: the kernels of these ops return their (non-ref) input unchanged.
    _ALIAS_OPS = frozenset({"Identity", "StopGradient"})
    # Folded results larger than this stay computed per step (as Grappler's limit).
    _FOLD_MAX_BYTES = 1 << 20

    def __init__(self, entries: list[Entry], num_feeds: int, fetch: list[int],
                 ref_slots: set[int], levels: list[int] | None = None, device: str = ""):
        name: dict[int, str] = {}  # slot -> expression naming its value
        env: dict[str, Any] = {"_read": read}
        calls: list[tuple[int, Entry, list[str]]] = []
        self._device = device
        self._recvs: list[tuple[int, Entry]] = []  # (position, entry) of each `_Recv`
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
        self._line_entry: dict[int, Entry] = {}
        self.steps: list[PlanStep] = []

        def wait_line(group: list[tuple[int, Entry]]) -> str:
            self.steps.append(PlanStep("wait", tuple(e.node.name for _, e in group)))
            outs = "".join(target(e.out) + ", " for _, e in group)
            return f"    {outs}= _w.wait(({''.join(f'{i}, ' for i, _ in group)}))"

        for n, (i, e, args) in enumerate(calls):
            for group in waits.get(n, ()):
                lines.append(wait_line(group))
            freed = tuple(sorted(int(a[1:]) for a in frees[n]))
            kind = "read" if e.node.op in self._ALIAS_OPS else "kernel"
            self.steps.append(PlanStep(kind, (e.node.name,), freed))
            if e.node.op in self._ALIAS_OPS:
                call = args[0]
            else:
                call = f"k{i}(" + ", ".join(["ctx", *args]) + ")"
            outs = [target(e.out + j) for j in range(e.nout)]
            lines.append(f"    {assignment([] if outs == ['_'] else outs, call)}")
            self._line_entry[len(lines)] = e
            if frees[n]:
                lines.append(f"    del {', '.join(sorted(frees[n]))}")
        for group in waits.get(len(calls), ()):
            lines.append(wait_line(group))
        lines.append(f"    return [{', '.join(read_expr(f, ref_slots) for f in fetched)}]")
        self.source = "\n".join(lines) + "\n"
        self._code = compile(self.source, "<tensorweave plan>", "exec")
        exec(self._code, env)  # noqa: S102  (source generated above from slot numbers)
        self._fn = env["run"]

    def _wait_points(self, calls: list[tuple[int, Entry, list[str]]],
                     level_of: dict[int, int]) -> dict[int, list[list[tuple[int, Entry]]]]:
        """Call index -> the `_Recv` groups (by batch) to wait for right before it; index
        `len(calls)`: those still to wait for at the end."""
        by_batch: dict[int, list[tuple[int, Entry]]] = collections.defaultdict(list)
        for i, e in self._recvs:
            by_batch[level_of[i] - 1].append((i, e))
        pending = sorted(by_batch)
        waits: dict[int, list[list[tuple[int, Entry]]]] = collections.defaultdict(list)
        for n, (i, _, _) in enumerate(calls):
            while pending and pending[0] < level_of.get(i, 0):
                waits[n].append(by_batch[pending.pop(0)])
        waits[len(calls)].extend(by_batch[b] for b in pending)
        return waits

    @classmethod
    def _fold(cls, e: Entry, args: list[Any]) -> Any:
        """The value of stateless `e` on constant `args`, or None when it must run."""
        if e.is_async or e.node.is_stateful or e.node.op_def is None:
            return None
        ctx = StepContext(ResourceMgr("constant_folding"))
        ctx.file_sandbox = NO_FILES  # security: a file op runs in its step, sandboxed
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
        recvs = Receives(ctx, self._recvs, self._device) if self._recvs else None
        try:
            with np.errstate(all="ignore"):
                return self._fn(ctx, feeds, recvs)
        except Exception as e:
            node = self._failed_node(e)
            if node is None and isinstance(e, errors.OpError):
                raise  # NOTE: from a wait: already names its node, or is the step's own
            raise wrap_error(e, node) from e
        finally:
            if recvs is not None:
                recvs.close()

    def _failed_node(self, e: BaseException) -> NodeSpec | None:
        entry = self._line_entry.get(raising_line(e, self._fn.__code__))
        return entry.node if entry is not None else None


class Receives:
    """The `_Recv`s of one straight-line step: all started at once, awaited by batch."""

    def __init__(self, ctx: StepContext, recvs: list[tuple[int, Entry]], device: str):
        self._ctx = ctx
        self._device = device
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._got: dict[int, Any] = {}
        self._nodes = {i: e.node for i, e in recvs}
        self._keys = {i: e.fn.key for i, e in recvs}
        rdv = ctx.rendezvous
        # NOTE: values that arrive on a transport read by this very thread (step streams).
        self._rdv = rdv if rdv is not None and rdv.polled else None
        self._token = ctx.cancellation.register(lambda err: self._q.put((-1, None, err, 0)))
        if self._token is None:
            ctx.cancellation.check()
        for i, e in recvs:
            e.fn.start(ctx, [], Done(self._q, i, 0))

    def wait(self, ids: tuple[int, ...]) -> tuple[Any, ...]:
        """The values of the `_Recv`s at positions `ids`, once all arrived.

        Raises:
          OpError: a receive's error (naming its node), the step's cancellation, or
            DeadlineExceededError when the step's deadline passes first.
        """
        got = self._got
        rdv = self._rdv
        while any(i not in got for i in ids):
            if rdv is not None and self._poll_once(ids):
                continue
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
                raise wrap_error(err, self._nodes[i]) from err
            got[i] = r
        return tuple(got.pop(i) for i in ids)

    def _poll_once(self, ids: tuple[int, ...]) -> bool:
        """Reads one batch off the rendezvous's polled sources when a value awaited here
        (and none that already arrived) is still to come on one; False when the queue
        should be waited on instead."""
        self._rdv.flush_polled()
        if not self._q.empty():
            return False
        return self._rdv.poll([self._keys[i] for i in ids if i not in self._got])

    def close(self) -> None:
        """Stops listening to the step's cancellation."""
        if self._token is not None:
            self._ctx.cancellation.deregister(self._token)
