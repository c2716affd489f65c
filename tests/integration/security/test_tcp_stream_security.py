"""The TCP step-call socket (`transport.tcp_stream`) under the security settings: with a
cluster token, a connection whose handshake lacks it (or carries another) is closed before
any call, and every frame on an admitted connection still needs it; with TLS no server
opens the (plaintext) socket and no client uses it, and steps between hosts go over TLS
gRPC with the same results."""

from __future__ import annotations

import socket

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.deploy import certs
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.process_runtime import ProcessRuntime
from tensorweave.distributed.transport import (
    grpc_client,
    local_rpc,
    methods,
    security,
    tcp_stream,
)
from tensorweave.distributed.worker_cache import Peer, TransportOptions
from tensorweave.protos import config_pb2, worker_pb2
from tensorweave.testing.cluster import create_local_cluster

SECRET = b"tcp-s3cret-token"
TASK = "/job:local/replica:0/task:0"


class _Nowhere:
    """A host locality for which every peer is on another host (the TCP transport applies
    over loopback)."""

    def is_local_address(self, address: str) -> bool:
        return False


@pytest.fixture
def runtime():
    rt = ProcessRuntime()
    rt.host = _Nowhere()
    yield rt
    rt.close()


@pytest.fixture
def token_file(tmp_path):
    path = tmp_path / "token"
    path.write_bytes(SECRET + b"\n")
    return str(path)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    out = tmp_path_factory.mktemp("pki")
    return certs.make_cluster_certs(ClusterSpec({"local": ["localhost:0"]}), str(out))


def _config(token_file=None, pki=None) -> config_pb2.ConfigProto:
    config = config_pb2.ConfigProto()
    config.rpc_options.use_rpc_for_inprocess_master = True  # NOTE: really over RPC
    sec = config.tensorweave.security
    if token_file:
        sec.auth_token_file = token_file
    if pki:
        sec.tls_cert_file = pki["local-0"]["cert"]
        sec.tls_key_file = pki["local-0"]["key"]
        sec.tls_ca_file = pki["ca"]["cert"]
    return config


@pytest.fixture
def token_server(token_file, runtime):
    server = tf.train.Server.create_local_server(config=_config(token_file), runtime=runtime)
    yield server
    server.stop()


def _port(server, sec: security.TransportSecurity) -> bytes:
    channel = grpc_client.make_channel(server.address, sec)
    try:
        return channel.unary_unary(methods.GET_STEP_STREAM_PORT)(b"", timeout=10)
    finally:
        channel.close()


def _handshake(port: int, token: bytes) -> bytes:
    """Sends a handshake offering `token`; returns what the server answers (b"": closed)."""
    with socket.create_connection(("127.0.0.1", port), 10) as sock:
        sock.settimeout(10)
        sock.sendall(tcp_stream.HELLO.pack(tcp_stream.MAGIC, tcp_stream.VERSION, len(token))
                     + token)
        try:
            return sock.recv(1)
        except ConnectionResetError:
            return b""


def test_handshake_without_the_token_is_refused(token_server):
    port = _port(token_server, security.TransportSecurity(token=SECRET))
    assert port.isdigit()
    assert _handshake(int(port), b"") == b""
    assert _handshake(int(port), b"wrong") == b""
    assert _handshake(int(port), SECRET[:-1]) == b""
    assert _handshake(int(port), SECRET) == b"\x00"


def test_port_is_not_announced_without_the_token(token_server):
    with pytest.raises(grpc.RpcError) as info:
        _port(token_server, None)
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.parametrize("token", [None, b"wrong"], ids=["no-token", "wrong-token"])
def test_step_calls_without_the_token_are_refused(token_server, token):
    sec = security.TransportSecurity(token=SECRET)
    channel = grpc_client.make_channel(token_server.address, sec)  # NOTE: port discovery
    request = worker_pb2.CleanupGraphRequest(step_id=7).SerializeToString()
    try:
        bad = local_rpc.LocalRpcClient(
            TASK, token_server.address, token,
            connector=tcp_stream.TcpConnector(token_server.address, channel, token))
        # NOTE: None: not admitted (the caller would use gRPC, where the token is checked).
        assert bad.call(methods.CLEANUP_GRAPH, request, 10.0) is None
        bad.close()
        # Admitted by the handshake, but the frames carry another token: refused too.
        frames = local_rpc.LocalRpcClient(
            TASK, token_server.address, token,
            connector=tcp_stream.TcpConnector(token_server.address, channel, SECRET))
        with pytest.raises(errors.UnauthenticatedError, match="CleanupGraph") as info:
            frames.call(methods.CLEANUP_GRAPH, request, 10.0)
        assert SECRET.decode() not in str(info.value)
        frames.close()
        calls = token_server.local_rpc_calls
        good = local_rpc.LocalRpcClient(
            TASK, token_server.address, SECRET,
            connector=tcp_stream.TcpConnector(token_server.address, channel, SECRET))
        answer = good.call(methods.CLEANUP_GRAPH, request, 10.0)
        assert answer is not None
        worker_pb2.CleanupGraphResponse.FromString(answer)
        assert token_server.local_rpc_calls == calls + 1
        good.close()
    finally:
        channel.close()


def _train(worker, ps, runtime, config) -> int:
    """Three asynchronous steps across the stand-in hosts; returns the socket calls made."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable([1.0, 2.0], name="v")
        with tf.device("/job:worker/task:0"):
            total = v * 2.0
        with tf.device("/job:ps/task:0"):
            update = v.assign_add(total)
    servers = [worker, *ps]
    before = sum(s.local_rpc_calls or 0 for s in servers)
    with tf.Session(worker.target, graph=g, config=config, runtime=runtime) as sess:
        sess.run(v.initializer)
        for _ in range(3):
            sess.run(update)
        np.testing.assert_allclose(sess.run(v), 27.0 * np.array([1.0, 2.0]))
    return sum(s.local_rpc_calls or 0 for s in servers) - before


def test_cluster_with_the_token_steps_over_tcp(runtime, token_file):
    config = _config(token_file)
    workers, ps = create_local_cluster(1, 1, worker_config=config, ps_config=config,
                                       runtime=runtime)
    try:
        assert _train(workers[0], ps, runtime, config) >= 3
    finally:
        for s in [*workers, *ps]:
            s.stop()


def test_tls_server_opens_no_tcp_socket(pki, runtime):
    config = _config(pki=pki)
    with tf.train.Server.create_local_server(config=config, runtime=runtime) as server:
        sec = security.from_options(config.tensorweave.security)
        assert _port(server, sec) == b""
        assert server._tcp_port is None
        assert server.local_rpc_calls is None  # no step-call socket at all


def test_tls_cluster_steps_over_grpc_only(pki, runtime):
    config = _config(pki=pki)
    workers, ps = create_local_cluster(1, 1, worker_config=config, ps_config=config,
                                       runtime=runtime)
    try:
        assert _train(workers[0], ps, runtime, config) == 0
    finally:
        for s in [*workers, *ps]:
            s.stop()


@pytest.mark.parametrize("tls", [False, True])
def test_client_declines_the_tcp_socket_with_tls(pki, runtime, tls):
    sec = security.TransportSecurity(token=SECRET,
                                     root_certificates=b"ca" if tls else None)
    shared: dict = {}

    def keep(key, create):
        if key not in shared:
            shared[key] = create()
        return shared[key]

    peer = Peer(TASK, "localhost:1", TransportOptions(security=sec), runtime, keep)
    worker = tcp_stream.connect(peer)
    try:
        assert (worker is None) == tls
    finally:
        for obj in shared.values():
            obj.close()
