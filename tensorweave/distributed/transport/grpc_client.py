"""gRPC clients of a task's services: `GrpcRemoteWorker` (the `WorkerInterface` over the
wire) and `GrpcRemoteMaster` (TensorFlow's `MasterService`).

Large tensors to and from a task on this host travel as /dev/shm files named in the
`RunGraph`/`RecvTensors` messages themselves (see `shm`: no extra round trip, one memcpy
per side); to remote tasks, or when shared memory is off or fails, they are pushed/pulled
as raw chunk streams (see `codec`): `PushTensorStream` before `RunGraph`, and a
`RecvTensorStream` per deferred key after it.
"""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from tensorweave import errors
from tensorweave.distributed.interfaces import Canceller, Done, RunGraphCall, RunGraphResult
from tensorweave.distributed.transfer_stats import STATS
from tensorweave.distributed.transport import codec, shm
from tensorweave.distributed.transport.grpc_server import (
    CHANNEL_OPTIONS,
    LOCAL_METHODS,
    MASTER_SERVICE,
    TW_WORKER_SERVICE,
    WORKER_SERVICE,
)
from tensorweave.distributed.transport.local_rpc import LocalRpcClient
from tensorweave.distributed.transport.security import TransportSecurity, secure_channel
from tensorweave.distributed.transport.status import (
    error_from_code,
    error_from_status,
    from_rpc_error,
)
from tensorweave.distributed.transport.step_stream import STREAMED_METHOD
from tensorweave.distributed.transport.stream_conn import StreamClosed, StreamConn
from tensorweave.protos import (
    master_pb2,
    tensorflow_server_pb2,
    transport_pb2,
    worker_pb2,
)

CONTROL_TIMEOUT_S = 30.0


def make_channel(address: str, security: TransportSecurity | None = None) -> grpc.Channel:
    """A channel to `address` with unlimited message sizes and fast reconnects; TLS and
    the cluster token as `security` asks (see `security`)."""
    return secure_channel(address, CHANNEL_OPTIONS, security)


class _Stub:
    def __init__(self, channel: grpc.Channel, task: str, address: str,
                 local: LocalRpcClient | None = None):
        self.channel = channel
        self.task = task
        self.address = address
        self.local = local
        self._methods: dict[str, Any] = {}

    def method(self, path: str, kind: str = "unary_unary") -> Any:
        m = self._methods.get(path)
        if m is None:
            m = self._methods[path] = getattr(self.channel, kind)(path)
        return m

    def call(self, path: str, request: Any, timeout_s: float | None = CONTROL_TIMEOUT_S,
             wait_for_ready: bool = False) -> bytes:
        data = request.SerializeToString()
        if self.local is not None and path in LOCAL_METHODS and not wait_for_ready:
            # NOTE: None when the peer has no same-host socket: gRPC below.
            out = self.local.call(path, data, timeout_s)
            if out is not None:
                return out
        try:
            return self.method(path)(data, timeout=timeout_s, wait_for_ready=wait_for_ready)
        except grpc.RpcError as e:
            raise from_rpc_error(e, self.task, self.address) from None


class GrpcRemoteWorker:
    """`WorkerInterface` of a remote task.

    Args:
      task_name: `/job:J/replica:0/task:T`, used in error messages.
      address: `host:port`.
      channel: an existing channel to reuse (one per address per cache).
      shared_memory: hand large tensors over as /dev/shm files when the task runs on this
        host (see `shm`); False always uses gRPC streams.
      local_rpc: make the per-step calls (`RunGraph`, `RecvTensors`, `CleanupGraph`) over
        the task's Unix domain socket when it runs on this host (see `local_rpc`).
    """

    def __init__(self, task_name: str, address: str, channel: grpc.Channel | None = None,
                 shared_memory: bool = True, local_rpc: bool = True,
                 security: TransportSecurity | None = None):
        self.task_name = task_name
        self.address = address
        token = security.token if security is not None else None  # security
        local = (LocalRpcClient(task_name, address, token)
                 if local_rpc and shm.is_local_address(address) else None)
        self._stub = _Stub(channel or make_channel(address, security), task_name, address,
                           local)
        self._shm = shm.PeerState(address, shared_memory)
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _tf(self, name: str) -> str:
        return f"/{WORKER_SERVICE}/{name}"

    def _tw(self, name: str) -> str:
        return f"/{TW_WORKER_SERVICE}/{name}"

    def _threads(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=64, thread_name_prefix="tw-rpc"
                )
            return self._pool

    def close(self) -> None:
        """Closes idle same-host connections (the channel belongs to the cache)."""
        if self._stub.local is not None:
            self._stub.local.close()

    # -------------------------------------------------------- control calls
    def get_status(self, timeout_s: float | None = None, wait_for_ready: bool = True):
        """`DeviceAttributes` of the remote task, waiting up to `timeout_s` for it to come up.

        Raises:
          DeadlineExceededError: if the task did not answer in time.
          UnavailableError: if it is unreachable and `wait_for_ready` is False.
        """
        data = self._stub.call(self._tf("GetStatus"), worker_pb2.GetStatusRequest(),
                               timeout_s, wait_for_ready)
        return list(worker_pb2.GetStatusResponse.FromString(data).device_attributes)

    def get_server_def(self, timeout_s: float | None = None) -> Any:
        """The remote task's `ServerDef` (its cluster and identity)."""
        data = self._stub.call(self._tw("GetServerDef"), transport_pb2.GetServerDefRequest(),
                               timeout_s, wait_for_ready=True)
        return tensorflow_server_pb2.ServerDef.FromString(data)

    def create_worker_session(self, session_handle: str, server_def: Any,
                              isolate_session_state: bool, master_task: str) -> None:
        req = worker_pb2.CreateWorkerSessionRequest(
            session_handle=session_handle, isolate_session_state=isolate_session_state,
            master_task=master_task,
        )
        if server_def is not None:
            req.server_def.CopyFrom(server_def)
        self._stub.call(self._tf("CreateWorkerSession"), req)

    def delete_worker_session(self, session_handle: str) -> None:
        self._stub.call(self._tf("DeleteWorkerSession"),
                        worker_pb2.DeleteWorkerSessionRequest(session_handle=session_handle))

    def register_graph(self, session_handle: str, graph_def: Any) -> str:
        req = worker_pb2.RegisterGraphRequest(session_handle=session_handle,
                                              create_worker_session_called=True)
        req.graph_def.CopyFrom(graph_def)
        data = self._stub.call(self._tf("RegisterGraph"), req)
        return worker_pb2.RegisterGraphResponse.FromString(data).graph_handle

    def deregister_graph(self, session_handle: str, graph_handle: str) -> None:
        self._stub.call(self._tf("DeregisterGraph"), worker_pb2.DeregisterGraphRequest(
            session_handle=session_handle, graph_handle=graph_handle,
            create_worker_session_called=True))

    def cleanup_graph(self, step_id: int, rollback: bool = False) -> None:
        """Fire-and-forget: cancel, drop (and with `rollback`, undo) the step remotely."""
        req = worker_pb2.CleanupGraphRequest(step_id=step_id, tensorweave_rollback=rollback)

        def send() -> None:
            try:
                self._stub.call(self._tf("CleanupGraph"), req, CONTROL_TIMEOUT_S)
            except errors.OpError:
                pass  # the task is gone: nothing left to clean there

        self._threads().submit(send)

    def cleanup_all(self, containers: list[str], master_task: str = "") -> None:
        req = worker_pb2.CleanupAllRequest(container=containers,
                                           tensorweave_master_task=master_task)
        self._stub.call(self._tf("CleanupAll"), req)

    # ------------------------------------------------------------- steps
    # NOTE: blocking calls only. A gRPC future starts a channel spin thread per call when
    # none is running (~0.5 ms); the master runs one partition inline and the others on
    # this worker's persistent threads, and cancels through `CleanupGraph`.
    def run_graph(self, call: RunGraphCall) -> RunGraphResult:
        """Runs a partition for one step and waits for it.

        Fetched arrays that crossed the wire in their own buffer (shared memory or a
        stream) are returned writable: they belong to the caller alone.

        Raises:
          OpError: the step's error, or the transport error naming this task.
        """
        use_shm = self._shm.usable()
        resp = self._run_graph(call, use_shm)
        if resp.tensorweave_send_shm_rejected:
            # NOTE: the worker read none of it and ran nothing: resend over gRPC.
            self._shm.failed("the task could not read our feed files")
            resp = self._run_graph(call, False)
        return self.run_graph_result(call, resp)

    def run_graph_result(self, call: RunGraphCall, resp: Any) -> RunGraphResult:
        """The result of a `RunGraphResponse` (fetches from the message, files or streams).

        Raises:
          OpError: the error the response carries.
        """
        err = error_from_code(resp.status_code, resp.status_error_message)
        if err is not None:
            raise err
        recvs = {nt.name: codec.decode(nt.tensor) for nt in resp.recv}
        recvs.update(self._take_shm(call.step_id, resp.tensorweave_recv_shm, call.timeout_s,
                                    writable=True))
        for key in resp.tensorweave_deferred_key:
            recvs[key] = self.pull_tensor(call.step_id, key, call.timeout_s, writable=True)
        stats = resp.step_stats.dev_stats[0] if resp.step_stats.dev_stats else None
        return RunGraphResult(recvs, stats)

    @staticmethod
    def _request(call: RunGraphCall, use_shm: bool) -> Any:
        req = worker_pb2.RunGraphRequest(
            session_handle=call.session_handle, graph_handle=call.graph_handle,
            step_id=call.step_id, recv_key=call.recv_keys, create_worker_session_called=True,
            store_errors_in_response_body=True, tensorweave_accept_shm=use_shm,
            tensorweave_single_partition=call.single_partition,
        )
        req.exec_opts.record_timeline = call.record_timeline
        return req

    @property
    def streams_locally(self) -> bool:
        """True when `start_streamed` can apply (the task has a same-host socket address)."""
        return self._stub.local is not None

    def start_streamed(self, call: RunGraphCall, stream_task: str) -> StreamedRun | None:
        """Starts `call` as a streamed `RunGraph` (see `step_stream`): the values between
        the partition and `stream_task` (the caller's task, whose partition the caller
        runs with `call.streams` set) travel on the call's same-host connection.

        Returns:
          The running call, or None where it does not apply (no same-host socket, feeds
          too large for the message): use `run_graph_async`.
        """
        local = self._stub.local
        if local is None or not all(codec.is_inline(v) for v in call.sends.values()):
            return None
        req = self._request(call, self._shm.usable())
        req.tensorweave_stream_task = stream_task
        for key, value in call.sends.items():
            codec.encode(value, req.send.add(name=key).tensor)
        conn = local.open_stream(STREAMED_METHOD, req.SerializeToString(), call.timeout_s)
        return None if conn is None else StreamedRun(self, call, conn)

    def _run_graph(self, call: RunGraphCall, use_shm: bool) -> Any:
        req = self._request(call, use_shm)
        outbox = shm.client_outbox() if use_shm else None
        files: list[Any] = []
        try:
            for key, value in call.sends.items():
                if use_shm and shm.fits(value):
                    try:
                        files.append(shm.write(key, value, outbox))
                        continue
                    except shm.ShmError:
                        pass  # NOTE: full or missing /dev/shm: gRPC below
                if codec.is_inline(value):
                    codec.encode(value, req.send.add(name=key).tensor)
                else:
                    self.push_tensor(call.step_id, key, value, call.timeout_s,
                                     call.session_handle)
            req.tensorweave_send_shm.extend(files)
            return worker_pb2.RunGraphResponse.FromString(
                self._stub.call(self._tf("RunGraph"), req, call.timeout_s))
        finally:
            # NOTE: the worker reads (and unlinks) feed files before it runs the graph, so
            # whatever is left once the call returned is garbage.
            for msg in files:
                outbox.discard(msg.path)

    def _take_shm(self, step_id: int, msgs: Any, timeout_s: float | None,
                  writable: bool = False) -> dict[str, Any]:
        """Reads tensors handed over as files; a file that cannot be read is pulled over
        gRPC instead (the task still has it registered under its key)."""
        got = {}
        for msg in msgs:
            try:
                got[msg.name] = shm.read(msg, writable)
            except shm.ShmError as e:
                self._shm.failed(e)
                got[msg.name] = self.pull_tensor(step_id, msg.name, timeout_s, writable)
        return got

    def run_graph_async(self, call: RunGraphCall, done: Done) -> Canceller:
        """`run_graph` on one of this worker's threads; cancelling sends `CleanupGraph`."""
        self._threads().submit(_complete, self.run_graph, (call,), done)
        return lambda err: self.cleanup_graph(call.step_id)

    def recv_tensors(self, step_id: int, keys: list[str],
                     timeout_s: float | None = None) -> list[Any]:
        """Pulls rendezvous values of `step_id` from this task, waiting until all were sent.

        Raises:
          OpError: the sender's error, or the transport error naming this task.
        """
        req = transport_pb2.RecvTensorsRequest(step_id=step_id, rendezvous_key=keys,
                                               accept_shm=self._shm.usable())
        resp = transport_pb2.RecvTensorsResponse.FromString(
            self._stub.call(self._tw("RecvTensors"), req, timeout_s))
        err = error_from_code(resp.status_code, resp.status_error_message)
        if err is not None:
            raise err
        got = {nt.name: codec.decode(nt.tensor) for nt in resp.tensor}
        got.update(self._take_shm(step_id, resp.shm_tensor, timeout_s))
        for key in resp.deferred_key:
            got[key] = self.pull_tensor(step_id, key, timeout_s)
        return [got[k] for k in keys]

    def recv_tensors_async(self, step_id: int, keys: list[str], done: Done,
                           timeout_s: float | None = None) -> Canceller:
        """`recv_tensors` on one of this worker's threads. A cancelled step ends the wait
        through the master's `CleanupGraph` to the sender, so the canceller does nothing."""
        self._threads().submit(_complete, self.recv_tensors, (step_id, keys, timeout_s), done)
        return lambda err: None

    # ------------------------------------------------------- tensor streams
    def pull_tensor(self, step_id: int, key: str, timeout_s: float | None = None,
                    writable: bool = False) -> Any:
        """Pulls one stashed large tensor as a chunk stream (a writable array with
        `writable`, else a read-only one).

        Raises:
          OpError: the sender's error, or the transport error naming this task.
        """
        req = transport_pb2.RecvTensorStreamRequest(step_id=step_id, rendezvous_key=key)
        try:
            stream = self._stub.method(self._tw("RecvTensorStream"), "unary_stream")(
                req.SerializeToString(), timeout=timeout_s)
            return codec.assemble(stream, writable)[1]
        except grpc.RpcError as e:
            raise from_rpc_error(e, self.task_name, self.address) from None

    def push_tensor(self, step_id: int, key: str, value: Any,
                    timeout_s: float | None = None, session_handle: str = "") -> None:
        """Pushes a large tensor as a chunk stream into the remote task's stash.

        Raises:
          OpError: the receiver's error, or the transport error naming this task.
        """
        try:
            data = self._stub.method(self._tw("PushTensorStream"), "stream_unary")(
                codec.stream_messages(step_id, key, value, session_handle), timeout=timeout_s)
        except grpc.RpcError as e:
            raise from_rpc_error(e, self.task_name, self.address) from None
        status = transport_pb2.TensorStreamStatus.FromString(data)
        err = error_from_code(status.status_code, status.status_error_message)
        if err is not None:
            raise err


class StreamedRun:
    """A `RunGraph` started with `GrpcRemoteWorker.start_streamed`.

    Attributes:
      conn: its `StreamConn`; the caller's partition exchanges the step's values on it
        (`RunGraphCall.streams`) before `finish` reads the answer.
    """

    def __init__(self, worker: GrpcRemoteWorker, call: RunGraphCall, conn: StreamConn):
        self.worker = worker
        self.call = call
        self.conn = conn
        self._settled = False  # the connection was handed back or closed

    def abandon(self) -> None:
        """Closes the connection unless `finish` settled it (the step was interrupted:
        the partition then sees the caller go)."""
        if not self._settled:
            self._settled = True
            self.conn.close()

    def finish(self, deadline: float | None) -> RunGraphResult:
        """Waits for the partition's answer (after the caller's own partition ended).

        Args:
          deadline: time.monotonic() seconds to wait until, or None.

        Raises:
          OpError: the partition's error; DeadlineExceededError when `deadline` passes;
            UnavailableError when the connection broke (naming the task).
        """
        conn, task, address = self.conn, self.worker.task_name, self.worker.address
        try:
            if conn.broken:
                raise StreamClosed("the connection was abandoned mid-frame")
            if not conn.end_sent:
                conn.send_end()
            status, body = conn.read_until_response(deadline)
        except TimeoutError:
            self.abandon()
            raise error_from_status(errors.DEADLINE_EXCEEDED, "Deadline Exceeded", task,
                                    address) from None
        except StreamClosed as e:
            self.abandon()
            raise error_from_status(errors.UNAVAILABLE, str(e), task, address) from None
        self._settled = True
        self.worker._stub.local.release_stream(conn)
        STATS.add_streamed_run()
        if status:
            raise error_from_status(status, body.decode(errors="replace"), task, address)
        try:
            resp = worker_pb2.RunGraphResponse.FromString(body)
        except DecodeError as e:
            raise errors.DataLossError(
                None, None, f"Malformed RunGraphResponse from {task}: {e}") from None
        return self.worker.run_graph_result(self.call, resp)


def _complete(fn: Any, args: tuple, done: Done) -> None:
    try:
        result = fn(*args)
    except errors.OpError as e:
        done(None, e)
    except Exception as e:  # noqa: BLE001  (report, never lose a step)
        done(None, errors.InternalError(None, None, f"{type(e).__name__}: {e}"))
    else:
        done(result, None)


class GrpcRemoteMaster:
    """TensorFlow's `MasterService` of a remote task (used by `Session.reset` and by the
    remote-master session mode)."""

    def __init__(self, task_name: str, address: str, channel: grpc.Channel | None = None,
                 security: TransportSecurity | None = None):
        self.task_name = task_name
        self.address = address
        self._stub = _Stub(channel or make_channel(address, security), task_name, address)

    def _m(self, name: str) -> str:
        return f"/{MASTER_SERVICE}/{name}"

    def create_session(self, graph_def: Any, config: Any, timeout_s: float | None) -> tuple:
        req = master_pb2.CreateSessionRequest()
        req.graph_def.CopyFrom(graph_def)
        if config is not None:
            req.config.CopyFrom(config)
        resp = master_pb2.CreateSessionResponse.FromString(
            self._stub.call(self._m("CreateSession"), req, timeout_s, wait_for_ready=True))
        return resp.session_handle, resp.graph_version

    def extend_session(self, handle: str, graph_def: Any, current_version: int) -> int:
        req = master_pb2.ExtendSessionRequest(session_handle=handle,
                                              current_graph_version=current_version)
        req.graph_def.CopyFrom(graph_def)
        return master_pb2.ExtendSessionResponse.FromString(
            self._stub.call(self._m("ExtendSession"), req)).new_graph_version

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
            self._stub.call(self._m("RunStep"), req, timeout_s))
        err = error_from_code(resp.status_code, resp.status_error_message)
        if err is not None:
            raise err
        if run_metadata is not None:
            run_metadata.MergeFrom(resp.metadata)
        got = {nt.name: codec.decode(nt.tensor) for nt in resp.tensor}
        return [got[f] for f in fetches]

    def close_session(self, handle: str) -> None:
        self._stub.call(self._m("CloseSession"),
                        master_pb2.CloseSessionRequest(session_handle=handle))

    def list_devices(self, timeout_s: float | None = None) -> list[Any]:
        resp = master_pb2.ListDevicesResponse.FromString(self._stub.call(
            self._m("ListDevices"), master_pb2.ListDevicesRequest(), timeout_s, True))
        return list(resp.local_device) + list(resp.remote_device)

    def reset(self, containers: list[str], device_filters: list[str],
              timeout_s: float | None) -> None:
        req = master_pb2.ResetRequest(container=containers, device_filters=device_filters)
        self._stub.call(self._m("Reset"), req, timeout_s, wait_for_ready=True)
