"""Test helpers for clusters: free ports and in-process local clusters.

Follows TF's `tf.test.create_local_cluster`.
"""

from __future__ import annotations

import socket
from typing import Any


def pick_unused_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, then release)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def local_cluster_spec(num_workers: int, num_ps: int = 0, host: str = "localhost") -> dict:
    """A cluster dict with free localhost ports for `ps` and `worker` jobs."""
    spec: dict[str, list[str]] = {
        "worker": [f"{host}:{pick_unused_port()}" for _ in range(num_workers)]
    }
    if num_ps:
        spec["ps"] = [f"{host}:{pick_unused_port()}" for _ in range(num_ps)]
    return spec


def create_local_cluster(
    num_workers: int,
    num_ps: int,
    protocol: str = "grpc",
    worker_config: Any = None,
    ps_config: Any = None,
    runtime: Any = None,
) -> tuple[list, list]:
    """Starts `num_workers` worker and `num_ps` ps servers in this process (registered in
    `runtime`, a `ProcessRuntime`; default: the process's).

    Returns:
      (worker servers, ps servers); stop them with `server.stop()`.
    """
    from tensorweave.distributed.cluster_spec import ClusterSpec
    from tensorweave.distributed.server import Server

    # NOTE: every server binds port 0 first, then all learn the real ports: no race with
    # other processes picking ports.
    spec = {"worker": ["localhost:0"] * num_workers}
    if num_ps:
        spec["ps"] = ["localhost:0"] * num_ps
    workers = [
        Server(spec, "worker", i, protocol, worker_config, start=False, runtime=runtime)
        for i in range(num_workers)
    ]
    ps = [Server(spec, "ps", i, protocol, ps_config, start=False, runtime=runtime)
          for i in range(num_ps)]
    actual = {"worker": [s.target[len("grpc://") :] for s in workers]}
    if num_ps:
        actual["ps"] = [s.target[len("grpc://") :] for s in ps]
    cluster = ClusterSpec(actual)
    for s in workers + ps:
        s._set_cluster(cluster)
        s.start()
    return workers, ps
