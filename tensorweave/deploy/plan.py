"""Cluster plans: the addresses, TF_CONFIG and command line of every task of a ps/worker job.

Pure functions shared by the local launcher (`launcher.py`) and the Kubernetes manifests
(`k8s.py`). A trainer learns its cluster in two ways, both of which TensorFlow users met:

* `TF_CONFIG` (TF's `TFConfigClusterResolver`, kubeflow's TFJob):
  `{"cluster": {"ps": [...], "worker": [...]}, "task": {"type": "worker", "index": 1}}`;
* the flags of the seeds' trainer (`--ps_hosts --worker_hosts --job_name --task_index`),
  either through placeholders in the command (`{ps_hosts}`, `{worker_hosts}`,
  `{job_name}`, `{task_index}`, `{cluster_spec}`, always substituted) or appended by
  `seed_flags=True`.

Jobs with no task are left out of the cluster (a `ps` job of zero tasks is no job), and the
ps tasks come first in port order.
"""

from __future__ import annotations

import json
import re
import shlex
import socket
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

PS, WORKER = "ps", "worker"
PLACEHOLDERS = ("{ps_hosts}", "{worker_hosts}", "{job_name}", "{task_index}", "{cluster_spec}")
_PYTHON = re.compile(r"python(?:[0-9]+(?:\.[0-9]+)?)?")


@dataclass(frozen=True)
class TaskSpec:
    """One task to start.

    Attributes:
      job: str, "ps" or "worker".
      index: int, the task index in its job.
      address: str, "host:port".
      argv: tuple of str, the full command line (placeholders substituted).
      tf_config: str, the JSON text of this task's TF_CONFIG.
    """

    job: str
    index: int
    address: str
    argv: tuple[str, ...]
    tf_config: str

    @property
    def name(self) -> str:
        """`"worker 1"`: how output prefixes and messages name the task."""
        return f"{self.job} {self.index}"


@dataclass(frozen=True)
class ClusterPlan:
    """Every task of a launch, ps first.

    Attributes:
      cluster: dict {job: list of "host:port"} (jobs with tasks only).
      tasks: tuple of TaskSpec, ps tasks then workers, by index.
    """

    cluster: Mapping[str, tuple[str, ...]]
    tasks: tuple[TaskSpec, ...]

    def cluster_dict(self) -> dict[str, list[str]]:
        """The cluster as a JSON-ready dict of lists."""
        return {job: list(addresses) for job, addresses in self.cluster.items()}


def spec_string(cluster: Mapping[str, Sequence[str]]) -> str:
    """The `job|host:port;host:port,job2|...` form (`tensorweave server --cluster_spec`)."""
    return ",".join(f"{job}|{';'.join(addresses)}" for job, addresses in cluster.items())


def make_tf_config(cluster: Mapping[str, Sequence[str]], job: str, index: int) -> str:
    """The TF_CONFIG JSON text of one task (the fields TF's resolver and TFJob use).

    Args:
      cluster: dict {job: list of "host:port"}.
      job: str, the task's job.
      index: int, the task's index.

    Returns:
      str: `{"cluster": {...}, "task": {"type": job, "index": index}}` as JSON.
    """
    tasks = {name: list(addresses) for name, addresses in cluster.items()}
    return json.dumps({"cluster": tasks, "task": {"type": job, "index": index}})


def substitute(
    argv: Sequence[str], cluster: Mapping[str, Sequence[str]], job: str, index: str | int
) -> list[str]:
    """Replaces the placeholders of `PLACEHOLDERS` in every argument (nothing else).

    Other braces, e.g. JSON in an argument, are left alone (no `str.format`).

    Args:
      argv: the command.
      cluster: dict {job: list of "host:port"}.
      job: str, substituted for `{job_name}`.
      index: int or str (e.g. a Kubernetes `$(VAR)` reference), for `{task_index}`.
    """
    values = {
        "{ps_hosts}": ",".join(cluster.get(PS, ())),
        "{worker_hosts}": ",".join(cluster.get(WORKER, ())),
        "{job_name}": job,
        "{task_index}": str(index),
        "{cluster_spec}": spec_string(cluster),
    }
    result = []
    for arg in argv:
        for placeholder, value in values.items():
            arg = arg.replace(placeholder, value)
        result.append(arg)
    return result


def seed_flags(cluster: Mapping[str, Sequence[str]], job: str, index: str | int) -> list[str]:
    """The seed trainer's flags: `--ps_hosts=.. --worker_hosts=.. --job_name=.. --task_index=..`."""
    return [
        f"--ps_hosts={','.join(cluster.get(PS, ()))}",
        f"--worker_hosts={','.join(cluster.get(WORKER, ()))}",
        f"--job_name={job}",
        f"--task_index={index}",
    ]


def task_argv(
    command: Sequence[str],
    cluster: Mapping[str, Sequence[str]],
    job: str,
    index: str | int,
    with_seed_flags: bool = False,
) -> list[str]:
    """The command of one task: placeholders substituted, seed flags appended if asked."""
    argv = substitute(command, cluster, job, index)
    return argv + seed_flags(cluster, job, index) if with_seed_flags else argv


def resolve_python(command: Sequence[str]) -> list[str]:
    """Replaces a leading bare `python`, `python3` or `python3.11` with `sys.executable`.

    So tasks run in the launcher's interpreter (and virtual environment) whatever PATH says.
    """
    argv = list(command)
    if argv and _PYTHON.fullmatch(argv[0]):
        argv[0] = sys.executable
    return argv


def parse_command(command: str | Sequence[str]) -> list[str]:
    """The command as argv: a str is split like a shell would (`shlex.split`).

    Raises:
      ValueError: the command is empty.
    """
    argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise ValueError("No command to launch; give it after `--`, e.g. -- python trainer.py")
    return argv


def check_counts(num_ps: int, num_workers: int) -> None:
    """Validates task counts.

    Raises:
      ValueError: `num_ps` < 0 or `num_workers` < 1.
    """
    if num_ps < 0:
        raise ValueError(f"--ps must be >= 0, got {num_ps}")
    if num_workers < 1:
        raise ValueError(f"--workers must be >= 1, got {num_workers}")


def pick_ports(count: int, host: str = "127.0.0.1", port_base: int | None = None) -> list[int]:
    """Ports for `count` tasks: consecutive from `port_base`, else free ones on `host`.

    Free ports are found by binding `count` sockets to port 0 at once (so they differ) and
    closing them; another process may still take one before the task binds it (the task
    then fails with "Address already in use", as TF's server does).

    Raises:
      ValueError: `port_base` leaves the range 1..65535, or `host` cannot be bound.
    """
    if port_base is not None:
        if not 0 < port_base <= 65536 - count:
            raise ValueError(f"--port-base {port_base} leaves no room for {count} ports")
        return list(range(port_base, port_base + count))
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.bind((host, 0))
        return [sock.getsockname()[1] for sock in sockets]
    except OSError as e:
        raise ValueError(f"Cannot pick free ports on {host!r} ({e}); give --port-base") from e
    finally:
        for sock in sockets:
            sock.close()


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def plan_cluster(
    command: str | Sequence[str],
    num_ps: int,
    num_workers: int,
    port_base: int | None = None,
    host: str = "127.0.0.1",
    with_seed_flags: bool = False,
) -> ClusterPlan:
    """Plans a local ps/worker cluster: ports, TF_CONFIG and command of every task.

    Args:
      command: str or list of str, the trainer command (`python` means `sys.executable`).
      num_ps: int >= 0, parameter server tasks.
      num_workers: int >= 1, worker tasks.
      port_base: int or None; None picks free ports on `host`.
      host: str, the host of every address.
      with_seed_flags: bool, append the seed trainer's four flags.

    Raises:
      ValueError: empty command, bad counts or ports (see `pick_ports`).
    """
    check_counts(num_ps, num_workers)
    argv = resolve_python(parse_command(command))
    ports = pick_ports(num_ps + num_workers, host, port_base)
    addresses = [_address(host, port) for port in ports]
    cluster = {PS: tuple(addresses[:num_ps]), WORKER: tuple(addresses[num_ps:])}
    cluster = {job: tasks for job, tasks in cluster.items() if tasks}
    tasks = tuple(
        TaskSpec(
            job=job,
            index=index,
            address=address,
            argv=tuple(task_argv(argv, cluster, job, index, with_seed_flags)),
            tf_config=make_tf_config(cluster, job, index),
        )
        for job, job_addresses in cluster.items()
        for index, address in enumerate(job_addresses)
    )
    return ClusterPlan(cluster=cluster, tasks=tasks)


def format_dry_run(plan: ClusterPlan) -> str:
    """What `tensorweave launch --dry-run` prints: the cluster, then one shell line a task.

    Each task line is `[<job> <index>] TF_CONFIG='<json>' <command>`; the part after the
    prefix can be pasted into a shell to start that task by hand.
    """
    counts = ", ".join(
        f"{len(tasks)} {job}{'s' if job == WORKER and len(tasks) != 1 else ''}"
        for job, tasks in plan.cluster.items()
    )
    lines = [
        f"# tensorweave launch --dry-run: {counts}",
        f"cluster_spec = {json.dumps(plan.cluster_dict())}",
    ]
    for task in plan.tasks:
        command = shlex.join(task.argv)
        lines.append(f"[{task.name}] TF_CONFIG={shlex.quote(task.tf_config)} {command}")
    return "\n".join(lines) + "\n"
