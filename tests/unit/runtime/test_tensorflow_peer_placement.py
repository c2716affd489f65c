"""Placement and partitioning rules that matter with TensorFlow peers: a state consumer's
device request yields to its variable's (TensorFlow's placer), and the feeds and fetches of a
plain TensorFlow task travel through the client device (its rendezvous accepts only keys
that start or end on itself)."""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.framework.rendezvous import parse_key
from tensorweave.runtime.graph_partition import partition
from tensorweave.runtime.node_spec import NodeSpec
from tensorweave.runtime.placer import place

PS = "/job:ps/replica:0/task:0/device:CPU:0"
W = "/job:worker/replica:0/task:0/device:CPU:0"


def _placed(build, soft=False):
    g = tf.Graph()
    with g.as_default():
        build()
    nodes = [NodeSpec.from_operation(op) for op in g.get_operations()]
    return place(nodes, [PS, W], allow_soft_placement=soft)


@pytest.mark.parametrize("use_resource", [True, False])
def test_update_requested_on_the_worker_runs_with_the_ps_variable(use_resource):
    names = {}

    def build():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="v", use_resource=use_resource)
        with tf.device("/job:worker/task:0"):
            inc = v.assign_add(2.0, read_value=False) if use_resource else v.assign_add(2.0)
            names["inc"] = getattr(inc, "op", inc).name
            names["double"] = (v * 2.0).op.name

    placement = _placed(build)
    assert placement["v"] == placement[names["inc"]] == PS
    assert placement[names["double"]] == W  # a plain consumer keeps its own device


def test_conflicting_explicit_colocation_still_fails():
    def build():
        with tf.device("/job:ps/task:0"):
            a = tf.constant(1.0, name="a")
        with tf.device("/job:worker/task:0"), tf.colocate_with(a):
            tf.constant(2.0, name="b")

    g = tf.Graph()
    with g.as_default():
        build()
        b = g.get_operation_by_name("b")
        b._set_device("/job:worker/task:0")  # noqa: SLF001 - a conflicting explicit request
    nodes = [NodeSpec.from_operation(op) for op in g.get_operations()]
    with pytest.raises(errors.InvalidArgumentError, match="Cannot colocate nodes"):
        place(nodes, [PS, W])


def _graph():
    x = NodeSpec("x", "Placeholder", [], PS, {"dtype": dtypes.float32})
    y = NodeSpec("y", "Identity", ["x"], PS, {"T": dtypes.float32})
    return [y], {"x": PS, "y": PS}, {"x": x, "y": y}  # x is fed: pruned from the step


@pytest.mark.parametrize("relayed", [frozenset(), frozenset({PS})])
def test_feeds_and_fetches_of_a_tensorflow_task_go_through_the_client(relayed):
    nodes, placement, all_nodes = _graph()
    parts = partition(nodes, placement, ["x:0"], ["y:0"], W, 7, {PS: 5, W: 3}, all_nodes,
                      relayed=relayed)
    keys = [(dev, k) for dev, p in parts.items() for k in (*p.feed_keys.values(),
                                                          *p.fetch_keys.values())]
    if not relayed:  # tensorweave: the client talks to the ps directly
        assert set(parts) == {PS}
        assert {dev for dev, _ in keys} == {PS}
        return
    # TensorFlow: every client-terminated key starts and ends on the client device, and
    # the ps exchanges the values with it through ordinary _Send/_Recv pairs.
    assert {dev for dev, _ in keys} == {W}
    for _, key in keys:
        src, _, dst, _, _ = parse_key(key)
        assert src == dst == W
    ps_ops = sorted(n.op for n in parts[PS].nodes)
    assert ps_ops == ["Identity", "_Recv", "_Send"]
    assert not any(n.attrs.get("client_terminated") for n in parts[PS].nodes
                   if n.op in ("_Send", "_Recv"))


def _loop_over_ps_state(two_ps: bool = False):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(0.0, name="v")
        with tf.device("/job:ps/task:1" if two_ps else "/job:ps/task:0"):
            w = tf.Variable(0.0, name="w")
        with tf.device("/job:worker/task:0"):
            def body(i):
                with tf.control_dependencies([tf.assign_add(v, 1.0), tf.assign_add(w, 1.0)]):
                    return i + 1

            tf.while_loop(lambda i: i < 3, body, [tf.constant(0)])
    return [NodeSpec.from_operation(op) for op in g.get_operations()]


def test_loop_spans_tensorweave_tasks_but_runs_whole_on_a_tensorflow_task():
    nodes = _loop_over_ps_state()
    spread = place(nodes, [PS, W])
    assert spread["while/LoopCond"] == W and spread["while/AssignAdd"] == PS
    whole = place(nodes, [PS, W], tensorflow_devices=frozenset({PS}))
    assert whole["while/LoopCond"] == PS and whole["while/AssignAdd"] == PS
    assert whole["while/Enter"] == PS and whole["while/Exit"] == PS
    assert whole["Const"] == W  # outside the loop: unchanged


def test_loop_on_a_tensorflow_task_with_state_on_two_devices_is_unimplemented():
    ps1 = "/job:ps/replica:0/task:1/device:CPU:0"
    nodes = _loop_over_ps_state(two_ps=True)
    assert place(nodes, [PS, ps1, W])["while/LoopCond"] == W  # tensorweave tasks: fine
    with pytest.raises(errors.UnimplementedError, match="TensorFlow task"):
        place(nodes, [PS, ps1, W], tensorflow_devices=frozenset({ps1}))
