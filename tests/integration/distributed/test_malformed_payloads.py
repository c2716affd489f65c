"""Malformed payloads get INVALID_ARGUMENT and the server stays up (over gRPC and over the
step-call socket); a garbage frame on the socket only drops that connection."""

from __future__ import annotations

import socket

import grpc
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.distributed.transport import local_rpc, methods, tcp_stream

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


def test_step_call_socket_malformed_request_and_garbage_frame(server):
    address = server.target[len("grpc://"):]
    channel = grpc.insecure_channel(address)
    port = int(channel.unary_unary(methods.GET_STEP_STREAM_PORT)(b"", timeout=10))
    client = local_rpc.LocalRpcClient("/job:local/replica:0/task:0", address,
                                      connector=tcp_stream.TcpConnector(address, channel))
    with pytest.raises(errors.InvalidArgumentError, match="Malformed"):
        client.call("/tensorflow.WorkerService/RunGraph", GARBAGE, 10.0)
    # A frame header announcing an absurd method name: the server drops the connection.
    raw = tcp_stream.dial("127.0.0.1", port)
    assert raw is not None
    with raw:
        raw.settimeout(10)
        raw.sendall(b"\xff" * 24)
        raw.shutdown(socket.SHUT_WR)
        assert raw.recv(16) == b""
    channel.close()
    client.close()
    _still_serves(server)
