"""Peers on other hosts get their per-step calls and step streams over the TCP step-call
socket (`transport.tcp_stream`), authenticated by a handshake; a peer without one, a
refused handshake or `disable_tcp_streams` leave them to gRPC with the same results.

"Other hosts" here: a `ProcessRuntime` whose host locality calls no address local (no
/dev/shm handoff); the TCP step-call socket applies over loopback, as it does for peers on
this host (`test_local_rpc_cluster`)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed.process_runtime import ProcessRuntime
from tensorweave.distributed.transport import grpc_client, local_rpc, methods, tcp_stream
from tensorweave.protos import worker_pb2
from tensorweave.testing.cluster import create_local_cluster


class _Nowhere:
    """A host locality for which every peer is on another host."""

    def is_local_address(self, address: str) -> bool:
        return False


def _config(disable_tcp: bool = False, disable_local_rpc: bool = False) -> tf.ConfigProto:
    config = tf.ConfigProto()
    # NOTE: in-process servers are otherwise called without any RPC at all.
    config.rpc_options.use_rpc_for_inprocess_master = True
    config.tensorweave.disable_tcp_streams = disable_tcp
    config.tensorweave.disable_local_rpc = disable_local_rpc
    return config


@pytest.fixture
def runtime():
    rt = ProcessRuntime()
    rt.host = _Nowhere()
    yield rt
    rt.close()


def _cluster(runtime, disable_tcp: bool = False):
    config = _config(disable_tcp)
    workers, ps = create_local_cluster(1, 2, worker_config=config, ps_config=config,
                                       runtime=runtime)
    return workers[0], ps


@pytest.fixture
def cluster(runtime):
    worker, ps = _cluster(runtime)
    yield worker, ps
    for s in [worker, *ps]:
        s.stop()


def _graph():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable([1.0, 2.0], name="v")
        with tf.device("/job:ps/task:1"):
            w = tf.Variable([10.0, 20.0], name="w")
        with tf.device("/job:worker/task:0"):
            total = v * 2.0 + w
        with tf.device("/job:ps/task:0"):
            update = v.assign_add(total)
    return g, v, w, total, update


def _calls(servers) -> int:
    return sum(s.local_rpc_calls or 0 for s in servers)


@pytest.mark.parametrize("disable_tcp", [False, True])
def test_steps_between_hosts_over_tcp_or_grpc(runtime, disable_tcp):
    worker, ps = _cluster(runtime, disable_tcp)
    try:
        _train_three_steps(worker, ps, runtime, disable_tcp)
    finally:
        for s in [worker, *ps]:
            s.stop()


def _train_three_steps(worker, ps, runtime, disable_tcp: bool) -> None:
    g, v, w, total, update = _graph()
    before = _calls([worker, *ps])
    with tf.Session(worker.target, graph=g, config=_config(disable_tcp),
                    runtime=runtime) as sess:
        sess.run([v.initializer, w.initializer])
        for _ in range(3):
            np.testing.assert_allclose(sess.run(total), sess.run(v) * 2.0 + [10.0, 20.0])
            sess.run(update)
        # v <- 3 v + w, three times
        np.testing.assert_allclose(sess.run(v), 27.0 * np.array([1.0, 2.0])
                                   + 13.0 * np.array([10.0, 20.0]))
    over_tcp = _calls([worker, *ps]) - before
    assert over_tcp == 0 if disable_tcp else over_tcp >= 8


def test_port_is_announced_and_handshake_admits_only_the_token(cluster):
    _, ps = cluster
    address = ps[0].address
    channel = grpc_client.make_channel(address)
    try:
        port = channel.unary_unary(methods.GET_STEP_STREAM_PORT)(b"", timeout=10)
        assert port.isdigit()
        request = worker_pb2.CleanupGraphRequest(step_id=7).SerializeToString()
        good = local_rpc.LocalRpcClient("/job:ps/replica:0/task:0", address,
                                        connector=tcp_stream.TcpConnector(address, channel))
        answer = good.call(methods.CLEANUP_GRAPH, request, 10.0)
        assert answer is not None
        worker_pb2.CleanupGraphResponse.FromString(answer)
        good.close()
        bad = local_rpc.LocalRpcClient(
            "/job:ps/replica:0/task:0", address,
            connector=tcp_stream.TcpConnector(address, channel, token=b"not-the-secret"))
        # NOTE: None: not admitted, the caller uses gRPC.
        assert bad.call(methods.CLEANUP_GRAPH, request, 10.0) is None
    finally:
        channel.close()


def test_server_without_tcp_socket_answers_empty(runtime):
    server = tf.train.Server({"local": ["localhost:0"]}, config=_config(disable_tcp=True),
                             runtime=runtime)
    channel = grpc_client.make_channel(server.address)
    try:
        assert channel.unary_unary(methods.GET_STEP_STREAM_PORT)(b"", timeout=10) == b""
        connector = tcp_stream.TcpConnector(server.address, channel)
        assert connector() is None
    finally:
        channel.close()
        server.stop()


def test_admit_rejects_a_wrong_magic():
    import socket

    a, b = socket.socketpair()
    try:
        a.sendall(tcp_stream.HELLO.pack(b"HTTP", tcp_stream.VERSION, 0))
        assert not tcp_stream.admit(b, token=b"")
        c, d = socket.socketpair()
        c.sendall(tcp_stream.HELLO.pack(tcp_stream.MAGIC, tcp_stream.VERSION, 3) + b"abc")
        assert tcp_stream.admit(d, token=b"abc")
        assert c.recv(1) == b"\x00"
        c.close()
        d.close()
    finally:
        a.close()
        b.close()


class _FakeChannel:
    """A channel whose `GetStepStreamPort` answers `port` and counts the calls."""

    def __init__(self, port: int):
        self.port = port
        self.probes = 0

    def unary_unary(self, path: str):
        assert path == methods.GET_STEP_STREAM_PORT

        def call(request: bytes, timeout: float) -> bytes:
            self.probes += 1
            return str(self.port).encode()

        return call


def test_unreachable_port_backs_off_to_grpc():
    import socket

    with socket.socket() as s:  # NOTE: a port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    channel = _FakeChannel(closed)
    connector = tcp_stream.TcpConnector(f"127.0.0.1:{closed}", channel)
    assert connector() is None
    assert connector() is None  # within the back-off: no second probe, no connect
    assert channel.probes == 1
