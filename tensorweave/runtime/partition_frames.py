"""Loops that span partitions: which frame each node runs in, and the control loops the
partitioner adds (follows TensorFlow's `graph/graph_partition.cc`, `AddControlFlow`, and
Yu et al., "Dynamic Control Flow in Large-Scale Machine Learning", EuroSys'18).

When an edge inside a loop frame crosses devices, the receiving device needs its own
instance of the frame, iteration by iteration, for its `_Recv` to run in: the partitioner
adds a *control loop* there, a skeleton that carries a dummy value,

    Const (root frame, or the parent frame's control-loop Merge)
      -> Enter(frame) -> Merge <- NextIteration <- Switch:1
                          Merge -> Switch(pred = the frame's LoopCond, received)

whose predicate is the frame's `LoopCond`, sent from its device every iteration. Each
`_Recv` of the frame on that device gets a control edge from the control loop's `Merge`,
so it runs once per iteration; the rendezvous key of a `_Send`/`_Recv` inside a frame
carries the frame instance and iteration (`frame_id:iter_id`, set at run time by the
frame executor). Nested frames get a control loop per level, each `Enter` fed by the
parent level's `Merge`. On the device of the frame's `LoopCond` the loop's own `Merge`
(of a loop variable) stands in for a control loop's.

Unlike TensorFlow, the sending device gets a control loop too: a value computed from
loop-invariant `Enter`s only (a variable read through a `RefEnter` on the ps) is sent in
every iteration only if the sender's frame instance has every iteration (TensorFlow's
sender would run it in iteration 0 alone).
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable

import numpy as np

from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.runtime.node_spec import NodeSpec

_ENTERS = ("Enter", "RefEnter")
_EXITS = ("Exit", "RefExit")


@dataclasses.dataclass
class FrameInfo:
    """The static frames of a graph.

    Attributes:
      frame_of: node name -> the frame it runs in ("" for the root; an `Enter` runs in the
        frame it leads into, an `Exit` in the frame it leaves).
      parent: frame -> its parent frame.
      cond: frame -> the name of its `LoopCond` node.
      parallel_iterations: frame -> its `parallel_iterations`.
    """

    frame_of: dict[str, str]
    parent: dict[str, str]
    cond: dict[str, str]
    parallel_iterations: dict[str, int]

    def output_frame(self, node: NodeSpec) -> str:
        """The frame of `node`'s outputs (an `Exit`'s go to the parent frame)."""
        frame = self.frame_of.get(node.name, "")
        if node.op in _EXITS:
            return self.parent.get(frame, "")
        return frame


def frame_info(nodes: list[NodeSpec]) -> FrameInfo:
    """The frame of every node of `nodes`, found from the graph's inputs forward."""
    by_name = {n.name: n for n in nodes}
    succ: dict[str, list[str]] = collections.defaultdict(list)
    has_input: set[str] = set()
    for n in nodes:
        for src in [s for s, _ in n.data_inputs()] + n.control_inputs():
            if src in by_name:
                succ[src].append(n.name)
                has_input.add(n.name)
    info = FrameInfo({}, {}, {}, {})

    def reach(node: NodeSpec, frame: str) -> None:
        if node.op in _ENTERS:
            inner = node.attrs["frame_name"]
            info.frame_of[node.name] = inner
            info.parent.setdefault(inner, frame)
            info.parallel_iterations[inner] = int(node.attrs.get("parallel_iterations", 10))
        else:
            info.frame_of[node.name] = frame
        todo.append(node.name)

    todo: collections.deque[str] = collections.deque()
    for n in nodes:
        if n.name not in has_input:  # NOTE: also an `Enter` of a fed tensor
            reach(n, "")
    while todo:
        name = todo.popleft()
        out = info.output_frame(by_name[name])
        for d in succ[name]:
            if d not in info.frame_of:
                reach(by_name[d], out)
    for n in nodes:
        if n.op == "LoopCond" and info.frame_of.get(n.name):
            info.cond[info.frame_of[n.name]] = n.name
    return info


class ControlLoops:
    """The control loops of one partitioning, built on demand per (frame, device).

    Args:
      info: the graph's frames.
      add: adds a new node to its device's partition.
      fresh: a new unique node name from a base name.
      send_pred: (LoopCond node name, frame, device) -> the input naming the predicate
        received on `device` (a cross-device edge inside `frame`).
      placement: node name -> device.
      nodes: the graph's nodes (on the device of a frame's `LoopCond`, a `Merge` of the
        loop itself serves as the control loop's).
    """

    def __init__(self, info: FrameInfo, add: Callable[[NodeSpec], None],
                 fresh: Callable[[str], str], send_pred: Callable[[str, str, str], str],
                 placement: dict[str, str], nodes: list[NodeSpec]):
        self.info = info
        self._add, self._fresh, self._send_pred = add, fresh, send_pred
        self._placement = placement
        self._merges: dict[tuple[str, str], str] = {}
        ops = {n.name: n.op for n in nodes}
        for n in nodes:
            # NOTE: a loop variable's Merge (fed by a NextIteration) is live in every
            # iteration, the last one included, as a control loop's is.
            if n.op in ("Merge", "RefMerge") and any(
                    ops.get(src) in ("NextIteration", "RefNextIteration")
                    for src, _ in n.data_inputs()):
                frame = info.frame_of.get(n.name, "")
                cond = info.cond.get(frame)
                if cond is not None and placement[cond] == placement[n.name]:
                    self._merges.setdefault((frame, placement[n.name]), n.name)

    def merge(self, frame: str, device: str) -> str:
        """The `Merge` of the control loop of `frame` on `device` (built if needed).

        Raises:
          InvalidArgumentError: the frame has no `LoopCond` (a malformed while loop).
        """
        key = (frame, device)
        if key in self._merges:
            return self._merges[key]
        cond = self.info.cond.get(frame)
        if cond is None:
            raise errors.InvalidArgumentError(
                None, None, f"While loop {frame!r} spans devices but has no LoopCond")
        parent = self.info.parent.get(frame, "")
        if parent:
            source = self.merge(parent, device)
        else:
            source = self._fresh(f"{frame}/_cloop/source")
            self._add(NodeSpec(source, "Const", [], device,
                               {"dtype": dtypes.float32, "value": _dummy()}))
        base = self._fresh(f"{frame}/_cloop")
        enter, merge = f"{base}/enter", f"{base}/merge"
        switch, nxt = f"{base}/switch", f"{base}/next_iteration"
        t = {"T": dtypes.float32}
        self._add(NodeSpec(enter, "Enter", [source], device, {
            **t, "frame_name": frame, "is_constant": False,
            "parallel_iterations": self.info.parallel_iterations.get(frame, 10)}))
        self._add(NodeSpec(merge, "Merge", [enter, nxt], device, {**t, "N": 2}))
        self._merges[key] = merge  # NOTE: before the predicate's receive, which needs it
        if self._placement[cond] == device:
            pred = f"{cond}:0"
        else:
            pred = self._send_pred(cond, frame, device)
        self._add(NodeSpec(switch, "Switch", [f"{merge}:0", pred], device, dict(t)))
        self._add(NodeSpec(nxt, "NextIteration", [f"{switch}:1"], device, dict(t)))
        return merge


def _dummy() -> np.ndarray:
    z = np.zeros((), np.float32)
    z.flags.writeable = False
    return z
