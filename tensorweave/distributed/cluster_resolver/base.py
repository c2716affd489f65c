"""Base cluster resolvers: `ClusterResolver`, `SimpleClusterResolver`, `UnionClusterResolver`.

Follows TensorFlow's `cluster_resolver.py` (`python/distribute/cluster_resolver/`).
"""

from __future__ import annotations

import abc
from typing import Any

from tensorweave.distributed.cluster_spec import ClusterSpec


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
