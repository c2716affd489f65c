"""Loops that span partitions (`runtime.partition_frames`): the frames of a graph, the
control loop added to each partition a frame touches, and the partitions of a loop run
together through one rendezvous with keys carrying `frame_id:iter_id`."""

from __future__ import annotations

import threading

import tensorweave as tf
from tensorweave.framework.rendezvous import StepRendezvous, parse_key
from tensorweave.framework.resource_mgr import ResourceMgr
from tensorweave.kernels.context import StepContext
from tensorweave.runtime.frame_executor import frame_plan
from tensorweave.runtime.graph_partition import partition
from tensorweave.runtime.node_spec import NodeSpec
from tensorweave.runtime.partition_frames import frame_info

PS = "/job:ps/replica:0/task:0/device:CPU:0"
W = "/job:worker/replica:0/task:0/device:CPU:0"


def _loop_graph(n_outer: int = 0):
    """A loop on W whose body computes a term on PS; with `n_outer`, nested in an outer
    loop of `n_outer` iterations."""
    g = tf.Graph()
    with g.as_default():
        with tf.device(W):
            def inner(i, acc):
                with tf.device(PS):
                    term = tf.cast(i, tf.float32) * 2.0 + 1.0
                return i + 1, acc + term

            def run_inner(limit):
                return tf.while_loop(lambda i, a: i < limit, inner,
                                     [tf.constant(0), tf.constant(0.0)])[1]

            if n_outer:
                out = tf.while_loop(
                    lambda k, s: k < n_outer, lambda k, s: (k + 1, s + run_inner(k + 2)),
                    [tf.constant(0), tf.constant(0.0)])[1]
            else:
                out = run_inner(4)
    return g, out


def _specs(g):
    nodes = [NodeSpec.from_operation(op) for op in g.get_operations()]
    return nodes, {n.name: n.device for n in nodes}


def test_frame_info_names_frames_parents_and_conds():
    g, _ = _loop_graph(n_outer=2)
    info = frame_info(_specs(g)[0])
    assert len(info.parent) == 2
    outer = next(f for f, p in info.parent.items() if p == "")
    inner = next(f for f, p in info.parent.items() if p == outer)
    assert info.frame_of[info.cond[outer]] == outer
    assert info.frame_of[info.cond[inner]] == inner
    assert info.frame_of["Const"] == ""


def test_each_partition_of_a_frame_gets_a_control_loop():
    g, _ = _loop_graph()
    nodes, placement = _specs(g)
    parts = partition(nodes, placement, [], [], W, 1, {PS: 1, W: 1})
    ps_ops = [n.op for n in parts[PS].nodes]
    for op in ("Enter", "Merge", "Switch", "NextIteration"):
        assert op in ps_ops
    assert "LoopCond" not in ps_ops
    merge = next(n.name for n in parts[PS].nodes if n.op == "Merge")
    recvs = [n for n in parts[PS].nodes if n.op == "_Recv"]
    assert recvs and all(n.inputs == [f"^{merge}"] and n.attrs["_frame"] for n in recvs)
    sends = [n for n in parts[W].nodes if n.op == "_Send"]
    assert any(n.inputs[0].startswith("while/LoopCond") for n in sends)  # the predicate


def _run(parts, fetch: str) -> tuple[float, list[str]]:
    rdv = StepRendezvous(1)
    keys: list[str] = []
    send = rdv.send

    def record(key, value):
        keys.append(key)
        send(key, value)

    rdv.send = record
    results: dict[str, object] = {}

    def run(device):
        fetches = [fetch] if device == W else []
        plan = frame_plan(parts[device].nodes, [], fetches, device)
        ctx = StepContext(ResourceMgr("t"), 1, rdv, deadline=None, device=device)
        try:
            results[device] = plan.run(ctx, [])
        except Exception as e:  # noqa: BLE001  (reported below)
            results[device] = e
            rdv.abort(tf.errors.AbortedError(None, None, "peer failed"))

    threads = [threading.Thread(target=run, args=(d,)) for d in (PS, W)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30.0)
        assert not t.is_alive()
    assert not isinstance(results[PS], Exception), results[PS]
    assert not isinstance(results[W], Exception), results[W]
    return float(results[W][0]), keys


def test_partitions_of_a_loop_run_together_with_framed_keys():
    g, out = _loop_graph()
    nodes, placement = _specs(g)
    parts = partition(nodes, placement, [], [], W, 1, {PS: 1, W: 1})
    value, keys = _run(parts, out.name)
    assert value == float(sum(2 * i + 1 for i in range(4)))
    framed = [parse_key(k)[4] for k in keys]
    # Iterations 0..4 (the last one sends the predicate False and dead values).
    assert sorted({it for _, it in framed}) == [0, 1, 2, 3, 4]
    assert len({fid for fid, _ in framed}) == 1 and framed[0][0] != 0


def test_nested_loops_across_partitions():
    g, out = _loop_graph(n_outer=3)
    nodes, placement = _specs(g)
    parts = partition(nodes, placement, [], [], W, 1, {PS: 1, W: 1})
    value, keys = _run(parts, out.name)
    want = sum(sum(2 * i + 1 for i in range(k + 2)) for k in range(3))
    assert value == float(want)
    # The outer frame (its predicate goes to PS's control loop) and one instance of the
    # inner frame per outer iteration, each with its own id: 4 outer iterations, the last
    # one (predicate False) sending the inner loop's dead predicate once.
    assert len({parse_key(k)[4][0] for k in keys}) == 1 + 4
