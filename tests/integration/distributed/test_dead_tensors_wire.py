"""Dead tensors (an untaken cond branch) cross tasks as a flag, never as a value: the
`is_dead` field of TensorFlow's `RecvTensorResponse`, `dead_key` of tensorweave's batched
`RecvTensorsResponse`, and a flag bit in the same-host tensor frames. A cond whose branches
sit on different tasks then runs only the taken branch's side effects, over each transport
(same-host socket and step streams; plain gRPC; a TensorFlow-only peer served RecvTensor).
"""

from __future__ import annotations

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.process_runtime import ProcessRuntime
from tensorweave.distributed.server import Server
from tensorweave.distributed.transport import grpc_server, methods
from tensorweave.distributed.transport.grpc_client import GrpcRemoteWorker
from tensorweave.framework.rendezvous import DEAD, create_key
from tensorweave.protos import transport_pb2, worker_pb2
from tensorweave.testing.cross_task_graphs import check_only_taken_branch_runs, cond_across_tasks

PS = "/job:ps/task:0"
WORKER = "/job:worker/task:0"


class _Recording(grpc.GenericRpcHandler):
    """Serves what `handlers` serve, recording the method paths asked for."""

    def __init__(self, handlers: list) -> None:
        self.handlers = handlers
        self.calls: list[str] = []

    def service(self, details):
        self.calls.append(details.method)
        for h in self.handlers:
            found = h.service(details)
            if found is not None:
                return found
        return None


@pytest.fixture
def server():
    s = Server.create_local_server(runtime=ProcessRuntime())
    yield s
    s.stop()


def _raw_call(address: str, path: str, request) -> bytes:
    with grpc.insecure_channel(address) as channel:
        return channel.unary_unary(path)(request.SerializeToString(), timeout=10.0)


def test_recv_tensor_answers_a_dead_value_with_is_dead(server):
    worker = server.worker
    key = create_key(worker.device_name, worker.incarnation, "/job:client/task:0/cpu:0", "d")
    worker.rendezvous.find_or_create(7).send(key, DEAD)
    data = _raw_call(server.target[len("grpc://"):], methods.RECV_TENSOR,
                     worker_pb2.RecvTensorRequest(step_id=7, rendezvous_key=key))
    resp = worker_pb2.RecvTensorResponse.FromString(data)
    assert resp.is_dead
    assert [d.size for d in resp.tensor.tensor_shape.dim] == [0]  # an empty tensor


def test_recv_tensors_lists_dead_keys_and_the_client_returns_dead(server):
    worker = server.worker
    keys = [create_key(worker.device_name, worker.incarnation, "/job:client/task:0/cpu:0",
                       name) for name in ("live", "dead")]
    rdv = worker.rendezvous.find_or_create(8)
    rdv.send(keys[0], np.float32(2.5))
    rdv.send(keys[1], DEAD)
    data = _raw_call(server.target[len("grpc://"):], methods.RECV_TENSORS,
                     transport_pb2.RecvTensorsRequest(step_id=8, rendezvous_key=keys))
    resp = transport_pb2.RecvTensorsResponse.FromString(data)
    assert list(resp.dead_key) == [keys[1]]
    assert [t.name for t in resp.tensor] == [keys[0]]
    remote = GrpcRemoteWorker(worker.task_name, server.target[len("grpc://"):],
                              runtime=ProcessRuntime())
    try:
        rdv = worker.rendezvous.find_or_create(9)
        rdv.send(keys[0], np.float32(1.0))
        rdv.send(keys[1], DEAD)
        got = remote.recv_tensors(9, keys, timeout_s=10.0)
    finally:
        remote.close()
    assert got[0] == np.float32(1.0) and got[1] is DEAD


def _cluster(config, front_ps: bool = False):
    runtime = ProcessRuntime()
    spec = {"worker": ["localhost:0"], "ps": ["localhost:0"]}
    worker = Server(spec, "worker", 0, config=config, start=False, runtime=runtime)
    ps = Server(spec, "ps", 0, config=config, start=False, runtime=runtime)
    front, recording = None, None
    ps_address = ps.target[len("grpc://"):]
    if front_ps:
        # NOTE: the ps reached through TensorFlow's services only (as a TensorFlow server).
        recording = _Recording([ps._servicer.handlers()[0],
                                *grpc_server.MasterServicer(lambda: ps.master).handlers()])
        front, port = grpc_server.bind([recording], "localhost:0")
        front.start()
        ps_address = f"localhost:{port}"
    cluster = ClusterSpec({"worker": [worker.target[len("grpc://"):]], "ps": [ps_address]})
    for s in (worker, ps):
        s._set_cluster(cluster)
        s.start()
    return runtime, worker, ps, front, recording


@pytest.mark.parametrize("transport", ["default", "grpc_only"])
def test_cond_with_branches_on_two_tasks(transport):
    config = tf.ConfigProto(operation_timeout_in_ms=30_000)
    if transport == "grpc_only":
        config.rpc_options.use_rpc_for_inprocess_master = True
        config.tensorweave.disable_local_rpc = True
        config.tensorweave.disable_step_streams = True
        config.tensorweave.disable_shared_memory = True
    runtime, worker, ps, _, _ = _cluster(config)
    try:
        g = tf.Graph()
        with g.as_default():
            parts = cond_across_tasks(PS, WORKER)
        with tf.Session(worker.target, graph=g, config=config, runtime=runtime) as sess:
            check_only_taken_branch_runs(sess, parts)
    finally:
        worker.stop()
        ps.stop()


def test_cond_with_a_branch_on_a_tensorflow_only_peer():
    """The ps answers only TensorFlow's RPCs: the dead branch output travels in
    `RecvTensorResponse.is_dead`."""
    config = tf.ConfigProto(operation_timeout_in_ms=30_000)
    config.rpc_options.use_rpc_for_inprocess_master = True
    config.tensorweave.disable_local_rpc = True
    runtime, worker, ps, front, recording = _cluster(config, front_ps=True)
    try:
        g = tf.Graph()
        with g.as_default():
            parts = cond_across_tasks(PS, WORKER)
        with tf.Session(worker.target, graph=g, config=config, runtime=runtime) as sess:
            check_only_taken_branch_runs(sess, parts)
    finally:
        front.stop(None)
        worker.stop()
        ps.stop()
    assert methods.RECV_TENSOR in recording.calls
