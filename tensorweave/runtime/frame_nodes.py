"""The static side of the frame executor: node kinds, dead values and the frame/node
records (shared by `frame_executor`, `frame_run` and `frame_loops`; the partitioner's view
of frames is `partition_frames`)."""

from __future__ import annotations

from typing import Any

# NOTE: the dead value is the rendezvous' own (transports carry it as a flag).
from tensorweave.framework.rendezvous import DEAD, Dead  # noqa: F401
from tensorweave.runtime.node_spec import NodeSpec

CONTROL_FLOW_OPS = frozenset({
    "Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit", "RefExit",
    "NextIteration", "RefNextIteration", "LoopCond", "ControlTrigger",
})


# Node kinds: how the executor runs a node and where its outputs go.
NORMAL, SWITCH, MERGE, ENTER, EXIT, NEXT, PASS, TRIGGER, CONST = range(9)
KINDS = {
    "Switch": SWITCH, "RefSwitch": SWITCH, "Merge": MERGE, "RefMerge": MERGE,
    "Enter": ENTER, "RefEnter": ENTER, "Exit": EXIT, "RefExit": EXIT,
    "NextIteration": NEXT, "RefNextIteration": NEXT, "LoopCond": PASS,
    "Identity": PASS, "RefIdentity": PASS, "ControlTrigger": TRIGGER, "NoOp": PASS,
    "Const": CONST,
}


def has_control_flow(nodes: list[NodeSpec]) -> bool:
    """True when any node is a control-flow primitive."""
    return any(n.op in CONTROL_FLOW_OPS for n in nodes)


class StaticFrame:
    """One loop frame of a plan (or the root): its size, pending-count template, exits."""

    __slots__ = ("name", "parent", "size", "pending", "n_inputs", "exits", "n_enters",
                 "parallel_iterations", "nodes", "enters", "compiled")

    def __init__(self, name: str, parent: StaticFrame | None):
        self.name, self.parent = name, parent
        self.size = self.n_inputs = self.n_enters = 0
        self.pending: list[int] = []
        self.exits: list[FrameNode] = []
        self.parallel_iterations = 10
        self.nodes: list[FrameNode] = []
        self.enters: list[FrameNode] = []
        self.compiled: Any = None  # a `frame_loops.CompiledLoop` for simple loops


class FrameNode:
    """A node of a frame plan: kind, kernel, frame, input/output wiring."""

    __slots__ = ("spec", "name", "kind", "fn", "is_async", "deref", "frame", "local",
                 "in_base", "n_in", "outs", "ctrl_outs", "child", "is_constant",
                 "merge_expect", "n_ctrl", "nout", "may_ref", "is_fetch", "const",
                 "frame_key")

    def __init__(self, spec: NodeSpec, kind: int):
        self.spec, self.name, self.kind = spec, spec.name, kind
        self.fn: Any = None
        self.is_async = False
        self.deref: tuple[int, ...] = ()
        self.frame: StaticFrame | None = None
        self.local = self.in_base = self.n_in = self.n_ctrl = 0
        self.nout = len(spec.output_dtypes)
        self.outs: list[list[tuple[FrameNode, int]]] = [[] for _ in range(self.nout)]
        self.ctrl_outs: list[FrameNode] = []
        self.child: StaticFrame | None = None
        self.is_constant = False
        self.merge_expect = (0, 0)  # live-or-dead inputs expected in iteration 0, later
        self.may_ref = False  # some input comes from a reference output (a `Var`)
        self.is_fetch = False
        self.const: Any = None
        # (send device, incarnation, recv device, tensor name) of a `_Send`/`_Recv` inside
        # a loop frame: its key gets `frame_id:iter_id` at run time.
        self.frame_key: tuple | None = None


