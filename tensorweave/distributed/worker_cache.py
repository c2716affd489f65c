"""Task name -> `WorkerInterface`: the in-process `Worker` when the task's server runs in this
process (no serialization), else a gRPC client with one channel per address.

`LocalServers` is the one process-wide registry of the distributed runtime (TensorFlow keeps
the same for its in-process master): started servers by address, so a `Session` created
next to a `Server` talks to it without gRPC.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from tensorweave import errors
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.framework.device_spec import DeviceSpec

_LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0", "[::]", ""}


def normalize_address(address: str) -> str:
    """`host:port` with every loopback spelling written as `localhost`."""
    host, _, port = address.rpartition(":")
    return f"localhost:{port}" if host in _LOOPBACK else address


class LocalServers:
    """Started servers of this process, by normalized address (weak references)."""

    _lock = threading.Lock()
    _servers: dict[str, weakref.ref] = {}

    @classmethod
    def register(cls, address: str, server: Any) -> None:
        """Records `server` as serving `address`."""
        with cls._lock:
            cls._servers[normalize_address(address)] = weakref.ref(server)

    @classmethod
    def unregister(cls, address: str, server: Any) -> None:
        """Forgets `address` if it still maps to `server`."""
        with cls._lock:
            key = normalize_address(address)
            ref = cls._servers.get(key)
            if ref is not None and ref() in (server, None):
                del cls._servers[key]

    @classmethod
    def lookup(cls, address: str) -> Any:
        """The live server of `address`, or None."""
        with cls._lock:
            ref = cls._servers.get(normalize_address(address))
        return ref() if ref is not None else None


def task_name(job: str, task: int) -> str:
    """`/job:<job>/replica:0/task:<task>`."""
    return f"/job:{job}/replica:0/task:{task}"


def parse_task(name: str) -> tuple[str, int]:
    """`/job:ps/replica:0/task:1` -> ("ps", 1)."""
    spec = DeviceSpec.from_string(name)
    return spec.job, spec.task or 0


class WorkerCache:
    """Resolves task names of `cluster` to worker interfaces.

    Args:
      cluster: the cluster.
      prefer_local: use in-process workers when their server runs in this process (set
        False, e.g. with `RPCOptions.use_rpc_for_inprocess_master`, to force gRPC).
      shared_memory: let gRPC workers on this host exchange large tensors through /dev/shm
        (False with `TensorweaveOptions.disable_shared_memory`).
      local_rpc: call workers on this host over their Unix domain socket when they have
        one (False with `TensorweaveOptions.disable_local_rpc`; see
        `transport.local_rpc`).
      security: the `transport.security.TransportSecurity` of calls to other tasks
        (token, TLS), or None.
    """

    def __init__(self, cluster: ClusterSpec, prefer_local: bool = True,
                 shared_memory: bool = True, local_rpc: bool = True, security: Any = None):
        self.cluster = cluster
        self.security = security
        self.prefer_local = prefer_local
        self.shared_memory = shared_memory
        self.local_rpc = local_rpc
        self._workers: dict[str, Any] = {}
        self._channels: dict[str, Any] = {}
        self._lock = threading.Lock()

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

    def get(self, name: str) -> Any:
        """The `WorkerInterface` of task `name`."""
        with self._lock:
            worker = self._workers.get(name)
        if worker is not None:
            return worker
        address = self.address(name)
        worker = self._local(name, address) if self.prefer_local else None
        if worker is None:
            from tensorweave.distributed.transport.grpc_client import (
                GrpcRemoteWorker,
                make_channel,
            )

            with self._lock:
                channel = self._channels.get(address)
                if channel is None:
                    channel = self._channels[address] = make_channel(address, self.security)
            worker = GrpcRemoteWorker(name, address, channel, self.shared_memory,
                                      self.local_rpc, self.security)
        with self._lock:
            return self._workers.setdefault(name, worker)

    def master(self, name: str) -> Any:
        """The `MasterInterface` of task `name` (in process or gRPC)."""
        address = self.address(name)
        server = LocalServers.lookup(address) if self.prefer_local else None
        if server is not None and server.worker.task_name == name:
            return server.master
        from tensorweave.distributed.transport.grpc_client import GrpcRemoteMaster

        return GrpcRemoteMaster(name, address, security=self.security)

    @staticmethod
    def _local(name: str, address: str) -> Any:
        server = LocalServers.lookup(address)
        if server is not None and server.worker.task_name == name:
            return server.worker
        return None

    def close(self) -> None:
        """Closes the gRPC channels."""
        with self._lock:
            channels, self._channels = list(self._channels.values()), {}
            workers, self._workers = list(self._workers.values()), {}
        for w in workers:
            close = getattr(w, "close", None)
            if close is not None:
                close()
        for ch in channels:
            ch.close()
