"""The gRPC client of a task's `WorkerService`: `GrpcRemoteWorker` (the `WorkerInterface` over
the wire) and its transport factory `connect` (see `transports`); `RpcStub`, the unary call
with error mapping that `grpc_master_client` shares. `make_channel` is the one place a
client channel is built.

A peer may be a real TensorFlow task: tensorweave's extensions (`methods.EXTENSION_METHODS`)
are tried once per peer, and a peer that answers UNIMPLEMENTED gets plain TensorFlow calls
from then on (`PeerFeatures`): `RecvTensor` per key for `RecvTensors`, every tensor inside
`RunGraph` instead of /dev/shm files and chunk streams.

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
from tensorweave.distributed.process_runtime import ProcessRuntime, default_runtime
from tensorweave.distributed.transfer_stats import nbytes
from tensorweave.distributed.transport import codec, methods, shm
from tensorweave.distributed.transport.local_rpc import LocalRpcClient
from tensorweave.distributed.transport.security import TransportSecurity, secure_channel
from tensorweave.distributed.transport.status import (
    error_from_code,
    error_from_response,
    error_from_status,
    from_rpc_error,
)
from tensorweave.distributed.transport.stream_conn import StreamClosed, StreamConn
from tensorweave.framework.rendezvous import DEAD
from tensorweave.protos import (
    tensorflow_server_pb2,
    transport_pb2,
    worker_pb2,
)

CONTROL_TIMEOUT_S = 30.0
PROBE_TIMEOUT_S = 10.0

CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", -1),
    ("grpc.max_receive_message_length", -1),
    ("grpc.min_reconnect_backoff_ms", 50),
    ("grpc.initial_reconnect_backoff_ms", 50),
    ("grpc.max_reconnect_backoff_ms", 300),
    ("grpc.keepalive_time_ms", 10000),
    ("grpc.keepalive_timeout_ms", 5000),
    ("grpc.enable_retries", 0),
]


def make_channel(address: str, security: TransportSecurity | None = None) -> grpc.Channel:
    """A channel to `address` with unlimited message sizes and fast reconnects, with TLS
    and the cluster token as `security` asks (every client channel of tensorweave is made
    here; see `security`)."""
    return secure_channel(address, CHANNEL_OPTIONS, security)  # security


def shared_channel(peer: Any) -> grpc.Channel:
    """The channel to `peer.address`, one per address per `WorkerCache` (with the TLS and
    token of `peer.options.security`)."""
    return peer.shared(("grpc-channel", peer.address),
                       lambda: make_channel(peer.address, peer.options.security))


def connect(peer: Any) -> GrpcRemoteWorker:
    """The gRPC transport (applies to every peer): a `GrpcRemoteWorker`."""
    return GrpcRemoteWorker(peer.task, peer.address, shared_channel(peer),
                            peer.options.shared_memory, runtime=peer.runtime)


class PeerFeatures:
    """What one peer speaks: tensorweave's extensions (unknown until tried), and so
    whether tensors may go as /dev/shm files or chunk streams."""

    def __init__(self) -> None:
        self.extensions: bool | None = None

    def lacks(self, error: errors.OpError) -> bool:
        """Records an extension call's error; True when it says the peer does not have
        the method (it is then a plain TensorFlow task: fall back)."""
        if isinstance(error, errors.UnimplementedError) and self.extensions is not True:
            self.extensions = False
            return True
        return False


class RpcStub:
    """Calls of one peer's services: unary calls take the step-call socket (`local`) for
    `methods.LOCAL_METHODS` when there is one, else gRPC; transport errors become
    `errors.*` naming the task, address and method."""

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
        if self.local is not None and path in methods.LOCAL_METHODS and not wait_for_ready:
            # NOTE: None when the peer has no same-host socket: gRPC below.
            out = self.local.call(path, data, timeout_s)
            if out is not None:
                return out
        try:
            return self.method(path)(data, timeout=timeout_s, wait_for_ready=wait_for_ready)
        except grpc.RpcError as e:
            raise from_rpc_error(e, self.task, self.address, path) from None

    def stream_call(self, path: str, kind: str, request: Any, timeout_s: float | None) -> Any:
        """A streaming call (`kind` as in `grpc.Channel`); transport errors name the peer."""
        try:
            return self.method(path, kind)(request, timeout=timeout_s)
        except grpc.RpcError as e:
            raise from_rpc_error(e, self.task, self.address, path) from None


class GrpcRemoteWorker:
    """`WorkerInterface` of a remote task.

    Args:
      task_name: `/job:J/replica:0/task:T`, used in error messages.
      address: `host:port`.
      channel: an existing channel to reuse (one per address per cache).
      shared_memory: hand large tensors over as /dev/shm files when the task runs on this
        host (see `shm`); False always uses gRPC streams.
      local: a `LocalRpcClient` making the per-step calls (`RunGraph`, `RecvTensors`,
        `CleanupGraph`) over the task's TCP step-call socket (`tcp_stream`), or None.
      runtime: the `ProcessRuntime` counting the bytes and owning the client outbox
        (default: the process's).
      security: the `security.TransportSecurity` (TLS, token) of a channel made here when
        `channel` is None.
    """

    in_process = False

    def __init__(self, task_name: str, address: str, channel: grpc.Channel | None = None,
                 shared_memory: bool = True, local: LocalRpcClient | None = None,
                 runtime: ProcessRuntime | None = None,
                 security: TransportSecurity | None = None):
        self.task_name = task_name
        self.address = address
        self._stub = RpcStub(channel or make_channel(address, security), task_name, address,
                           local)  # security: a channel of its own gets the token and TLS
        self._runtime = runtime or default_runtime()
        self._shm = shm.PeerState(address, shared_memory, self._runtime.host,
                                  directory=self._runtime.outbox_options.directory)
        self.features = PeerFeatures()
        self.stats = self._runtime.stats
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

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
        data = self._stub.call(methods.GET_STATUS, worker_pb2.GetStatusRequest(),
                               timeout_s, wait_for_ready)
        return list(worker_pb2.GetStatusResponse.FromString(data).device_attributes)

    def get_server_def(self, timeout_s: float | None = None) -> Any:
        """The remote task's `ServerDef` (its cluster and identity).

        Raises:
          UnimplementedError: the task is not a tensorweave task (naming method and peer).
        """
        try:
            data = self._stub.call(methods.GET_SERVER_DEF,
                                   transport_pb2.GetServerDefRequest(), timeout_s,
                                   wait_for_ready=True)
        except errors.UnimplementedError as e:
            self.features.lacks(e)
            raise
        self.features.extensions = True
        return tensorflow_server_pb2.ServerDef.FromString(data)

    def speaks_extensions(self) -> bool:
        """True when the task is a tensorweave task (asked once with `GetServerDef`; a
        peer that answers on the same-host socket is one)."""
        if self.features.extensions is None:
            try:
                self._stub.call(methods.GET_SERVER_DEF, transport_pb2.GetServerDefRequest(),
                                PROBE_TIMEOUT_S)
            except errors.OpError as e:
                if not self.features.lacks(e):
                    return False  # NOTE: unreachable: not known yet, asked again next time
            else:
                self.features.extensions = True
        return bool(self.features.extensions)

    def create_worker_session(self, session_handle: str, server_def: Any,
                              isolate_session_state: bool, master_task: str) -> None:
        req = worker_pb2.CreateWorkerSessionRequest(
            session_handle=session_handle, isolate_session_state=isolate_session_state,
            master_task=master_task,
        )
        if server_def is not None:
            req.server_def.CopyFrom(server_def)
        self._stub.call(methods.CREATE_WORKER_SESSION, req)

    def delete_worker_session(self, session_handle: str) -> None:
        self._stub.call(methods.DELETE_WORKER_SESSION,
                        worker_pb2.DeleteWorkerSessionRequest(session_handle=session_handle))

    def register_graph(self, session_handle: str, graph_def: Any) -> str:
        req = worker_pb2.RegisterGraphRequest(session_handle=session_handle,
                                              create_worker_session_called=True)
        req.graph_def.CopyFrom(graph_def)
        data = self._stub.call(methods.REGISTER_GRAPH, req)
        return worker_pb2.RegisterGraphResponse.FromString(data).graph_handle

    def deregister_graph(self, session_handle: str, graph_handle: str) -> None:
        self._stub.call(methods.DEREGISTER_GRAPH, worker_pb2.DeregisterGraphRequest(
            session_handle=session_handle, graph_handle=graph_handle,
            create_worker_session_called=True))

    def cleanup_graph(self, step_id: int, rollback: bool = False) -> None:
        """Fire-and-forget: cancel, drop (and with `rollback`, undo) the step remotely."""
        req = worker_pb2.CleanupGraphRequest(step_id=step_id, tensorweave_rollback=rollback)

        def send() -> None:
            try:
                self._stub.call(methods.CLEANUP_GRAPH, req, CONTROL_TIMEOUT_S)
            except errors.OpError:
                pass  # the task is gone: nothing left to clean there

        self._threads().submit(send)

    def cleanup_all(self, containers: list[str], master_task: str = "") -> None:
        req = worker_pb2.CleanupAllRequest(container=containers,
                                           tensorweave_master_task=master_task)
        self._stub.call(methods.CLEANUP_ALL, req)

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
        use_shm = self._shm.usable() and (self.features.extensions is True
                                          or self.speaks_extensions())
        resp = self._run_graph(call, use_shm)
        if resp.tensorweave_send_shm_rejected:
            # NOTE: the worker read none of it and ran nothing: resend over gRPC.
            self._shm.failed("the task could not read our feed files")
            resp = self._run_graph(call, False)
        result = self.run_graph_result(call, resp)
        self.stats.add(sent=nbytes(call.sends.values()), received=nbytes(result.recvs.values()))
        return result

    def run_graph_result(self, call: RunGraphCall, resp: Any) -> RunGraphResult:
        """The result of a `RunGraphResponse` (fetches from the message, files or streams).

        Raises:
          OpError: the error the response carries.
        """
        err = error_from_response(resp)
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
        if call.committed:
            req.tensorweave_committed_step.extend(call.committed)
        req.exec_opts.record_timeline = call.record_timeline
        return req

    @property
    def streaming(self) -> GrpcRemoteWorker | None:
        """This worker as a `StepStreaming` when the task has a same-host socket address,
        else None."""
        return self if self._stub.local is not None else None

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
        conn = local.open_stream(methods.STREAMED_RUN_GRAPH, req.SerializeToString(),
                                 call.timeout_s)
        if conn is None:
            return None
        return StreamedRun(self, call, conn)

    def _run_graph(self, call: RunGraphCall, use_shm: bool) -> Any:
        req = self._request(call, use_shm)
        outbox = self._runtime.client_outbox() if use_shm else None
        files: list[Any] = []
        try:
            for key, value in call.sends.items():
                if use_shm and shm.fits(value):
                    try:
                        files.append(shm.write(key, value, outbox))
                        continue
                    except shm.ShmError:
                        pass  # NOTE: full or missing /dev/shm: gRPC below
                if codec.is_inline(value) or not self.speaks_extensions():
                    codec.encode(value, req.send.add(name=key).tensor)
                else:
                    self.push_tensor(call.step_id, key, value, call.timeout_s,
                                     call.session_handle)
            req.tensorweave_send_shm.extend(files)
            return worker_pb2.RunGraphResponse.FromString(
                self._stub.call(methods.RUN_GRAPH, req, call.timeout_s))
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
                got[msg.name] = shm.read(msg, writable,
                                         outbox=self._runtime.client_outbox())
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

        A TensorFlow task gets one `RecvTensor` per key instead (see `PeerFeatures`).

        Raises:
          OpError: the sender's error, or the transport error naming this task.
        """
        if self.features.extensions is False:
            values = [self.recv_tensor(step_id, k, timeout_s) for k in keys]
        else:
            values = self._recv_tensors(step_id, keys, timeout_s)
        self.stats.add(received=nbytes(values))
        return values

    def _recv_tensors(self, step_id: int, keys: list[str],
                      timeout_s: float | None) -> list[Any]:
        req = transport_pb2.RecvTensorsRequest(step_id=step_id, rendezvous_key=keys,
                                               accept_shm=self._shm.usable())
        try:
            data = self._stub.call(methods.RECV_TENSORS, req, timeout_s)
        except errors.OpError as e:
            if self.features.lacks(e):
                return [self.recv_tensor(step_id, k, timeout_s) for k in keys]
            raise
        self.features.extensions = True
        resp = transport_pb2.RecvTensorsResponse.FromString(data)
        err = error_from_code(resp.status_code, resp.status_error_message)
        if err is not None:
            raise err
        got = {nt.name: codec.decode(nt.tensor) for nt in resp.tensor}
        got.update(self._take_shm(step_id, resp.shm_tensor, timeout_s))
        for key in resp.deferred_key:
            got[key] = self.pull_tensor(step_id, key, timeout_s)
        got.update(dict.fromkeys(resp.dead_key, DEAD))
        return [got[k] for k in keys]

    def recv_tensor(self, step_id: int, key: str, timeout_s: float | None = None) -> Any:
        """TensorFlow's `RecvTensor`: one rendezvous value of `step_id` from this task.

        Raises:
          OpError: the sender's error, or the transport error naming this task.
        """
        req = worker_pb2.RecvTensorRequest(step_id=step_id, rendezvous_key=key)
        data = self._stub.call(methods.RECV_TENSOR, req, timeout_s)
        resp = worker_pb2.RecvTensorResponse.FromString(data)
        return DEAD if resp.is_dead else codec.decode(resp.tensor)

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
        path = methods.RECV_TENSOR_STREAM
        try:
            stream = self._stub.method(path, "unary_stream")(req.SerializeToString(),
                                                              timeout=timeout_s)
            return codec.assemble(stream, writable)[1]
        except grpc.RpcError as e:
            raise from_rpc_error(e, self.task_name, self.address, path) from None

    def push_tensor(self, step_id: int, key: str, value: Any,
                    timeout_s: float | None = None, session_handle: str = "") -> None:
        """Pushes a large tensor as a chunk stream into the remote task's stash.

        Raises:
          OpError: the receiver's error, or the transport error naming this task.
        """
        data = self._stub.stream_call(
            methods.PUSH_TENSOR_STREAM, "stream_unary",
            codec.stream_messages(step_id, key, value, session_handle), timeout_s)
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
                                    address, methods.STREAMED_RUN_GRAPH) from None
        except StreamClosed as e:
            self.abandon()
            raise error_from_status(errors.UNAVAILABLE, str(e), task, address,
                                    methods.STREAMED_RUN_GRAPH) from None
        self._settled = True
        self.worker._stub.local.release_stream(conn)
        self.worker.stats.add_streamed_run()
        if status:
            raise error_from_status(status, body.decode(errors="replace"), task, address,
                                    methods.STREAMED_RUN_GRAPH)
        try:
            resp = worker_pb2.RunGraphResponse.FromString(body)
        except DecodeError as e:
            raise errors.DataLossError(
                None, None, f"Malformed RunGraphResponse from {task}: {e}") from None
        result = self.worker.run_graph_result(self.call, resp)
        self.worker.stats.add(sent=nbytes(self.call.sends.values()),
                              received=nbytes(result.recvs.values()))
        return result


def _complete(fn: Any, args: tuple, done: Done) -> None:
    try:
        result = fn(*args)
    except errors.OpError as e:
        done(None, e)
    except Exception as e:  # noqa: BLE001  (report, never lose a step)
        done(None, errors.InternalError(None, None, f"{type(e).__name__}: {e}"))
    else:
        done(result, None)
