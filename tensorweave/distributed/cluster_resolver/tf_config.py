"""TF_CONFIG: `TFConfigClusterResolver`, `tf_config_from_env` and Estimator's `is_chief` rule.

Follows TensorFlow's `tfconfig_cluster_resolver.py` and Estimator's `run_config.py`. Only
`tf_config_from_env`, meant for the CLI/launcher layer, looks at `os.environ`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from tensorweave.distributed.cluster_resolver.base import ClusterResolver
from tensorweave.distributed.cluster_spec import ClusterSpec


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
