"""Placement and partitioning choices that cut network rounds per step:
`relocate_control_relays` (control-only NoOps move next to their inputs/consumers) and
the partitioner copying small input-less constants into the partitions that read them."""

from __future__ import annotations

import numpy as np

import tensorweave as tf
from tensorweave.framework import dtypes
from tensorweave.runtime.graph_partition import partition
from tensorweave.runtime.node_spec import NodeSpec
from tensorweave.runtime.placer import relocate_control_relays

PS0 = "/job:ps/replica:0/task:0/device:CPU:0"
PS1 = "/job:ps/replica:0/task:1/device:CPU:0"
W = "/job:worker/replica:0/task:0/device:CPU:0"


def _noop(name, *controls, device=W):
    return NodeSpec(name, "NoOp", [f"^{c}" for c in controls], device, {})


def _const(name, value, device, inputs=()):
    return NodeSpec(name, "Const", list(inputs), device,
                    {"dtype": dtypes.float32, "value": np.asarray(value, np.float32)})


def test_noop_between_ps_ops_moves_to_the_ps():
    nodes = [_noop("a", device=PS0), _noop("b", device=PS0), _noop("update", "a", "b"),
             _noop("step", "update", device=PS0)]
    placement = {n.name: n.device for n in nodes}
    relocate_control_relays(nodes, placement)
    assert placement["update"] == PS0  # no crossing left around it


def test_noop_joining_two_ps_moves_to_its_consumer():
    nodes = [_noop("a", device=PS0), _noop("b", device=PS1), _noop("update", "a", "b"),
             _noop("step", "update", device=PS0)]
    placement = {n.name: n.device for n in nodes}
    relocate_control_relays(nodes, placement)
    assert placement["update"] == PS0  # one crossing (ps1 -> ps0) instead of three


def test_noop_stays_when_moving_saves_nothing():
    nodes = [_noop("a", device=W), _noop("b", device=PS0), _noop("join", "a", "b"),
             _noop("after", "join", device=W)]
    placement = {n.name: n.device for n in nodes}
    relocate_control_relays(nodes, placement)
    assert placement["join"] == W
    # A NoOp with a data input (none exist) or no inputs is never moved.
    lone = [_noop("lone", device=W)]
    placement = {"lone": W}
    relocate_control_relays(lone, placement)
    assert placement["lone"] == W


def _transfers(parts):
    return {dev: sorted(n.op for n in p.nodes if n.op in ("_Send", "_Recv"))
            for dev, p in parts.items()}


def _partition(nodes):
    placement = {n.name: n.device for n in nodes}
    return partition(nodes, placement, [], [], W, 1, {PS0: 1, W: 1})


def test_small_constant_is_copied_not_sent():
    lr = _const("lr", 0.1, W)
    x = _const("x", [1.0, 2.0], PS0)
    mul = NodeSpec("mul", "Mul", ["x", "lr"], PS0, {"T": dtypes.float32})
    parts = _partition([lr, x, mul])
    assert all(not ops for ops in _transfers(parts).values()), _transfers(parts)
    ps_nodes = {n.op: n for n in parts[PS0].nodes if n.name.startswith("lr")}
    assert ps_nodes["Const"].attrs["value"] == np.float32(0.1)


def test_big_or_dependent_constants_are_still_sent():
    big = _const("big", np.zeros(64 << 10, np.float32), W)  # 256 KiB
    gate = _noop("gate")
    gated = _const("gated", 1.0, W, inputs=["^gate"])
    use_big = NodeSpec("use_big", "Identity", ["big"], PS0, {"T": dtypes.float32})
    use_gated = NodeSpec("use_gated", "Identity", ["gated"], PS0, {"T": dtypes.float32})
    parts = _partition([big, gate, gated, use_big, use_gated])
    assert _transfers(parts)[PS0] == ["_Recv", "_Recv"]
    assert _transfers(parts)[W] == ["_Send", "_Send"]


def test_sgd_step_under_replica_device_setter_needs_two_rounds():
    """Worker pulls the weights (round 0), the ps pulls the gradients (round 1); the
    optimizer's `update` NoOp and learning rate add no round of their own."""
    cluster = tf.train.ClusterSpec({"ps": ["localhost:1"], "worker": ["localhost:2"]})
    g = tf.Graph()
    with g.as_default(), tf.device(tf.train.replica_device_setter(cluster=cluster)):
        x = tf.placeholder(tf.float32, [None, 3])
        w = tf.Variable(tf.ones([3, 2]))
        loss = tf.reduce_sum(tf.matmul(x, w))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_or_create_global_step())
    from tensorweave.runtime.placer import place
    from tensorweave.runtime.pruning import prune

    nodes_by_name = {op.name: NodeSpec.from_operation(op) for op in g.get_operations()}
    nodes = prune(nodes_by_name, {x.name}, [], [train.name])
    placement = place(nodes, [PS0, W], all_nodes=nodes_by_name)
    relocate_control_relays(nodes, placement)
    parts = partition(nodes, placement, [x.name], [], W, 1, {PS0: 1, W: 1}, nodes_by_name)
    batches = {dev: sorted({n.attrs["_recv_batch"] for n in p.nodes
                            if n.op == "_Recv" and not n.attrs.get("client_terminated")})
               for dev, p in parts.items()}
    assert batches == {W: [0], PS0: [1]}


def test_noop_joining_two_ps_stays_with_a_streaming_master():
    """With the master (worker) streaming to both ps tasks, the NoOp relays on the worker
    (three frames) rather than making one ps pull from the other."""
    nodes = [_noop("a", device=PS0), _noop("b", device=PS1), _noop("update", "a", "b"),
             _noop("step", "update", device=PS0)]
    placement = {n.name: n.device for n in nodes}
    relocate_control_relays(nodes, placement, W, {PS0, PS1}, pull_cost=4)
    assert placement["update"] == W
    # A ps that the master cannot stream to: its crossings cost pulls again.
    placement = {n.name: n.device for n in nodes}
    relocate_control_relays(nodes, placement, W, {PS0}, pull_cost=4)
    assert placement["update"] == PS0


def test_unsigned_incarnation_of_a_tensorflow_task_fits_the_int64_attr():
    """TensorFlow's device incarnations are uint64; the `send_device_incarnation` attr is an
    int64 (TensorFlow casts), and the rendezvous key still carries the unsigned hex."""
    from tensorweave.framework.rendezvous import create_key

    incarnation = 12232075646087068303  # > 2**63, as seen from a real TensorFlow ps
    x = NodeSpec("x", "Placeholder", [], PS0, {"dtype": dtypes.float32})
    use = NodeSpec("use", "Identity", ["x"], W, {"T": dtypes.float32})
    placement = {"x": PS0, "use": W}
    parts = partition([x, use], placement, [], [], W, 1, {PS0: incarnation, W: 1})
    send = next(n for n in parts[PS0].nodes if n.op == "_Send")
    attr = send.attrs["send_device_incarnation"]
    assert attr == incarnation - (1 << 64) and -(1 << 63) <= attr < 0
    assert create_key(PS0, attr, W, "x:0") == create_key(PS0, incarnation, W, "x:0")
    parts[PS0].graph_def()  # serializes (the attr is a valid int64)
