"""Co-located tasks make their per-step calls over the step-call socket (`transport.local_rpc`
framing over `tcp_stream`'s loopback TCP), and `TensorweaveOptions.disable_local_rpc` turns
that off for a session or a server, with the same results over gRPC."""

from __future__ import annotations

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed.transport import methods
from tensorweave.testing.cluster import create_local_cluster


def _config(disable_local_rpc: bool = False) -> tf.ConfigProto:
    config = tf.ConfigProto()
    # NOTE: in-process servers are otherwise called without any RPC at all.
    config.rpc_options.use_rpc_for_inprocess_master = True
    config.tensorweave.disable_local_rpc = disable_local_rpc
    return config


def _graph():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable([1.0, 2.0], name="v")
        with tf.device("/job:worker/task:0"):
            doubled = v * 2.0
            update = v.assign_add(doubled)
    return g, v, doubled, update


@pytest.fixture
def cluster():
    workers, ps = create_local_cluster(1, 1)
    yield workers[0], ps[0]
    for s in workers + ps:
        s.stop()


@pytest.mark.parametrize("disable", [False, True])
def test_steps_over_the_local_socket_or_grpc(cluster, disable):
    worker, ps = cluster
    g, v, doubled, update = _graph()
    before = ps.local_rpc_calls + worker.local_rpc_calls
    with tf.Session(worker.target, graph=g, config=_config(disable)) as sess:
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(doubled), [2.0, 4.0])
        sess.run(update)
        np.testing.assert_allclose(sess.run(v), [3.0, 6.0])
    local_calls = ps.local_rpc_calls + worker.local_rpc_calls - before
    assert (local_calls == 0) if disable else (local_calls >= 4)


def test_server_with_local_rpc_disabled_has_no_socket():
    server = tf.train.Server.create_local_server(config=_config(disable_local_rpc=True))
    try:
        assert server.local_rpc_calls is None
        channel = grpc.insecure_channel(server.target.removeprefix("grpc://"))
        try:  # the step-call port it announces: none
            assert channel.unary_unary(methods.GET_STEP_STREAM_PORT)(b"", timeout=10) == b""
        finally:
            channel.close()
        g = tf.Graph()
        with g.as_default():
            c = tf.constant(3.0) * 2.0
        with tf.Session(server.target, graph=g, config=_config()) as sess:
            assert sess.run(c) == 6.0
    finally:
        server.stop()


def test_stopped_peer_is_unavailable_over_the_local_socket(cluster):
    worker, ps = cluster
    g, v, doubled, _ = _graph()
    with tf.Session(worker.target, graph=g, config=_config()) as sess:
        sess.run(v.initializer)
        ps.stop()
        with pytest.raises(tf.errors.UnavailableError, match="/job:ps/replica:0/task:0"):
            sess.run(doubled, options=tf.RunOptions(timeout_in_ms=5000))


@pytest.mark.parametrize("use_rpc", [False, True])
def test_single_partition_steps_keep_no_undo_log(cluster, use_rpc):
    """A step with one partition cannot be asked to roll back: its variable writes leave
    no undo entry (old values of big variables are not kept alive); a step spanning two
    tasks keeps one until the master ends it (the next step to that task commits it)."""
    worker, ps = cluster
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(tf.zeros([1000]), name="v")
            p = tf.placeholder(tf.float32, [1000])
            assign_on_ps = v.assign(p)
        with tf.device("/job:worker/task:0"):
            fed_from_worker = tf.identity(p) * 2.0
        assign_across = v.assign(fed_from_worker)
    config = _config() if use_rpc else None
    with tf.Session(worker.target, graph=g, config=config) as sess:
        sess.run(v.initializer)
        ps.worker._undo.clear()
        sess.run(assign_on_ps.op, {p: np.ones(1000, np.float32)})
        assert len(ps.worker._undo) == 0
        sess.run(assign_across.op, {p: np.ones(1000, np.float32)})
        assert len(ps.worker._undo) == 1
        np.testing.assert_allclose(sess.run(v)[:3], [2.0, 2.0, 2.0])
        assert len(ps.worker._undo) == 0
