"""Building the `ServerDef` of one server from a cluster and its job and task.

Follows `_make_server_def` in TensorFlow's `tensorflow/python/training/server_lib.py`,
which `tf.train.Server(...)` calls before it starts anything.
"""

from __future__ import annotations

from typing import Any

from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.protos import config_pb2, tensorflow_server_pb2

_CONVERT_ERROR = (
    "Could not convert `server_or_cluster_def` to a `tf.train.ServerDef` or `tf.train.ClusterSpec`."
)


def _copy_server_def(
    server_def: tensorflow_server_pb2.ServerDef,
    job_name: str | None,
    task_index: int | None,
    protocol: str | None,
) -> tensorflow_server_pb2.ServerDef:
    result = tensorflow_server_pb2.ServerDef()
    result.MergeFrom(server_def)
    if job_name is not None:
        result.job_name = job_name
    if task_index is not None:
        result.task_index = task_index
    if protocol is not None:
        result.protocol = protocol
    return result


def _default_job_name(cluster_spec: ClusterSpec) -> str:
    if len(cluster_spec.jobs) == 1:
        return cluster_spec.jobs[0]
    raise ValueError("Must specify an explicit `job_name`.")


def _default_task_index(cluster_spec: ClusterSpec, job_name: str) -> int:
    task_indices = cluster_spec.task_indices(job_name)
    if len(task_indices) == 1:
        return task_indices[0]
    raise ValueError("Must specify an explicit `task_index`.")


def make_server_def(
    server_or_cluster_def: Any,
    job_name: str | None = None,
    task_index: int | None = None,
    protocol: str | None = None,
    config: config_pb2.ConfigProto | None = None,
) -> tensorflow_server_pb2.ServerDef:
    """Returns the `ServerDef` for a server (TF `server_lib._make_server_def`).

    Args:
      server_or_cluster_def: a `ServerDef` (copied; non-None arguments override its
        fields), or anything `ClusterSpec(...)` accepts (dict, `ClusterDef`,
        `ClusterSpec`).
      job_name: str or None; None means the cluster's only job.
      task_index: int or None; None means the only task of the job (its index may be
        non-zero in a sparse job, e.g. 37).
      protocol: str or None; None keeps the ServerDef's value, or means "grpc" otherwise.
      config: `ConfigProto` or None, merged into `default_session_config`.

    Returns:
      tensorflow_server_pb2.ServerDef: a new message.

    Raises:
      TypeError: if `server_or_cluster_def` is neither a ServerDef nor convertible to a
        ClusterSpec ("Could not convert `server_or_cluster_def` ...").
      ValueError: "Must specify an explicit `job_name`." when the cluster has several
        jobs; "Must specify an explicit `task_index`." when the job has several tasks
        (or none); "No such job in cluster" when `job_name` is not in the cluster.
    """
    if isinstance(server_or_cluster_def, tensorflow_server_pb2.ServerDef):
        server_def = _copy_server_def(server_or_cluster_def, job_name, task_index, protocol)
    else:
        try:
            cluster_spec = ClusterSpec(server_or_cluster_def)
        except TypeError:
            raise TypeError(_CONVERT_ERROR) from None
        if job_name is None:
            job_name = _default_job_name(cluster_spec)
        if task_index is None:
            task_index = _default_task_index(cluster_spec, job_name)
        server_def = tensorflow_server_pb2.ServerDef(
            cluster=cluster_spec.as_cluster_def(),
            job_name=job_name,
            task_index=task_index,
            protocol="grpc" if protocol is None else protocol,
        )
    if config is not None:
        server_def.default_session_config.MergeFrom(config)
    return server_def
