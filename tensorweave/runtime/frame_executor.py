"""The executor of plans with control flow: frames, iterations and dead tensors.

Follows TensorFlow's executor (`core/common_runtime/executor.cc`, "Implementation of
Control Flow in TensorFlow" and Yu et al., OSDI'18):

* every node belongs to one static *frame*: the root, or the loop an `Enter` leads into
  (named by its `frame_name`); an `Exit` leads back to the parent frame;
* at run time a frame *instance* exists per (parent instance, parent iteration); it holds
  one state per live *iteration* (pending counts, input values). `NextIteration` moves a
  value into iteration i+1 of the same instance; at most `parallel_iterations` iterations
  are in flight, later ones wait; an iteration's state is dropped once it and every
  iteration before it have nothing left to run;
* a value is either a tensor or `DEAD`. A node with a dead input does not run and its
  outputs are dead; `Switch` makes the untaken output dead; `Merge` fires on its first
  live input (dead only when every input that can reach it in that iteration is dead);
  a dead value never crosses `NextIteration`; an `Exit` that never saw a live value
  reports dead to the parent when its frame instance ends; `ControlTrigger` runs anyway.

`frame_plan` chooses this executor only for plans with control-flow ops; other plans keep
the straight-line `executor.Plan`.
"""

from __future__ import annotations

import collections
from typing import Any

from tensorweave import errors
from tensorweave.kernels.context import StepContext
from tensorweave.kernels.registry import AsyncKernel, KernelNode, lookup_builder
from tensorweave.runtime import executor
from tensorweave.runtime.frame_loops import compile_loop
from tensorweave.runtime.frame_nodes import (
    CONST,
    ENTER,
    EXIT,
    KINDS,
    MERGE,
    NEXT,
    NORMAL,
    FrameNode,
    StaticFrame,
    has_control_flow,
)
from tensorweave.runtime.frame_run import StepRun
from tensorweave.runtime.node_spec import NodeSpec, split_tensor_name


def frame_plan(nodes: list[NodeSpec], feeds: list[str], fetches: list[str], device: str):
    """The plan for a partition: a `FramePlan` with control flow (or receives from a
    partition with control flow, which may bring dead values), else `executor.Plan`."""
    if has_control_flow(nodes) or any(n.op == "_Recv" and n.attrs.get("_control_flow")
                                      for n in nodes):
        return FramePlan(nodes, feeds, fetches, device)
    return executor.Plan(nodes, feeds, fetches, device)


class _Entry:
    """What `DirectSession` reads off a plan's entries (partition graphs)."""

    __slots__ = ("node",)

    def __init__(self, node: NodeSpec):
        self.node = node


class FramePlan:
    """An executable partition with control-flow ops (same interface as `executor.Plan`).

    Raises:
      NotFoundError: if an op has no CPU kernel.
      InvalidArgumentError: if an input names a node outside the plan, or a node cannot be
        reached from the plan's roots.
    """

    def __init__(self, nodes: list[NodeSpec], feeds: list[str], fetches: list[str], device: str):
        self.device = device
        self.feeds = list(feeds)
        self.fetches = list(fetches)
        self._entries = [_Entry(n) for n in nodes]
        self._nodes = [FrameNode(n, KINDS.get(n.op, NORMAL)) for n in nodes]
        by_name = {n.name: n for n in self._nodes}
        feed_pos = {name: i for i, name in enumerate(self.feeds)}
        self._feed_edges: list[list[tuple[FrameNode, int]]] = [[] for _ in self.feeds]
        self._root = StaticFrame("", None)
        for n in self._nodes:
            self._wire(n, by_name, feed_pos)
        self._assign_frames(by_name)
        for n in self._nodes:
            self._build_kernel(n)
        for n in self._nodes:
            n.frame.nodes.append(n)
            if n.kind == ENTER:
                n.child.enters.append(n)
            if n.frame is not self._root and n.spec.op in ("_Send", "_Recv"):
                a = n.spec.attrs
                n.frame_key = (a["send_device"], a["send_device_incarnation"],
                               a["recv_device"], a["tensor_name"])
        for frame in {n.child for n in self._nodes if n.kind == ENTER}:
            frame.compiled = compile_loop(frame.nodes, frame.enters)
        self._fetch_at: dict[tuple[str, int], list[int]] = collections.defaultdict(list)
        self._fetch_feed: list[tuple[int, int]] = []
        for i, name in enumerate(self.fetches):
            if name in feed_pos:
                self._fetch_feed.append((i, feed_pos[name]))
                continue
            src, idx = split_tensor_name(name)
            node = by_name.get(src)
            if node is None or idx >= node.nout:
                raise errors.InvalidArgumentError(None, None, f"Fetch {name} is not in the plan")
            if node.frame is not self._root and node.kind != EXIT:
                raise errors.InvalidArgumentError(
                    None, None, f"Fetch {name} is inside a while loop and cannot be fetched")
            self._fetch_at[(src, idx)].append(i)
        self._fetch_nodes = {by_name[s] for s, _ in self._fetch_at}
        for n in self._fetch_nodes:
            n.is_fetch = True
        self._fed_fetches = {i for i, _ in self._fetch_feed}
        self._roots = [n for n in self._nodes if n.frame is self._root
                       and n.kind != MERGE and self._root.pending[n.local] == 0]
        self._has_async = any(n.is_async for n in self._nodes)
        # NOTE: the most iterations of one frame instance alive at once in the last run
        # (bounded by parallel_iterations; for tests and tuning).
        self.last_peak_iterations = 0

    # --------------------------------------------------------------- building
    def _wire(self, n: FrameNode, by_name: dict[str, FrameNode], feed_pos: dict[str, int]) -> None:
        data = n.spec.data_inputs()
        n.n_in = len(data)
        for pos, (src, idx) in enumerate(data):
            key = f"{src}:{idx}"
            if key in feed_pos:
                self._feed_edges[feed_pos[key]].append((n, pos))
                continue
            if src not in by_name:
                raise errors.InvalidArgumentError(
                    None, None, f"Node {n.name}: input {key} is not produced in this plan")
            by_name[src].outs[idx].append((n, pos))
            if by_name[src].spec.output_dtypes[idx]._is_ref_dtype:
                n.may_ref = True
        for src in n.spec.control_inputs():
            if src not in by_name:
                raise errors.InvalidArgumentError(
                    None, None, f"Node {n.name} has input {src}, which is not in the plan")
            by_name[src].ctrl_outs.append(n)
            n.n_ctrl += 1

    def _assign_frames(self, by_name: dict[str, FrameNode]) -> None:
        frames: dict[str, StaticFrame] = {}
        has_input = {d.name for n in self._nodes for d in _successors(n)}
        todo = collections.deque(n for n in self._nodes if n.name not in has_input)
        for n in todo:
            n.frame = self._root
        while todo:
            n = todo.popleft()
            out_frame = n.frame
            if n.kind == ENTER:
                fname = n.spec.attrs["frame_name"]
                out_frame = frames.get(fname)
                if out_frame is None:
                    out_frame = frames[fname] = StaticFrame(fname, n.frame)
                out_frame.n_enters += 1
                out_frame.parallel_iterations = max(1, n.spec.attrs.get("parallel_iterations", 10))
                n.child, n.is_constant = out_frame, bool(n.spec.attrs.get("is_constant"))
            elif n.kind == EXIT:
                if n.frame.parent is None:
                    raise errors.InvalidArgumentError(
                        None, None, f"Exit node {n.name} is not inside a while loop")
                out_frame = n.frame.parent
                n.frame.exits.append(n)
            for d in _successors(n):
                if d.frame is None:
                    d.frame = out_frame
                    todo.append(d)
        for n in self._nodes:
            if n.frame is None:
                raise errors.InvalidArgumentError(
                    None, None, f"Node {n.name} cannot be reached from the plan's inputs")
            f = n.frame
            n.local, n.in_base = f.size, f.n_inputs
            f.size += 1
            f.n_inputs += n.n_in
            if n.kind == MERGE:
                back = sum(1 for src, _ in n.spec.data_inputs()
                           if src in by_name and by_name[src].kind == NEXT)
                n.merge_expect = (n.n_in - back, back if back else n.n_in)
                f.pending.append(n.n_ctrl)
            else:
                f.pending.append(n.n_in + n.n_ctrl)

    def _build_kernel(self, n: FrameNode) -> None:
        spec = n.spec
        refs = spec.ref_inputs
        n.deref = tuple(k for k in range(n.n_in) if not (k < len(refs) and refs[k]))
        if not n.may_ref:
            n.deref = ()
        if n.kind == CONST and (n.n_in or n.nout != 1):
            n.kind = NORMAL
        if n.kind not in (NORMAL, CONST):
            return
        try:
            builder = lookup_builder(spec.op, "CPU")
        except LookupError:
            raise errors.NotFoundError(
                None, None,
                f"No registered '{spec.op}' OpKernel for CPU devices compatible with node "
                f"{{{{node {spec.name}}}}}",
            ) from None
        in_types = spec.op_def.input_dtypes(spec.attrs) if spec.op_def is not None else []
        kn = KernelNode(spec.name, spec.op, spec.attrs, self.device, tuple(in_types),
                        tuple(spec.output_dtypes))
        try:
            n.fn = builder(kn)
        except errors.OpError as e:
            raise errors.with_node(e, spec.name) from None
        except (ValueError, TypeError, KeyError) as e:
            raise errors.InvalidArgumentError(
                None, None, f"{e}\n\t [[{{{{node {spec.name}}}}}]]") from e
        n.is_async = isinstance(n.fn, AsyncKernel)

    # ---------------------------------------------------------------- running
    @property
    def node_names(self) -> list[str]:
        """Names of the nodes (in graph order)."""
        return [n.name for n in self._nodes]

    def waits_in_own_thread(self, traced: bool) -> bool:
        """False: receives complete through the executor's completion queue."""
        return False

    def run(self, ctx: StepContext, feeds: list[Any], stats: Any = None) -> list[Any]:
        """Runs one step; returns the fetched values (refs read) in `fetches` order.

        Raises:
          OpError: the first kernel error, with the failing node named (variables written
            by this run are rolled back first); InvalidArgumentError when a fetched tensor
            is dead (its branch was not taken).
        """
        try:
            return StepRun(self, ctx, stats).run(feeds)
        except BaseException as e:
            ctx.cancellation.start_cancel(
                e if isinstance(e, errors.OpError)
                else errors.CancelledError(None, None, str(e)))
            ctx.rollback()
            raise


def _successors(n: FrameNode):
    for edges in n.outs:
        for d, _ in edges:
            yield d
    yield from n.ctrl_outs


