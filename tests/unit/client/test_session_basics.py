import collections

import numpy as np
import pytest

import tensorweave as tf


def test_seed_first_block_separate_state():
    g = tf.Graph()
    with g.as_default():
        var = tf.Variable(initial_value=0.0)
        init = tf.global_variables_initializer()
        inc = var.assign_add(1.0)
    sess1, sess2 = tf.Session(graph=g), tf.Session(graph=g)
    sess1.run(init)
    sess2.run(init)
    sess1.run(inc)
    assert sess1.run(var) == 1.0
    assert sess2.run(var) == 0.0
    assert isinstance(sess1.run(var), np.float32)


def test_operations_listed_like_tensorflow():
    g = tf.Graph()
    with g.as_default():
        tf.Variable(0.0, name="var")
    assert repr(g.get_operations()) == (
        "[<tf.Operation 'var/initial_value' type=Const>, <tf.Operation 'var' type=VariableV2>,"
        " <tf.Operation 'var/Assign' type=Assign>, <tf.Operation 'var/read' type=Identity>]"
    )


def test_nested_fetch_structures():
    Pair = collections.namedtuple("Pair", ["x", "y"])
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0, name="a")
        b = tf.constant([2, 3], name="b")
        noop = tf.no_op()
    with tf.Session(graph=g) as sess:
        out = sess.run({"a": a, "list": [a, (b, noop)], "pair": Pair(a, "b:0")})
        assert out["a"] == 1.0
        assert out["list"][1][1] is None
        np.testing.assert_array_equal(out["list"][1][0], [2, 3])
        assert isinstance(out["pair"], Pair)
        np.testing.assert_array_equal(out["pair"].y, [2, 3])
        assert sess.run("a:0") == 1.0
        assert sess.run("a") is None


def test_feeds_by_tensor_and_name_and_shape_checks():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, shape=[None, 2], name="x")
        y = tf.identity(x, name="y")
    with tf.Session(graph=g) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [[1, 2]]}), [[1.0, 2.0]])
        np.testing.assert_array_equal(sess.run(y, {"x:0": [[3, 4]]}), [[3.0, 4.0]])
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(y, {x: [1.0, 2.0, 3.0]})
        with pytest.raises(
            tf.errors.InvalidArgumentError, match="must feed a value for placeholder tensor 'x'"
        ):
            sess.run(y)
        with pytest.raises(TypeError, match="cannot be a tf.Tensor"):
            sess.run(y, {x: y})


def test_fed_array_is_not_aliased():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, shape=[2])
        v = tf.Variable([0.0, 0.0])
        assign = v.assign(x)
    with tf.Session(graph=g) as sess:
        arr = np.array([1.0, 2.0], dtype=np.float32)
        sess.run(assign, {x: arr})
        arr[0] = 100.0
        out = sess.run(v)
        np.testing.assert_array_equal(out, [1.0, 2.0])
        out[1] = 7.0  # fetched arrays are writable copies
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_fetch_errors():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="a")
    other = tf.Graph()
    with other.as_default():
        b = tf.constant(1.0)
    with tf.Session(graph=g) as sess:
        with pytest.raises(TypeError):
            sess.run(None)
        with pytest.raises(ValueError):
            sess.run(b)
        with pytest.raises(ValueError):
            sess.run("missing:0")
        with pytest.raises(TypeError):
            sess.run(3.5)


def test_uninitialized_variable_names_it():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0, name="my_var")
    with tf.Session(graph=g) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value my_var"):
            sess.run(v.value())


def test_closed_session_and_context_manager():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(2.0)
    with tf.Session(graph=g) as sess:
        assert tf.get_default_session() is sess
        assert a.eval() == 2.0
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(a)


def test_interactive_session_and_eval():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(42.0)
    sess = tf.InteractiveSession(graph=g)
    try:
        assert a.eval() == 42.0
        assert tf.get_default_session() is sess
    finally:
        sess.close()


def test_make_callable():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, shape=[])
        y = tf.identity(x)
    with tf.Session(graph=g) as sess:
        f = sess.make_callable([y], feed_list=[x])
        assert f(3.0) == [3.0]


def test_unknown_target_is_not_found():
    with pytest.raises(tf.errors.NotFoundError):
        tf.Session("foo://bar")


def test_full_trace_fills_step_stats():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0, name="var")
        inc = v.assign_add(1.0)
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
        md = tf.RunMetadata()
        sess.run(inc, options=opts, run_metadata=md)
        (dev,) = md.step_stats.dev_stats
        assert dev.device == "/job:localhost/replica:0/task:0/device:CPU:0"
        names = [n.node_name for n in dev.node_stats]
        assert names[0] == "_SOURCE"
        assert set(names[1:]) == {"var", "AssignAdd/value", "AssignAdd"}
        assert len(md.partition_graphs) == 1


def test_placement_error_for_unknown_device():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            a = tf.constant(1.0)
    with tf.Session(graph=g) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot assign a device"):
            sess.run(a)
    with tf.Session(graph=g, config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        assert sess.run(a) == 1.0


def test_run_timeout_option_is_accepted():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0)
    with tf.Session(graph=g) as sess:
        assert sess.run(a, options=tf.RunOptions(timeout_in_ms=1000)) == 1.0
