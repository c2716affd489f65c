"""Malformed payloads get INVALID_ARGUMENT and the server stays up (over gRPC and over the
same-host socket); a garbage frame on the socket only drops that connection."""

from __future__ import annotations

import socket

import grpc
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.distributed.transport import local_rpc

GARBAGE = b"\xff\xff\xff\xff\x0f not a protobuf"


@pytest.fixture
def server():
    s = tf.train.Server.create_local_server()
    yield s
    s.stop()


def _still_serves(server) -> None:
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(2.0) * 3.0
    with tf.Session(server.target, graph=g) as sess:
        assert sess.run(c) == 6.0


@pytest.mark.parametrize("method", [
    "/tensorflow.WorkerService/RunGraph",
    "/tensorflow.WorkerService/RegisterGraph",
    "/tensorflow.MasterService/RunStep",
    "/tensorweave.WorkerService/RecvTensors",
])
def test_grpc_malformed_request_is_invalid_argument(server, method):
    address = server.target[len("grpc://"):]
    with grpc.insecure_channel(address) as channel:
        with pytest.raises(grpc.RpcError) as info:
            channel.unary_unary(method)(GARBAGE, timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "Malformed" in info.value.details()
    _still_serves(server)


@pytest.mark.skipif(not local_rpc.supported(), reason="needs Linux sockets")
def test_local_socket_malformed_request_and_garbage_frame(server):
    port = int(server.target.rsplit(":", 1)[1])
    client = local_rpc.LocalRpcClient("/job:local/replica:0/task:0", f"localhost:{port}")
    with pytest.raises(errors.InvalidArgumentError, match="Malformed"):
        client.call("/tensorflow.WorkerService/RunGraph", GARBAGE, 10.0)
    # A frame header announcing an absurd method name: the server drops the connection.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
        raw.settimeout(10)
        raw.connect(local_rpc.socket_name(port))
        raw.sendall(b"\xff" * 24)
        raw.shutdown(socket.SHUT_WR)
        assert raw.recv(16) == b""
    client.close()
    _still_serves(server)
