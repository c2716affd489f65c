"""Mirrors TensorFlow's server_lib_test.py (GrpcServerTest) and the split-out server tests."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.cluster import create_local_cluster, pick_unused_port


@pytest.fixture
def server():
    s = tf.train.Server.create_local_server()
    yield s
    s.stop()


def _matmul_graph():
    g = tf.Graph()
    with g.as_default():
        v0 = tf.Variable([[2.0, 1.0]], name="v0")
        v1 = tf.Variable([[1.0], [2.0]], name="v1")
        v2 = tf.matmul(v0, v1)
    return g, v0, v1, v2


def test_run_step(server):
    g = tf.Graph()
    with g.as_default():
        c = tf.matmul(tf.constant([[2.0, 1.0]]), tf.constant([[1.0], [2.0]]))
    with tf.Session(server.target, graph=g) as sess:
        np.testing.assert_allclose(sess.run(c), [[4.0]])


def test_hello_distributed(server):
    g = tf.Graph()
    with g.as_default():
        c = tf.constant("Hello, distributed TensorFlow!")
    with tf.Session(server.target, graph=g) as sess:
        assert sess.run(c) == b"Hello, distributed TensorFlow!"


def test_multiple_sessions(server):
    g, v0, v1, v2 = _matmul_graph()
    sess1 = tf.Session(server.target, graph=g)
    sess2 = tf.Session(server.target, graph=g)
    sess1.run([v0.initializer, v1.initializer])
    np.testing.assert_allclose(sess1.run(v2), [[4.0]])
    np.testing.assert_allclose(sess2.run(v2), [[4.0]])
    sess1.close()
    sess2.close()


def test_same_variables_no_clear(server):
    g, v0, v1, v2 = _matmul_graph()
    with tf.Session(server.target, graph=g) as sess:
        sess.run([v0.initializer, v1.initializer])
    g2 = tf.Graph()
    with g2.as_default():
        w0 = tf.Variable([[9.0, 9.0]], name="v0")
        w1 = tf.Variable([[9.0], [9.0]], name="v1")
        prod = tf.matmul(w0, w1)
    with tf.Session(server.target, graph=g2) as sess:
        np.testing.assert_allclose(sess.run(prod), [[4.0]])


def test_same_variables_clear(server):
    g, v0, v1, v2 = _matmul_graph()
    sess = tf.Session(server.target, graph=g)
    sess.run([v0.initializer, v1.initializer])
    np.testing.assert_allclose(sess.run(v2), [[4.0]])
    tf.Session.reset(server.target)
    with pytest.raises(tf.errors.AbortedError):
        sess.run(v2)
    with tf.Session(server.target, graph=g) as sess2:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess2.run(v2)
        sess2.run([v0.initializer, v1.initializer])
        np.testing.assert_allclose(sess2.run(v2), [[4.0]])


def test_reset_fails():
    with pytest.raises(tf.errors.NotFoundError):
        tf.Session.reset("nonexistent", ["test0"])
    port = pick_unused_port()
    with pytest.raises(tf.errors.DeadlineExceededError):
        tf.Session.reset(f"grpc://localhost:{port}", ["test0"],
                         config=tf.ConfigProto(operation_timeout_in_ms=5))


def test_multiple_containers(server):
    g = tf.Graph()
    with g.as_default():
        with tf.container("test0"):
            v0 = tf.Variable(1.0, name="v0")
        with tf.container("test1"):
            v1 = tf.Variable(2.0, name="v0")
    sess = tf.Session(server.target, graph=g)
    sess.run([v0.initializer, v1.initializer])
    assert sess.run(v0) == 1.0 and sess.run(v1) == 2.0
    tf.Session.reset(server.target, ["test0"])
    with pytest.raises(tf.errors.AbortedError):
        sess.run(v1)
    with tf.Session(server.target, graph=g) as sess2:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess2.run(v0)
        assert sess2.run(v1) == 2.0


def test_reset_nonexistent_container_keeps_others(server):
    g = tf.Graph()
    with g.as_default():
        with tf.container("test0"):
            v0 = tf.Variable(1.0, name="v0")
        v1 = tf.Variable(2.0, name="v1")
    with tf.Session(server.target, graph=g) as sess:
        sess.run([v0.initializer, v1.initializer])
    tf.Session.reset(server.target, ["test1"])
    with tf.Session(server.target, graph=g) as sess:
        assert sess.run(v0) == 1.0
        assert sess.run(v1) == 2.0


def test_large_constant_fetch_and_feed(server):
    g = tf.Graph()
    with g.as_default():
        big = tf.fill([10000, 3000], 0.5)
        shape = tf.shape(tf.constant(np.full((10000, 3000), 0.5, np.float32)))
        p = tf.placeholder(tf.float32, shape=[10000, 3000])
        lo, hi = tf.reduce_min(p), tf.reduce_max(p)
    config = tf.ConfigProto(rpc_options=tf.RPCOptions(use_rpc_for_inprocess_master=True))
    with tf.Session(server.target, graph=g, config=config) as sess:
        np.testing.assert_array_equal(sess.run(shape), [10000, 3000])
        out = sess.run(big)
        assert out.shape == (10000, 3000) and np.all(out == 0.5)
        assert sess.run([lo, hi], {p: np.full((10000, 3000), 0.5, np.float32)}) == [0.5, 0.5]


def test_invalid_hostname():
    with pytest.raises(tf.errors.InvalidArgumentError, match="port"):
        tf.train.Server({"local": ["localhost"]}, job_name="local", task_index=0)


def test_two_servers_same_port(server):
    address = server.target[len("grpc://"):]
    with pytest.raises(tf.errors.UnknownError, match=address.split(":")[1]):
        tf.train.Server({"local_2": [address]})


def test_stop_frees_port():
    port = pick_unused_port()
    s1 = tf.train.Server({"local": [f"localhost:{port}"]})
    s1.stop()
    s2 = tf.train.Server({"local": [f"localhost:{port}"]})
    s2.stop()
    assert s2.join(timeout=1)


def test_sparse_job():
    s = tf.train.Server({"local": {37: "localhost:0"}})
    try:
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:local/task:37"):
                a = tf.constant(1.0)
        with tf.Session(s.target, graph=g) as sess:
            assert sess.run(a) == 1.0
    finally:
        s.stop()


def test_isolate_session_state(server):
    g = tf.Graph()
    with g.as_default():
        init_value = tf.placeholder(tf.int32)
        v = tf.Variable(init_value, validate_shape=False, name="v")
    sharing_config = tf.ConfigProto(isolate_session_state=False)
    isolate_config = tf.ConfigProto(isolate_session_state=True)
    sharing1 = tf.Session(server.target, graph=g, config=sharing_config)
    sharing2 = tf.Session(server.target, graph=g, config=sharing_config)
    isolate1 = tf.Session(server.target, graph=g, config=isolate_config)
    isolate2 = tf.Session(server.target, graph=g, config=isolate_config)
    for s in (sharing1, sharing2, isolate1, isolate2):
        with pytest.raises(tf.errors.FailedPreconditionError):
            s.run(v)
    sharing1.run(v.initializer, {init_value: 86})
    assert sharing1.run(v) == 86 and sharing2.run(v) == 86
    for s in (isolate1, isolate2):
        with pytest.raises(tf.errors.FailedPreconditionError):
            s.run(v)
    isolate1.run(v.initializer, {init_value: 37})
    assert isolate1.run(v) == 37 and sharing1.run(v) == 86
    with pytest.raises(tf.errors.FailedPreconditionError):
        isolate2.run(v)
    sharing2.run(v.initializer, {init_value: [86, 99]})
    np.testing.assert_array_equal(sharing1.run(v), [86, 99])
    isolate2.run(v.initializer, {init_value: [19, 86]})
    np.testing.assert_array_equal(isolate2.run(v), [19, 86])
    assert isolate1.run(v) == 37


def test_two_tasks_shared_variable_and_placement():
    workers, _ = create_local_cluster(2, 0)
    try:
        g = tf.Graph()
        with g.as_default():
            var = tf.Variable(0.0, name="var")
            with tf.device("/job:worker/task:1"):
                var2 = tf.Variable(5.0, name="var2")
            inc = var.assign_add(1.0)
            total = var + var2
        s1 = tf.Session(workers[0].target, graph=g)
        s2 = tf.Session(workers[1].target, graph=g)
        s1.run(tf.group(var.initializer, var2.initializer))
        s1.run(inc)
        assert s2.run(var) == 1.0
        assert s2.run(total) == 6.0
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        md = tf.RunMetadata()
        s2.run(var, options=opts, run_metadata=md)
        by_dev = {d.device: [n.node_name for n in d.node_stats] for d in md.step_stats.dev_stats}
        assert by_dev == {
            "/job:worker/replica:0/task:1/device:CPU:0": ["_SOURCE"],
            "/job:worker/replica:0/task:0/device:CPU:0": ["_SOURCE", "var"],
        }
    finally:
        for w in workers:
            w.stop()
