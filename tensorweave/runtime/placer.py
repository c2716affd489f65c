"""Device placement: every node gets a full device name (follows TensorFlow's placer).

* Colocation groups join nodes named by `_class` (`loc:@x`) and nodes connected by a
  reference edge (an update op and its variable); a group's device constraints are merged.
* Explicit fields win; unset fields are filled from the first matching device in sorted
  order, TensorFlow's observable default (an unpinned op lands on `/job:ps` before
  `/job:worker`, and on task 0 of its job).
* Nodes inside while loops are placed like any other: a loop may span devices (the
  partitioner adds a control loop to each partition it touches, `partition_frames`),
  except loops touching a plain TensorFlow task, which run whole on one device.

`relocate_control_relays` is a step beyond TensorFlow's placer (in the spirit of Grappler's
dependency optimizer): a `NoOp` that only joins control edges is moved to the device of its
inputs or consumers where the fewest device crossings surround it, so that its consumers
do not wait for extra network crossings. (An optimizer's `update` NoOp sits on the worker under
`replica_device_setter`, between the ps's apply ops and the ps's global-step increment:
moved to the ps, a training step needs two rounds of messages between the worker and the
ps instead of four; with variables on two ps tasks, it moves to the ps holding the global
step.) When the master streams a step's values to and from same-host partitions
(`transport.step_stream`), a crossing between its own task and such a partition costs one
frame while one between two other tasks costs a pull (request, parked handler, answer),
so crossings are weighted: with two ps tasks on the worker's host the `update` NoOp then
stays on the worker, which relays "applied" from both ps tasks to the global-step
increment in three frames instead of a ps-to-ps pull. A `NoOp` has no outputs and no
effect, so where it runs is only visible in traces and partition graphs.
"""

from __future__ import annotations

from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.runtime.frame_nodes import has_control_flow
from tensorweave.runtime.node_spec import NodeSpec
from tensorweave.runtime.partition_frames import frame_info


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _merge_into(group: DeviceSpec, node: NodeSpec, other: str, soft: bool) -> None:
    spec = DeviceSpec.from_string(node.device)
    for field in ("job", "replica", "task", "device_type", "device_index"):
        mine, theirs = getattr(group, field), getattr(spec, field)
        if theirs is None:
            continue
        if mine is not None and mine != theirs:
            if soft:
                continue
            raise errors.InvalidArgumentError(
                None, None,
                f"Cannot colocate nodes {{{{colocation_node {other}}}}} and {{{{colocation_node "
                f"{node.name}}}}}: Cannot merge devices with incompatible {field}s: "
                f"'{group.to_string()}' and '{spec.to_string()}'",
            )
        setattr(group, field, theirs)


def _is_resource(node: NodeSpec, index: int) -> bool:
    outs = node.output_dtypes
    return index < len(outs) and outs[index].base_dtype is dtypes.resource


def _matches(spec: DeviceSpec, device: DeviceSpec) -> bool:
    return all(
        getattr(spec, f) is None or getattr(spec, f) == getattr(device, f)
        for f in ("job", "replica", "task", "device_type", "device_index")
    )


def place(nodes: list[NodeSpec], devices: list[str], allow_soft_placement: bool = False,
          all_nodes: dict[str, NodeSpec] | None = None,
          tensorflow_devices: frozenset[str] = frozenset()) -> dict[str, str]:
    """Chooses a full device name for every node.

    Args:
      nodes: the nodes to place.
      devices: full names of the available devices.
      allow_soft_placement: ignore device constraints that match no device instead of
        failing.
      all_nodes: every node by name (to follow colocation references outside `nodes`).
      tensorflow_devices: devices of plain TensorFlow tasks: a while loop that would
        touch one runs whole on one device (`_keep_loops_whole`).

    Returns:
      node name -> full device name.

    Raises:
      InvalidArgumentError: if a node asks for a device that does not exist, or a
        colocation group has conflicting constraints.
      UnimplementedError: a loop touching a TensorFlow task uses state on two devices.
    """
    by_name = {n.name: n for n in nodes}
    all_nodes = all_nodes or by_name
    uf = _UnionFind()
    # Nodes colocated only because they take state by reference or handle: as in TF's
    # `Member::EnsureCompatibilityAcrossResourceEdge`, their own device request yields to
    # the state's ("Ignoring device specification ... because the input edge ... is a
    # reference connection"), so `v.assign_add` under `/job:worker` runs on v's ps.
    state_consumers: set[str] = set()
    for n in nodes:
        uf.find(n.name)
        for g in n.attrs.get("_class") or ():
            if g.startswith("loc:@") and g[5:] in by_name:
                uf.union(n.name, g[5:])
        refs = n.ref_inputs
        for k, (src, idx) in enumerate(n.data_inputs()):
            if src not in by_name:
                continue
            # NOTE: ops taking a variable by reference or a resource handle (queues,
            # accumulators) run where that state lives.
            if (k < len(refs) and refs[k]) or _is_resource(by_name[src], idx):
                uf.union(n.name, src)
                state_consumers.add(n.name)
    groups: dict[str, list[NodeSpec]] = {}
    for n in nodes:
        groups.setdefault(uf.find(n.name), []).append(n)
    parsed = sorted(((DeviceSpec.from_string(d), d) for d in devices), key=lambda p: p[1])
    result: dict[str, str] = {}
    for members in groups.values():
        spec = DeviceSpec()
        first = members[0].name
        owners = [m for m in members if m.device and m.name not in state_consumers]
        for m in owners:
            _merge_into(spec, m, first, allow_soft_placement)
        for m in members:
            if m.device and m.name in state_consumers:
                _merge_into(spec, m, first, allow_soft_placement or bool(owners))
        device = _choose(spec, parsed, members, allow_soft_placement)
        for m in members:
            result[m.name] = device
    if tensorflow_devices and has_control_flow(nodes):
        _keep_loops_whole(nodes, result, tensorflow_devices)
    return result


def _keep_loops_whole(nodes: list[NodeSpec], result: dict[str, str],
                      tensorflow_devices: frozenset[str]) -> None:
    """Moves each while loop that touches a TensorFlow task onto one device: where the
    state its body uses by reference lives, else where its `LoopCond` is.

    A loop spanning partitions needs the same `frame_id` in the rendezvous keys of both
    ends; TensorFlow's executor derives its own, so a TensorFlow task only ever runs
    whole loops (as every loop ran before loops could span tasks).

    Raises:
      UnimplementedError: such a loop uses state by reference on two devices.
    """
    info = frame_info(nodes)
    by_name = {n.name: n for n in nodes}
    loops: dict[str, list[NodeSpec]] = {}
    for name, frame in info.frame_of.items():
        while info.parent.get(frame):
            frame = info.parent[frame]
        if frame:
            loops.setdefault(frame, []).append(by_name[name])
    for frame, members in loops.items():
        if not {result[m.name] for m in members} & tensorflow_devices:
            continue
        names = {m.name for m in members}
        anchored = set()
        for m in members:
            refs = m.ref_inputs
            for k, (src, idx) in enumerate(m.data_inputs()):
                if src in by_name and src not in names and (
                        (k < len(refs) and refs[k]) or _is_resource(by_name[src], idx)):
                    anchored.add(result[src])
        if len(anchored) > 1:
            raise errors.UnimplementedError(
                None, None, f"While loop {frame!r} runs on a TensorFlow task and uses state "
                f"on several devices ({sorted(anchored)}); with TensorFlow tasks a loop "
                "keeps its by-reference state on one device")
        cond = info.cond.get(frame)
        device = anchored.pop() if anchored else result[cond or members[0].name]
        for m in members:
            result[m.name] = device


def _choose(spec: DeviceSpec, devices: list[tuple[DeviceSpec, str]], members: list[NodeSpec],
            soft: bool) -> str:
    for d, name in devices:
        if _matches(spec, d):
            return name
    if soft:
        relaxed = DeviceSpec(job=spec.job, replica=spec.replica, task=spec.task)
        for d, name in devices:
            if _matches(relaxed, d):
                return name
        return devices[0][1]
    explicit = next((m for m in members if m.device), members[0])
    available = ", ".join(name for _, name in devices)
    raise errors.InvalidArgumentError(
        None, None,
        f"Cannot assign a device for operation {explicit.name}: Operation was explicitly "
        f"assigned to {explicit.device} but available devices are [ {available} ]. Make sure "
        "the device specification refers to a valid device.",
    )


def relocate_control_relays(nodes: list[NodeSpec], placement: dict[str, str],
                            hub: str | None = None, hub_peers: set[str] | None = None,
                            pull_cost: int = 1) -> None:
    """Moves every `NoOp` whose inputs are all control edges to the device, among its own
    and those of its inputs and control consumers, with the cheapest device crossings
    around it (in `placement`, in place; ties keep it where it is; see the module
    docstring).

    Args:
      nodes: the step's nodes.
      placement: node name -> device, updated in place.
      hub: the device whose crossings with `hub_peers` are cheap (the master's task, which
        streams values to and from same-host partitions); None: all crossings cost 1.
      hub_peers: devices whose crossings with `hub` cost 1.
      pull_cost: the cost of any other crossing (a pull: a request, a parked handler and
        an answer, against one frame on a stream).
    """
    peers = hub_peers or set()

    def cost(a: str, b: str) -> int:
        if hub is not None and ((a == hub and b in peers) or (b == hub and a in peers)):
            return 1
        return pull_cost

    consumers: dict[str, set[str]] = {}
    for n in nodes:
        for i in n.inputs:
            if i.startswith("^"):
                consumers.setdefault(i[1:], set()).add(n.name)
    for n in nodes:
        if n.op != "NoOp" or not n.inputs or not all(i.startswith("^") for i in n.inputs):
            continue
        ins = {placement[i[1:]] for i in n.inputs if i[1:] in placement}
        outs = {placement[c] for c in consumers.get(n.name, ())}
        here = placement[n.name]

        def crossings(device: str, ins: set[str] = ins, outs: set[str] = outs) -> int:
            return (sum(cost(d, device) for d in ins - {device})
                    + sum(cost(device, d) for d in outs - {device}))

        best = min(sorted(ins | outs), key=crossings, default=here)
        if crossings(best) < crossings(here):
            placement[n.name] = best
