"""A peer that speaks only TensorFlow's RPCs: tensorweave's clients try each extension once,
remember the UNIMPLEMENTED answer per peer and fall back to plain TensorFlow calls.

The fake peer is a real tensorweave task served through a gRPC server that registers only
TensorFlow's services (`/tensorflow.WorkerService/*`, `/tensorflow.MasterService/*`), as a
TensorFlow server would: every `/tensorweave.WorkerService/*` call is UNIMPLEMENTED, and
there is no same-host socket.
"""

from __future__ import annotations

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.process_runtime import ProcessRuntime
from tensorweave.distributed.server import Server
from tensorweave.distributed.transport import grpc_server, methods
from tensorweave.distributed.transport.grpc_client import GrpcRemoteWorker
from tensorweave.framework.rendezvous import create_key


class _Recording(grpc.GenericRpcHandler):
    """Serves what `handlers` serve, recording every method path asked for."""

    def __init__(self) -> None:
        self.handlers: list = []
        self.calls: list[str] = []

    def service(self, details):
        self.calls.append(details.method)
        for h in self.handlers:
            found = h.service(details)
            if found is not None:
                return found
        return None


def _tf_only_front(server: Server, recording: _Recording) -> tuple[object, str]:
    """A gRPC server in front of `server` with TensorFlow's services only."""
    recording.handlers = [
        server._servicer.handlers()[0],  # TensorFlow's WorkerService, no extensions
        *grpc_server.MasterServicer(lambda: server.master).handlers(),
    ]
    front, port = grpc_server.bind([recording], "localhost:0")
    front.start()
    return front, f"localhost:{port}"


@pytest.fixture
def tf_like():
    """(tensorweave server, its TensorFlow-only front address, the call recorder)."""
    runtime = ProcessRuntime()
    server = Server.create_local_server(runtime=runtime)
    recording = _Recording()
    front, address = _tf_only_front(server, recording)
    yield server, address, recording
    front.stop(None)
    server.stop()


def test_recv_tensors_falls_back_to_recv_tensor_once_per_peer(tf_like):
    server, address, recording = tf_like
    worker = server.worker
    remote = GrpcRemoteWorker(worker.task_name, address, runtime=ProcessRuntime())
    keys = [create_key(worker.device_name, worker.incarnation, "/job:client/task:0/cpu:0",
                       f"t{i}", (0, 0)) for i in range(2)]
    try:
        for step_id in (11, 12):
            rdv = worker.rendezvous.find_or_create(step_id)
            rdv.send(keys[0], np.float32(step_id))
            rdv.send(keys[1], np.arange(3, dtype=np.int64))
            got = remote.recv_tensors(step_id, keys, timeout_s=10.0)
            assert got[0] == np.float32(step_id)
            np.testing.assert_array_equal(got[1], [0, 1, 2])
    finally:
        remote.close()
    assert remote.features.extensions is False
    assert recording.calls.count(methods.RECV_TENSORS) == 1  # tried once, then remembered
    assert recording.calls.count(methods.RECV_TENSOR) == 4


def test_get_server_def_unimplemented_names_method_and_peer(tf_like):
    _, address, _ = tf_like
    remote = GrpcRemoteWorker("/job:local/replica:0/task:0", address)
    with pytest.raises(errors.UnimplementedError) as info:
        remote.get_server_def(timeout_s=10.0)
    assert methods.GET_SERVER_DEF in info.value.message
    assert address in info.value.message
    assert remote.speaks_extensions() is False


def test_session_uses_the_master_service_of_a_tensorflow_target(tf_like):
    """`GetServerDef` is UNIMPLEMENTED: the client-side master is replaced by the target's
    master service (TensorFlow's `GrpcSession`), graph extensions included."""
    _, address, recording = tf_like
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.ones((2, 2), np.float32), name="v")
        x = tf.placeholder(tf.float32, [2, 2])
        y = tf.matmul(x, v)
    with tf.Session(f"grpc://{address}", graph=g) as sess:
        sess.run(v.initializer)
        out = sess.run(y, {x: np.eye(2, dtype=np.float32) * 3})
        np.testing.assert_array_equal(out, np.full((2, 2), 3.0, np.float32))
        with g.as_default():
            z = y * 2.0  # extends the graph: ExtendSession with the master's version
        np.testing.assert_array_equal(sess.run(z, {x: np.eye(2, dtype=np.float32)}),
                                      np.full((2, 2), 2.0, np.float32))
    assert methods.master_path("RunStep") in recording.calls
    assert methods.master_path("ExtendSession") in recording.calls


def test_large_feeds_ride_inside_run_graph_to_a_tensorflow_peer():
    """A ps reached only through TensorFlow's RPCs: a fed tensor above the inline limit
    goes inside `RunGraph` (no `PushTensorStream`, no /dev/shm file), and the worker's
    partition pulls from the ps with `RecvTensor`."""
    runtime = ProcessRuntime()
    config = tf.ConfigProto()
    config.rpc_options.use_rpc_for_inprocess_master = True
    config.tensorweave.disable_local_rpc = True
    spec = {"worker": ["localhost:0"], "ps": ["localhost:0"]}
    worker = Server(spec, "worker", 0, config=config, start=False, runtime=runtime)
    ps = Server(spec, "ps", 0, config=config, start=False, runtime=runtime)
    recording = _Recording()
    front, ps_address = _tf_only_front(ps, recording)
    try:
        cluster = ClusterSpec({"worker": [worker.target[len("grpc://"):]], "ps": [ps_address]})
        for s in (worker, ps):
            s._set_cluster(cluster)
            s.start()
        big = np.arange(1 << 19, dtype=np.float32)  # 2 MiB: above the inline limit
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:ps/task:0"):
                x = tf.placeholder(tf.float32, [big.size])
                total = tf.reduce_sum(x * 2.0)
            with tf.device("/job:worker/task:0"):
                out = total + 1.0
        with tf.Session(worker.target, graph=g, config=config, runtime=runtime) as sess:
            for _ in range(2):
                assert sess.run(out, {x: big}) == np.float32(big.sum() * 2.0 + 1.0)
    finally:
        front.stop(None)
        worker.stop()
        ps.stop()
    assert methods.PUSH_TENSOR_STREAM not in recording.calls
    assert methods.RUN_GRAPH in recording.calls
    assert recording.calls.count(methods.RECV_TENSORS) <= 1
    assert methods.RECV_TENSOR in recording.calls
