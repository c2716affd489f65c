"""Task name -> `WorkerInterface`, through the first transport that applies to the peer:
the in-process `Worker` when the task's server runs in this process (no serialization), the
same-host socket beside gRPC for a task on this host, else gRPC (one channel per address).
The transports are an ordered list of factories (`transport.transports`).

`LocalServers` is the registry of started servers by address (TensorFlow keeps the same for
its in-process master), so a `Session` created next to a `Server` talks to it without RPCs.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import Any

from tensorweave import errors
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.process_runtime import ProcessRuntime, default_runtime
from tensorweave.distributed.transport import transports as defaults
from tensorweave.distributed.transport.security import TransportSecurity
from tensorweave.framework.device_spec import DeviceSpec


def task_name(job: str, task: int) -> str:
    """`/job:<job>/replica:0/task:<task>`."""
    return f"/job:{job}/replica:0/task:{task}"


def parse_task(name: str) -> tuple[str, int]:
    """`/job:ps/replica:0/task:1` -> ("ps", 1)."""
    spec = DeviceSpec.from_string(name)
    return spec.job, spec.task or 0


@dataclasses.dataclass(frozen=True)
class TransportOptions:
    """How a process's clients reach their peers (frozen per cache).

    Attributes:
      prefer_local: use in-process workers when their server runs in this process (False,
        e.g. with `RPCOptions.use_rpc_for_inprocess_master`, forces RPCs).
      shared_memory: let workers on this host exchange large tensors through /dev/shm
        (False with `TensorweaveOptions.disable_shared_memory`).
      local_rpc: use the step-call socket at all (False with
        `TensorweaveOptions.disable_local_rpc`; see `transport.local_rpc`).
      tcp_streams: call workers in other processes (this host or another) over their TCP
        step-call socket when they have one (False with
        `TensorweaveOptions.disable_tcp_streams`, or without `local_rpc`; see
        `transport.tcp_stream`; never with TLS: the socket is plaintext).
      security: the `transport.security.TransportSecurity` of calls to other tasks (the
        token on gRPC metadata, in the TCP step-call handshake and in every frame on it,
        TLS on gRPC), or None.
    """

    prefer_local: bool = True
    shared_memory: bool = True
    local_rpc: bool = True
    tcp_streams: bool = True
    security: TransportSecurity | None = None  # security

    @classmethod
    def from_config(cls, config: Any,
                    security: TransportSecurity | None = None) -> TransportOptions:
        """The options a `ConfigProto` (or None) asks for, with `security` (read by the
        caller: `security.from_options` reads files and the environment)."""
        if config is None:
            return cls(security=security)
        return cls(
            prefer_local=not config.rpc_options.use_rpc_for_inprocess_master,
            shared_memory=not config.tensorweave.disable_shared_memory,
            local_rpc=not config.tensorweave.disable_local_rpc,
            tcp_streams=not (config.tensorweave.disable_tcp_streams
                             or config.tensorweave.disable_local_rpc),
            security=security,
        )


@dataclasses.dataclass
class Peer:
    """What a transport factory is asked to connect to.

    Attributes:
      task: the peer's task name.
      address: its `host:port`.
      options: the cache's `TransportOptions`.
      runtime: the `ProcessRuntime` (its `servers` registry, `stats`, client outbox).
      shared: `shared(key, create)`: an object the cache keeps once per key (e.g. one
        gRPC channel per address), closed with the cache when it has a `close()`.
    """

    task: str
    address: str
    options: TransportOptions
    runtime: ProcessRuntime
    shared: Callable[[Any, Callable[[], Any]], Any]


# A transport: returns the peer's `WorkerInterface`, or None when it does not apply.
TransportFactory = Callable[[Peer], Any]


class WorkerCache:
    """Resolves task names of `cluster` to worker interfaces, one transport per peer: the
    first of `transports` that applies (see `transport.transports.WORKER_TRANSPORTS`).

    Args:
      cluster: the cluster.
      options: `TransportOptions`.
      runtime: the `ProcessRuntime` (default: `default_runtime()`).
      transports: ordered worker transport factories.
      master_transports: ordered master transport factories.
    """

    def __init__(self, cluster: ClusterSpec, options: TransportOptions | None = None,
                 runtime: ProcessRuntime | None = None,
                 transports: Sequence[TransportFactory] | None = None,
                 master_transports: Sequence[TransportFactory] | None = None):
        self.cluster = cluster
        self.options = options or TransportOptions()
        self.runtime = runtime or default_runtime()
        self._transports = tuple(transports or defaults.WORKER_TRANSPORTS)
        self._master_transports = tuple(master_transports or defaults.MASTER_TRANSPORTS)
        self._workers: dict[str, Any] = {}
        self._shared: dict[Any, Any] = {}
        self._lock = threading.Lock()

    def for_cluster(self, cluster: ClusterSpec) -> WorkerCache:
        """A cache of another cluster with the same options, runtime and transports (a
        session's own cluster: `cluster_propagation`)."""
        return WorkerCache(cluster, self.options, self.runtime, self._transports,
                           self._master_transports)

    def tasks(self) -> list[str]:
        """Every task name of the cluster, sorted by job then index."""
        return [
            task_name(job, i)
            for job in sorted(self.cluster.jobs)
            for i in self.cluster.task_indices(job)
        ]

    def address(self, name: str) -> str:
        """The `host:port` of a task.

        Raises:
          NotFoundError: if the task is not in the cluster.
        """
        job, task = parse_task(name)
        try:
            return self.cluster.task_address(job, task)
        except ValueError:
            raise errors.NotFoundError(
                None, None, f"Task {name} is not defined in the cluster {self.cluster}"
            ) from None

    def shared(self, key: Any, create: Callable[[], Any]) -> Any:
        """The object kept under `key`, created on first use (see `Peer.shared`)."""
        with self._lock:
            obj = self._shared.get(key)
            if obj is None:
                obj = self._shared[key] = create()
            return obj

    def _connect(self, name: str, factories: Sequence[TransportFactory]) -> Any:
        peer = Peer(name, self.address(name), self.options, self.runtime, self.shared)
        for factory in factories:
            conn = factory(peer)
            if conn is not None:
                return conn
        raise errors.UnimplementedError(
            None, None, f"No transport reaches {name} at {peer.address}")

    def get(self, name: str) -> Any:
        """The `WorkerInterface` of task `name`."""
        with self._lock:
            worker = self._workers.get(name)
        if worker is not None:
            return worker
        worker = self._connect(name, self._transports)
        with self._lock:
            return self._workers.setdefault(name, worker)

    def master(self, name: str) -> Any:
        """The `MasterInterface` of task `name`."""
        return self._connect(name, self._master_transports)

    def close(self) -> None:
        """Closes the connections (workers first, then what they shared)."""
        with self._lock:
            shared, self._shared = list(self._shared.values()), {}
            workers, self._workers = list(self._workers.values()), {}
        for w in workers:
            w.close()
        for obj in shared:
            close = getattr(obj, "close", None)
            if close is not None:
                close()
