"""`tf.variable_scope` / `tf.get_variable` (mirrors TF's variable_scope_test.py, graph mode):
the store, initializers, defaults inherited by sub-scopes, collections, custom getters,
partitioners, threads and the exact error messages. Names and reuse:
test_variable_scope_names.py."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import init_ops
from tensorweave.ops import variable_scope as vs_mod


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _eval(graph, variables, fetches=None):
    with tf.Session(graph=graph) as sess:
        sess.run([v.initializer for v in variables])
        return sess.run(fetches if fetches is not None else variables)


# ------------------------------------------------------------------------------ store
def test_store_get_var_and_name_exists():
    store = vs_mod._get_default_variable_store()
    assert vs_mod._get_default_variable_store() is store
    v = store.get_variable("v", [1])
    assert store.get_variable("v", [1]) is v  # no check by default
    store.get_variable("w", [1], reuse=False)
    with pytest.raises(ValueError, match="already exists"):
        store.get_variable("v", [1], reuse=False)
    assert store.get_variable("v", [1], reuse=True) is v
    with pytest.raises(ValueError, match="does not exist"):
        store.get_variable("u", [1], reuse=True)
    assert {x.name for x in store._vars.values()} == {"v:0", "w:0"}


def test_store_is_per_graph(graph):
    v = tf.get_variable("v", [1])
    with tf.Graph().as_default():
        w = tf.get_variable("v", [1])
    assert v is not w and v.graph is graph
    assert graph.get_collection(("__variable_store",))[0]._vars == {"v": v}


# ------------------------------------------------------------------- error messages
def test_exact_error_messages():
    with tf.variable_scope("foo"):
        tf.get_variable("v", [3])
    with pytest.raises(ValueError) as e:
        with tf.variable_scope("foo"):
            tf.get_variable("v", [3])
    assert str(e.value).startswith(
        "Variable foo/v already exists, disallowed. Did you mean to set reuse=True or "
        "reuse=tf.AUTO_REUSE in VarScope? Originally defined at:"
    )
    assert "test_variable_scope.py" in str(e.value)
    with tf.variable_scope("foo", reuse=True):
        with pytest.raises(ValueError) as e:
            tf.get_variable("w", [1])
        assert str(e.value) == (
            "Variable foo/w does not exist, or was not created with tf.get_variable(). Did "
            "you mean to set reuse=tf.AUTO_REUSE in VarScope?"
        )
        with pytest.raises(ValueError) as e:
            tf.get_variable("v", [2])
        assert str(e.value) == (
            "Trying to share variable foo/v, but specified shape (2,) and found shape (3,)."
        )
        with pytest.raises(ValueError) as e:
            tf.get_variable("v", [3], dtype=tf.int32)
        assert str(e.value) == (
            "Trying to share variable foo/v, but specified dtype int32 and found dtype float32_ref."
        )


def test_get_variable_without_shape_or_valid_initializer():
    with pytest.raises(ValueError, match="The initializer passed is not valid"):
        tf.get_variable("x")
    with pytest.raises(ValueError, match="The initializer passed is not valid"):
        tf.get_variable("y", initializer=lambda x: [2])
    assert tf.get_variable("z", initializer=lambda: [2]).name == "z:0"
    assert tf.get_variable("z2", initializer=lambda x=True: [2]).name == "z2:0"
    with pytest.raises(ValueError, match="An initializer for variable c of .*complex64"):
        tf.get_variable("c", [2], dtype=tf.complex64)


# -------------------------------------------------------------------- initializers
def test_var_scope_initializer(graph):
    init = tf.constant_initializer(0.3)
    with tf.variable_scope("tower0") as tower:
        with tf.variable_scope("foo", initializer=init):
            v = tf.get_variable("v", [])
        with tf.variable_scope(tower, initializer=init):
            w = tf.get_variable("w", [])
        u = tf.get_variable("u", [], initializer=tf.zeros_initializer())
    np.testing.assert_allclose(_eval(graph, [v, w, u]), [0.3, 0.3, 0.0])


def test_default_initializers(graph):
    types = [tf.int8, tf.uint8, tf.int16, tf.uint16, tf.int32, tf.int64, tf.bool]
    xs = [tf.get_variable(f"xx{i}", shape=(3, 4), dtype=t) for i, t in enumerate(types)]
    s = tf.get_variable("string", shape=[], dtype=tf.string)
    f = tf.get_variable("f", shape=[20, 30])
    values = _eval(graph, xs + [s, f])
    for x, t in zip(values[:-2], types):
        assert x.dtype == t.as_numpy_dtype and not x.any()
    assert values[-2] == b""
    limit = np.sqrt(6.0 / 50)
    assert np.abs(values[-1]).max() <= limit and values[-1].std() > 0.3 * limit


def test_initialize_from_value(graph):
    init = tf.constant(0.1)
    w = tf.get_variable("v", initializer=init)
    with pytest.raises(ValueError, match="shape"):
        tf.get_variable("u", [1], initializer=init)
    with tf.variable_scope("foo", initializer=init):
        v = tf.get_variable("v")
    t = tf.get_variable("t", initializer=tf.constant(1, dtype=tf.int32))
    assert t.dtype.base_dtype == tf.int32
    with pytest.raises(ValueError, match="don't match"):
        tf.get_variable("s", initializer=tf.constant(1, dtype=tf.int32), dtype=tf.float64)
    np.testing.assert_allclose(_eval(graph, [w, v]), [0.1, 0.1])


def test_init_from_non_tensor_value(graph):
    v = tf.get_variable("v4", initializer=4, dtype=tf.int32)
    w = tf.get_variable("w4", initializer=np.array([1, 2, 3]), dtype=tf.int64)
    a, b = _eval(graph, [v, w])
    assert a == 4 and b.tolist() == [1, 2, 3] and b.dtype == np.int64
    with pytest.raises(TypeError):
        tf.get_variable("x4", initializer={})


def test_initializer_ops_are_named_and_colocated(graph):
    with tf.variable_scope("layer"):
        w = tf.get_variable("w", [4, 3], initializer=tf.random_normal_initializer(seed=1))
    init_ops_in_graph = [
        op for op in graph.get_operations() if op.name.startswith("layer/w/Initializer/")
    ]
    assert init_ops_in_graph
    assert all(op.get_attr("_class") == [b"loc:@layer/w"] for op in init_ops_in_graph)
    assert w.op.name == "layer/w" and w.op.type == "VariableV2"
    assert w.shape.as_list() == [4, 3]


def test_initializer_class_and_partition_info_argument(graph):
    seen = {}

    class Recording(init_ops.Initializer):
        def __call__(self, shape, dtype=None, partition_info=None):
            seen["args"] = (shape, dtype, partition_info)
            return tf.zeros_initializer()(shape, dtype)

    tf.get_variable("a", [2, 2], initializer=Recording)
    assert seen["args"] == ([2, 2], tf.float32, None)


# ----------------------------------------------------------------------- scope defaults
def test_var_scope_dtype_and_constraint():
    def constraint(x):
        return 0.0 * x

    with tf.variable_scope("tower2") as tower:
        with tf.variable_scope("foo", dtype=tf.float16, constraint=constraint):
            v = tf.get_variable("v", [])
            with tf.variable_scope("inner"):
                inner = tf.get_variable("inner", [])
        with tf.variable_scope(tower, dtype=tf.float16):
            w = tf.get_variable("w", [])
    assert v.dtype.base_dtype == tf.float16 and w.dtype.base_dtype == tf.float16
    assert inner.dtype.base_dtype == tf.float16
    assert v.constraint is constraint
    assert inner.constraint is None  # constraints are not inherited, as in TensorFlow


def test_var_scope_regularizer(graph):
    from tensorweave.framework.tensor_conversion import convert_to_tensor

    init = tf.constant_initializer(0.3)

    def regularizer1(v):
        return tf.identity(convert_to_tensor(v), name="loss1")

    def regularizer2(v):
        return tf.identity(convert_to_tensor(v), name="loss2")

    with tf.variable_scope("tower3", regularizer=regularizer1) as tower:
        with tf.variable_scope("foo", initializer=init):
            v = tf.get_variable("v", [])
            losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
            assert len(losses) == 1
            assert losses[0].name == "tower3/foo/v/Regularizer/loss1:0"
        with tf.variable_scope(tower, initializer=init) as vs:
            u = tf.get_variable("u", [])
            vs.set_regularizer(regularizer2)
            w = tf.get_variable("w", [])
            x = tf.get_variable("x", [], regularizer=tf.no_regularizer)
            with tf.variable_scope("baz", regularizer=tf.no_regularizer):
                y = tf.get_variable("y", [])
            vs.set_regularizer(tf.no_regularizer)
            z = tf.get_variable("z", [])
        losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
        assert [t.name for t in losses] == [
            "tower3/foo/v/Regularizer/loss1:0",
            "tower3/u/Regularizer/loss1:0",
            "tower3/w/Regularizer/loss2:0",
        ]
        with tf.variable_scope("foo", reuse=True):
            tf.get_variable("v", [])
        assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 3
    np.testing.assert_allclose(_eval(graph, [v, u, w, x, y, z], losses), [0.3] * 3)
    assert losses[0].op.get_attr("_class") == [b"loc:@tower3/foo/v"]


def test_var_scope_caching_device():
    with tf.variable_scope("tower"):
        with tf.variable_scope("caching", caching_device="/job:moo"):
            v = tf.get_variable("v", [])
            assert v.value().device.startswith("/job:moo")
            with tf.variable_scope("child"):
                assert tf.get_variable("v", []).value().device.startswith("/job:moo")
            with tf.variable_scope("we_will_do_it_live") as vs_live:
                vs_live.set_caching_device("/job:live")
                assert tf.get_variable("v", []).value().device.startswith("/job:live")
        assert not tf.get_variable("v", []).value().device.startswith("/job:moo")


def test_get_variable_scope_setters():
    init = tf.constant_initializer(0.3)
    with tf.variable_scope("bar"):
        assert tf.get_variable_scope().initializer is None
        tf.get_variable_scope().set_initializer(init)
        assert tf.get_variable_scope().initializer is init
        tf.get_variable("v", [])
        tf.get_variable_scope().reuse_variables()
        with pytest.raises(ValueError):
            tf.get_variable("w", [1])
    assert tf.get_variable_scope().initializer is None
    assert tf.get_variable_scope().reuse is False


# ----------------------------------------------------------------- collections, locals
def test_get_collection_and_local_variables():
    tf.get_variable("a", [])
    tf.get_variable("b", [], trainable=False)
    with tf.variable_scope("foo_") as scope1:
        tf.get_variable("a", [])
        tf.get_variable("b", [], trainable=False)
        tf.get_variable("c", [], synchronization=tf.VariableSynchronization.ON_READ)
        tf.get_variable("d", [], synchronization=tf.VariableSynchronization.ON_READ, trainable=True)
        assert [v.name for v in scope1.trainable_variables()] == ["foo_/a:0", "foo_/d:0"]
        assert [v.name for v in scope1.global_variables()] == [
            "foo_/a:0",
            "foo_/b:0",
            "foo_/c:0",
            "foo_/d:0",
        ]
    with tf.variable_scope("foo") as scope2:
        tf.get_variable("a", [])
        assert [v.name for v in scope2.global_variables()] == ["foo/a:0"]
    with tf.variable_scope("outer") as outer, tf.variable_scope(outer, "default", []):
        local = tf.get_local_variable("w", [], collections=["foo"])
        tf.get_variable("l", [], collections=[tf.GraphKeys.LOCAL_VARIABLES])
        assert [v.name for v in outer.local_variables()] == ["outer/w:0", "outer/l:0"]
    assert local.name == "outer/w:0"
    assert local in tf.get_collection(tf.GraphKeys.LOCAL_VARIABLES)
    assert local in tf.get_collection("foo")
    assert local not in tf.trainable_variables()
    with tf.variable_scope("outer", reuse=True):
        assert tf.get_local_variable("w", []) is local


def test_get_variable_with_device_function(graph):
    seen = []

    def device_func(op):
        if op.type == "VariableV2":
            seen.append((op.name, op.get_attr("dtype")))
        return "/device:CPU:0"

    with tf.device(device_func):
        tf.get_variable("x", (10, 20))
        tf.get_variable("y", dtype=tf.int64, initializer=np.arange(73))
    assert seen == [("x", tf.float32), ("y", tf.int64)]


def test_control_dependencies_are_not_inherited(graph):
    v0 = tf.get_variable("v0", [1], initializer=tf.constant_initializer(0))
    with tf.control_dependencies([v0.value()]):
        v1 = tf.get_variable("v1", [1], initializer=tf.constant_initializer(1))
    with tf.Session(graph=graph) as sess:
        sess.run(v1.initializer)  # does not need v0 initialized
        assert sess.run(v1).tolist() == [1.0]
        with pytest.raises(tf.errors.OpError, match="uninitialized"):
            sess.run(v0)


# ------------------------------------------------------------------ custom getters
def test_custom_getters_compose_outermost_last():
    calls = []

    def getter_a(getter, name, *args, **kwargs):
        calls.append("a")
        return getter(name + "_a", *args, **kwargs)

    def getter_b(getter, name, *args, **kwargs):
        calls.append("b")
        return getter(name + "_b", *args, **kwargs)

    with tf.variable_scope("s", custom_getter=getter_a):
        with tf.variable_scope("t", custom_getter=getter_b):
            v = tf.get_variable("v", [1])
        w = tf.get_variable("w", [1], custom_getter=lambda getter, *a, **k: getter(*a, **k))
    assert v.name == "s/t/v_b_a:0"
    assert calls == ["b", "a"]
    assert w.name == "s/w:0"
    with pytest.raises(ValueError, match="not callable"):
        tf.get_variable("x", [1], custom_getter=3)


def test_custom_getter_sees_constraint_only_when_accepted():
    received = {}

    def getter(getter, *args, constraint=None, **kwargs):
        received["constraint"] = constraint
        return getter(*args, constraint=constraint, **kwargs)

    def c(x):
        return x

    v = tf.get_variable("v", [1], custom_getter=getter, constraint=c)
    assert received["constraint"] is c and v.constraint is c


# --------------------------------------------------------------------- partitioner
def test_partitioner_single_partition_and_split():
    # More partitioner cases: tests/unit/ops/test_partitioned_variables.py.
    def one(shape=None, **_):
        return [1] * len(shape)

    def two(shape=None, **_):
        return [2] + [1] * (len(shape) - 1)

    with tf.variable_scope("p", partitioner=one):
        v = tf.get_variable("v", [4, 2])
        s = tf.get_variable("s", [])  # scalars are never partitioned
    assert [p.name for p in v] == ["p/v/part_0:0"] and s.name == "p/s:0"
    with tf.variable_scope("p2", partitioner=two):
        pv = tf.get_variable("v", [4, 2])
    assert [p.name for p in pv] == ["p2/v/part_0:0", "p2/v/part_1:0"]
    with pytest.raises(ValueError, match="Partitioner must be callable"):
        tf.get_variable("q", [2], partitioner=3)


# ----------------------------------------------------------------------- threads
def test_variable_scopes_are_thread_local(graph):
    names = {}

    def worker(scope):
        with graph.as_default():
            names["fresh"] = tf.get_variable_scope().name
            with tf.variable_scope(scope):
                names["captured"] = tf.get_variable("t", []).name

    with tf.variable_scope("main") as main:
        t = threading.Thread(target=worker, args=(main,))
        t.start()
        t.join()
    assert names == {"fresh": "", "captured": "main/t:0"}


def test_run_values(graph):
    with tf.variable_scope("m", initializer=tf.ones_initializer()):
        a = tf.get_variable("a", [2, 2], dtype=tf.float64)
        b = tf.get_variable("b", [3], dtype=tf.int32)
    va, vb = _eval(graph, [a, b])
    np.testing.assert_array_equal(va, np.ones((2, 2)))
    assert va.dtype == np.float64 and vb.dtype == np.int32 and vb.tolist() == [1, 1, 1]
