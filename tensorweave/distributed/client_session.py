"""Session backends for `grpc://host:port` targets.

By default the master runs **in the client process** (TensorFlow does this for clients in
the same process as the target server; tensorweave does it for every client): it learns the
cluster from the target (`GetServerDef`), then talks to each worker directly, so a fetch of
a variable on a ps costs one round trip. `ConfigProto(tensorweave=TensorweaveOptions(
use_remote_master=True))` uses the target's `MasterService` instead (TensorFlow's
`GrpcSession`: `CreateSession`, `ExtendSession`, `RunStep`).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from tensorweave import errors
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.master_session import MasterSession
from tensorweave.distributed.process_runtime import ProcessRuntime, default_runtime
from tensorweave.distributed.target import check_target
from tensorweave.distributed.transport import grpc_client, grpc_master_client
from tensorweave.distributed.transport.security import from_options
from tensorweave.distributed.worker_cache import TransportOptions, WorkerCache, task_name
from tensorweave.runtime.node_spec import NodeSpec

log = logging.getLogger("tensorweave.session")


def _address(target: str) -> str:
    return target[len("grpc://"):] if target.startswith("grpc://") else target


def _timeout_s(config: Any) -> float | None:
    if config is not None and config.operation_timeout_in_ms > 0:
        return config.operation_timeout_in_ms / 1000.0
    return None


def _security(config: Any) -> Any:
    """The token/TLS settings of a client session (config, then environment)."""
    return from_options(config.tensorweave.security if config is not None else None)


def resolve_target(target: str, config: Any,
                   runtime: ProcessRuntime | None = None) -> tuple[Any, WorkerCache]:
    """The target's `ServerDef` and a `WorkerCache` of its cluster, waiting for the target
    to come up (logging every few seconds).

    Raises:
      DeadlineExceededError: if the target does not answer within
        `config.operation_timeout_in_ms`.
      UnimplementedError: the target is not a tensorweave server (a TensorFlow one: use its
        master service, see `ClientMasterBackend`).
      InvalidArgumentError: a malformed target (no port, port out of range).
      UnavailableError: the target's host name does not resolve.
    """
    runtime = runtime or default_runtime()
    options = TransportOptions.from_config(config, _security(config))
    address = _address(target)
    server = runtime.servers.lookup(address) if options.prefer_local else None
    if server is not None:
        server_def = server.server_def
    else:
        check_target(target)
        remote = grpc_client.GrpcRemoteWorker(f"target {target}", address, runtime=runtime,
                                              security=options.security)
        try:
            server_def = _wait_for(lambda t: remote.get_server_def(t), target,
                                   _timeout_s(config))
        finally:
            remote.close()
    return server_def, WorkerCache(ClusterSpec(server_def.cluster), options, runtime)


def _wait_for(fn: Any, target: str, timeout_s: float | None) -> Any:
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise errors.DeadlineExceededError(
                None, None, f"Timed out after {timeout_s:.1f} s waiting for {target} "
                "(operation_timeout_in_ms)")
        try:
            return fn(5.0 if remaining is None else min(5.0, max(remaining, 0.01)))
        except errors.DeadlineExceededError:
            log.warning("Still waiting for the session target %s to respond", target)


class ClientMasterBackend:
    """Session backend with the master in the client process. A target that is not a
    tensorweave server (a TensorFlow one: `GetServerDef` is UNIMPLEMENTED) is used through
    its master service instead (`RemoteMasterBackend`)."""

    def __init__(self, target: str, graph: Any, config: Any,
                 runtime: ProcessRuntime | None = None):
        self._target = target
        self._graph = graph
        self._config = config
        self._runtime = runtime
        self._session: MasterSession | None = None
        self._remote: RemoteMasterBackend | None = None
        self._lock = threading.Lock()
        self._closed = False

    def _master(self) -> MasterSession | None:
        """The master session, or None when the target's master runs the steps."""
        sess = self._session
        if sess is None:
            with self._lock:
                if self._closed:
                    raise errors.CancelledError(None, None, "Session is closed")
                if self._remote is not None:
                    return None
                if self._session is None:
                    try:
                        server_def, cache = resolve_target(self._target, self._config,
                                                           self._runtime)
                    except errors.UnimplementedError:
                        log.info("%s is not a tensorweave server: using its MasterService",
                                 self._target)
                        self._remote = RemoteMasterBackend(self._target, self._graph,
                                                           self._config, self._runtime)
                        return None
                    client_task = task_name(server_def.job_name, server_def.task_index)
                    self._session = MasterSession.create(
                        cache, client_task, self._config, _timeout_s(self._config))
                sess = self._session
        if self._graph.version > sess.version:
            with self._lock:
                new = self._graph._ops_since(sess.version)
                if new:
                    sess.extend([NodeSpec.from_operation(op) for op in new])
        return sess

    def run(self, feeds: list[Any], values: list[Any], fetches: list[Any],
            targets: list[Any], options: Any = None, run_metadata: Any = None) -> list[Any]:
        """Runs one step on the cluster (see `MasterSession.run`)."""
        sess = self._master()
        if sess is None:
            return self._remote.run(feeds, values, fetches, targets, options, run_metadata)
        feed_map = {t.name: v for t, v in zip(feeds, values)}
        return sess.run(feed_map, [t.name for t in fetches], [op.name for op in targets],
                        options, run_metadata)

    def list_devices(self) -> list[tuple[str, str, int, int]]:
        """Devices of the tasks this session uses."""
        sess = self._master()
        if sess is None:
            return self._remote.list_devices()
        return [(d.name, d.device_type, d.memory_limit, d.incarnation) for d in sess.devices]

    def close(self) -> None:
        """Cancels running steps and frees worker state."""
        with self._lock:
            self._closed = True
            sess, self._session = self._session, None
            remote, self._remote = self._remote, None
        if sess is not None:
            sess.close()
        if remote is not None:
            remote.close()


class RemoteMasterBackend:
    """Session backend using the target's `MasterService` (TensorFlow's `GrpcSession`)."""

    def __init__(self, target: str, graph: Any, config: Any,
                 runtime: ProcessRuntime | None = None):
        check_target(target)
        self._master = grpc_master_client.GrpcRemoteMaster(f"master {target}", _address(target),
                                                    security=_security(config))
        self._graph = graph
        self._config = config
        self._handle: str | None = None
        self._sent_ops = 0  # ops of the graph the master has
        self._version = 0  # the master's graph version (TensorFlow counts extensions)
        self._lock = threading.Lock()

    def _sync(self) -> str:
        with self._lock:
            if self._handle is None:
                gd = self._graph.as_graph_def()
                self._handle, self._version = self._master.create_session(
                    gd, self._config, _timeout_s(self._config))
                self._sent_ops = len(gd.node)
            elif self._graph.version > self._sent_ops:
                gd = self._graph.as_graph_def(from_version=self._sent_ops)
                self._version = self._master.extend_session(self._handle, gd, self._version)
                self._sent_ops += len(gd.node)
            return self._handle

    def run(self, feeds: list[Any], values: list[Any], fetches: list[Any],
            targets: list[Any], options: Any = None, run_metadata: Any = None) -> list[Any]:
        """Runs one step through `RunStep`."""
        handle = self._sync()
        feed_map = {t.name: v for t, v in zip(feeds, values)}
        return self._master.run_step(handle, feed_map, [t.name for t in fetches],
                                     [op.name for op in targets], options, run_metadata)

    def list_devices(self) -> list[tuple[str, str, int, int]]:
        """Devices of the cluster, as the master lists them."""
        return [(d.name, d.device_type, d.memory_limit, d.incarnation)
                for d in self._master.list_devices(_timeout_s(self._config))]

    def close(self) -> None:
        """Sends `CloseSession` (ignoring a master that is gone)."""
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            try:
                self._master.close_session(handle)
            except errors.OpError:
                pass


def make_grpc_backend(target: str, graph: Any, config: Any,
                      runtime: ProcessRuntime | None = None) -> Any:
    """The backend for a `grpc://` target (client-side master unless configured)."""
    if config is not None and config.tensorweave.use_remote_master:
        return RemoteMasterBackend(target, graph, config, runtime)
    return ClientMasterBackend(target, graph, config, runtime)


def reset(target: str, containers: list[str], config: Any = None,
          runtime: ProcessRuntime | None = None) -> None:
    """`Session.reset`: the target's master clears `containers` on its workers and aborts
    the sessions created through it.

    Raises:
      DeadlineExceededError: if the target does not answer within
        `config.operation_timeout_in_ms`.
    """
    server_def, cache = resolve_target(target, config, runtime)
    master = cache.master(task_name(server_def.job_name, server_def.task_index))
    filters = list(config.device_filters) if config is not None else []
    master.reset(containers, filters, _timeout_s(config))
