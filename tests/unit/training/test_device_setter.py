"""`replica_device_setter` and the contrib ps strategies.

Mirrors TensorFlow's `python/training/device_setter_test.py` and
`contrib/training/python/training/device_setter_test.py` (r1.15): every case checks
`.device` and `.initializer.device`, compared canonicalized.
"""

from __future__ import annotations

import collections
import logging

import pytest

import tensorweave as tf
from tensorweave.contrib import training as contrib_training
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.framework.device_spec import canonical_name
from tensorweave.protos import node_def_pb2
from tensorweave.training import device_setter
from tensorweave.training.device_setter import replica_device_setter

_CLUSTER = ClusterSpec(
    {
        "ps": ["ps0:2222", "ps1:2222"],
        "worker": ["worker0:2222", "worker1:2222", "worker2:2222"],
    }
)
_SUN_MOON = ClusterSpec(
    {
        "sun": ["sun0:2222", "sun1:2222", "sun2:2222"],
        "moon": ["moon0:2222", "moon1:2222"],
    }
)

MockOperation = collections.namedtuple("MockOperation", "name")


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def assert_device(expected: str, actual: str) -> None:
    assert canonical_name(actual) == canonical_name(expected)


def assert_var(expected: str, var: tf.Variable) -> None:
    assert_device(expected, var.device)
    assert_device(expected, var.initializer.device)


# ------------------------------------------------------------ device_setter_test.py
def test_cpu_override():
    with tf.device(replica_device_setter(cluster=_CLUSTER)):
        with tf.device("/cpu:0"):
            v = tf.Variable([1, 2])
        w = tf.Variable([2, 1])
        with tf.device("/cpu:0"):
            a = v + w
    assert_var("/job:ps/task:0/cpu:0", v)
    assert_var("/job:ps/task:1", w)
    assert_device("/job:worker/cpu:0", a.device)


def test_resource():
    # tensorweave has no ResourceVariable; its `VarHandleOp` (a NodeDef here, which device
    # functions accept too) is a standard ps op.
    fn = replica_device_setter(cluster=_CLUSTER)
    node = node_def_pb2.NodeDef(name="v", op="VarHandleOp")
    assert_device("/job:ps/task:0", fn(node))


def test_ps_2_tasks_with_cluster_spec_class():
    with tf.device(replica_device_setter(cluster=_CLUSTER)):
        v = tf.Variable([1, 2])
        w = tf.Variable([2, 1])
        a = v + w
    assert_var("/job:ps/task:0", v)
    assert_var("/job:ps/task:1", w)
    assert_device("/job:worker", a.device)


def test_ps_2_tasks_pin_variable_to_job():
    with tf.device(replica_device_setter(cluster=_CLUSTER)):
        v = tf.Variable([1, 2])
        with tf.device("/job:moon"):
            w = tf.Variable([2, 1])
            with tf.device("/job:ps"):  # An explicit ps job gets a task.
                x = tf.Variable([0, 1])
        a = v + w + x
    assert_var("/job:ps/task:0", v)
    assert_var("/job:moon", w)
    assert_var("/job:ps/task:1", x)
    assert_device("/job:worker", a.device)


def test_ps_2_tasks_use_cpu_for_ps():
    with tf.device(replica_device_setter(ps_tasks=1, ps_device="/cpu:0")):
        v = tf.Variable([1, 2])
        with tf.device("/job:moon"):
            w = tf.Variable([2, 1])
        a = v + w
    assert_var("/cpu:0", v)
    assert_var("/job:moon/cpu:0", w)
    assert_device("/job:worker", a.device)


def test_ps_2_tasks_no_merging(caplog):
    with caplog.at_level(logging.WARNING):
        fn = replica_device_setter(cluster=_CLUSTER, merge_devices=False)
    assert "DEPRECATION" in caplog.text and "merge_devices=true" in caplog.text
    with tf.device(fn):
        v = tf.Variable([1, 2])
        with tf.device("/job:ps"):  # No task when merge_devices=False.
            w = tf.Variable([2, 1])
        a = v + w
    assert_var("/job:ps/task:0", v)
    assert_var("/job:ps", w)
    assert_device("/job:worker", a.device)


@pytest.mark.parametrize("as_cluster", [ClusterSpec.as_dict, ClusterSpec.as_cluster_def])
def test_ps_2_tasks_with_cluster_dict_and_cluster_def(as_cluster):
    with tf.device(replica_device_setter(cluster=as_cluster(_CLUSTER))):
        v = tf.Variable([1, 2])
        w = tf.Variable([2, 1])
        a = v + w
    assert_var("/job:ps/task:0", v)
    assert_var("/job:ps/task:1", w)
    assert_device("/job:worker", a.device)


def test_ps_2_tasks_with_device():
    setter = replica_device_setter(
        ps_device="/job:moon", worker_device="/job:sun", cluster=_SUN_MOON.as_cluster_def()
    )
    with tf.device(setter):
        v = tf.Variable([1, 2])
        w = tf.Variable([2, 1])
        a = v + w
    assert_var("/job:moon/task:0", v)
    assert_var("/job:moon/task:1", w)
    assert_device("/job:sun", a.device)


def test_ps_2_tasks_with_cpu_constraint():
    setter = replica_device_setter(
        ps_device="/job:moon/cpu:0", worker_device="/job:sun", cluster=_SUN_MOON.as_cluster_def()
    )
    with tf.device(setter):
        v = tf.Variable([1, 2])
        w = tf.Variable([2, 1])
        a = v + w
    assert_var("/job:moon/task:0/cpu:0", v)
    assert_var("/job:moon/task:1/cpu:0", w)
    assert_device("/job:sun", a.device)


# ------------------------------------------------------------- §1.5 rules, edge cases
def test_returns_none_without_ps():
    assert replica_device_setter() is None
    assert replica_device_setter(ps_tasks=0) is None
    assert replica_device_setter(cluster={"worker": ["w0:1"]}) is None
    assert replica_device_setter(cluster=_SUN_MOON) is None  # no "ps" job
    with tf.device("/job:outer"), tf.device(replica_device_setter(cluster={"worker": ["w"]})):
        c = tf.constant(1.0)
    assert c.device == ""  # `tf.device(None)` ignores outer scopes


def test_cluster_overrides_ps_tasks_and_worker_device_task():
    setter = replica_device_setter(ps_tasks=7, cluster=_CLUSTER, worker_device="/job:worker/task:3")
    with tf.device(setter):
        vs = [tf.Variable(float(i)) for i in range(3)]
        a = vs[0] * 2.0
    assert [canonical_name(v.device) for v in vs] == [
        "/job:ps/task:0",
        "/job:ps/task:1",
        "/job:ps/task:0",
    ]
    assert_device("/job:worker/task:3", a.device)


def test_strategy_called_only_for_ps_placed_ops():
    calls = []

    def strategy(op):
        calls.append(op.name)
        return 1

    with tf.device(replica_device_setter(cluster=_CLUSTER, ps_strategy=strategy)):
        v = tf.Variable(1.0, name="v")
        with tf.device("/job:moon"):
            tf.Variable(2.0, name="w")
        (v + 1.0).op  # noqa: B018
    assert calls == ["v"]
    assert_var("/job:ps/task:1", v)


def test_ps_strategy_must_be_callable():
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        replica_device_setter(cluster=_CLUSTER, ps_strategy=3)


def test_custom_ps_ops_and_standard_list():
    assert {
        "Variable",
        "VariableV2",
        "VarHandleOp",
        "FIFOQueueV2",
        "ConditionalAccumulator",
        "SparseConditionalAccumulator",
        "ResourceConditionalAccumulator",
    } <= set(device_setter.STANDARD_PS_OPS)
    with tf.device(replica_device_setter(cluster=_CLUSTER, ps_ops=["Const"])):
        c = tf.constant(1.0)
        v = tf.Variable(c)
    assert_device("/job:ps/task:0", c.device)
    assert_var("/job:worker", v)
    fn = replica_device_setter(cluster=_CLUSTER)
    for op_type in ("FIFOQueueV2", "ConditionalAccumulator", "SparseConditionalAccumulator"):
        assert canonical_name(fn(node_def_pb2.NodeDef(name="q", op=op_type))).startswith(
            "/job:ps/task:"
        )


def test_update_ops_follow_their_variable():
    with tf.device(replica_device_setter(cluster=_CLUSTER)):
        tf.Variable(0.0)
        v = tf.Variable([1.0, 2.0])
        with tf.device("/cpu:0"):
            up = tf.scatter_sub(v, [0], [1.0])
        add = v.assign_add([1.0, 1.0])
    assert_device("/job:ps/task:1", up.device)
    assert_device("/job:ps/task:1", add.device)


# ------------------------------------------------------- contrib device_setter_test.py
def test_random_strategy_basic():
    ps_strategy = contrib_training.RandomStrategy(2, seed=0)
    with tf.device(replica_device_setter(cluster=_CLUSTER, ps_strategy=ps_strategy)):
        u = tf.Variable(tf.zeros([2, 2]))
        v = tf.Variable(tf.zeros([2, 1]))
        w = tf.Variable(tf.zeros([2, 2]))
        x = tf.Variable(tf.zeros([1, 3]))
        a = v + w
    # Randomly distributed with seed 0 (the op names are Variable, Variable_1, ...).
    assert_var("/job:ps/task:1", u)
    assert_var("/job:ps/task:0", v)
    assert_var("/job:ps/task:1", w)
    assert_var("/job:ps/task:1", x)
    assert_device("/job:worker", a.device)


def test_random_strategy_handles_unicode():
    op = MockOperation("A unicode \u018e string \xf1")
    assert contrib_training.RandomStrategy(2, seed=0)(op) == 1


def test_greedy_uniform_load_equals_round_robin():
    strategy = contrib_training.GreedyLoadBalancingStrategy(2, lambda unused_op: 1)
    with tf.device(replica_device_setter(cluster=_CLUSTER, ps_strategy=strategy)):
        u = tf.Variable(tf.zeros([2, 2]))
        v = tf.Variable(tf.zeros([2, 1]))
        w = tf.Variable(tf.zeros([2, 2]))
        x = tf.Variable(tf.zeros([1, 3]))
        a = v + w
    assert_var("/job:ps/task:0", u)
    assert_var("/job:ps/task:1", v)
    assert_var("/job:ps/task:0", w)
    assert_var("/job:ps/task:1", x)
    assert_device("/job:worker", a.device)


def test_greedy_byte_size_load_fn():
    strategy = contrib_training.GreedyLoadBalancingStrategy(2, contrib_training.byte_size_load_fn)
    with tf.device(replica_device_setter(cluster=_CLUSTER, ps_strategy=strategy)):
        u = tf.Variable(tf.zeros([2, 2]))  # 16 bytes
        v = tf.Variable(tf.zeros([2, 1]))  # 8
        w = tf.Variable(tf.zeros([2, 2]))  # 16
        x = tf.Variable(tf.zeros([1, 3]))  # 12
        a = v + w
    assert_var("/job:ps/task:0", u)
    assert_var("/job:ps/task:1", v)
    assert_var("/job:ps/task:1", w)
    assert_var("/job:ps/task:0", x)
    assert_device("/job:worker", a.device)


def test_greedy_byte_size_load_fn_with_scalar():
    strategy = contrib_training.GreedyLoadBalancingStrategy(2, contrib_training.byte_size_load_fn)
    with tf.device(replica_device_setter(cluster=_CLUSTER, ps_strategy=strategy)):
        u = tf.Variable(0)
    assert_var("/job:ps/task:0", u)


def test_byte_size_load_fn_values_and_errors():
    v = tf.Variable(tf.zeros([3, 5], dtype=tf.float64))
    assert contrib_training.byte_size_load_fn(v.op) == 3 * 5 * 8
    split = tf.split(tf.zeros([4]), 2)
    with pytest.raises(ValueError, match="must have a single output"):
        contrib_training.byte_size_load_fn(split[0].op)
