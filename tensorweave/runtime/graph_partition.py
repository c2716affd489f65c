"""Graph partitioning: split a placed graph by device and insert `_Send`/`_Recv` pairs with
TensorFlow-format rendezvous keys (follows `graph/graph_partition.cc`).

Differences from TensorFlow, on purpose:
* Feeds and fetches are client-terminated on the device that consumes/produces them, not on
  the master's device: the client talks to every worker directly, so a fetch from a ps is
  one hop instead of two. A device of a plain TensorFlow task (`relayed`) accepts only
  keys that start or end on itself (its rendezvous' `ValidateDevices`), so its feeds and
  fetches travel through the client device as in TensorFlow.
* A small `Const` without inputs consumed on another device is copied into that device's
  partition instead of being sent each step (no message, no round: an optimizer's
  learning-rate constant on the worker feeding apply ops on the ps, for one).
* A while loop may span devices: edges inside a loop frame get per-iteration keys and a
  control loop in each partition the frame touches (`partition_frames`; TensorFlow adds
  one on the receiving side only, here the sender gets one too).
* Every cross-device edge gets a `_recv_batch` number, the count of device crossings on the
  longest path to its source. Receives from one sender with the same number can never
  depend on each other, so a worker fetches them in one message (one message per task pair
  per round instead of one per tensor).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable

from tensorweave.framework import dtypes
from tensorweave.framework.rendezvous import create_key
from tensorweave.runtime.frame_nodes import has_control_flow
from tensorweave.runtime.node_spec import NodeSpec, split_tensor_name
from tensorweave.runtime.partition_frames import ControlLoops, FrameInfo, frame_info


@dataclasses.dataclass
class Partition:
    """The nodes of one device, and the client-terminated keys of its feeds and fetches."""

    device: str
    nodes: list[NodeSpec] = dataclasses.field(default_factory=list)
    feed_keys: dict[str, str] = dataclasses.field(default_factory=dict)  # fed tensor -> key
    fetch_keys: dict[str, str] = dataclasses.field(default_factory=dict)  # tensor -> key

    def graph_def(self) -> object:
        """The partition as a `GraphDef` proto (sent with `RegisterGraph`)."""
        from tensorweave.protos import graph_pb2

        gd = graph_pb2.GraphDef()
        gd.versions.producer = 27
        gd.node.extend(n.to_node_def() for n in self.nodes)
        return gd


class _Partitioner:
    def __init__(self, nodes: list[NodeSpec], placement: dict[str, str], client_device: str,
                 client_incarnation: int, incarnations: dict[str, int],
                 all_nodes: dict[str, NodeSpec] | None = None,
                 relayed: frozenset[str] = frozenset()):
        self.relayed = relayed - {client_device}
        self.nodes = dict(all_nodes or {})
        self.nodes.update((n.name, n) for n in nodes)
        self.placement = placement
        self.client_device = client_device
        self.client_incarnation = client_incarnation
        self.incarnations = incarnations
        self.parts: dict[str, Partition] = {}
        self.counter = itertools.count()
        self.recv_for: dict[tuple[str, int, str], str] = {}
        self.taken: set[str] = set(self.nodes)
        self.rounds = _rounds(nodes, placement)
        # NOTE: with control flow a received value may be dead: such receivers need the
        # frame executor (`frame_executor.frame_plan`).
        self.control_flow = has_control_flow(nodes)
        self.frames: FrameInfo | None = None
        if self.control_flow:
            info = frame_info(nodes)
            if info.parent:
                self.frames = info
                self.loops = ControlLoops(info, self._add_node, self.fresh,
                                          self._send_pred, placement, nodes)

    def part(self, device: str) -> Partition:
        if device not in self.parts:
            self.parts[device] = Partition(device)
        return self.parts[device]

    def fresh(self, base: str) -> str:
        while True:
            name = f"{base}/_{next(self.counter)}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def _add_node(self, spec: NodeSpec) -> None:
        """Adds a node the partitioner made (a control loop's) to its device's partition."""
        self.part(spec.device).nodes.append(spec)
        self.nodes[spec.name], self.placement[spec.name] = spec, spec.device
        self.rounds[spec.name] = 0
        self.taken.add(spec.name)

    def _send_pred(self, cond: str, frame: str, device: str) -> str:
        return self.cross_edge(cond, 0, device) + ":0"

    def frame_of_edge(self, src: str) -> str:
        """The loop frame of the edges leaving `src` ("" for the root frame)."""
        if self.frames is None:
            return ""
        return self.frames.output_frame(self.nodes[src])

    def dtype_of(self, src: str, idx: int) -> dtypes.DType:
        return self.nodes[src].output_dtypes[idx].base_dtype

    def transfer_attrs(self, dtype: dtypes.DType, tensor_name: str, send: str, recv: str,
                       client: bool) -> dict:
        inc = self.client_incarnation if client and send == self.client_device else \
            self.incarnations.get(send, 1)
        if inc >= 1 << 63:
            inc -= 1 << 64  # NOTE: TensorFlow's uint64 incarnations ride in an int64 attr
        return {
            "tensor_name": tensor_name, "send_device": send, "send_device_incarnation": inc,
            "recv_device": recv, "client_terminated": client, "T": dtype,
        }

    def add_feed(self, tensor: str, device: str) -> str:
        src, idx = split_tensor_name(tensor)
        key = (tensor, -1, device)
        if key in self.recv_for:
            return self.recv_for[key]
        if device in self.relayed:
            at_client = self.add_feed(tensor, self.client_device)
            self.recv_for[key] = self.cross_edge(at_client, 0, device)
            return self.recv_for[key]
        dtype = self.dtype_of(src, idx)
        attrs = self.transfer_attrs(dtype, tensor, self.client_device, device, True)
        attrs["tensor_type"] = attrs.pop("T")
        name = self.fresh(f"_recv_{src}_{idx}")
        spec = NodeSpec(name, "_Recv", [], device, attrs)
        self.part(device).nodes.append(spec)
        self.nodes[name], self.placement[name], self.rounds[name] = spec, device, 0
        self.part(device).feed_keys[tensor] = create_key(
            self.client_device, self.client_incarnation, device, tensor
        )
        self.recv_for[key] = name
        return name

    def add_fetch(self, tensor: str) -> None:
        src, idx = split_tensor_name(tensor)
        device = self.placement[src]
        dtype = self.dtype_of(src, idx)
        value = tensor
        if device in self.relayed:
            value = self.cross_edge(src, idx, self.client_device) + ":0"
            device = self.client_device
        attrs = self.transfer_attrs(dtype, tensor, device, self.client_device, True)
        name = self.fresh(f"_send_{src}_{idx}")
        self.part(device).nodes.append(NodeSpec(name, "_Send", [value], device, attrs))
        self.part(device).fetch_keys[tensor] = create_key(
            device, attrs["send_device_incarnation"], self.client_device, tensor
        )

    def cross_edge(self, src: str, idx: int, dst_device: str) -> str:
        key = (src, idx, dst_device)
        if key in self.recv_for:
            return self.recv_for[key]
        if _copyable(self.nodes[src]):
            copy = self.fresh(src)
            self.part(dst_device).nodes.append(self.nodes[src].copy(name=copy, device=dst_device))
            self.recv_for[key] = copy
            return copy
        src_device = self.placement[src]
        dtype = self.dtype_of(src, idx)
        edge_name = f"edge_{next(self.counter)}_{src}"
        send_attrs = self.transfer_attrs(dtype, edge_name, src_device, dst_device, False)
        frame = self.frame_of_edge(src)
        if frame:
            # NOTE: a transfer inside a loop: its key gets the frame instance and iteration
            # at run time; the receive runs once per iteration of the control loop. The
            # sender gets a control loop too: a value of a loop-invariant `Enter` is sent
            # in every iteration only if the sender's frame has every iteration.
            send_attrs["_frame"] = frame
            self.loops.merge(frame, src_device)
        send = self.fresh(src)
        self.part(src_device).nodes.append(
            NodeSpec(send, "_Send", [f"{src}:{idx}"], src_device, send_attrs)
        )
        recv_attrs = dict(send_attrs)
        recv_attrs["tensor_type"] = recv_attrs.pop("T")
        recv_attrs["_recv_batch"] = self.rounds[src]
        if self.control_flow:
            recv_attrs["_control_flow"] = True
        recv = self.fresh(src)
        inputs = ["^" + self.loops.merge(frame, dst_device)] if frame else []
        self.part(dst_device).nodes.append(
            NodeSpec(recv, "_Recv", inputs, dst_device, recv_attrs))
        self.recv_for[key] = recv
        return recv

    def control_edge(self, src: str, dst_device: str) -> str:
        key = (src, -2, dst_device)
        if key in self.recv_for:
            return self.recv_for[key]
        src_device = self.placement[src]
        dummy = self.fresh(src)
        self.part(src_device).nodes.append(NodeSpec(
            dummy, "Const", ["^" + src], src_device,
            {"dtype": dtypes.float32, "value": _zero()},
        ))
        self.nodes[dummy] = self.part(src_device).nodes[-1]
        self.placement[dummy] = src_device
        if self.frames is not None:
            self.frames.frame_of[dummy] = self.frame_of_edge(src)
        self.rounds[dummy] = self.rounds[src]
        recv = self.cross_edge(dummy, 0, dst_device)
        self.recv_for[key] = recv
        return recv

    def place_node(self, n: NodeSpec, fed: set[str]) -> None:
        device = self.placement[n.name]
        inputs = []
        for inp in n.inputs:
            if inp.startswith("^"):
                src = inp[1:]
                if self.placement[src] == device:
                    inputs.append(inp)
                else:
                    inputs.append("^" + self.control_edge(src, device))
                continue
            src, idx = split_tensor_name(inp)
            tensor = f"{src}:{idx}"
            if tensor in fed:
                inputs.append(self.add_feed(tensor, device) + ":0")
            elif self.placement[src] == device:
                inputs.append(inp)
            else:
                inputs.append(self.cross_edge(src, idx, device) + ":0")
        self.part(device).nodes.append(n.copy(inputs=inputs, device=device))


# NOTE: constants up to this size are copied into each consuming partition (see above).
_COPY_CONST_MAX_BYTES = 64 << 10


def _copyable(node: NodeSpec) -> bool:
    """True for a `Const` with no inputs whose value is at most `_COPY_CONST_MAX_BYTES`."""
    if node.op != "Const" or node.inputs:
        return False
    value = node.attrs.get("value")
    return getattr(value, "nbytes", _COPY_CONST_MAX_BYTES + 1) <= _COPY_CONST_MAX_BYTES


def _zero() -> object:
    import numpy as np

    z = np.zeros((), np.float32)
    z.flags.writeable = False
    return z


# NOTE: a loop's back edge (NextIteration -> Merge) is the one cycle of a graph.
_MERGES = ("Merge", "RefMerge")
_NEXT_ITERATIONS = ("NextIteration", "RefNextIteration")


def _rounds(nodes: list[NodeSpec], placement: dict[str, str]) -> dict[str, int]:
    by_name = {n.name: n for n in nodes}
    rounds: dict[str, int] = {}
    for root in nodes:
        if root.name in rounds:
            continue
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if node.name in rounds:
                continue
            preds = [p for p in _preds(node) if p in by_name
                     and not (node.op in _MERGES and by_name[p].op in _NEXT_ITERATIONS)]
            if not expanded:
                stack.append((node, True))
                stack.extend((by_name[p], False) for p in preds if p not in rounds)
                continue
            here = placement[node.name]
            rounds[node.name] = max(
                (rounds[p] + (placement[p] != here and not _copyable(by_name[p]))
                 for p in preds), default=0
            )
    return rounds


def _preds(node: NodeSpec) -> Iterable[str]:
    for inp in node.inputs:
        yield inp[1:] if inp.startswith("^") else split_tensor_name(inp)[0]


def partition(nodes: list[NodeSpec], placement: dict[str, str], feeds: list[str],
              fetches: list[str], client_device: str, client_incarnation: int,
              incarnations: dict[str, int],
              all_nodes: dict[str, NodeSpec] | None = None,
              relayed: frozenset[str] = frozenset()) -> dict[str, Partition]:
    """Splits placed `nodes` into per-device partitions.

    Args:
      nodes: the pruned nodes of one run signature.
      placement: node name -> full device name.
      feeds: tensor names the client feeds.
      fetches: tensor names the client fetches (fetches that are also fed are answered by
        the client and must not be listed).
      client_device: the device name used as the client end of feed/fetch keys.
      client_incarnation: incarnation used in feed keys.
      incarnations: device -> incarnation (from `GetStatus`), used in keys.
      all_nodes: every node of the graph (dtypes of fed tensors whose producer was pruned).
      relayed: devices whose feeds and fetches go through `client_device` (tasks that are
        plain TensorFlow servers).

    Returns:
      device -> `Partition`.
    """
    p = _Partitioner(nodes, placement, client_device, client_incarnation, incarnations,
                     all_nodes, frozenset(relayed))
    fed = set(feeds)
    for n in nodes:
        p.place_node(n, fed)
    for t in fetches:
        p.add_fetch(t)
    return p.parts
