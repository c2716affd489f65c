"""Cluster resolvers: where the `ClusterSpec` and the own task of a process come from.

Follows TensorFlow's `tf.distribute.cluster_resolver` (`python/distribute/cluster_resolver/`,
in `tf.contrib.cluster_resolver` for 1.x): `ClusterResolver`, `SimpleClusterResolver`,
`UnionClusterResolver`, `TFConfigClusterResolver` and `SlurmClusterResolver`, plus
`HostListClusterResolver`, a Kubernetes-style resolver over fixed pod DNS names that needs
no Kubernetes API client.

House rule: nothing here reads the environment on its own. `TFConfigClusterResolver` takes
the TF_CONFIG text or dict as `tf_config`, and `SlurmClusterResolver` takes an `environ`
mapping. Only `tf_config_from_env` and `SlurmClusterResolver.from_environ`, meant for the
CLI/launcher layer, look at `os.environ`.
"""

from __future__ import annotations

import abc
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tensorweave.distributed.cluster_spec import ClusterSpec

_SLURM_HINT = "Not running inside a SLURM step? (The CLI uses SlurmClusterResolver.from_environ.)"


def format_master_url(master: str, rpc_layer: str | None = None) -> str:
    """Returns `"<rpc_layer>://<master>"`, or `master` when `rpc_layer` is empty (TF)."""
    return f"{rpc_layer}://{master}" if rpc_layer else master


class ClusterResolver(abc.ABC):
    """Abstract resolver (TF `tf.distribute.cluster_resolver.ClusterResolver`).

    Subclasses implement `cluster_spec()` and `master()`. The properties `task_type`
    (str or None), `task_id` (int or None) and `rpc_layer` (str or None) are settable;
    `environment` is "" unless a subclass knows better.
    """

    _task_type: str | None = None
    _task_id: int | None = None
    _rpc_layer: str | None = None

    @abc.abstractmethod
    def cluster_spec(self) -> ClusterSpec:
        """Returns the current `ClusterSpec`."""

    @abc.abstractmethod
    def master(
        self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None
    ) -> str:
        """Returns the session target (e.g. "grpc://host:port") for a task, or ""."""

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        """Returns {device_type: count} of accelerators per task; {} (CPU-only runtime)."""
        del task_type, task_id, config_proto
        return {}

    @property
    def task_type(self) -> str | None:
        """The own task's job name (str or None)."""
        return self._task_type

    @task_type.setter
    def task_type(self, value: str | None) -> None:
        self._task_type = value

    @property
    def task_id(self) -> int | None:
        """The own task's index (int or None)."""
        return self._task_id

    @task_id.setter
    def task_id(self, value: int | None) -> None:
        self._task_id = value

    @property
    def rpc_layer(self) -> str | None:
        """The RPC layer (str or None) used as the URL scheme of `master()`."""
        return self._rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, value: str | None) -> None:
        self._rpc_layer = value

    @property
    def environment(self) -> str:
        """The environment (str), e.g. "cloud" or ""."""
        return ""

    def _own_master(self, task_type: str | None, task_id: int | None, rpc_layer: str | None) -> str:
        # TF 2.x rule shared by several resolvers: the given or own task's address, else "".
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None or task_id is None:
            return ""
        address = self.cluster_spec().task_address(task_type, task_id)
        return format_master_url(address, rpc_layer or self.rpc_layer)


class SimpleClusterResolver(ClusterResolver):
    """Wraps fixed values (TF `SimpleClusterResolver`).

    Args:
      cluster_spec: ClusterSpec.
      master: str, returned by `master()` when no task is named.
      task_type, task_id, environment, rpc_layer: the property values.
      num_accelerators: dict {device_type: count} or None ({}).

    Raises:
      TypeError: if `cluster_spec` is not a ClusterSpec or `master` not a str.
    """

    def __init__(
        self,
        cluster_spec: ClusterSpec,
        master: str = "",
        task_type: str | None = None,
        task_id: int | None = None,
        environment: str = "",
        num_accelerators: dict[str, int] | None = None,
        rpc_layer: str | None = None,
    ):
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError("cluster_spec must be a `tf.train.ClusterSpec`.")
        if not isinstance(master, str):
            raise TypeError("master must be a string.")
        self._cluster_spec = cluster_spec
        self._master = master
        self._task_type, self._task_id = task_type, task_id
        self._environment = environment
        self._num_accelerators = num_accelerators
        self._rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        """Returns the wrapped ClusterSpec."""
        return self._cluster_spec

    def master(
        self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None
    ) -> str:
        """Returns the named task's address, else the fixed `master`, with `rpc_layer://`.

        Raises:
          ValueError: if the named task is not in the cluster.
        """
        if task_type is not None and task_id is not None:
            master = self._cluster_spec.task_address(task_type, task_id)
        else:
            master = self._master
        return format_master_url(master, rpc_layer or self._rpc_layer)

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        """Returns the fixed accelerator counts, or {}."""
        return dict(self._num_accelerators or {})

    @property
    def environment(self) -> str:
        """The fixed environment (str)."""
        return self._environment


def _merge_job(merged: list | dict, tasks: list | dict) -> None:
    if isinstance(merged, list):
        merged.extend(tasks)
        return
    task_dict = dict(enumerate(tasks)) if isinstance(tasks, list) else dict(tasks)
    duplicates = set(task_dict) & set(merged)
    if duplicates:
        raise KeyError(f"Duplicate keys detected when merging two ClusterSpecs: {duplicates!r}")
    merged.update(task_dict)


class UnionClusterResolver(ClusterResolver):
    """Merges the cluster specs of several resolvers (TF `UnionClusterResolver`).

    Per job: if every resolver gives a list (dense job), the lists are concatenated;
    otherwise the tasks are merged as `{index: address}` and an index given twice raises
    `KeyError`. Other properties come from the first resolver unless given here.

    Args:
      *resolvers: one or more ClusterResolver.
      task_type, task_id, rpc_layer: keyword-only overrides.

    Raises:
      ValueError: no resolver given.
      TypeError: an argument is not a ClusterResolver.
    """

    def __init__(
        self,
        *resolvers: ClusterResolver,
        task_type: str | None = None,
        task_id: int | None = None,
        rpc_layer: str | None = None,
    ):
        if not resolvers:
            raise ValueError("At least one ClusterResolver is required.")
        for resolver in resolvers:
            if not isinstance(resolver, ClusterResolver):
                raise TypeError("All arguments must be a sub-class of `ClusterResolver.`")
        self._resolvers = resolvers
        self._task_type, self._task_id, self._rpc_layer = task_type, task_id, rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        """Returns the union of all resolvers' cluster specs.

        Raises:
          KeyError: if two resolvers define the same task of a sparse job.
        """
        dicts = [resolver.cluster_spec().as_dict() for resolver in self._resolvers]
        merged: dict[str, list | dict] = {}
        for cluster in dicts:
            for job_name, tasks in cluster.items():
                if job_name not in merged or isinstance(tasks, dict):
                    merged[job_name] = [] if isinstance(tasks, list) else {}
        for cluster in dicts:
            for job_name, tasks in cluster.items():
                _merge_job(merged[job_name], tasks)
        return ClusterSpec(merged)

    def master(
        self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None
    ) -> str:
        """Returns the named task's address, else the first resolver's master.

        Raises:
          ValueError: if the named task is not in the merged cluster.
          KeyError: as `cluster_spec()`.
        """
        if task_type is not None and task_id is not None:
            address = self.cluster_spec().task_address(task_type, task_id)
            return format_master_url(address, rpc_layer or self.rpc_layer)
        return self._resolvers[0].master(rpc_layer=rpc_layer)

    @property
    def task_type(self) -> str | None:
        """The override, else the first resolver's task type."""
        return self._resolvers[0].task_type if self._task_type is None else self._task_type

    @task_type.setter
    def task_type(self, value: str | None) -> None:
        self._task_type = value

    @property
    def task_id(self) -> int | None:
        """The override, else the first resolver's task id."""
        return self._resolvers[0].task_id if self._task_id is None else self._task_id

    @task_id.setter
    def task_id(self, value: int | None) -> None:
        self._task_id = value

    @property
    def rpc_layer(self) -> str | None:
        """The override, else the first resolver's rpc layer."""
        return self._rpc_layer or self._resolvers[0].rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, value: str | None) -> None:
        self._rpc_layer = value

    @property
    def environment(self) -> str:
        """The first resolver's environment."""
        return self._resolvers[0].environment

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        """The first resolver's accelerator counts."""
        return self._resolvers[0].num_accelerators(task_type, task_id, config_proto)


def tf_config_from_env(environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """Reads and parses the TF_CONFIG environment variable. For the CLI/launcher layer only.

    Library code takes the result as an argument (house rule: no environment variables
    read below `cli/`).

    Args:
      environ: mapping to read instead of `os.environ`.

    Returns:
      dict, or None when TF_CONFIG is unset or blank.

    Raises:
      ValueError: TF_CONFIG is not a JSON object.
    """
    text = (os.environ if environ is None else environ).get("TF_CONFIG", "")
    return _load_tf_config(text) if text.strip() else None


def _load_tf_config(tf_config: str | bytes | Mapping[str, Any] | None) -> dict[str, Any]:
    if tf_config is None:
        return {}
    if isinstance(tf_config, Mapping):
        return dict(tf_config)
    if not isinstance(tf_config, (str, bytes)):
        raise TypeError(f"tf_config must be JSON text or a dict, got {type(tf_config).__name__}")
    if not tf_config.strip():
        return {}
    try:
        config = json.loads(tf_config)
    except json.JSONDecodeError as e:
        raise ValueError(f"TF_CONFIG is not valid JSON: {e}") from e
    if not isinstance(config, dict):
        raise ValueError(f"TF_CONFIG must be a JSON object, got {type(config).__name__}")
    return config


def is_chief(tf_config: str | bytes | Mapping[str, Any] | None) -> bool:
    """Returns whether TF_CONFIG's task is the chief (Estimator `RunConfig` rules).

    Without a cluster (local training) the only task is the chief. Otherwise the cluster
    must have exactly one task of type "chief" or of the legacy type "master" (never both),
    the task must name a defined task, and the chief is that task; "evaluator" tasks are
    outside the training cluster and never chief.

    Args:
      tf_config: TF_CONFIG as JSON text or dict, or None.

    Raises:
      ValueError: invalid JSON; both or neither of chief/master; more than one chief task;
        missing task type; a task that is not in the cluster.
    """
    config = _load_tf_config(tf_config)
    cluster = ClusterSpec(config.get("cluster") or {})
    if not cluster:
        return True
    chief_jobs = [job for job in ("chief", "master") if job in cluster.jobs]
    if len(chief_jobs) != 1:
        raise ValueError(
            "The cluster in TF_CONFIG must have exactly one 'chief' (or legacy 'master') job, "
            f"not {chief_jobs or 'none'}"
        )
    if cluster.num_tasks(chief_jobs[0]) != 1:
        raise ValueError(f"The cluster in TF_CONFIG must have only one {chief_jobs[0]!r} task.")
    task = config.get("task") or {}
    if "type" not in task:
        raise ValueError("TF_CONFIG has a cluster but no task type ('task': {'type': ...}).")
    task_type, task_index = str(task["type"]), int(task.get("index", 0))
    if task_type == "evaluator":
        return False
    cluster.task_address(task_type, task_index)  # Raises ValueError for an unknown task.
    return task_type in chief_jobs


class TFConfigClusterResolver(ClusterResolver):
    """Resolves the cluster from TF_CONFIG (TF `TFConfigClusterResolver`).

    TF_CONFIG looks like `{"cluster": {...}, "task": {"type": "worker", "index": 1},
    "rpc_layer": "grpc", "session_master": "...", "environment": "cloud"}`; `cluster` may
    hold anything `ClusterSpec` accepts, including sparse jobs. `task.type` is coerced to
    str and `task.index` to int. Constructor arguments override TF_CONFIG. Unlike
    TensorFlow, which re-reads the environment on every call, TF_CONFIG is given here
    (`tf_config`; see `tf_config_from_env`) and parsed once.

    Args:
      task_type, task_id, rpc_layer, environment: overrides; None means "from TF_CONFIG".
      tf_config: TF_CONFIG as JSON text or dict; None or "" means `{}`.

    Raises:
      ValueError: `tf_config` is not a JSON object.
      TypeError: `tf_config` is neither text nor a mapping.
    """

    def __init__(
        self,
        task_type: str | None = None,
        task_id: int | None = None,
        rpc_layer: str | None = None,
        environment: str | None = None,
        tf_config: str | bytes | Mapping[str, Any] | None = None,
    ):
        self._task_type, self._task_id = task_type, task_id
        self._rpc_layer, self._environment = rpc_layer, environment
        self._tf_config = _load_tf_config(tf_config)

    @property
    def task_type(self) -> str | None:
        """The override, else TF_CONFIG's `task.type` as str, else None."""
        if self._task_type is not None:
            return str(self._task_type)
        task = self._tf_config.get("task") or {}
        return str(task["type"]) if "type" in task else None

    @task_type.setter
    def task_type(self, value: str | None) -> None:
        self._task_type = value

    @property
    def task_id(self) -> int | None:
        """The override, else TF_CONFIG's `task.index` as int, else None."""
        if self._task_id is not None:
            return int(self._task_id)
        task = self._tf_config.get("task") or {}
        return int(task["index"]) if "index" in task else None

    @task_id.setter
    def task_id(self, value: int | None) -> None:
        self._task_id = value

    @property
    def rpc_layer(self) -> str | None:
        """The override, else TF_CONFIG's `rpc_layer`, else None."""
        return self._tf_config.get("rpc_layer") if self._rpc_layer is None else self._rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, value: str | None) -> None:
        self._rpc_layer = value

    @property
    def environment(self) -> str:
        """The override, else TF_CONFIG's `environment`, else ""."""
        if self._environment is not None:
            return self._environment
        return str(self._tf_config.get("environment", ""))

    def cluster_spec(self) -> ClusterSpec:
        """Returns a new ClusterSpec of TF_CONFIG's `cluster` (empty when absent).

        Raises:
          TypeError: as `ClusterSpec`, for a malformed cluster.
        """
        return ClusterSpec(self._tf_config.get("cluster") or {})

    def master(
        self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None
    ) -> str:
        """Returns the session target of this (or the named) task.

        Rules, in order: both `task_type` and `task_id` given: that task's address (TF 2.x);
        `session_master` in TF_CONFIG: it, as is; a cluster of at most one task: "" (run
        in-process); otherwise the own task's address. Addresses get `<rpc_layer>://`
        when an rpc layer is known (argument, override or TF_CONFIG).

        Raises:
          ValueError: the task is not in the cluster, or the own task is unknown.
        """
        if task_type is not None and task_id is not None:
            return self._own_master(task_type, task_id, rpc_layer)
        session_master = self._tf_config.get("session_master")
        if session_master is not None:
            return session_master
        cluster = self.cluster_spec()
        if sum(cluster.num_tasks(job) for job in cluster.jobs) <= 1:
            return ""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None or task_id is None:
            raise ValueError("Cannot tell the master: TF_CONFIG names no task, and none given.")
        return self._own_master(task_type, task_id, rpc_layer)


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
