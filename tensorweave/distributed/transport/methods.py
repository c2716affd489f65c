"""The RPC method tables: every path a tensorweave task serves or calls, in one place that
the servers (`grpc_server`, `local_rpc`) and the clients (`grpc_client`) both use.

TensorFlow's own calls live under the service names its C++ runtime puts on the wire
(`/tensorflow.WorkerService/RunGraph`, `/tensorflow.MasterService/RunStep`, as in TF's
`grpc_worker_service_impl.cc` / `grpc_master_service_impl.cc`; not the proto package name
`tensorflow.grpc`). tensorweave's extensions live under `tensorweave.WorkerService`; a
peer that is a real TensorFlow answers them UNIMPLEMENTED and the client falls back to
plain TensorFlow calls (see `grpc_client.PeerFeatures`):

  RecvTensors               -> one RecvTensor per key
  RunGraphStreamed, /dev/shm feeds and fetches, PushTensorStream, RecvTensorStream
                            -> plain RunGraph with every tensor inside the messages
  GetServerDef              -> the target's MasterService (TensorFlow's `GrpcSession`)
  GetStepStreamPort         -> per-step calls over gRPC (no TCP step-call socket)
"""

from __future__ import annotations

TF_WORKER_SERVICE = "tensorflow.WorkerService"
TF_MASTER_SERVICE = "tensorflow.MasterService"
TW_WORKER_SERVICE = "tensorweave.WorkerService"


def worker_path(name: str) -> str:
    """The path of TensorFlow's `WorkerService` method `name`."""
    return f"/{TF_WORKER_SERVICE}/{name}"


def master_path(name: str) -> str:
    """The path of TensorFlow's `MasterService` method `name`."""
    return f"/{TF_MASTER_SERVICE}/{name}"


def extension_path(name: str) -> str:
    """The path of tensorweave's worker extension `name`."""
    return f"/{TW_WORKER_SERVICE}/{name}"


# TensorFlow's WorkerService methods tensorweave serves (all unary).
WORKER_METHODS = (
    "GetStatus", "CreateWorkerSession", "DeleteWorkerSession", "RegisterGraph",
    "DeregisterGraph", "RunGraph", "CleanupGraph", "CleanupAll", "RecvTensor",
)
# TensorFlow's MasterService methods tensorweave serves (all unary).
MASTER_METHODS = (
    "CreateSession", "ExtendSession", "RunStep", "CloseSession", "ListDevices", "Reset",
)
# tensorweave's extensions: name -> gRPC call kind.
EXTENSION_METHODS = {
    "RecvTensors": "unary_unary",
    "GetServerDef": "unary_unary",
    "RecvTensorStream": "unary_stream",
    "PushTensorStream": "stream_unary",
    "GetStepStreamPort": "unary_unary",
}

GET_STATUS = worker_path("GetStatus")
CREATE_WORKER_SESSION = worker_path("CreateWorkerSession")
DELETE_WORKER_SESSION = worker_path("DeleteWorkerSession")
REGISTER_GRAPH = worker_path("RegisterGraph")
DEREGISTER_GRAPH = worker_path("DeregisterGraph")
RUN_GRAPH = worker_path("RunGraph")
CLEANUP_GRAPH = worker_path("CleanupGraph")
CLEANUP_ALL = worker_path("CleanupAll")
RECV_TENSOR = worker_path("RecvTensor")
RECV_TENSORS = extension_path("RecvTensors")
GET_SERVER_DEF = extension_path("GetServerDef")
RECV_TENSOR_STREAM = extension_path("RecvTensorStream")
PUSH_TENSOR_STREAM = extension_path("PushTensorStream")
# The TCP port of the task's step-call socket (`tcp_stream`): raw ASCII digits, or empty.
GET_STEP_STREAM_PORT = extension_path("GetStepStreamPort")
# Served on the same-host socket only (`step_stream`): never a gRPC method.
STREAMED_RUN_GRAPH = extension_path("RunGraphStreamed")

# The per-step calls that also travel over the same-host socket (see `local_rpc`).
LOCAL_METHODS = frozenset({RUN_GRAPH, RECV_TENSOR, CLEANUP_GRAPH, RECV_TENSORS,
                           STREAMED_RUN_GRAPH})


def is_extension(path: str) -> bool:
    """True for a tensorweave-only method (one a TensorFlow peer does not have)."""
    return path.startswith(f"/{TW_WORKER_SERVICE}/")
