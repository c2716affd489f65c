"""Every RPC method of a `tensorweave server` process takes hypothesis-generated and
truncated payloads without crashing or growing (RSS growth < 64 MiB); the same-host socket
takes garbage frames; a long-lived ps serving rounds of new workers keeps its open-file
count flat."""

from __future__ import annotations

import os
import socket
import struct
import time

import grpc
import numpy as np
import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trainer_procs import READY_S, TRAINER, LocalCluster, TrainerProcess

import tensorweave as tf
from tensorweave.distributed.transport import codec, methods, tcp_stream
from tensorweave.protos import master_pb2, transport_pb2, worker_pb2
from tensorweave.testing.cluster import pick_unused_port
from tensorweave.testing.processes import ServerProcess

pytestmark = [pytest.mark.chaos, pytest.mark.slow, pytest.mark.timeout(300)]

_W = methods.worker_path("")
_M = methods.master_path("")
_T = methods.extension_path("")


def _graph_def() -> bytes:
    g = tf.Graph()
    with g.as_default():
        tf.constant(np.ones((4, 4), np.float32)) * 2.0
    return g.as_graph_def().SerializeToString()


def _valid_payloads() -> dict[str, tuple[str, bytes]]:
    """One well-formed request per method (truncated below), with its call kind."""
    tensor = codec.tensor_proto(np.arange(64, dtype=np.float32))
    graph = _graph_def()
    run_graph = worker_pb2.RunGraphRequest(session_handle="s", graph_handle="g", step_id=7,
                                           recv_key=["k"])
    run_graph.send.add(name="x").tensor.CopyFrom(tensor)
    run_step = master_pb2.RunStepRequest(session_handle="s", fetch=["a:0"])
    run_step.feed.add(name="x:0").tensor.CopyFrom(tensor)
    unary = {
        _W + "GetStatus": worker_pb2.GetStatusRequest(),
        _W + "CreateWorkerSession": worker_pb2.CreateWorkerSessionRequest(session_handle="s"),
        _W + "DeleteWorkerSession": worker_pb2.DeleteWorkerSessionRequest(session_handle="s"),
        _W + "RegisterGraph": worker_pb2.RegisterGraphRequest.FromString(
            worker_pb2.RegisterGraphRequest(session_handle="s").SerializeToString()
            + b"\x12" + bytes([len(graph)]) + graph if len(graph) < 128 else b""),
        _W + "DeregisterGraph": worker_pb2.DeregisterGraphRequest(session_handle="s"),
        _W + "RunGraph": run_graph,
        _W + "CleanupGraph": worker_pb2.CleanupGraphRequest(step_id=7),
        _W + "CleanupAll": worker_pb2.CleanupAllRequest(container=["c"]),
        _W + "RecvTensor": worker_pb2.RecvTensorRequest(step_id=7, rendezvous_key="k"),
        _M + "CreateSession": master_pb2.CreateSessionRequest.FromString(
            b"\x0a" + bytes([len(graph)]) + graph if len(graph) < 128 else b""),
        _M + "ExtendSession": master_pb2.ExtendSessionRequest(session_handle="s"),
        _M + "RunStep": run_step,
        _M + "CloseSession": master_pb2.CloseSessionRequest(session_handle="s"),
        _M + "ListDevices": master_pb2.ListDevicesRequest(),
        _M + "Reset": master_pb2.ResetRequest(container=["c"]),
        _T + "RecvTensors": transport_pb2.RecvTensorsRequest(step_id=7, rendezvous_key=["k"]),
        _T + "GetServerDef": transport_pb2.GetServerDefRequest(),
        _T + "RecvTensorStream": transport_pb2.RecvTensorStreamRequest(step_id=7,
                                                                       rendezvous_key="k"),
    }
    out = {m: ("unary_stream" if m.endswith("RecvTensorStream") else "unary_unary",
               r.SerializeToString()) for m, r in unary.items()}
    header = b"".join(codec.stream_messages(7, "k", np.ones(16, np.float32), "s"))
    out[_T + "PushTensorStream"] = ("stream_unary", header)
    return out


PAYLOADS = _valid_payloads()
METHODS = sorted(PAYLOADS)


def _call(channel: grpc.Channel, method: str, payload: bytes) -> None:
    kind = PAYLOADS[method][0]
    fn = getattr(channel, kind)(method)
    try:
        if kind == "stream_unary":
            fn(iter([payload[:len(payload) // 2], payload[len(payload) // 2:]]), timeout=5)
        elif kind == "unary_stream":
            list(fn(payload, timeout=5))
        else:
            fn(payload, timeout=5)
    except grpc.RpcError as e:
        # NOTE: refused, never crashed: no UNKNOWN (an unhandled exception in a handler)
        assert e.code() != grpc.StatusCode.UNKNOWN, (method, e.details())


@pytest.fixture(scope="module")
def fuzzed_server():
    port = pick_unused_port()
    with ServerProcess(f"local|127.0.0.1:{port}", "local", 0) as server:
        server.wait_ready()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield server, channel, port


def _rss(pid: int) -> int:
    return psutil.Process(pid).memory_info().rss


@pytest.mark.parametrize("method", METHODS)
def test_truncated_payloads(fuzzed_server, method):
    server, channel, _ = fuzzed_server
    payload = PAYLOADS[method][1]
    for cut in sorted({0, 1, 2, len(payload) // 3, len(payload) // 2, len(payload) - 1}):
        _call(channel, method, payload[:max(cut, 0)])
    assert server.proc.poll() is None


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(METHODS), payload=st.binary(max_size=512),
       flip=st.integers(min_value=0, max_value=4096))
def test_generated_payloads(fuzzed_server, method, payload, flip):
    _, channel, _ = fuzzed_server
    valid = bytearray(PAYLOADS[method][1])
    if valid:
        valid[flip % len(valid)] ^= 0xFF  # NOTE: a valid message with one byte broken
    _call(channel, method, payload)
    _call(channel, method, bytes(valid))


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frame=st.binary(min_size=0, max_size=256), handshake=st.booleans())
def test_step_call_socket_garbage_frames(fuzzed_server, frame, handshake):
    """Garbage after an admitted handshake (a request frame), or in place of it."""
    _, channel, _ = fuzzed_server
    step_port = int(channel.unary_unary(methods.GET_STEP_STREAM_PORT)(b"", timeout=10))
    if handshake:
        raw = tcp_stream.dial("127.0.0.1", step_port)
        assert raw is not None
        method = _W + "RunGraph"
        data = (struct.pack("<IIdQ", len(method), 0, 1.0, len(frame)) + method.encode()
                + frame)
    else:
        raw = socket.create_connection(("127.0.0.1", step_port), 5)
        data = frame
    with raw:
        raw.settimeout(5)
        raw.sendall(data)
        raw.shutdown(socket.SHUT_WR)  # NOTE: a short frame ends at once, not at a timeout
        try:
            raw.recv(64)
        except (ConnectionResetError, TimeoutError):
            pass


def test_server_survives_and_memory_is_bounded(fuzzed_server):
    """Runs last in this module (pytest keeps file order): after all the fuzzing above,
    the server answers, and one more round of every payload does not grow it."""
    server, channel, port = fuzzed_server
    before = _rss(server.pid)
    for _ in range(20):
        for method in METHODS:
            _call(channel, method, PAYLOADS[method][1])
    growth = _rss(server.pid) - before
    assert growth < 64 << 20, growth
    with tf.Graph().as_default():
        c = tf.constant(3.0) * 2.0
        with tf.Session(f"grpc://127.0.0.1:{port}") as sess:
            assert sess.run(c) == 6.0


def _open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_long_lived_ps_keeps_its_open_files_flat():
    cluster = LocalCluster(1, 2)
    ps = TrainerProcess([TRAINER, *cluster.flags("ps", 0)], "ps 0")
    counts = []
    try:
        ps.wait_for(lambda line: "ps 0: serving at" in line, READY_S)
        for round_ in range(5):
            workers = [TrainerProcess([TRAINER, *cluster.flags("worker", i),
                                       "--train_steps", str(40 * (round_ + 1))],
                                      f"worker {i} round {round_}") for i in range(2)]
            for w in workers:
                assert w.wait(120) == 0, w.output
            deadline = time.monotonic() + 10  # NOTE: connections close asynchronously
            while time.monotonic() < deadline:
                counts.append(_open_files(ps.pid))
                if round_ == 0 or counts[-1] <= counts[0]:
                    break
                time.sleep(0.2)
    finally:
        ps.kill()
    assert counts[-1] <= counts[0], counts
