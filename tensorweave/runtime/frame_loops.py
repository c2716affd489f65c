"""Simple loops run as one sequential Python loop (a fast path of the frame executor).

A loop frame qualifies when it holds one loop and nothing that needs deadness or
concurrency: its `Merge`s each join an `Enter` and a `NextIteration`, its `Switch`es split
a `Merge` on the `LoopCond`, its `Switch` false outputs only feed `Exit`s, and every other
node is a synchronous kernel, a `Const` or an `Identity`-like pass-through (no nested
loops, no conds, no sends or receives). A `ControlTrigger` (gradient loops have them)
differs from `NoOp` only on dead inputs, of which such a loop has none, so it only orders
nodes here. Such a loop computes the same values whatever the iteration overlap, so once
all of its `Enter` values have arrived it runs iteration after iteration: the condition's
nodes, then (while the predicate holds) the body's nodes, in a precomputed order, as one
generated Python function (`CompiledLoop`); no ready queue, pending counts or
per-iteration state. `parallel_iterations` has nothing to bound then.
"""

from __future__ import annotations

import collections
from typing import Any

from tensorweave import errors
from tensorweave.runtime.frame_nodes import (
    CONST,
    ENTER,
    EXIT,
    MERGE,
    NEXT,
    NORMAL,
    PASS,
    SWITCH,
    TRIGGER,
    FrameNode,
)
from tensorweave.runtime.plan_entry import assignment, raising_line, read, wrap_error

_OK_KINDS = (NORMAL, CONST, PASS)


class CompiledLoop:
    """The sequential form of one loop frame (see the module docstring), compiled to one
    Python function the way `straight_line.StraightLine` compiles a plan: the loop's
    `Const`s once, then `while True:` the condition's lines, `break` on a false predicate,
    the body's lines and one tuple assignment moving the `NextIteration` values into the
    merge variables. Values live in local variables `s<slot>`; pass-throughs of values
    that cannot be refs are folded into their consumers' arguments; a kernel error is
    attributed to its node through the line it was raised on."""

    def __init__(self, merges, init_slots, cond_ops, body_ops, pred_slot, next_map,
                 exit_slots, enter_slot, n_slots, const_ops):
        self.merges = merges            # merge slots, in order
        self.init_slots = init_slots    # per merge: the Enter node feeding it
        self.next_map = next_map        # (merge slot, slot of the NextIteration's input)
        self.exit_slots = exit_slots    # exit node -> merge slot
        self.enter_slot = enter_slot    # Enter node -> its output slot
        self.n_slots = n_slots
        name = {s: f"s{s}" for s in (*merges, *enter_slot.values())}
        env: dict[str, Any] = {"_read": read}
        self._line_spec: dict[int, Any] = {}
        lines = ["def loop(ctx, vals, _check):"]
        lines += [f"    s{s} = vals[{s}]" for s in sorted(set(name))]

        def emit(ops: list[tuple], indent: str) -> None:
            for fn, ins, out, nout, deref, spec in ops:
                args = [f"_read({name[s]})" if k in deref else name[s]
                        for k, s in enumerate(ins)]
                if fn is None:  # a pass-through
                    if not deref:
                        name[out] = args[0]
                        continue
                    call = args[0]
                else:
                    kernel = f"k{len(self._line_spec)}"
                    env[kernel] = fn
                    call = f"{kernel}({', '.join(['ctx', *args])})"
                outs = [f"s{out + j}" for j in range(nout if fn is not None else 1)]
                for j, o in enumerate(outs):
                    name[out + j] = o
                lines.append(f"{indent}{assignment(outs, call)}")
                self._line_spec[len(lines)] = spec

        emit(const_ops, "    ")
        lines += ["    count = 0", "    while True:"]
        emit(cond_ops, "        ")
        lines.append(f"        if not _read({name[pred_slot]}):")
        lines.append("            break")
        emit(body_ops, "        ")
        if next_map:
            lines.append(f"        {', '.join(f's{dst}' for dst, _ in next_map)}, = "
                         f"{', '.join(name[src] for _, src in next_map)},")
        lines += ["        count += 1", "        if not count & 255:",
                  "            _check(ctx)"]
        lines.append(f"    return [{', '.join(f's{s}' for s in exit_slots.values())}]")
        self.source = "\n".join(lines) + "\n"
        exec(compile(self.source, "<tensorweave loop>", "exec"), env)  # noqa: S102  (generated above from slot numbers)
        self._fn = env["loop"]

    def run(self, ctx: Any, enter_values: dict[FrameNode, Any]) -> dict[FrameNode, Any]:
        """Runs the loop to its end; returns each Exit node's value.

        Raises:
          OpError: a kernel's error naming the node; DeadlineExceededError or the step's
            cancellation error in a long loop.
        """
        vals: list[Any] = [None] * self.n_slots
        for enter, slot in self.enter_slot.items():
            vals[slot] = enter_values[enter]
        for merge_slot, enter in zip(self.merges, self.init_slots, strict=True):
            vals[merge_slot] = enter_values[enter]
        try:
            outs = self._fn(ctx, vals, _check)
        except Exception as e:
            spec = self._line_spec.get(raising_line(e, self._fn.__code__))
            if spec is None:
                raise  # NOTE: the step's cancellation or deadline (`_check`)
            raise wrap_error(e, spec) from e
        return dict(zip(self.exit_slots, outs, strict=True))


def _check(ctx: Any) -> None:
    """Honours the step's cancellation and deadline in a long loop."""
    ctx.cancellation.check()
    left = ctx.remaining_s()
    if left is not None and left <= 0:
        raise errors.DeadlineExceededError(None, None, f"Timed out in a loop on {ctx.device}")


def compile_loop(nodes: list[FrameNode], enters: list[FrameNode]) -> CompiledLoop | None:
    """The sequential form of the loop frame made of `nodes` (fed by `enters`), or None
    when the frame does not qualify."""
    if not enters or any(n.kind not in (*_OK_KINDS, MERGE, SWITCH, NEXT, EXIT, TRIGGER)
                         or n.is_async or n.frame_key is not None for n in nodes):
        return None
    in_frame = set(nodes)
    slot: dict[tuple[FrameNode, int], int] = {}
    n_slots = 0
    for n in [*enters, *nodes]:
        for i in range(n.nout):
            slot[(n, i)] = n_slots
            n_slots += 1
    inputs: dict[FrameNode, list[FrameNode | None]] = {n: [None] * n.n_in for n in nodes}
    preds: dict[FrameNode, set[FrameNode]] = {n: set() for n in nodes}
    for src in [*enters, *nodes]:
        for idx, edges in enumerate(src.outs):
            for dst, pos in edges:
                if dst in in_frame:
                    inputs[dst][pos] = (src, idx)
                    if src in in_frame:
                        preds[dst].add(src)
        for dst in src.ctrl_outs:
            if dst in in_frame and src in in_frame:
                preds[dst].add(src)
    merges = [n for n in nodes if n.kind == MERGE]
    conds = [n for n in nodes if n.spec.op == "LoopCond"]
    if len(conds) != 1 or not merges:
        return None
    init, next_of = [], {}
    for m in merges:
        srcs = inputs[m]
        if m.n_in != 2 or None in srcs or m.outs[1]:
            return None
        kinds = {s.kind for s, _ in srcs}
        if kinds != {ENTER, NEXT}:
            return None
        enter = next(s for s, _ in srcs if s.kind == ENTER)
        if enter.is_constant:
            return None
        init.append(enter)
        next_of[m] = next(s for s, _ in srcs if s.kind == NEXT)
        preds[m] = set()
    for n in nodes:
        if n.kind == SWITCH:
            data, pred = inputs[n]
            if data is None or data[0].kind != MERGE or pred is None or pred[0] is not conds[0]:
                return None
            if any(d.kind != EXIT for d, _ in n.outs[0]):
                return None
        if n.kind == EXIT and (inputs[n][0] is None or inputs[n][0][0].kind != SWITCH
                               or inputs[n][0][1] != 0):
            return None
        if n.kind in _OK_KINDS and any(s.kind == ENTER and not s.is_constant
                                       for s, _ in filter(None, inputs[n])):
            return None
        if n.kind in _OK_KINDS and None in inputs[n]:
            return None
    order = _topological(nodes, preds)
    if order is None:
        return None
    cond_set = _ancestors(conds[0], preds)
    cond_ops, body_ops, const_ops = [], [], []
    for n in order:
        if n.kind in (MERGE, EXIT, NEXT, TRIGGER):
            continue  # NOTE: with no dead values, a ControlTrigger is a NoOp: order only
        if n.kind == SWITCH:
            op = (None, (slot[inputs[n][0]],), slot[(n, 1)], 1, (), n.spec)
        elif n.kind == PASS:
            op = (None, tuple(slot[s] for s in inputs[n][:1]), slot[(n, 0)], 1,
                  n.deref[:1], n.spec) if n.nout else None
            if op is None:
                continue
        else:
            op = (n.fn, tuple(slot[s] for s in inputs[n]), slot[(n, 0)] if n.nout else 0,
                  n.nout, n.deref, n.spec)
        if n.kind == CONST:
            const_ops.append(op)
            continue
        (cond_ops if n in cond_set else body_ops).append(op)
    if any(n.kind == SWITCH for n in cond_set):
        return None
    next_map = [(slot[(m, 0)], slot[inputs[next_of[m]][0]]) for m in merges
                if inputs[next_of[m]][0] is not None]
    if len(next_map) != len(merges):
        return None
    exit_slots = {n: slot[(inputs[inputs[n][0][0]][0][0], 0)] for n in nodes if n.kind == EXIT}
    return CompiledLoop([slot[(m, 0)] for m in merges], init, cond_ops, body_ops,
                        slot[(conds[0], 0)], next_map, exit_slots,
                        {e: slot[(e, 0)] for e in enters}, n_slots, const_ops)


def _topological(nodes: list[FrameNode], preds: dict[FrameNode, set[FrameNode]]):
    pending = {n: len(preds[n]) for n in nodes}
    succ: dict[FrameNode, list[FrameNode]] = collections.defaultdict(list)
    for n, ps in preds.items():
        for p in ps:
            succ[p].append(n)
    ready = collections.deque(n for n in nodes if pending[n] == 0)
    order = []
    while ready:
        n = ready.popleft()
        order.append(n)
        for s in succ[n]:
            pending[s] -= 1
            if pending[s] == 0:
                ready.append(s)
    return order if len(order) == len(nodes) else None


def _ancestors(node: FrameNode, preds: dict[FrameNode, set[FrameNode]]) -> set[FrameNode]:
    seen, todo = {node}, [node]
    while todo:
        for p in preds[todo.pop()]:
            if p not in seen:
                seen.add(p)
                todo.append(p)
    return seen
