"""Co-located tasks make their per-step calls over the same-host socket
(`transport.local_rpc`), and `TensorweaveOptions.disable_local_rpc` turns that off for a
session or a server, with the same results over gRPC."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed.transport import local_rpc
from tensorweave.testing.cluster import create_local_cluster

pytestmark = pytest.mark.skipif(not local_rpc.supported(), reason="needs Linux sockets")


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
        port = int(server.target.rsplit(":", 1)[1])
        client = local_rpc.LocalRpcClient("/job:local/replica:0/task:0", f"localhost:{port}")
        assert client.call("/tensorflow.grpc.WorkerService/RunGraph", b"", 1.0) is None
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
