"""`tf.train.Server`: one gRPC server per task, hosting a master service and a worker
service (follows TensorFlow's `server_lib.Server` and `GrpcServer`).

Differences from TensorFlow: the server binds the host named in the cluster spec (TF binds
0.0.0.0); `stop()` really stops it and frees the port (TF has no shutdown); `join(timeout)`
returns once the server stops or the timeout passes; it also serves the per-step worker
calls to tensorweave peers over a TCP step-call socket beside gRPC (`transport.tcp_stream`,
`transport.local_rpc`), on one host as between hosts.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any

from tensorweave import errors
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.interfaces import WorkerTransfers
from tensorweave.distributed.master import Master
from tensorweave.distributed.process_runtime import ProcessRuntime, default_runtime
from tensorweave.distributed.server_def import make_server_def
from tensorweave.distributed.transport import grpc_server, tcp_stream
from tensorweave.distributed.transport import local_rpc as local_rpc_lib
from tensorweave.distributed.transport import security as security_lib
from tensorweave.distributed.transport.host_locality import HostLocality
from tensorweave.distributed.transport.stash import Stash
from tensorweave.distributed.transport.step_stream import StreamPump
from tensorweave.distributed.worker import Worker
from tensorweave.distributed.worker_cache import TransportOptions, WorkerCache, task_name
from tensorweave.framework.file_sandbox import sandbox_from_options
from tensorweave.runtime import thread_budget

log = logging.getLogger("tensorweave.server")


def split_address(address: str, job: str, task: int) -> tuple[str, int]:
    """`host:port` -> (host, port).

    Raises:
      InvalidArgumentError: if the port does not parse (TensorFlow's message).
    """
    host, sep, port_text = address.rpartition(":")
    try:
        if not sep:
            raise ValueError
        port = int(port_text)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f'Could not parse port for local server from "{address}"'
        ) from None
    return host, port


def tasks_on_host(cluster: ClusterSpec, locality: HostLocality | None = None) -> int:
    """How many tasks of `cluster` are served on this host (at least 1)."""
    addresses = [a for job in cluster.jobs for a in cluster.job_tasks(job) if a]
    locality = locality or HostLocality()
    return max(1, sum(locality.is_local_address(a) for a in addresses))


class Server:
    """An in-process TensorFlow server (follows `tf.train.Server`).

    Args:
      server_or_cluster_def: a `ServerDef`, `ClusterSpec`, dict or `ClusterDef`.
      job_name: this task's job (inferred when the cluster has one job).
      task_index: this task's index (inferred when the job has one task).
      protocol: `"grpc"` (the only protocol).
      config: default `ConfigProto` for sessions on this server. Its
        `intra_op_parallelism_threads` sizes this process's BLAS pool; 0 (the default)
        gives each task of the cluster on this host `cores // tasks` BLAS threads, never
        more than it had (see `runtime.thread_budget`).
      start: start serving immediately.
      runtime: the `ProcessRuntime` it registers in (default: the process's).

    Raises:
      TypeError/ValueError: for bad cluster definitions (see `ClusterSpec`).
      InvalidArgumentError: if the task is not in its job, or the port does not parse.
      InternalError: if the job is not in the cluster.
      UnknownError: if the address cannot be bound (e.g. port in use), naming it.
    """

    def __init__(self, server_or_cluster_def: Any, job_name: str | None = None,
                 task_index: int | None = None, protocol: str | None = None,
                 config: Any = None, start: bool = True,
                 runtime: ProcessRuntime | None = None):
        self._server_def = make_server_def(server_or_cluster_def, job_name, task_index,
                                           protocol, config)
        sd = self._server_def
        if sd.protocol != "grpc":
            raise ValueError(f"Unsupported protocol {sd.protocol!r}; tensorweave speaks grpc")
        job, task = sd.job_name, sd.task_index
        cluster = ClusterSpec(sd.cluster)
        if job not in cluster.jobs:
            raise errors.InternalError(None, None, f'Job "{job}" was not defined in cluster')
        if task not in cluster.task_indices(job):
            raise errors.InvalidArgumentError(
                None, None, f'Task {task} was not defined in job "{job}"')
        host, port = split_address(cluster.task_address(job, task), job, task)
        security = sd.default_session_config.tensorweave.security
        self._security = security_lib.from_options(security)  # security: token, TLS
        security_lib.warn_if_exposed(host, self._security, task_name(job, task))
        self.runtime = runtime or default_runtime()
        self._blas_threads = thread_budget.apply_config(
            sd.default_session_config, tasks_on_host(cluster, self.runtime.host))
        transfers = self._make_worker(job, task, security)
        self._tcp_port: int | None = None  # the TCP step-call socket's, once listening
        self._servicer = grpc_server.WorkerServicer(
            self.worker, transfers, lambda: self._server_def, self.runtime.stats,
            lambda: self._tcp_port)
        self._grpc, self._port = self._bind(host, port)
        if port == 0:
            self._set_own_port(job, task, host)
        options = TransportOptions.from_config(sd.default_session_config, self._security)
        self._cache = WorkerCache(ClusterSpec(sd.cluster), options, self.runtime)
        # NOTE: `tcp_streams` is off with `disable_local_rpc` or `disable_tcp_streams`; the
        # socket is plaintext, so never beside TLS (security).
        step_calls = options.tcp_streams and not self._security.tls
        self._local_rpc = (local_rpc_lib.LocalRpcServer(
            self._servicer.local_handlers(), self._port, self._security.token,
            options=self.runtime.local_rpc_options) if step_calls else None)
        self._tcp_host = host
        self.worker.worker_cache = self._cache
        self.master = Master(task_name(job, task), self._cache, sd.default_session_config)
        self._started = False
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        if start:
            self.start()

    def _make_worker(self, job: str, task: int, security: Any) -> WorkerTransfers:
        """Builds `self.worker` with its transport-owned state (returned), its stash capped
        and its file sandbox as the `SecurityOptions` ask."""
        outbox = self.runtime.new_outbox()
        stash = Stash(outbox, task_name(job, task),  # security: capped
                      max_bytes=security.max_stash_bytes)
        transfers = WorkerTransfers(stash, outbox, functools.partial(
            StreamPump, stats=self.runtime.stats, eventfds=self.runtime.eventfds))
        self.worker = Worker(job, task, transfers=transfers,
                             undo_log_cap_bytes=self.runtime.undo_log_cap_bytes)
        self.worker.file_sandbox = sandbox_from_options(security, server=True)  # security
        return transfers

    def _bind(self, host: str, port: int) -> tuple[Any, int]:
        master = grpc_server.MasterServicer(lambda: self.master)
        handlers = self._servicer.handlers() + master.handlers()
        return grpc_server.bind(handlers, f"{host or 'localhost'}:{port}", self._security)

    def _set_cluster(self, cluster: ClusterSpec) -> None:
        """Replaces the cluster before the server starts (used to build in-process clusters
        whose servers all bound port 0).

        Raises:
          FailedPreconditionError: if the server already started.
        """
        if self._started:
            raise errors.FailedPreconditionError(
                None, None, "The cluster of a started server cannot change")
        self._server_def.cluster.CopyFrom(cluster.as_cluster_def())
        self._cache = WorkerCache(ClusterSpec(self._server_def.cluster), self._cache.options,
                                  self.runtime)
        self.worker.worker_cache = self._cache
        self.master = Master(self.worker.task_name, self._cache,
                             self._server_def.default_session_config)

    def _set_own_port(self, job: str, task: int, host: str) -> None:
        for j in self._server_def.cluster.job:
            if j.name == job:
                j.tasks[task] = f"{host or 'localhost'}:{self._port}"

    @property
    def server_def(self) -> Any:
        """The `ServerDef` (with the bound port when the spec asked for port 0)."""
        return self._server_def

    @property
    def target(self) -> str:
        """`grpc://localhost:<port>`, the session target for this server."""
        return f"grpc://localhost:{self._port}"

    @property
    def local_rpc_calls(self) -> int | None:
        """Calls this server answered over its step-call socket (None when it has none:
        turned off by the options, or TLS; see `transport.tcp_stream`)."""
        return self._local_rpc.calls if self._local_rpc is not None else None

    @property
    def address(self) -> str:
        """This task's address in the cluster spec."""
        sd = self._server_def
        return ClusterSpec(sd.cluster).task_address(sd.job_name, sd.task_index)

    def start(self) -> None:
        """Starts serving (a second call does nothing).

        Raises:
          FailedPreconditionError: if the server was stopped.
        """
        with self._lock:
            if self._stopped.is_set():
                raise errors.FailedPreconditionError(None, None, "Server has stopped.")
            if self._started:
                log.info("Server already started (target: %s)", self.target)
                return
            self._grpc.start()
            if self._local_rpc is not None:
                self._listen_tcp()
                self._local_rpc.start()
            self._started = True
            self.runtime.servers.register(self.address, self)
            self.runtime.servers.register(f"localhost:{self._port}", self)
        log.info("Started server %s at %s with device %s", self.worker.task_name,
                 self.target, self.worker.device_name)

    def _listen_tcp(self) -> None:
        """Adds the TCP step-call socket (`transport.tcp_stream`) on this task's host: not
        with TLS (the socket is plaintext), and admitting only connections whose handshake
        carries the cluster token when one is configured."""
        if self._security.tls:  # security: no plaintext data plane beside TLS gRPC
            log.info("No TCP step-call socket: TLS is on, gRPC carries every "
                     "per-step call")
            return
        try:
            listener = tcp_stream.listen(self._tcp_host)
        except OSError as e:
            log.info("No TCP step-call socket on %r (%s); gRPC carries every "
                     "per-step call", self._tcp_host, e)
            return
        self._local_rpc.add_listener(  # security: the handshake must carry the token
            listener, functools.partial(tcp_stream.admit, token=self._security.token))
        self._tcp_port = listener.getsockname()[1]

    def join(self, timeout: float | None = None) -> bool:
        """Blocks until the server stops (or `timeout` seconds pass); returns True if it
        stopped. A server that was never started counts as stopped."""
        if not self._started:
            return True
        return self._stopped.wait(timeout)

    def stop(self, grace: float | None = 1.0) -> None:
        """Stops serving, aborts running steps and frees the port."""
        with self._lock:
            if self._stopped.is_set():
                return
            self._stopped.set()
            self.runtime.servers.unregister(self.address, self)
            self.runtime.servers.unregister(f"localhost:{self._port}", self)
        if self._local_rpc is not None:
            self._local_rpc.stop()
        self.worker.stop()
        self._grpc.stop(grace).wait(grace + 1.0 if grace else None)
        self._cache.close()

    @staticmethod
    def create_local_server(config: Any = None, start: bool = True,
                            runtime: ProcessRuntime | None = None) -> Server:
        """A single-task server `/job:local/task:0` on a free localhost port (follows
        `Server.create_local_server`)."""
        return Server({"local": ["localhost:0"]}, protocol="grpc", config=config, start=start,
                      runtime=runtime)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
