"""One step of a `FramePlan` (`frame_executor`): frame instances, iterations, the ready
queue and the propagation of live and dead values (see `frame_executor` for the rules)."""

from __future__ import annotations

import collections
import hashlib
import queue
import threading
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.rendezvous import create_key
from tensorweave.framework.resource_mgr import Var
from tensorweave.kernels.context import StepContext
from tensorweave.runtime import executor
from tensorweave.runtime.frame_nodes import (
    CONST,
    DEAD,
    ENTER,
    EXIT,
    MERGE,
    NEXT,
    NORMAL,
    PASS,
    SWITCH,
    TRIGGER,
    FrameNode,
    StaticFrame,
)
from tensorweave.runtime.plan_entry import wrap_error


class _Frame:
    """A frame instance: the iterations of one loop for one parent iteration."""

    __slots__ = ("static", "parent_iter", "iters", "first", "next_iter", "pending_enters",
                 "invariants", "deferred", "live_exits", "key", "values", "fid")

    def __init__(self, static: StaticFrame, parent_iter: _Iter | None, key: Any):
        self.static, self.parent_iter, self.key = static, parent_iter, key
        self.iters: dict[int, _Iter] = {}
        self.first = 0
        self.next_iter = 0
        self.pending_enters = static.n_enters
        self.invariants: list[tuple[FrameNode, int, Any]] = []
        self.deferred: list[tuple[FrameNode, int, Any]] = []
        self.live_exits: set[FrameNode] = set()
        self.fid: int | None = None if parent_iter is not None else 0


class _Iter:
    __slots__ = ("frame", "num", "inputs", "pending", "dead", "outstanding", "children",
                 "merged")

    def __init__(self, frame: _Frame, num: int):
        st = frame.static
        self.frame, self.num = frame, num
        self.inputs: list[Any] = [None] * st.n_inputs
        self.pending = list(st.pending)
        self.dead = [0] * st.size
        self.outstanding = 0
        self.children: dict[str, _Frame] = {}
        self.merged: dict[int, int] = {}


class StepRun:
    """The state of one step of a `FramePlan`."""

    def __init__(self, plan: Any, ctx: StepContext, stats: Any):
        self.plan, self.ctx, self.stats = plan, ctx, stats
        self.ready: collections.deque = collections.deque()
        self.results: list[Any] = [None] * len(plan.fetches)
        self.completions: queue.SimpleQueue = queue.SimpleQueue()
        self.in_flight = 0
        self.peak_iterations = 1
        root = _Frame(plan._root, None, None)
        self.root_iter = _Iter(root, 0)
        root.iters[0] = self.root_iter

    def run(self, feeds: list[Any]) -> list[Any]:
        """Runs the step with the plan's feed values; returns the fetched values.

        Raises:
          OpError: a kernel's error, the step's cancellation or deadline, or
            InvalidArgumentError for a dead fetch.
        """
        plan, it = self.plan, self.root_iter
        for i, j in plan._fetch_feed:
            self.results[i] = feeds[j]
        for edges, v in zip(plan._feed_edges, feeds, strict=True):
            for dst, pos in edges:
                self._deliver(it, dst, pos, v)
        for n in plan._roots:
            it.outstanding += 1
            self.ready.append((n, it))
        ctx = self.ctx
        token = ctx.cancellation.register(
            lambda err: self.completions.put((None, None, None, err)))
        try:
            if token is None:
                ctx.cancellation.check()
            with np.errstate(all="ignore"):
                self._loop()
        finally:
            ctx.cancellation.deregister(token)
        self.plan.last_peak_iterations = self.peak_iterations
        if self.root_iter.children:
            raise errors.InternalError(
                None, None, "Loop frames did not finish: "
                f"{sorted(self.root_iter.children)} (a malformed while loop?)")
        out = []
        for i, v in enumerate(self.results):
            if v is DEAD or (v is None and i not in plan._fed_fetches):
                raise errors.InvalidArgumentError(
                    None, None, f"Retval[{i}] does not have value: fetch "
                    f"{plan.fetches[i]} is dead (its branch or loop iteration was not taken)")
            out.append(v.read() if type(v) is Var else v)
        return out

    def _loop(self) -> None:
        ready, ctx, count = self.ready, self.ctx, 0
        while True:
            while ready:
                node, it = ready.popleft()
                self._process(node, it)
                count += 1
                if not count & 1023:
                    # NOTE: a long loop of synchronous kernels still honours the step's
                    # cancellation and deadline.
                    ctx.cancellation.check()
                    left = ctx.remaining_s()
                    if left is not None and left <= 0:
                        raise errors.DeadlineExceededError(
                            None, None, f"Timed out in a loop on {self.plan.device} "
                            f"(at {node.name})")
            if not self.in_flight:
                return
            node, it, outs, err = self._wait()
            self.in_flight -= 1
            if err is not None:
                raise wrap_error(err, node.spec if node is not None else None) from err
            if node.nout == 1 and outs is DEAD:
                self._finish(node, it, [DEAD], True)
                continue
            self._finish(node, it, outs if node.nout != 1 else [outs], False)

    def _wait(self) -> tuple:
        timeout = self.ctx.remaining_s()
        try:
            item = self.completions.get(
                timeout=max(timeout, 0.0) if timeout is not None else None)
        except queue.Empty:
            raise errors.DeadlineExceededError(
                None, None, f"Timed out waiting for the step on {self.plan.device}") from None
        if item[0] is None:
            raise item[3]
        return item

    # ------------------------------------------------------------- one node
    def _process(self, node: FrameNode, it: _Iter) -> None:
        kind, n_in = node.kind, node.n_in
        inputs = it.inputs
        if n_in == 1:
            args = [inputs[node.in_base]]
            inputs[node.in_base] = None
        elif n_in:
            base = node.in_base
            args = inputs[base: base + n_in]
            inputs[base: base + n_in] = [None] * n_in
        else:
            args = []
        if node.deref and kind != NORMAL:
            args = [a.read() if type(a) is Var and k in node.deref else a
                    for k, a in enumerate(args)]
        if kind == MERGE:
            k = it.merged.get(node.local)
            outs = [DEAD, DEAD] if k is None else [args[k], np.int32(k)]
            self._finish(node, it, outs, k is None)
            return
        if it.dead[node.local] and kind != TRIGGER:
            if node.spec.op == "_Send":
                # NOTE: the receiver must learn that the value is dead.
                if node.frame_key is not None:
                    self.ctx.rendezvous.send(_framed_key(node, it), DEAD)
                else:
                    node.fn(self.ctx, DEAD)
            self._finish(node, it, [DEAD] * node.nout, True)
            return
        if kind == PASS or kind == ENTER or kind == EXIT or kind == NEXT:
            outs = args[:1] if node.nout else []
        elif kind == SWITCH:
            v, pred = args
            outs = [DEAD, v] if bool(_value(pred)) else [v, DEAD]
        elif kind == CONST and self.stats is None:
            if node.const is None:
                node.const = node.fn(self.ctx)
            outs = [node.const]
        elif kind == TRIGGER:
            outs = []
        else:
            for k in node.deref:
                if type(args[k]) is Var:
                    args[k] = args[k].read()
            if node.frame_key is not None:
                self._framed_transfer(node, it, args)
                return
            if node.is_async:
                self.in_flight += 1
                node.fn.start(self.ctx, args, _FrameDone(self.completions, node, it))
                return
            stats = self.stats
            start = executor._now_us() if stats is not None else 0
            try:
                r = node.fn(self.ctx, *args)
            except Exception as e:
                raise wrap_error(e, node.spec) from e
            if stats is not None:
                stats.add(node.name, node.spec.op, start, executor._now_us(),
                          threading.get_ident() & 0xFFFF, node.name)
            outs = [r] if node.nout == 1 else (r if node.nout else [])
        self._finish(node, it, outs, False)

    def _framed_transfer(self, node: FrameNode, it: _Iter, args: list[Any]) -> None:
        """A `_Send`/`_Recv` inside a loop frame: its key names the frame instance and
        iteration; a receive from another task is pulled through `ctx.fetch_remote`."""
        key = _framed_key(node, it)
        ctx = self.ctx
        if node.spec.op == "_Send":
            try:
                ctx.rendezvous.send(key, args[0])
            except Exception as e:
                raise wrap_error(e, node.spec) from e
            self._finish(node, it, [], False)
            return
        self.in_flight += 1
        done = _FrameDone(self.completions, node, it)
        if ctx.fetch_remote is not None:
            ctx.fetch_remote(key, node.frame_key[0])
        ctx.rendezvous.recv_many_async(
            [key], lambda values, err: done(error=err) if err is not None else done(values[0]))

    def _finish(self, node: FrameNode, it: _Iter, outs: Any, is_dead: bool) -> None:
        """Propagates a node's outputs, then retires it from its iteration."""
        kind = node.kind
        if self.stats is not None and kind != NORMAL:
            t = executor._now_us()
            self.stats.add(node.name, node.spec.op, t, t, threading.get_ident() & 0xFFFF,
                           node.name)
        if node.is_fetch and it is self.root_iter:
            for idx in range(node.nout):
                for i in self.plan._fetch_at.get((node.name, idx), ()):
                    self.results[i] = outs[idx]
        if kind == ENTER:
            self._enter(node, it, outs[0])
        elif kind == EXIT:
            self._exit(node, it, outs[0])
        elif kind == NEXT:
            if outs[0] is not DEAD:
                self._next_iteration(node, it, outs[0])
        else:
            for idx, edges in enumerate(node.outs):
                if edges:
                    v = outs[idx]
                    for dst, pos in edges:
                        self._deliver(it, dst, pos, v)
        if kind not in (ENTER, EXIT, NEXT):
            for dst in node.ctrl_outs:
                self._deliver_ctrl(it, dst, is_dead)
        it.outstanding -= 1
        if it.outstanding == 0 and it.frame.parent_iter is not None:
            self._cleanup(it.frame)

    def _deliver(self, it: _Iter, dst: FrameNode, pos: int, v: Any) -> None:
        local = dst.local
        if v is DEAD and (dst.kind == EXIT or dst.kind == NEXT):
            # NOTE: a dead value never leaves its iteration; a dead exit is reported when
            # its frame instance ends (`_cleanup`).
            return
        if dst.kind == MERGE:
            if local in it.merged or it.pending[local] < 0:
                return
            if v is DEAD:
                it.dead[local] += 1
                expect = dst.merge_expect[0 if it.num == 0 else 1]
                if it.dead[local] < expect:
                    return
            else:
                it.inputs[dst.in_base + pos] = v
                it.merged[local] = pos
            if it.pending[local] == 0:
                it.pending[local] = -1
                it.outstanding += 1
                self.ready.append((dst, it))
            return
        it.inputs[dst.in_base + pos] = v
        if v is DEAD:
            it.dead[local] += 1
        it.pending[local] -= 1
        if it.pending[local] == 0:
            it.outstanding += 1
            self.ready.append((dst, it))

    def _deliver_ctrl(self, it: _Iter, dst: FrameNode, is_dead: bool) -> None:
        local = dst.local
        if dst.kind == MERGE:
            it.pending[local] -= 1
            if it.pending[local] == 0 and (local in it.merged or it.dead[local] >= (
                    dst.merge_expect[0 if it.num == 0 else 1])):
                it.pending[local] = -1
                it.outstanding += 1
                self.ready.append((dst, it))
            return
        if is_dead:
            it.dead[local] += 1
        it.pending[local] -= 1
        if it.pending[local] == 0:
            it.outstanding += 1
            self.ready.append((dst, it))

    # ---------------------------------------------------------------- frames
    def _enter(self, node: FrameNode, it: _Iter, v: Any) -> None:
        if node.child.compiled is not None and self.stats is None:
            self._enter_compiled(node, it, v)
            return
        child = it.children.get(node.child.name)
        if child is None:
            child = _Frame(node.child, it, node.child.name)
            it.children[node.child.name] = child
            child.iters[0] = _Iter(child, 0)
            child.next_iter = 1
            it.outstanding += 1  # the child frame instance, until it ends
        child.pending_enters -= 1
        targets = list(child.iters.values()) if node.is_constant else [child.iters.get(0)]
        for dst, pos in node.outs[0]:
            if node.is_constant:
                child.invariants.append((dst, pos, v))
            for cit in targets:
                if cit is not None:
                    self._deliver(cit, dst, pos, v)
        for dst in node.ctrl_outs:
            if child.iters.get(0) is not None:
                self._deliver_ctrl(child.iters[0], dst, v is DEAD)
        if child.pending_enters == 0 and child.iters.get(0) is not None:
            if child.iters[0].outstanding == 0:
                self._cleanup(child)

    def _enter_compiled(self, node: FrameNode, it: _Iter, v: Any) -> None:
        """Collects the Enter values of a simple loop; runs it once all have arrived
        (`frame_loops`) and hands its Exit values to the parent iteration."""
        static = node.child
        child = it.children.get(static.name)
        if child is None:
            child = it.children[static.name] = _Frame(static, it, static.name)
            child.values = {}
            it.outstanding += 1  # the loop, until it ends
        child.values[node] = v
        child.pending_enters -= 1
        if child.pending_enters:
            return
        if any(x is DEAD for x in child.values.values()):
            results = dict.fromkeys(static.exits, DEAD)
        else:
            results = static.compiled.run(self.ctx, child.values)
        del it.children[static.name]
        for ex in static.exits:
            value = results[ex]
            if ex.is_fetch and it is self.root_iter:
                for i in self.plan._fetch_at.get((ex.name, 0), ()):
                    self.results[i] = value
            for dst, pos in ex.outs[0]:
                self._deliver(it, dst, pos, value)
            for dst in ex.ctrl_outs:
                self._deliver_ctrl(it, dst, value is DEAD)
        # NOTE: never 0 here: the Enter that called us is still outstanding.
        it.outstanding -= 1

    def _exit(self, node: FrameNode, it: _Iter, v: Any) -> None:
        if v is DEAD:
            return
        frame = it.frame
        frame.live_exits.add(node)
        parent = frame.parent_iter
        if node.is_fetch and parent is self.root_iter:
            for i in self.plan._fetch_at.get((node.name, 0), ()):
                self.results[i] = v
        for dst, pos in node.outs[0]:
            self._deliver(parent, dst, pos, v)
        for dst in node.ctrl_outs:
            self._deliver_ctrl(parent, dst, False)

    def _next_iteration(self, node: FrameNode, it: _Iter, v: Any) -> None:
        frame = it.frame
        nxt = frame.iters.get(it.num + 1)
        if nxt is None:
            if it.num + 1 < frame.next_iter:
                raise errors.InternalError(
                    None, None, f"{node.name}: iteration {it.num + 1} already ended")
            if len(frame.iters) >= frame.static.parallel_iterations:
                frame.deferred.extend((dst, pos, v) for dst, pos in node.outs[0])
                return
            nxt = self._new_iteration(frame)
        for dst, pos in node.outs[0]:
            self._deliver(nxt, dst, pos, v)

    def _new_iteration(self, frame: _Frame) -> _Iter:
        nxt = _Iter(frame, frame.next_iter)
        frame.iters[nxt.num] = nxt
        if len(frame.iters) > self.peak_iterations:
            self.peak_iterations = len(frame.iters)
        frame.next_iter += 1
        nxt.outstanding += 1  # held while the invariants are delivered
        for dst, pos, val in frame.invariants:
            self._deliver(nxt, dst, pos, val)
        nxt.outstanding -= 1
        return nxt

    def _cleanup(self, frame: _Frame) -> None:
        """Ends the finished iterations of `frame` in order, starts deferred ones, and
        ends the frame instance when nothing is left in it."""
        while True:
            first = frame.iters.get(frame.first)
            if first is None or first.outstanding or (
                    first.num == 0 and frame.pending_enters):
                break
            del frame.iters[frame.first]
            frame.first += 1
            if frame.deferred and len(frame.iters) < frame.static.parallel_iterations:
                deferred, frame.deferred = frame.deferred, []
                nxt = self._new_iteration(frame)
                for dst, pos, v in deferred:
                    self._deliver(nxt, dst, pos, v)
        if frame.iters or frame.deferred or frame.pending_enters:
            return
        parent = frame.parent_iter
        del parent.children[frame.key]
        for ex in frame.static.exits:
            if ex not in frame.live_exits:
                for dst, pos in ex.outs[0]:
                    self._deliver(parent, dst, pos, DEAD)
                for dst in ex.ctrl_outs:
                    self._deliver_ctrl(parent, dst, True)
                if ex.is_fetch and parent is self.root_iter:
                    for i in self.plan._fetch_at.get((ex.name, 0), ()):
                        self.results[i] = DEAD
        parent.outstanding -= 1
        if parent.outstanding == 0 and parent.frame.parent_iter is not None:
            self._cleanup(parent.frame)


class _FrameDone:
    """The completion callback of an asynchronous kernel inside a frame."""

    __slots__ = ("_q", "_node", "_it", "_called")

    def __init__(self, q: queue.SimpleQueue, node: FrameNode, it: _Iter):
        self._q, self._node, self._it, self._called = q, node, it, False

    def __call__(self, outputs: Any = None, error: BaseException | None = None) -> None:
        """Reports the kernel's outputs or error (only the first call counts)."""
        if self._called:
            return
        self._called = True
        self._q.put((self._node, self._it, outputs, error))


def _frame_id(frame: _Frame) -> int:
    """The id of a frame instance in rendezvous keys: 0 for the root, else a hash of its
    parent's id, the parent iteration and its name (the same in every partition)."""
    if frame.fid is None:
        parent = frame.parent_iter
        name = f"{_frame_id(parent.frame)};{parent.num};{frame.static.name}".encode()
        frame.fid = int.from_bytes(hashlib.blake2b(name, digest_size=8).digest(), "little")
    return frame.fid


def _framed_key(node: FrameNode, it: _Iter) -> str:
    send, incarnation, recv, name = node.frame_key
    return create_key(send, incarnation, recv, name, (_frame_id(it.frame), it.num))


def _value(v: Any) -> Any:
    return v.read() if type(v) is Var else v
