"""Slurm: `SlurmClusterResolver` and the host-list / tasks-per-node expansions it needs.

Follows TensorFlow's `slurm_cluster_resolver.py`, without GPUs and without `scontrol`.
Only `SlurmClusterResolver.from_environ`, meant for the CLI/launcher layer, looks at
`os.environ`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from tensorweave.distributed.cluster_resolver.base import ClusterResolver
from tensorweave.distributed.cluster_spec import ClusterSpec

_SLURM_HINT = "Not running inside a SLURM step? (The CLI uses SlurmClusterResolver.from_environ.)"
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
_NUMBER = re.compile(r"[0-9]+")
_TASKS_PER_NODE_PART = re.compile(r"\s*([0-9]+)(?:\(x([0-9]+)\))?\s*")


def _split_outside_brackets(text: str) -> list[str]:
    parts, current, in_brackets = [], [], False
    for ch in text:
        if ch == "[":
            if in_brackets:
                raise ValueError("nested '['")
            in_brackets = True
        elif ch == "]":
            if not in_brackets:
                raise ValueError("unmatched ']'")
            in_brackets = False
        elif ch == "," and not in_brackets:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    if in_brackets:
        raise ValueError("unmatched '['")
    return [*parts, "".join(current)]


def _expand_ranges(text: str) -> list[str]:
    values = []
    for item in text.split(","):
        low, sep, high = item.strip().partition("-")
        high = high if sep else low
        if not (_NUMBER.fullmatch(low) and _NUMBER.fullmatch(high)) or int(low) > int(high):
            raise ValueError(f"bad range {item!r}")
        # Slurm keeps the zero padding of the lower bound: [08-10] -> 08, 09, 10.
        values.extend(str(i).zfill(len(low)) for i in range(int(low), int(high) + 1))
    return values


def expand_hostlist(hostlist: str) -> list[str]:
    """Expands a Slurm host list, like `scontrol show hostnames` (no `scontrol` needed).

    `"node[01-03,07],gpu5"` gives `["node01", "node02", "node03", "node07", "gpu5"]`. Order
    is kept and nothing is deduplicated; several bracket groups in one name expand
    row-major (`"r[1-2]n[1-2]"` -> r1n1, r1n2, r2n1, r2n2).

    Raises:
      ValueError: empty list or host, unbalanced or nested brackets, or a bad range.
    """
    hosts = []
    try:
        for part in _split_outside_brackets(hostlist.strip()):
            part = part.strip()
            if not part:
                raise ValueError("empty host name")
            expanded, end = [""], 0
            for match in _BRACKETS.finditer(part):
                prefix = part[end : match.start()]
                expanded = [h + prefix + v for h in expanded for v in _expand_ranges(match[1])]
                end = match.end()
            hosts.extend(h + part[end:] for h in expanded)
    except ValueError as e:
        raise ValueError(f'Invalid hostlist format "{hostlist}": {e}') from None
    return hosts


def expand_tasks_per_node(tasks_per_node: str) -> list[int]:
    """Expands Slurm's tasks-per-node list: `"2(x3),1"` gives `[2, 2, 2, 1]`.

    Raises:
      ValueError: a part is not `N` or `N(xK)`.
    """
    result = []
    for part in tasks_per_node.split(","):
        match = _TASKS_PER_NODE_PART.fullmatch(part)
        if match is None:
            raise ValueError(f'Invalid tasks-per-node list format "{tasks_per_node}": {part!r}')
        result.extend([int(match[1])] * int(match[2] or 1))
    return result


def _slurm_var(environ: Mapping[str, str], *names: str) -> str:
    for name in names:
        if name in environ:
            return environ[name]
    raise RuntimeError(f"{' or '.join(names)} not found in environment. {_SLURM_HINT}")


class SlurmClusterResolver(ClusterResolver):
    """Resolves the cluster of a Slurm job step (TF `SlurmClusterResolver`, without GPUs).

    Reads from `environ`: SLURM_PROCID (own global rank), SLURM_STEP_NUM_TASKS (or
    SLURM_NTASKS), SLURM_STEP_NODELIST (or SLURM_JOB_NODELIST) and
    SLURM_STEP_TASKS_PER_NODE (or SLURM_TASKS_PER_NODE). Tasks are laid out node by node
    in node-list order (Slurm's block distribution); the i-th task on a node listens on
    `port_base + i`. Global ranks are given to jobs in sorted job-name order, which sets
    `task_type` and `task_id`. Unlike TensorFlow it neither runs `scontrol` nor sets
    CUDA_VISIBLE_DEVICES, and it sorts no host names.

    Args:
      jobs: dict {job_name: number of tasks}; None means {"worker": all tasks}.
      port_base: int, the port of the first task on each node.
      tasks_per_node: None (from the environment), an int for every node, or a dict
        {host: count} used instead of the node list.
      rpc_layer: str, the scheme of `master()`.
      environ: mapping of environment variables; None means empty (see `from_environ`).

    Raises:
      RuntimeError: a needed SLURM_* variable is missing.
      ValueError: malformed variables, node list and tasks-per-node of different lengths,
        or jobs asking for more tasks than the step has.
    """

    def __init__(
        self,
        jobs: Mapping[str, int] | None = None,
        port_base: int = 8888,
        tasks_per_node: int | Mapping[str, int] | None = None,
        rpc_layer: str | None = "grpc",
        environ: Mapping[str, str] | None = None,
    ):
        env = {} if environ is None else environ
        self._rpc_layer, self._port_base = rpc_layer, port_base
        rank = int(_slurm_var(env, "SLURM_PROCID"))
        addresses = self._task_addresses(env, tasks_per_node)
        if jobs is None:
            jobs = {"worker": int(_slurm_var(env, "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"))}
        if sum(jobs.values()) > len(addresses):
            raise ValueError(
                f"Requested {sum(jobs.values())} tasks but only {len(addresses)} were assigned."
            )
        self._cluster: dict[str, list[str]] = {}
        start = 0
        for job_name, count in sorted(jobs.items()):
            self._cluster[job_name] = addresses[start : start + count]
            if start <= rank < start + count:
                self._task_type, self._task_id = job_name, rank - start
            start += count

    @classmethod
    def from_environ(cls, **kwargs: Any) -> SlurmClusterResolver:
        """Builds the resolver from a copy of `os.environ`. For the CLI/launcher layer only."""
        return cls(environ=dict(os.environ), **kwargs)

    def _task_addresses(
        self, env: Mapping[str, str], tasks_per_node: int | Mapping[str, int] | None
    ) -> list[str]:
        if isinstance(tasks_per_node, Mapping):
            hosts, counts = list(tasks_per_node), [int(n) for n in tasks_per_node.values()]
        else:
            nodelist = _slurm_var(env, "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST")
            hosts = expand_hostlist(nodelist)
            if tasks_per_node is None:
                names = ("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE")
                counts = expand_tasks_per_node(_slurm_var(env, *names))
            else:
                counts = [int(tasks_per_node)] * len(hosts)
            if len(counts) != len(hosts):
                raise ValueError(
                    f"Node list {nodelist!r} has {len(hosts)} nodes but tasks-per-node "
                    f"describes {len(counts)}."
                )
        return [f"{host}:{self._port_base + i}" for host, n in zip(hosts, counts) for i in range(n)]

    def cluster_spec(self) -> ClusterSpec:
        """Returns a new ClusterSpec with one dense job per entry of `jobs`."""
        return ClusterSpec({job: list(tasks) for job, tasks in self._cluster.items()})

    def master(
        self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None
    ) -> str:
        """Returns `<rpc_layer>://<address>` of the named or own task, or "" if none.

        Raises:
          ValueError: the task is not in the cluster.
        """
        return self._own_master(task_type, task_id, rpc_layer)
