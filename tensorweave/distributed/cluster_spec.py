"""`ClusterSpec`: the jobs of a cluster and the network addresses of their tasks.

Follows TensorFlow's `tf.train.ClusterSpec` (`tensorflow/python/training/server_lib.py`,
TF 2.x behaviour: string task indices of sparse jobs are passed through `int()`), and the
`job|host:port;host:port,job2|...` command-line format of TF's
`tools/dist_test/server/parse_cluster_spec.py`.

Deviation: job names and addresses given as `bytes` are decoded (UTF-8) to `str`, so
`jobs` and `as_dict()` always return `str`; TensorFlow kept the caller's bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from tensorweave.protos import cluster_pb2

_CLUSTER_TYPE_ERROR = (
    "`cluster` must be a dictionary mapping one or more job names to lists of network "
    "addresses, or a `ClusterDef` protocol buffer"
)
_EXAMPLE = "worker|h0:2222;h1:2222,ps|h2:2222"
# TensorFlow's device-name grammar for a job (`DeviceNameUtils`): a letter, then letters,
# digits and '_'. TF accepts other names here and then aborts the process creating devices.
_JOB_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
MAX_PORT = 65535


def _as_text(value: Any, what: str) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, str):
        return value
    raise TypeError(f"{what} {value!r} must be bytes or unicode")


def _job_tasks_from_python(job_name: Any, tasks: Any) -> dict[int, Any]:
    if isinstance(tasks, (list, tuple)):
        return dict(enumerate(tasks))
    if isinstance(tasks, dict):
        return {int(i): address for i, address in tasks.items()}
    raise TypeError(
        f"The tasks for job {job_name!r} must be a list or a dictionary from integers to strings."
    )


def _validate(cluster: dict[str, dict[int, str]]) -> None:
    """Job names follow TF's device-name grammar, task indices are >= 0, and a numeric
    port is in 0..65535 (0: any free port, for a server that binds it)."""
    for job_name, tasks in cluster.items():
        if not _JOB_NAME.match(job_name):
            raise ValueError(
                f"Invalid job name {job_name!r}: a job name starts with a letter followed by "
                "letters, digits or '_'")
        for index, address in tasks.items():
            if index < 0:
                raise ValueError(f"Invalid task index {index} in job {job_name!r}: must be >= 0")
            _, sep, port_text = address.rpartition(":")
            if sep and port_text.isdigit() and int(port_text) > MAX_PORT:
                raise ValueError(
                    f"Invalid port {port_text} in address {address!r} of task {index} of job "
                    f"{job_name!r}: a port is in 1..{MAX_PORT} (0 picks a free one)")


def _cluster_map_from_def(cluster_def: cluster_pb2.ClusterDef) -> dict[str, dict[int, str]]:
    return {job.name: dict(job.tasks) for job in cluster_def.job}


class ClusterSpec:
    """Represents a cluster as a set of jobs, each a set of tasks (TF `tf.train.ClusterSpec`).

    A job is dense (a list or tuple: the task index is the position) or sparse (a dict
    `{task_index: "host:port"}`; string keys are converted with `int()`). Example:

        ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": {0: "ps0:2222"}})

    Args:
      cluster: dict mapping job name (str) to list/tuple/dict of addresses (str); a
        `ClusterDef` proto (stored by reference, not copied); or another `ClusterSpec`
        (deep-copied).

    Raises:
      TypeError: `cluster` is of another type; a job's tasks are not a list, tuple or
        dict; a job name or address is not str or bytes (messages as in TensorFlow).
      ValueError: a sparse task index is not convertible to int or is negative; a job
        name is not a letter followed by letters, digits or '_' (TF's device-name grammar);
        an address has a port above 65535.
    """

    def __init__(self, cluster: Mapping[Any, Any] | cluster_pb2.ClusterDef | ClusterSpec):
        if isinstance(cluster, dict):
            raw = {name: _job_tasks_from_python(name, tasks) for name, tasks in cluster.items()}
            self._cluster_spec = {
                _as_text(name, "Job name"): {
                    i: _as_text(address, "Task address") for i, address in tasks.items()
                }
                for name, tasks in raw.items()
            }
            self._cluster_def = self._make_cluster_def()
        elif isinstance(cluster, cluster_pb2.ClusterDef):
            self._cluster_def = cluster
            self._cluster_spec = _cluster_map_from_def(cluster)
        elif isinstance(cluster, ClusterSpec):
            self._cluster_def = cluster_pb2.ClusterDef()
            self._cluster_def.MergeFrom(cluster.as_cluster_def())
            self._cluster_spec = _cluster_map_from_def(self._cluster_def)
        else:
            raise TypeError(_CLUSTER_TYPE_ERROR)
        _validate(self._cluster_spec)

    def _make_cluster_def(self) -> cluster_pb2.ClusterDef:
        # Jobs sorted by name and tasks by index, so that the proto is deterministic.
        cluster_def = cluster_pb2.ClusterDef()
        for job_name, tasks in sorted(self._cluster_spec.items()):
            job_def = cluster_def.job.add()
            job_def.name = job_name
            for i, address in sorted(tasks.items()):
                job_def.tasks[i] = address
        return cluster_def

    def __bool__(self) -> bool:
        return bool(self._cluster_spec)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClusterSpec):
            return NotImplemented
        return self._cluster_spec == other._cluster_spec

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, ClusterSpec):
            return NotImplemented
        return self._cluster_spec != other._cluster_spec

    __hash__ = None  # type: ignore[assignment]  # mutable proto inside; as in TF

    def __repr__(self) -> str:
        as_dict = self.as_dict()
        items = ", ".join(f"{name!r}: {as_dict[name]!r}" for name in sorted(as_dict))
        return "ClusterSpec({" + items + "})"

    @property
    def jobs(self) -> list[str]:
        """Job names (list of str), in dict insertion order or ClusterDef order."""
        return list(self._cluster_spec)

    def _job(self, job_name: str) -> dict[int, str]:
        try:
            return self._cluster_spec[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def num_tasks(self, job_name: str) -> int:
        """Returns the number of tasks defined in `job_name` (not max index + 1).

        Raises:
          ValueError: if the job is not in the cluster.
        """
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        """Returns the sorted task indices (list of int) defined in `job_name`.

        Raises:
          ValueError: if the job is not in the cluster.
        """
        return sorted(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        """Returns the "host:port" address of task `task_index` of `job_name`.

        Raises:
          ValueError: if the job, or that task of the job, is not in the cluster.
        """
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name: str) -> list[str | None]:
        """Returns a list of length max index + 1 with `None` in the gaps (legacy TF call).

        An empty job gives `[]` (TensorFlow raised from `max()` there).

        Raises:
          ValueError: if the job is not in the cluster.
        """
        job = self._job(job_name)
        tasks: list[str | None] = [None] * (max(job) + 1 if job else 0)
        for i, address in job.items():
            tasks[i] = address
        return tasks

    def as_dict(self) -> dict[str, list[str | None] | dict[int, str]]:
        """Returns `{job: tasks}`: a list for a dense job, a dict for a sparse one.

        A job is dense when its indices are exactly 0..n-1; an empty job gives `{}`.
        """
        result: dict[str, list[str | None] | dict[int, str]] = {}
        for job_name in self.jobs:
            indices = self.task_indices(job_name)
            if not indices:
                result[job_name] = {}
            elif max(indices) + 1 == len(indices):
                result[job_name] = self.job_tasks(job_name)
            else:
                result[job_name] = {i: self.task_address(job_name, i) for i in indices}
        return result

    def as_cluster_def(self) -> cluster_pb2.ClusterDef:
        """Returns the stored `ClusterDef` proto (the same object on every call)."""
        return self._cluster_def


def _split_job_spec(position: int, job_spec: str) -> tuple[str, str]:
    if "|" not in job_spec:
        if position > 0:
            raise ValueError(
                f"job spec {job_spec!r} has no '|'; separate the tasks of one job with ';'"
            )
        raise ValueError(f"job spec {job_spec!r} has no '|'; expected e.g. {_EXAMPLE!r}")
    name, tasks_text = job_spec.split("|", 1)
    name = name.strip()
    if not name:
        raise ValueError(f"Empty job name in job spec {job_spec!r}")
    return name, tasks_text


def _parse_tasks(name: str, job_spec: str, tasks_text: str) -> list[str]:
    tasks = []
    for i, task in enumerate(tasks_text.split(";")):
        task = task.strip()
        if "|" in task:
            raise ValueError(f"task {task!r} of job {name!r} contains '|'; separate jobs with ','")
        if not task:
            raise ValueError(f"Empty task at position {i} of job {name!r} in {job_spec!r}")
        tasks.append(task)
    return tasks


def parse_cluster_spec(text: str) -> ClusterSpec:
    """Parses the command-line form `worker|h0:2222;h1:2222,ps|h2:2222`.

    Jobs are separated by `,`, a job's name from its tasks by `|`, and tasks by `;`; task
    indices are positions. Whitespace around the pieces is ignored. Follows TF's
    `tools/dist_test/server/parse_cluster_spec.py`, with errors that name the problem.

    Args:
      text: str, the cluster spec.

    Returns:
      ClusterSpec: with dense jobs.

    Raises:
      ValueError: empty string, empty job spec (stray ','), job spec without '|' (e.g.
        ',' used between tasks), empty job name, empty task, task containing '|' (';'
        used between jobs), or duplicate job name.
    """
    if not text or not text.strip():
        raise ValueError(f"Empty cluster spec string; expected e.g. {_EXAMPLE!r}")
    cluster: dict[str, list[str]] = {}
    for position, job_spec in enumerate(text.split(",")):
        job_spec = job_spec.strip()
        if not job_spec:
            raise ValueError(f"Empty job spec at position {position} in {text!r} (stray ',')")
        name, tasks_text = _split_job_spec(position, job_spec)
        if name in cluster:
            raise ValueError(f"Duplicate job name {name!r} in cluster spec {text!r}")
        cluster[name] = _parse_tasks(name, job_spec, tasks_text)
    return ClusterSpec(cluster)


def cluster_spec_from_string(text: str) -> ClusterSpec:
    """Parses either a JSON object string or the `job|host;host,job2|host` form.

    A JSON object maps job names to lists (dense) or objects (sparse; keys are task
    indices as strings), e.g. `{"ps": ["p0:2222"], "worker": {"1": "w1:2222"}}`.

    Args:
      text: str.

    Returns:
      ClusterSpec.

    Raises:
      ValueError: invalid JSON, JSON that is not an object or not a valid cluster, or any
        error of `parse_cluster_spec`.
    """
    stripped = (text or "").strip()
    if not stripped.startswith("{"):
        return parse_cluster_spec(stripped)
    try:
        obj = json.loads(stripped)
    except json.JSONDecodeError as e:
        raise ValueError(f"Invalid JSON cluster spec {text!r}: {e}") from e
    if not isinstance(obj, dict):
        raise ValueError(f"JSON cluster spec must be an object, got {type(obj).__name__}")
    try:
        return ClusterSpec(obj)
    except TypeError as e:
        raise ValueError(f"Invalid JSON cluster spec {text!r}: {e}") from e
