import threading

import pytest

import tensorweave as tf


def test_unique_names_and_name_scopes():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0, name="a")
        b = tf.constant(1.0, name="a")
        c = tf.constant(1.0, name="A")  # case-insensitive, as TensorFlow
        with tf.name_scope("scope") as scope:
            assert scope == "scope/"
            d = tf.constant(1.0, name="x")
            with tf.name_scope("inner"):
                e = tf.constant(1.0)
        with tf.name_scope("scope"):
            f = tf.constant(1.0, name="x")
        with tf.name_scope("scope/"):
            h = tf.constant(1.0, name="y")
        with tf.name_scope(None):
            i = tf.constant(1.0, name="root")
    assert [t.op.name for t in (a, b, c, d, e, f, h, i)] == [
        "a", "a_1", "A_2", "scope/x", "scope/inner/Const", "scope_1/x", "scope/y", "root",
    ]
    assert a.name == "a:0"


def test_invalid_scope_name():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="not a valid scope name"):
            with tf.name_scope("-bad"):
                pass


def test_get_tensor_and_operation_by_name():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant([1.0, 2.0], name="x")
    assert g.get_tensor_by_name("x:0") is x
    assert g.get_operation_by_name("x") is x.op
    with pytest.raises(KeyError):
        g.get_tensor_by_name("missing:0")
    with pytest.raises(ValueError):
        g.get_operation_by_name("x:0")
    with pytest.raises(TypeError):
        g.get_tensor_by_name(3)


def test_device_scopes_merge_innermost_first():
    with tf.Graph().as_default():
        with tf.device("/job:ps"):
            with tf.device("/task:0"):
                a = tf.constant(1.0)
        with tf.device("/device:GPU:0"):
            b = tf.constant(1.0)
            with tf.device("/job:worker"):
                c = tf.constant(1.0)
                with tf.device("/device:CPU:0"):
                    d = tf.constant(1.0)
                    with tf.device("/job:ps"):
                        e = tf.constant(1.0)
        with tf.device("/job:ps/task:1"):
            with tf.device(None):
                f = tf.constant(1.0)
        with tf.device(lambda op: "/job:fn/task:3"):
            with tf.device("/job:inner"):
                h = tf.constant(1.0)
        with tf.device(tf.DeviceSpec(job="spec", task=2)):
            i = tf.constant(1.0)
    assert a.device == "/job:ps/task:0"
    assert b.device == "/device:GPU:0"
    assert c.device == "/job:worker/device:GPU:0"
    assert d.device == "/job:worker/device:CPU:0"
    assert e.device == "/job:ps/device:CPU:0"
    assert f.device == ""
    assert h.device == "/job:fn/task:3"  # a function's result replaces the device
    assert i.device == "/job:spec/task:2"


def test_legacy_device_strings_are_canonicalized():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            a = tf.constant(1.0)
    assert a.device == "/device:CPU:0"


def test_colocate_with_suspends_device_scopes():
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:1"):
            v = tf.Variable(1.0, name="v")
        with tf.device("/job:worker"):
            with tf.colocate_with(v.op):
                c = tf.identity(v, name="c")
    assert c.device == "/job:ps/task:1"
    assert c.op.get_attr("_class") == [b"loc:@v"]
    assert v.initializer.device == v.device == "/job:ps/task:1"


def test_control_dependencies():
    with tf.Graph().as_default():
        a = tf.constant(1.0, name="a")
        b = tf.constant(2.0, name="b")
        with tf.control_dependencies([a]):
            c = tf.identity(b, name="c")
            d = tf.identity(c, name="d")  # dominated: c was created in the same scope
            with tf.control_dependencies(None):
                e = tf.constant(3.0, name="e")
            with tf.control_dependencies([b.op]):
                f = tf.constant(3.0, name="f")
    assert c.op.control_inputs == [a.op]
    assert d.op.control_inputs == []
    assert e.op.control_inputs == []
    assert set(op.name for op in f.op.control_inputs) == {"a", "b"}


def test_collections():
    g = tf.Graph()
    with g.as_default():
        v1 = tf.Variable(1.0, name="scope/v1")
        v2 = tf.Variable(1.0, name="other/v2", trainable=False)
        tf.add_to_collection("mine", 3)
    assert g.get_collection(tf.GraphKeys.GLOBAL_VARIABLES) == [v1, v2]
    assert g.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES) == [v1]
    assert g.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="scope") == [v1]
    assert g.get_collection("mine") == [3]
    ref = g.get_collection_ref("mine")
    ref.append(4)
    assert g.get_collection("mine") == [3, 4]
    g.clear_collection("mine")
    assert g.get_collection("mine") == []


def test_all_collection_keys_are_strings_and_meta_graph_does_not_warn(caplog):
    """As TF, get_all_collection_keys leaves out the variable stores' tuple keys, so
    exporting a meta graph (Supervisor, Saver) logs no "Only collections with string type
    keys" warning for them."""
    g = tf.Graph()
    with g.as_default():
        tf.get_variable("w", [2])
        tf.add_to_collection(("tuple", "key"), 1)
        keys = g.get_all_collection_keys()
        assert all(isinstance(k, str) for k in keys)
        assert tf.GraphKeys.GLOBAL_VARIABLES in keys
        with caplog.at_level("WARNING"):
            tf.train.export_meta_graph()
    assert "Only collections with string type keys" not in caplog.text


def test_finalize_rejects_new_ops():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0)
        g.finalize()
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(2.0)
        g._unsafe_unfinalize()
        tf.constant(2.0)


def test_default_graph_stack_and_reset():
    g = tf.Graph()
    with g.as_default():
        assert tf.get_default_graph() is g
        with pytest.raises(AssertionError):
            tf.reset_default_graph()
    before = tf.get_default_graph()
    tf.reset_default_graph()
    assert tf.get_default_graph() is not before


def test_default_graph_is_thread_local_stack():
    g = tf.Graph()
    seen = []
    with g.as_default():
        t = threading.Thread(target=lambda: seen.append(tf.get_default_graph()))
        t.start()
        t.join()
    assert seen[0] is not g


def test_inputs_from_two_graphs_rejected():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        a = tf.constant(1.0)
    with g2.as_default():
        b = tf.constant(1.0)
        with pytest.raises(ValueError):
            tf.add(a, b)


def test_container_scope_sets_stateful_container_attr():
    with tf.Graph().as_default():
        with tf.container("test0"):
            v = tf.Variable(1.0, name="v")
        w = tf.Variable(1.0, name="w")
    assert v.op.get_attr("container") == b"test0"
    assert w.op.get_attr("container") == b""


def test_tensor_bool_and_iteration_errors():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        with pytest.raises(TypeError):
            bool(x)
        with pytest.raises(TypeError):
            iter(x)
