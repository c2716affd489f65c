"""gRPC server of a task: generic handlers under TensorFlow's method paths
(`/tensorflow.WorkerService/RunGraph`, `/tensorflow.MasterService/RunStep`, ...) plus
tensorweave's extensions (`/tensorweave.WorkerService/RecvTensors`, ...), all named in
`methods`. `bind` is the one place a gRPC server is built.

Handlers take and return raw bytes; protobuf parsing happens here, tensor bodies go
through `codec`. Malformed payloads get INVALID_ARGUMENT and the server stays up.

Large tensors (see `codec` and `shm`): a caller on this host that sets
`RunGraphRequest.tensorweave_accept_shm` (or `RecvTensorsRequest.accept_shm`) gets them as
/dev/shm files in the response (`tensorweave_recv_shm` / `shm_tensor`), registered in the
worker's outbox (`WorkerTransfers.outbox`) so that `RecvTensorStream` can still serve them
if the caller cannot read the file; otherwise (or when a write fails) they are stashed
(`WorkerTransfers.stash`) for `RecvTensorStream`.
Feeds arriving as files (`tensorweave_send_shm`) are read before the graph runs; if one
cannot be read the response says `tensorweave_send_shm_rejected` and nothing runs.
A server whose default session config sets `tensorweave.disable_shared_memory` neither
writes nor reads such files.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import numpy as np
from google.protobuf.message import DecodeError

from tensorweave import errors
from tensorweave.distributed.interfaces import RunGraphCall
from tensorweave.distributed.transfer_stats import nbytes
from tensorweave.distributed.transport import codec, methods, shm
from tensorweave.distributed.transport import security as security_lib
from tensorweave.distributed.transport.status import abort
from tensorweave.framework import limits
from tensorweave.framework.cancellation import CancellationManager, is_derived
from tensorweave.framework.rendezvous import DEAD
from tensorweave.protos import master_pb2, transport_pb2, worker_pb2

SERVER_OPTIONS = [
    ("grpc.max_send_message_length", -1),
    ("grpc.max_receive_message_length", -1),
    # NOTE: without this Linux lets a second server bind the same port silently.
    ("grpc.so_reuseport", 0),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 5000),
]

# NOTE: the tensor of a dead `RecvTensorResponse` (TensorFlow's readers parse it anyway).
_EMPTY = np.zeros((0,), np.float32)


def _time_remaining(context: Any) -> float | None:
    """Seconds left before the caller's deadline, or None when it set none (gRPC then
    reports ~9.2e18 s, which would overflow every deadline derived from it)."""
    remaining = context.time_remaining()
    return None if remaining is None or remaining > 1e9 else remaining


def _parse(cls: Any, data: bytes) -> Any:
    try:
        return cls.FromString(data)
    except DecodeError as e:
        raise errors.InvalidArgumentError(
            None, None, f"Malformed {cls.DESCRIPTOR.name} payload: {e}"
        ) from None


def _guard(fn: Callable[[bytes, Any], bytes]) -> Callable[[bytes, Any], bytes]:
    def handler(request: bytes, context: Any) -> bytes:
        try:
            return fn(request, context)
        except errors.OpError as e:
            abort(context, e)
        except Exception as e:  # noqa: BLE001  (a bug must not take the server down)
            abort(context, errors.InternalError(None, None, f"{type(e).__name__}: {e}"))
        return b""

    return handler


def wait_for(context: Any, start: Callable[[Any], Any], what: str) -> Any:
    """Runs an asynchronous service call and blocks this handler thread until it finishes,
    the caller cancels, or the call's deadline passes."""
    event = threading.Event()
    box: list[tuple[Any, Any]] = []

    def done(value: Any, error: Any) -> None:
        box.append((value, error))
        event.set()

    cancel = start(done)
    context.add_callback(
        lambda: cancel(errors.CancelledError(None, None, f"{what} cancelled by the caller"))
    )
    if not event.wait(_time_remaining(context)):
        cancel(errors.DeadlineExceededError(None, None, f"{what} timed out"))
        raise errors.DeadlineExceededError(None, None, f"{what} timed out")
    value, error = box[0]
    if error is not None:
        raise error
    return value


def _shm_min_bytes(context: Any) -> int:
    """The smallest tensor an answer hands over as a /dev/shm file: larger over the
    step-call socket, where inline bytes cost less than through gRPC."""
    return shm.MIN_BYTES_STEP_CALL if getattr(context, "step_call", False) else shm.MIN_BYTES


class WorkerServicer:
    """Serves a `worker.Worker`.

    Args:
      worker: the worker.
      transfers: its `WorkerTransfers` (stash and /dev/shm outbox).
      server_def: returns the server's current `ServerDef`.
      stats: the process's `TransferStats` (bytes served to pulls).
    """

    def __init__(self, worker: Any, transfers: Any, server_def: Callable[[], Any],
                 stats: Any, step_stream_port: Callable[[], int | None] = lambda: None):
        self._w = worker
        self._step_stream_port = step_stream_port
        self._stash = transfers.stash
        self._outbox = transfers.outbox
        self._server_def = server_def
        self._stats = stats

    def _max_bytes(self) -> int:
        """security: the largest tensor a message may expand to (`framework.limits`)."""
        return limits.effective(
            self._server_def().default_session_config.tensorweave.security
            .max_decoded_tensor_bytes)

    def _shm_allowed(self) -> bool:
        return not self._server_def().default_session_config.tensorweave.disable_shared_memory

    def _read_shm_sends(self, msgs: Any, sends: dict[str, Any]) -> bool:
        """Reads feeds handed over as files into `sends`; False when one cannot be read
        (the caller then resends them over gRPC)."""
        if not self._shm_allowed():
            return False
        try:
            for msg in msgs:
                sends[msg.name] = shm.read(msg, outbox=self._outbox)
        except shm.ShmError:
            return False
        return True

    def _add_value(self, step_id: int, key: str, value: Any, use_shm: bool, inline: Any,
                   files: Any, deferred: Any, dead: Any = None,
                   shm_min_bytes: int = shm.MIN_BYTES) -> None:
        """Puts a result into a response: as a /dev/shm file (from `shm_min_bytes`, see
        `_shm_min_bytes`), inline, stashed for a `RecvTensorStream` (its key in
        `deferred`), or, for a dead value, its key in `dead`.

        Raises:
          InternalError: a dead value where the response has no place for one (a fetch).
        """
        if value is DEAD:
            if dead is None:
                raise errors.InternalError(None, None, f"Dead value for fetch {key}")
            dead.append(key)
            return
        if use_shm and shm.fits(value, shm_min_bytes):
            try:
                files.append(shm.write(key, value, self._outbox, (step_id, key)))
                return
            except shm.ShmError:
                pass  # NOTE: full or missing /dev/shm: the stream path below
        if codec.is_inline(value):
            codec.encode(value, inline.add(name=key).tensor)
        else:
            self._stash.put(step_id, key, value)
            deferred.append(key)

    def get_status(self, request: bytes, context: Any) -> bytes:
        _parse(worker_pb2.GetStatusRequest, request)
        resp = worker_pb2.GetStatusResponse()
        resp.device_attributes.extend(self._w.get_status())
        return resp.SerializeToString()

    def create_worker_session(self, request: bytes, context: Any) -> bytes:
        req = _parse(worker_pb2.CreateWorkerSessionRequest, request)
        self._w.create_worker_session(req.session_handle, req.server_def,
                                      req.isolate_session_state, req.master_task)
        return b""

    def delete_worker_session(self, request: bytes, context: Any) -> bytes:
        req = _parse(worker_pb2.DeleteWorkerSessionRequest, request)
        self._w.delete_worker_session(req.session_handle)
        return b""

    def register_graph(self, request: bytes, context: Any) -> bytes:
        req = _parse(worker_pb2.RegisterGraphRequest, request)
        handle = self._w.register_graph(req.session_handle, req.graph_def)
        return worker_pb2.RegisterGraphResponse(graph_handle=handle).SerializeToString()

    def deregister_graph(self, request: bytes, context: Any) -> bytes:
        req = _parse(worker_pb2.DeregisterGraphRequest, request)
        self._w.deregister_graph(req.session_handle, req.graph_handle)
        return b""

    def run_graph(self, request: bytes, context: Any) -> bytes:
        return self._run_graph(_parse(worker_pb2.RunGraphRequest, request), context)

    def run_graph_streamed(self, request: bytes, context: Any) -> bytes:
        """`RunGraph` whose values to and from the caller's task
        (`tensorweave_stream_task`) travel on the call's connection (`step_stream`)."""
        req = _parse(worker_pb2.RunGraphRequest, request)
        if context.stream is None or not req.tensorweave_stream_task:
            raise errors.InvalidArgumentError(
                None, None, "A streamed RunGraph needs its connection and the caller's task")
        return self._run_graph(req, context, {req.tensorweave_stream_task: context.stream})

    def _run_graph(self, req: Any, context: Any, streams: dict[str, Any] | None = None) -> bytes:
        cancellation = CancellationManager()
        context.add_callback(lambda: cancellation.start_cancel(
            errors.CancelledError(None, None, "RunGraph cancelled by the master")))
        limit = self._max_bytes()  # security: bounded decode
        sends = {nt.name: codec.decode(nt.tensor, limit, f"RunGraph send {nt.name}")
                 for nt in req.send}
        resp = worker_pb2.RunGraphResponse()
        if req.tensorweave_send_shm and not self._read_shm_sends(req.tensorweave_send_shm,
                                                                  sends):
            resp.tensorweave_send_shm_rejected = True
            return resp.SerializeToString()
        call = RunGraphCall(
            req.session_handle, req.graph_handle, req.step_id, sends, list(req.recv_key),
            req.exec_opts.record_timeline, _time_remaining(context), cancellation,
            req.tensorweave_single_partition, streams, stream_server=True,
            committed=list(req.tensorweave_committed_step) or None,
        )
        try:
            result = self._w.run_graph(call)
        except errors.OpError as e:
            if not req.store_errors_in_response_body:
                raise
            resp.status_code = e.error_code
            resp.status_error_message = e.message
            resp.tensorweave_derived = is_derived(e)
            return resp.SerializeToString()
        use_shm = req.tensorweave_accept_shm and self._shm_allowed()
        min_bytes = _shm_min_bytes(context)
        for key, value in result.recvs.items():
            self._add_value(req.step_id, key, value, use_shm, resp.recv,
                            resp.tensorweave_recv_shm, resp.tensorweave_deferred_key,
                            shm_min_bytes=min_bytes)
        if result.step_stats is not None:
            resp.step_stats.dev_stats.add().CopyFrom(result.step_stats)
        return resp.SerializeToString()

    def cleanup_graph(self, request: bytes, context: Any) -> bytes:
        req = _parse(worker_pb2.CleanupGraphRequest, request)
        self._w.cleanup_graph(req.step_id, req.tensorweave_rollback)
        return b""

    def cleanup_all(self, request: bytes, context: Any) -> bytes:
        req = _parse(worker_pb2.CleanupAllRequest, request)
        self._w.cleanup_all(list(req.container), req.tensorweave_master_task)
        return b""

    def recv_tensor(self, request: bytes, context: Any) -> bytes:
        req = _parse(worker_pb2.RecvTensorRequest, request)
        values = wait_for(context, lambda done: self._w.recv_tensors_async(
            req.step_id, [req.rendezvous_key], done), "RecvTensor")
        resp = worker_pb2.RecvTensorResponse()
        if values[0] is DEAD:
            resp.is_dead = True  # NOTE: TensorFlow's flag; an empty float tensor rides along
            codec.encode(_EMPTY, resp.tensor)
        else:
            codec.encode(values[0], resp.tensor)
        self._stats.add(sent=nbytes(values))
        return resp.SerializeToString()

    def recv_tensors(self, request: bytes, context: Any) -> bytes:
        req = _parse(transport_pb2.RecvTensorsRequest, request)
        keys = list(req.rendezvous_key)
        values = wait_for(context, lambda done: self._w.recv_tensors_async(
            req.step_id, keys, done), "RecvTensors")
        self._stats.add(sent=nbytes(values))
        resp = transport_pb2.RecvTensorsResponse()
        use_shm = req.accept_shm and self._shm_allowed()
        min_bytes = _shm_min_bytes(context)
        for key, value in zip(keys, values):
            self._add_value(req.step_id, key, value, use_shm, resp.tensor, resp.shm_tensor,
                            resp.deferred_key, resp.dead_key, min_bytes)
        return resp.SerializeToString()

    def recv_tensor_stream(self, request: bytes, context: Any) -> Iterator[bytes]:
        try:
            req = _parse(transport_pb2.RecvTensorStreamRequest, request)
            value = self._stash.take(req.step_id, req.rendezvous_key)
            if value is None:
                raise errors.NotFoundError(
                    None, None, f"No tensor {req.rendezvous_key} of step {req.step_id} on "
                    f"{self._w.task_name}")
        except errors.OpError as e:
            yield codec.error_header(0, "", e)
            return
        yield from codec.stream_messages(req.step_id, req.rendezvous_key, value)

    def push_tensor_stream(self, request_iterator: Iterator[bytes], context: Any) -> bytes:
        try:
            header, value = codec.assemble(  # security: bounded, session required
                request_iterator, max_bytes=self._max_bytes(), what="PushTensorStream",
                accept=lambda h: self._w.check_push(h.session_handle, h.nbytes))
            self._stash.put(header.step_id, header.rendezvous_key, value, "PushTensorStream")
        except errors.OpError as e:
            return transport_pb2.TensorStreamStatus(
                status_code=e.error_code, status_error_message=e.message
            ).SerializeToString()
        except DecodeError as e:
            return transport_pb2.TensorStreamStatus(
                status_code=errors.INVALID_ARGUMENT, status_error_message=f"Malformed stream: {e}"
            ).SerializeToString()
        return transport_pb2.TensorStreamStatus().SerializeToString()

    def get_server_def(self, request: bytes, context: Any) -> bytes:
        return self._server_def().SerializeToString()

    def get_step_stream_port(self, request: bytes, context: Any) -> bytes:
        """The TCP port of the step-call socket (`tcp_stream`) as ASCII, or b"" (none)."""
        port = self._step_stream_port()
        return b"" if port is None else str(port).encode()

    def local_handlers(self) -> dict[str, Callable[[bytes, Any], bytes]]:
        """The per-step unary methods by path, for the same-host socket (`local_rpc`)."""
        handlers = {
            methods.RUN_GRAPH: _guard(self.run_graph),
            methods.RECV_TENSOR: _guard(self.recv_tensor),
            methods.CLEANUP_GRAPH: _guard(self.cleanup_graph),
            methods.RECV_TENSORS: _guard(self.recv_tensors),
            methods.STREAMED_RUN_GRAPH: _guard(self.run_graph_streamed),
        }
        assert set(handlers) == methods.LOCAL_METHODS
        return handlers

    def handlers(self) -> list[Any]:
        """GRPC handlers of TensorFlow's `WorkerService` and tensorweave's extensions."""
        unary = grpc.unary_unary_rpc_method_handler
        tf_methods = {
            name: unary(_guard(getattr(self, _snake(name)))) for name in methods.WORKER_METHODS
        }
        kinds = {
            "unary_unary": lambda fn: unary(_guard(fn)),
            "unary_stream": grpc.unary_stream_rpc_method_handler,
            "stream_unary": grpc.stream_unary_rpc_method_handler,
        }
        tw_methods = {name: kinds[kind](getattr(self, _snake(name)))
                      for name, kind in methods.EXTENSION_METHODS.items()}
        return [
            grpc.method_handlers_generic_handler(methods.TF_WORKER_SERVICE, tf_methods),
            grpc.method_handlers_generic_handler(methods.TW_WORKER_SERVICE, tw_methods),
        ]


def _snake(name: str) -> str:
    """`RecvTensors` -> `recv_tensors` (the servicer method serving an RPC)."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


class MasterServicer:
    """Serves a `master.Master` (TensorFlow's `MasterService`), obtained from `master_fn`
    at each call (the server creates its master after binding its port)."""

    def __init__(self, master_fn: Callable[[], Any]):
        self._master_fn = master_fn

    @property
    def _m(self) -> Any:
        return self._master_fn()

    def create_session(self, request: bytes, context: Any) -> bytes:
        req = _parse(master_pb2.CreateSessionRequest, request)
        handle, version = self._m.create_session(req.graph_def, req.config,
                                                 _time_remaining(context))
        return master_pb2.CreateSessionResponse(
            session_handle=handle, graph_version=version
        ).SerializeToString()

    def extend_session(self, request: bytes, context: Any) -> bytes:
        req = _parse(master_pb2.ExtendSessionRequest, request)
        version = self._m.extend_session(req.session_handle, req.graph_def,
                                         req.current_graph_version)
        return master_pb2.ExtendSessionResponse(new_graph_version=version).SerializeToString()

    def run_step(self, request: bytes, context: Any) -> bytes:
        from tensorweave.protos import config_pb2

        req = _parse(master_pb2.RunStepRequest, request)
        feeds = {nt.name: codec.decode(nt.tensor, what=f"RunStep feed {nt.name}")
                 for nt in req.feed}
        metadata = config_pb2.RunMetadata()
        resp = master_pb2.RunStepResponse()
        try:
            values = self._m.run_step(req.session_handle, feeds, list(req.fetch),
                                      list(req.target), req.options, metadata)
        except errors.OpError as e:
            if not req.store_errors_in_response_body:
                raise
            resp.status_code = e.error_code
            resp.status_error_message = e.message
            return resp.SerializeToString()
        for name, value in zip(req.fetch, values):
            codec.encode(value, resp.tensor.add(name=name).tensor)
        resp.metadata.CopyFrom(metadata)
        return resp.SerializeToString()

    def close_session(self, request: bytes, context: Any) -> bytes:
        req = _parse(master_pb2.CloseSessionRequest, request)
        self._m.close_session(req.session_handle)
        return b""

    def list_devices(self, request: bytes, context: Any) -> bytes:
        _parse(master_pb2.ListDevicesRequest, request)
        resp = master_pb2.ListDevicesResponse()
        local, remote = self._m.list_devices(_time_remaining(context))
        resp.local_device.extend(local)
        resp.remote_device.extend(remote)
        return resp.SerializeToString()

    def reset(self, request: bytes, context: Any) -> bytes:
        req = _parse(master_pb2.ResetRequest, request)
        self._m.reset(list(req.container), list(req.device_filters), _time_remaining(context))
        return b""

    def handlers(self) -> list[Any]:
        """GRPC handlers of TensorFlow's `MasterService`."""
        unary = grpc.unary_unary_rpc_method_handler
        table = {name: unary(_guard(getattr(self, _snake(name))))
                 for name in methods.MASTER_METHODS}
        return [grpc.method_handlers_generic_handler(methods.TF_MASTER_SERVICE, table)]


def bind(handlers: list[Any], address: str,
         security: security_lib.TransportSecurity | None = None) -> tuple[Any, int]:
    """Creates a gRPC server with `handlers` bound to `address`; returns (server, port).
    Every gRPC server of tensorweave is built here; `security` adds the token check and
    TLS (see `security`).

    Raises:
      UnknownError: if the address cannot be bound (e.g. the port is in use), naming it.
    """
    security = security or security_lib.TransportSecurity()
    server = grpc.server(
        concurrent.futures.ThreadPoolExecutor(max_workers=128, thread_name_prefix="grpc"),
        handlers=handlers, options=SERVER_OPTIONS,
        interceptors=security_lib.server_interceptors(security),  # security: token check
    )
    credentials = security_lib.server_credentials(security)  # security: TLS
    try:
        port = (server.add_secure_port(address, credentials) if credentials is not None
                else server.add_insecure_port(address))
    except RuntimeError as e:
        port = 0
        reason = str(e)
    else:
        reason = "address already in use or not available"
    if not port:
        server.stop(None)
        raise errors.UnknownError(
            None, None, f"Could not start gRPC server: failed to bind {address} ({reason})"
        )
    return server, port
