"""A peer that speaks neither tensorweave nor TensorFlow (a gRPC server without the
services) gets a prompt UnimplementedError naming the method and the peer, never a hang or
an empty message (issue 14 acceptance)."""

from __future__ import annotations

import concurrent.futures

import grpc
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.testing.cluster import pick_unused_port


@pytest.fixture
def bare_address():
    server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=2))
    port = server.add_insecure_port("localhost:0")
    server.start()
    yield f"localhost:{port}"
    server.stop(None)


def test_session_on_a_bare_grpc_target_names_method_and_peer(bare_address):
    with tf.Graph().as_default():
        c = tf.constant(1.0)
        with pytest.raises(errors.UnimplementedError) as info:
            with tf.Session(f"grpc://{bare_address}",
                            config=tf.ConfigProto(operation_timeout_in_ms=20000)) as sess:
                sess.run(c)
    message = str(info.value)
    assert "/tensorflow.MasterService/CreateSession" in message
    assert bare_address in message


def test_cluster_task_on_a_bare_grpc_server_names_method_and_peer(bare_address):
    cluster = tf.train.ClusterSpec({"ps": [bare_address],
                                    "worker": [f"localhost:{pick_unused_port()}"]})
    server = tf.train.Server(cluster, job_name="worker", task_index=0)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                c = tf.constant(1.0) + 1.0
            with pytest.raises(errors.UnimplementedError) as info:
                with tf.Session(server.target,
                                config=tf.ConfigProto(operation_timeout_in_ms=20000)) as sess:
                    sess.run(c)
    finally:
        server.stop()
    message = str(info.value)
    assert "/tensorflow.WorkerService/GetStatus" in message
    assert bare_address in message and "/job:ps/replica:0/task:0" in message
