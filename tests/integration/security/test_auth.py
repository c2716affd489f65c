"""The cluster token: every gRPC method and every same-host socket method refuses a caller
without it or with another (UNAUTHENTICATED naming the method, never the secret); a
client configured with it works; settings come from the config before the environment."""

from __future__ import annotations

import grpc
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.distributed.transport import grpc_client, local_rpc, methods, security, tcp_stream
from tensorweave.protos import config_pb2

SECRET = b"s3cret-token-value"
METHODS = {
    methods.worker_path(m): "unary_unary" for m in methods.WORKER_METHODS
} | {
    methods.master_path(m): "unary_unary" for m in methods.MASTER_METHODS
} | {
    methods.extension_path(m): kind for m, kind in methods.EXTENSION_METHODS.items()
} | {
    methods.extension_path("NoSuchMethod"): "unary_unary",
}


def _config(token_file: str) -> config_pb2.ConfigProto:
    config = config_pb2.ConfigProto()
    config.tensorweave.security.auth_token_file = token_file
    return config


@pytest.fixture
def token_file(tmp_path):
    path = tmp_path / "token"
    path.write_bytes(SECRET + b"\n")
    return str(path)


@pytest.fixture
def server(token_file):
    s = tf.train.Server.create_local_server(config=_config(token_file))
    yield s
    s.stop()


def _address(server) -> str:
    return server.target[len("grpc://"):]


def _call(channel, method, kind, metadata=None):
    fn = getattr(channel, kind)(method)
    if kind == "stream_unary":
        return fn(iter([b""]), timeout=10, metadata=metadata)
    out = fn(b"", timeout=10, metadata=metadata)
    return list(out) if kind == "unary_stream" else out


@pytest.mark.parametrize("metadata", [None, [("tensorweave-auth", "wrong")]],
                         ids=["no-token", "wrong-token"])
@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_grpc_method_refuses_without_the_token(server, method, metadata):
    with grpc.insecure_channel(_address(server)) as channel:
        with pytest.raises(grpc.RpcError) as info:
            _call(channel, method, METHODS[method], metadata)
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert method in info.value.details()
    assert SECRET.decode() not in info.value.details()


def _step_call_client(server, token):
    """A client of `server`'s step-call socket admitted by the handshake (which carries the
    secret), whose request frames carry `token`; and the gRPC channel it discovered the
    port with (to close)."""
    address = _address(server)
    channel = grpc_client.make_channel(address, security.TransportSecurity(token=SECRET))
    connector = tcp_stream.TcpConnector(address, channel, SECRET)
    return local_rpc.LocalRpcClient("/job:local/replica:0/task:0", address, token,
                                    connector), channel


@pytest.mark.parametrize("token", [None, b"wrong"], ids=["no-token", "wrong-token"])
@pytest.mark.parametrize("method", sorted(methods.LOCAL_METHODS))
def test_every_step_call_socket_method_refuses_without_the_token(server, method, token):
    client, channel = _step_call_client(server, token)
    try:
        with pytest.raises(errors.UnauthenticatedError, match=method) as info:
            client.call(method, b"", 10.0)
        assert SECRET.decode() not in str(info.value)
    finally:
        client.close()
        channel.close()


def test_step_call_socket_with_the_token_reaches_the_handler(server):
    client, channel = _step_call_client(server, SECRET)
    try:
        with pytest.raises(errors.InvalidArgumentError, match="Malformed"):
            client.call(methods.RUN_GRAPH, b"\xff\xff", 10.0)
    finally:
        client.close()
        channel.close()


def _run(target, config=None):
    with tf.Graph().as_default():
        with tf.device("/job:local/task:0"):
            v = tf.Variable(3.0)
            out = v * 2.0
        # NOTE: over gRPC, not the in-process shortcut to a server in this process
        config = config or config_pb2.ConfigProto()
        config.rpc_options.use_rpc_for_inprocess_master = True
        with tf.Session(target, config=config) as sess:
            sess.run(v.initializer)
            return sess.run(out)


def test_client_with_the_token_trains(server, token_file):
    assert _run(server.target, _config(token_file)) == 6.0


def test_client_without_the_token_is_unauthenticated(server):
    with pytest.raises(errors.UnauthenticatedError, match="GetServerDef"):
        _run(server.target)


def test_environment_is_used_when_the_config_names_no_file(server, token_file, monkeypatch):
    monkeypatch.setenv(security.ENV_TOKEN_FILE, token_file)
    assert _run(server.target) == 6.0


def test_config_takes_precedence_over_the_environment(token_file, tmp_path):
    other = tmp_path / "other"
    other.write_text("other-token")
    env = {security.ENV_TOKEN_FILE: str(other)}
    options = _config(token_file).tensorweave.security
    assert security.from_options(options, env).token == SECRET
    assert security.from_options(None, env).token == b"other-token"
    assert security.from_options(None, {}).token is None
    assert "s3cret" not in repr(security.from_options(options, env))


def test_unreadable_token_file_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="auth token"):
        security.from_options(_config(str(tmp_path / "missing")).tensorweave.security, {})


def test_token_check_is_constant_time_compare():
    sec = security.TransportSecurity(token=SECRET)
    assert sec.check_token(SECRET.decode()) and not sec.check_token("x")
    assert not sec.check_token(None)
    assert security.TransportSecurity().check_token(None)


def test_binding_all_interfaces_without_protection_warns(caplog, token_file):
    with caplog.at_level("WARNING", "tensorweave.security"):
        tf.train.Server({"w": ["0.0.0.0:0"]}, start=False).stop()
    assert "without TLS or an auth token" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", "tensorweave.security"):
        tf.train.Server({"w": ["0.0.0.0:0"]}, config=_config(token_file), start=False).stop()
        tf.train.Server({"w": ["127.0.0.1:0"]}, start=False).stop()
        insecure = config_pb2.ConfigProto()
        insecure.tensorweave.security.insecure = True
        tf.train.Server({"w": ["0.0.0.0:0"]}, config=insecure, start=False).stop()
    assert "without TLS" not in caplog.text


@pytest.mark.parametrize("host, loopback", [("localhost", True), ("127.0.0.5", True),
                                            ("[::1]", True), ("0.0.0.0", False),
                                            ("10.1.2.3", False), ("ps-0.svc", False)])
def test_loopback_hosts(host, loopback):
    assert security.is_loopback_host(host) is loopback


def test_remote_master_mode_with_the_token(server, token_file):
    config = _config(token_file)
    config.tensorweave.use_remote_master = True
    assert _run(server.target, config) == 6.0


def test_server_def_carries_the_token_path_never_the_secret(server, token_file):
    from tensorweave.distributed.transport.grpc_client import GrpcRemoteWorker

    sec = security.from_options(_config(token_file).tensorweave.security, {})
    remote = GrpcRemoteWorker("target", _address(server), security=sec)
    server_def = remote.get_server_def(10.0)
    assert SECRET not in server_def.SerializeToString()
