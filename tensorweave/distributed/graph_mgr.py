"""A partition registered on a worker: its executable plan, the keys of its client feeds and
fetches, and its groups of remote receives (follows TensorFlow's `GraphMgr`)."""

from __future__ import annotations

from typing import Any

from tensorweave import errors
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.kernels.sendrecv_kernels import key_of
from tensorweave.runtime.frame_executor import frame_plan
from tensorweave.runtime.node_spec import NodeSpec


def task_of(device: str) -> str:
    """`/job:ps/replica:0/task:0/device:CPU:0` -> `/job:ps/replica:0/task:0`."""
    spec = DeviceSpec.from_string(device)
    return f"/job:{spec.job}/replica:{spec.replica or 0}/task:{spec.task or 0}"


class RegisteredGraph:
    """One partition ready to run.

    Attributes:
      plan: the executor plan of the partition's own nodes.
      feed_keys: client feed keys, in the plan's feed order.
      fetch_keys: client fetch keys, in the plan's fetch order.
      recv_groups: (sender task, keys) pulled from a peer in one message each (receives
        inside a loop frame are pulled one by one as their iterations run, see
        `Worker.run_graph`).
      recv_keys: sender task -> every key received from it (all batches).
      send_keys: receiver task -> every key sent to it.
      in_frame_recvs: how many receives sit inside a loop frame.
      graph_def: the partition as received (for `RunMetadata.partition_graphs`).
    """

    def __init__(self, graph_def: Any, device: str, local_task: str):
        self.graph_def = graph_def
        nodes = [NodeSpec.from_node_def(nd) for nd in graph_def.node]
        feeds, fetches = [], []
        self.feed_keys: list[str] = []
        self.fetch_keys: list[str] = []
        groups: dict[tuple[str, int], list[str]] = {}
        self.recv_keys: dict[str, list[str]] = {}
        self.send_keys: dict[str, list[str]] = {}
        self.in_frame_recvs = 0
        body = []
        for n in nodes:
            if n.device and n.device != device:
                raise errors.InvalidArgumentError(
                    None, None, f"Node {n.name} is placed on {n.device}, not on {device}"
                )
            client = n.op in ("_Send", "_Recv") and n.attrs.get("client_terminated")
            if client and n.op == "_Recv":
                feeds.append(f"{n.name}:0")
                self.feed_keys.append(key_of(n.attrs))
                continue
            if client and n.op == "_Send":
                fetches.append(n.inputs[0] if ":" in n.inputs[0] else n.inputs[0] + ":0")
                self.fetch_keys.append(key_of(n.attrs))
                continue
            if n.attrs.get("_frame"):
                # NOTE: keys inside a loop are known at run time only (pulled then).
                self.in_frame_recvs += n.op == "_Recv"
            elif n.op == "_Recv":
                sender = task_of(n.attrs["send_device"])
                if sender != local_task:
                    key = key_of(n.attrs)
                    groups.setdefault((sender, n.attrs.get("_recv_batch", 0)), []).append(key)
                    self.recv_keys.setdefault(sender, []).append(key)
            elif n.op == "_Send":
                receiver = task_of(n.attrs["recv_device"])
                if receiver != local_task:
                    self.send_keys.setdefault(receiver, []).append(key_of(n.attrs))
            body.append(n)
        self.plan = frame_plan(body, feeds, fetches, device)
        self.recv_groups = [(task, keys) for (task, _), keys in sorted(groups.items())]
