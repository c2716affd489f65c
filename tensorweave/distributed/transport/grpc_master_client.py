"""The gRPC client of a task's `MasterService` (TensorFlow's): `GrpcRemoteMaster`, used by
`Session.reset` and by the remote-master session mode, and its transport factory
`connect_master` (see `transports`). Calls go through `grpc_client`'s `RpcStub` and
channels."""

from __future__ import annotations

from typing import Any

import grpc

from tensorweave.distributed.transport import codec, methods
from tensorweave.distributed.transport.grpc_client import RpcStub, make_channel, shared_channel
from tensorweave.distributed.transport.security import TransportSecurity
from tensorweave.distributed.transport.status import error_from_code
from tensorweave.protos import master_pb2


def connect_master(peer: Any) -> GrpcRemoteMaster:
    """A `GrpcRemoteMaster` of `peer`."""
    return GrpcRemoteMaster(peer.task, peer.address, shared_channel(peer))


class GrpcRemoteMaster:
    """TensorFlow's `MasterService` of a remote task (used by `Session.reset` and by the
    remote-master session mode)."""

    def __init__(self, task_name: str, address: str, channel: grpc.Channel | None = None,
                 security: TransportSecurity | None = None):
        self.task_name = task_name
        self.address = address
        self._stub = RpcStub(channel or make_channel(address, security), task_name, address)

    def create_session(self, graph_def: Any, config: Any, timeout_s: float | None) -> tuple:
        # NOTE: TensorFlow's master finds itself in a propagated cluster_def by `target`.
        req = master_pb2.CreateSessionRequest(target=f"grpc://{self._stub.address}")
        req.graph_def.CopyFrom(graph_def)
        if config is not None:
            req.config.CopyFrom(config)
        resp = master_pb2.CreateSessionResponse.FromString(
            self._stub.call(methods.master_path("CreateSession"), req, timeout_s,
                            wait_for_ready=True))
        return resp.session_handle, resp.graph_version

    def extend_session(self, handle: str, graph_def: Any, current_version: int) -> int:
        req = master_pb2.ExtendSessionRequest(session_handle=handle,
                                              current_graph_version=current_version)
        req.graph_def.CopyFrom(graph_def)
        return master_pb2.ExtendSessionResponse.FromString(
            self._stub.call(methods.master_path("ExtendSession"), req)).new_graph_version

    def run_step(self, handle: str, feeds: dict[str, Any], fetches: list[str],
                 targets: list[str], options: Any, run_metadata: Any,
                 timeout_s: float | None = None) -> list[Any]:
        req = master_pb2.RunStepRequest(session_handle=handle, fetch=fetches, target=targets,
                                        store_errors_in_response_body=True)
        for name, value in feeds.items():
            codec.encode(value, req.feed.add(name=name).tensor)
        if options is not None:
            req.options.CopyFrom(options)
        resp = master_pb2.RunStepResponse.FromString(
            self._stub.call(methods.master_path("RunStep"), req, timeout_s))
        err = error_from_code(resp.status_code, resp.status_error_message)
        if err is not None:
            raise err
        if run_metadata is not None:
            run_metadata.MergeFrom(resp.metadata)
        got = {nt.name: codec.decode(nt.tensor) for nt in resp.tensor}
        return [got[f] for f in fetches]

    def close_session(self, handle: str) -> None:
        self._stub.call(methods.master_path("CloseSession"),
                        master_pb2.CloseSessionRequest(session_handle=handle))

    def list_devices(self, timeout_s: float | None = None) -> list[Any]:
        resp = master_pb2.ListDevicesResponse.FromString(self._stub.call(
            methods.master_path("ListDevices"), master_pb2.ListDevicesRequest(), timeout_s, True))
        return list(resp.local_device) + list(resp.remote_device)

    def reset(self, containers: list[str], device_filters: list[str],
              timeout_s: float | None) -> None:
        req = master_pb2.ResetRequest(container=containers, device_filters=device_filters)
        self._stub.call(methods.master_path("Reset"), req, timeout_s, wait_for_ready=True)
