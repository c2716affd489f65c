"""Fixed host lists: `HostListClusterResolver` and `parse_host_list`.

Takes the place of TensorFlow's `KubernetesClusterResolver` where the pods have stable DNS
names (an Indexed Job or StatefulSet behind a headless Service, as `tensorweave k8s`
writes), so no Kubernetes API client is needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tensorweave.distributed.cluster_resolver.base import ClusterResolver
from tensorweave.distributed.cluster_spec import ClusterSpec


def parse_host_list(text: str) -> dict[str, list[str]]:
    """Parses `"worker=h0,h1;ps=p0"` into `{"worker": ["h0", "h1"], "ps": ["p0"]}`.

    Jobs are separated by `;`, a job's name from its hosts by `=`, hosts by `,`.

    Raises:
      ValueError: empty text, a job without '=', an empty job name or host, or a job
        named twice.
    """
    if not text or not text.strip():
        raise ValueError("Empty host list; expected e.g. 'worker=h0,h1;ps=p0'")
    result: dict[str, list[str]] = {}
    for job_spec in text.split(";"):
        name, sep, hosts = job_spec.partition("=")
        name = name.strip()
        if not sep:
            raise ValueError(f"job {job_spec!r} has no '='; expected e.g. 'worker=h0,h1;ps=p0'")
        if not name:
            raise ValueError(f"Empty job name in {job_spec!r}")
        if name in result:
            raise ValueError(f"Duplicate job name {name!r} in host list {text!r}")
        result[name] = hosts.split(",")
    return result


def _with_port(host: str, port: int) -> str:
    if host.startswith("["):  # "[v6]" or "[v6]:port"
        return host if "]:" in host else f"{host}:{port}"
    colons = host.count(":")
    if colons == 1:
        return host
    return f"[{host}]:{port}" if colons > 1 else f"{host}:{port}"


class HostListClusterResolver(ClusterResolver):
    """Builds the cluster from per-job host lists, e.g. Kubernetes pod DNS names.

    Takes the place of TF's `KubernetesClusterResolver` without a Kubernetes API client:
    the launcher (or a TFJob-style controller) passes the stable pod names, e.g.
    `{"worker": ["trainer-worker-0.trainer-worker.ns.svc", ...]}`. Task indices are
    positions in each list (not sorted, so `-10` stays after `-9`). Hosts without a port
    get `:port`; bare IPv6 addresses are bracketed.

    Args:
      job_hosts: dict {job_name: list of hosts (or one comma-separated str)}, or the str
        form `"worker=h0,h1;ps=p0"` (see `parse_host_list`).
      port: int, the port added to hosts that have none.
      task_type, task_id: the own task, if known.
      rpc_layer: str or None, the scheme of `master()`.

    Raises:
      TypeError: `job_hosts` is neither a str nor a mapping.
      ValueError: an empty host, a malformed string form, or a given own task that is
        not in the cluster.
    """

    def __init__(
        self,
        job_hosts: Mapping[str, Sequence[str] | str] | str,
        port: int = 2222,
        task_type: str | None = None,
        task_id: int | None = None,
        rpc_layer: str | None = None,
    ):
        if isinstance(job_hosts, str):
            job_hosts = parse_host_list(job_hosts)
        elif not isinstance(job_hosts, Mapping):
            raise TypeError(f"job_hosts must be a dict or str, got {type(job_hosts).__name__}")
        self._cluster: dict[str, list[str]] = {}
        for job_name, hosts in job_hosts.items():
            hosts = hosts.split(",") if isinstance(hosts, str) else list(hosts)
            stripped = [host.strip() for host in hosts]
            if not all(stripped):
                raise ValueError(f"Empty host in job {job_name!r}: {hosts!r}")
            self._cluster[str(job_name)] = [_with_port(host, port) for host in stripped]
        self._task_type, self._task_id, self._rpc_layer = task_type, task_id, rpc_layer
        if task_type is not None and task_id is not None:
            self.cluster_spec().task_address(task_type, task_id)

    def cluster_spec(self) -> ClusterSpec:
        """Returns a new ClusterSpec with one dense job per host list."""
        return ClusterSpec({job: list(hosts) for job, hosts in self._cluster.items()})

    def master(
        self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None
    ) -> str:
        """Returns `<rpc_layer>://<address>` of the named or own task, or "" if none.

        Raises:
          ValueError: the task is not in the cluster.
        """
        return self._own_master(task_type, task_id, rpc_layer)
