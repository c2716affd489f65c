"""The step-call socket's protocol (`transport.local_rpc`, over `tcp_stream`'s TCP listener
and handshake): framing, status mapping, deadlines, a peer that stops or restarts, and the
fallback to gRPC when a peer has no socket."""

from __future__ import annotations

import functools
import socket
import threading

import pytest

from tensorweave import errors
from tensorweave.distributed.transport import local_rpc, tcp_stream
from tensorweave.distributed.transport.status import abort
from tensorweave.testing.cluster import pick_unused_port

TASK = "/job:ps/replica:0/task:0"


@pytest.fixture
def port():
    return pick_unused_port()


def _listener(port):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # NOTE: a restarted server binds the port its predecessor's connections just left.
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(16)
    return listener


def _server(port, options=None, **handlers):
    server = local_rpc.LocalRpcServer({f"/S/{k}": v for k, v in handlers.items()}, port,
                                      options=options)
    server.add_listener(_listener(port), tcp_stream.admit)
    assert server.start()
    return server


def _client(port, **kwargs):
    return local_rpc.LocalRpcClient(
        TASK, f"localhost:{port}",
        connector=functools.partial(tcp_stream.dial, "127.0.0.1", port), **kwargs)


def _echo(request, context):
    return b"echo:" + request


def test_round_trip_small_and_large_payloads(port):
    server = _server(port, Echo=_echo)
    client = _client(port)
    try:
        assert client.call("/S/Echo", b"abc", None) == b"echo:abc"
        big = bytes(range(256)) * (5 << 12)  # 5 MiB: more than one send and one recv
        assert client.call("/S/Echo", big, 10.0) == b"echo:" + big
        assert client.call("/S/Echo", b"", 1.0) == b"echo:"
        assert server.calls == 3
    finally:
        client.close()
        server.stop()


def test_handler_errors_keep_their_class_and_name_the_task(port):
    def fail(request, context):
        abort(context, errors.NotFoundError(None, None, "no such graph handle"))

    def unavailable(request, context):
        abort(context, errors.UnavailableError(None, None, "shutting down"))

    def bug(request, context):
        raise KeyError("oops")

    server = _server(port, Fail=fail, Unavailable=unavailable, Bug=bug)
    client = _client(port)
    try:
        with pytest.raises(errors.NotFoundError, match="no such graph handle"):
            client.call("/S/Fail", b"", 1.0)
        with pytest.raises(errors.UnavailableError, match=f"{TASK} at localhost:{port}"):
            client.call("/S/Unavailable", b"", 1.0)
        with pytest.raises(errors.InternalError, match="KeyError"):
            client.call("/S/Bug", b"", 1.0)
        with pytest.raises(errors.UnimplementedError, match="/S/Missing"):
            client.call("/S/Missing", b"", 1.0)
        # The connection stays usable after errors.
        with pytest.raises(errors.NotFoundError):
            client.call("/S/Fail", b"", 1.0)
        assert server.calls == 5
    finally:
        client.close()
        server.stop()


def test_no_socket_means_use_grpc(port):
    client = _client(port)  # nothing listens on the port
    assert client.call("/S/Echo", b"x", 1.0) is None
    assert client.open_stream("/S/Echo", b"x", 1.0) is None
    assert local_rpc.LocalRpcClient(TASK, f"localhost:{port}").call("/S/Echo", b"", 1) is None


def test_deadline_and_context(port):
    release = threading.Event()
    called_back = threading.Event()
    seen = {}

    def wait(request, context):
        seen["remaining"] = context.time_remaining()
        context.add_callback(called_back.set)
        release.wait(10)
        return b"late"

    server = _server(port, Wait=wait, Echo=_echo)
    client = _client(port)
    try:
        with pytest.raises(errors.DeadlineExceededError, match=TASK):
            client.call("/S/Wait", b"", 0.2)
        assert 0 < seen["remaining"] <= 0.2
        release.set()
        # A fresh connection serves the next call; the callback runs when the call ends.
        assert client.call("/S/Echo", b"ok", 5.0) == b"echo:ok"
        assert called_back.wait(5)
    finally:
        client.close()
        server.stop()


def test_stopped_peer_fails_a_waiting_call_at_once(port):
    entered = threading.Event()
    release = threading.Event()

    def wait(request, context):
        entered.set()
        release.wait(10)
        return b""

    server = _server(port, Wait=wait)
    client = _client(port)
    result = {}

    def call():
        try:
            client.call("/S/Wait", b"", None)
        except errors.OpError as e:
            result["error"] = e

    thread = threading.Thread(target=call)
    thread.start()
    try:
        assert entered.wait(5)
        server.stop()
        thread.join(5)
        assert not thread.is_alive()
        assert isinstance(result["error"], errors.UnavailableError)
        assert f"{TASK} at localhost:{port} is unreachable" in str(result["error"])
        # Once stopped, the peer has no socket: callers fall back to gRPC.
        assert client.call("/S/Wait", b"", 1.0) is None
    finally:
        release.set()
        client.close()


def test_restarted_peer_is_reached_through_a_new_connection(port):
    server = _server(port, Echo=_echo)
    client = _client(port)
    try:
        assert client.call("/S/Echo", b"1", 1.0) == b"echo:1"  # leaves an idle connection
        server.stop()
        server = _server(port, Echo=lambda request, context: b"new:" + request)
        assert client.call("/S/Echo", b"2", 1.0) == b"new:2"
    finally:
        client.close()
        server.stop()


def test_a_server_without_listeners_serves_grpc_only(port):
    assert not local_rpc.LocalRpcServer({"/S/Echo": _echo}, port).start()


def test_a_wrong_handshake_token_is_not_admitted(port):
    server = local_rpc.LocalRpcServer({"/S/Echo": _echo}, port, token=b"secret")
    server.add_listener(_listener(port), functools.partial(tcp_stream.admit, token=b"secret"))
    assert server.start()
    try:
        assert tcp_stream.dial("127.0.0.1", port, b"wrong") is None
        assert tcp_stream.dial("127.0.0.1", port) is None
        good = local_rpc.LocalRpcClient(TASK, f"localhost:{port}", b"secret", functools.partial(
            tcp_stream.dial, "127.0.0.1", port, b"secret"))
        assert good.call("/S/Echo", b"ok", 5.0) == b"echo:ok"
        good.close()
    finally:
        server.stop()


def test_payloads_over_the_preallocation_bound_arrive_whole(port):
    options = local_rpc.LocalRpcOptions(prealloc_max_bytes=1 << 16)
    server = _server(port, options, Echo=_echo)
    client = _client(port, options=options)
    try:
        data = bytes(range(251)) * 4177  # ~1 MiB, not a multiple of the chunk size
        assert client.call("/S/Echo", data, 10.0) == b"echo:" + data
    finally:
        client.close()
        server.stop()
