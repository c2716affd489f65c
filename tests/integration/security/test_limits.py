"""Resource limits: a tiny message announcing a huge tensor is refused before memory is
allocated (naming what was decoded), a pushed stream needs a known session and fits a byte
cap, and the same-host socket bounds its connections and declared frame lengths."""

from __future__ import annotations

import socket
import struct
import time

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.distributed.process_runtime import ProcessRuntime
from tensorweave.distributed.transport import codec, local_rpc, methods, tcp_stream
from tensorweave.distributed.transport.stash import Stash
from tensorweave.framework import tensor_util
from tensorweave.protos import master_pb2, tensor_pb2, transport_pb2, worker_pb2

HUGE = 1 << 40


def _tiny_huge_proto() -> tensor_pb2.TensorProto:
    proto = tensor_pb2.TensorProto(dtype=1)  # DT_FLOAT
    proto.float_val.append(1.0)
    proto.tensor_shape.dim.add(size=HUGE)
    return proto


@pytest.fixture
def server():
    s = tf.train.Server.create_local_server()
    yield s
    s.stop()


def _address(server) -> str:
    return server.target[len("grpc://"):]


def test_make_ndarray_refuses_to_expand_past_the_limit():
    assert len(_tiny_huge_proto().SerializeToString()) < 32
    with pytest.raises(errors.ResourceExhaustedError, match="Const node x"):
        tensor_util.make_ndarray(_tiny_huge_proto(), what="Const node x")
    small = tensor_pb2.TensorProto(dtype=1)
    small.float_val.append(2.0)
    small.tensor_shape.dim.add(size=1000)
    with pytest.raises(errors.ResourceExhaustedError):
        tensor_util.make_ndarray(small, max_bytes=3999)
    np.testing.assert_array_equal(tensor_util.make_ndarray(small, max_bytes=4000),
                                  np.full(1000, 2.0, np.float32))


@pytest.mark.parametrize("method, build", [
    (methods.RUN_GRAPH,
     lambda p: worker_pb2.RunGraphRequest(send=[{"name": "x", "tensor": p}])),
    (methods.master_path("RunStep"),
     lambda p: master_pb2.RunStepRequest(feed=[{"name": "x:0", "tensor": p}])),
])
def test_tiny_message_with_huge_shape_is_resource_exhausted(server, method, build):
    request = build(_tiny_huge_proto()).SerializeToString()
    with grpc.insecure_channel(_address(server)) as channel:
        with pytest.raises(grpc.RpcError) as info:
            channel.unary_unary(method)(request, timeout=10)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "x" in info.value.details() and "exceeds the limit" in info.value.details()


def _push(server, header: transport_pb2.TensorStreamHeader, chunks=()):
    with grpc.insecure_channel(_address(server)) as channel:
        call = channel.stream_unary(methods.PUSH_TENSOR_STREAM)
        data = call(iter([header.SerializeToString(), *chunks]), timeout=10)
    return transport_pb2.TensorStreamStatus.FromString(data)


def _header(nbytes_elems: int, session: str = "") -> transport_pb2.TensorStreamHeader:
    header = transport_pb2.TensorStreamHeader(step_id=1, rendezvous_key="k", dtype=1,
                                              nbytes=4 * nbytes_elems, session_handle=session)
    header.tensor_shape.dim.add(size=nbytes_elems)
    return header


def test_push_without_a_session_is_refused(server):
    status = _push(server, _header(4), [b"\0" * 16])
    assert status.status_code == errors.ABORTED
    assert server.worker.transfers.stash.nbytes == 0


def test_push_over_the_cap_is_resource_exhausted(server):
    server.worker.create_worker_session("s1")
    server.worker.transfers.stash.max_bytes = 64
    assert _push(server, _header(16, "s1"), [b"\0" * 64]).status_code == 0
    status = _push(server, _header(4, "s1"), [b"\0" * 16])
    assert status.status_code == errors.RESOURCE_EXHAUSTED
    assert "PushTensorStream" in status.status_error_message
    assert server.worker.transfers.stash.nbytes == 64
    server.worker.transfers.stash.take(1, "k")
    assert server.worker.transfers.stash.nbytes == 0


def test_push_announcing_a_huge_tensor_is_refused_before_reading(server):
    server.worker.create_worker_session("s1")
    status = _push(server, _header(HUGE, "s1"))
    assert status.status_code == errors.RESOURCE_EXHAUSTED


def test_push_whose_size_does_not_match_its_shape_is_data_loss(server):
    server.worker.create_worker_session("s1")
    header = _header(4, "s1")
    header.nbytes = 1 << 30
    assert _push(server, header).status_code == errors.DATA_LOSS


def test_stash_accounting_and_expiry():
    stash = Stash(None, "/job:t/replica:0/task:0", ttl_s=0.0, max_bytes=100)
    stash.put(1, "a", np.zeros(20, np.float32))
    time.sleep(0.01)  # NOTE: ttl 0: the entry is expired at the next put
    stash.put(2, "b", np.zeros(20, np.float32))
    assert stash.nbytes == 80 and stash.take(1, "a") is None


def _closed_by_peer(sock: socket.socket) -> bool:
    try:
        return sock.recv(16) == b""
    except ConnectionResetError:
        return True


def _step_port(server) -> int:
    """The port of `server`'s TCP step-call socket (as `GetStepStreamPort` announces it)."""
    with grpc.insecure_channel(server.target[len("grpc://"):]) as channel:
        return int(channel.unary_unary(methods.GET_STEP_STREAM_PORT)(b"", timeout=10))


def test_step_call_socket_drops_a_frame_declaring_a_huge_payload(server):
    method = methods.RUN_GRAPH.encode()
    header = struct.pack("<IIdQ", len(method), 0, 10.0, 1 << 40)
    raw = tcp_stream.dial("127.0.0.1", _step_port(server))  # admitted: no token configured
    assert raw is not None
    with raw:
        raw.settimeout(10)
        raw.sendall(header + method + b"\0" * 4096)
        assert _closed_by_peer(raw)  # dropped at once, not buffering 1 TiB


def test_step_call_socket_bounds_its_connections():
    runtime = ProcessRuntime(local_rpc_options=local_rpc.LocalRpcOptions(max_connections=3))
    server = tf.train.Server.create_local_server(runtime=runtime)
    socks = []
    try:
        port = _step_port(server)
        for _ in range(3):
            socks.append(socket.create_connection(("127.0.0.1", port), 10))
        extra = socket.create_connection(("127.0.0.1", port), 10)
        socks.append(extra)
        extra.settimeout(10)
        assert _closed_by_peer(extra)  # refused: closed by the server
    finally:
        for s in socks:
            s.close()
        server.stop()
        runtime.close()


def test_codec_decode_names_the_value():
    with pytest.raises(errors.ResourceExhaustedError, match="RunGraph send y"):
        codec.decode(_tiny_huge_proto(), what="RunGraph send y")


@pytest.mark.parametrize("dtype", [0, 20, 999])
def test_push_with_an_unsupported_dtype_is_invalid_argument(server, dtype):
    """Found by the chaos fuzzer: this was an unhandled TypeError (UNKNOWN)."""
    server.worker.create_worker_session("s1")
    header = _header(4, "s1")
    header.dtype = dtype
    assert _push(server, header).status_code == errors.INVALID_ARGUMENT
