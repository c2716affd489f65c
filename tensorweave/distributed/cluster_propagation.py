"""ClusterSpec propagation (TensorFlow's `ConfigProto.cluster_def`): a session brings its
own cluster, and the servers it names work as those tasks for that session only.

Follows `Master::CreateSession` and `Worker::CreateWorkerSession` in TensorFlow: the master
builds a worker cache of the session's cluster, finds its own task there by the session
target's address, names every task's devices after the session's cluster (TensorFlow's
`NewRemoteDevices`), and sends each task a `ServerDef` of the session's cluster with that
task's job and index; a worker whose `ServerDef` names another task than its own runs the
session's partitions under that name (TensorFlow's `RenamedDevice`). Such sessions keep
their state apart from other sessions unless `ConfigProto.experimental.
share_session_state_in_clusterspec_propagation` is set. So servers started with
`tf.train.Server.create_local_server()` (each `/job:localhost/task:0`) serve a session as
`/job:worker/task:0`, `/job:worker/task:1`, ...
"""

from __future__ import annotations

from typing import Any

from tensorweave import errors
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.protos import tensorflow_server_pb2


def propagated_cluster(config: Any) -> ClusterSpec | None:
    """The session's own cluster (`config.cluster_def`), or None when it has none."""
    if config is None or not config.HasField("cluster_def") or not config.cluster_def.job:
        return None
    return ClusterSpec(config.cluster_def)


def isolates_state(config: Any, propagated: bool) -> bool:
    """Whether the session's worker sessions get private resource managers."""
    if config is None:
        return False
    if config.isolate_session_state:
        return True
    return propagated and not config.experimental.share_session_state_in_clusterspec_propagation


def task_at(cluster: ClusterSpec, target: str) -> str:
    """The task of `cluster` whose address is the session target's (`grpc://host:port` or
    `host:port`).

    Raises:
      InvalidArgumentError: no task, or several tasks, have that address.
    """
    address = target[len("grpc://"):] if target.startswith("grpc://") else target
    found = [f"/job:{job}/replica:0/task:{index}"
             for job in sorted(cluster.jobs) for index in cluster.task_indices(job)
             if cluster.task_address(job, index) == address]
    if len(found) != 1:
        what = "several tasks" if found else "no task"
        raise errors.InvalidArgumentError(
            None, None, f"ClusterSpec propagation: {what} of the session's cluster_def "
            f"{cluster.as_dict()} has the session target's address {address}",
        )
    return found[0]


def server_def_for(cluster: ClusterSpec, task: str) -> Any:
    """The `ServerDef` a session of `cluster` sends to `task` (`/job:J/replica:0/task:T`)."""
    parts = dict(p.split(":", 1) for p in task.strip("/").split("/"))
    return tensorflow_server_pb2.ServerDef(
        cluster=cluster.as_cluster_def(), job_name=parts["job"],
        task_index=int(parts["task"]), protocol="grpc")


def renamed_devices(task: str, attributes: list[Any]) -> list[Any]:
    """`attributes` (a task's `GetStatus` answer) named after `task`:
    `/job:localhost/replica:0/task:0/device:CPU:0` -> `<task>/device:CPU:0`."""
    out = []
    for attr in attributes:
        renamed = type(attr)()
        renamed.CopyFrom(attr)
        renamed.name = task + attr.name[attr.name.index("/device:"):]
        out.append(renamed)
    return out


def session_identity(server_def: Any, own_task: str) -> str | None:
    """The task name a worker takes for a session whose `CreateWorkerSession` carried
    `server_def`: None when it is the worker's own (or the `ServerDef` names none)."""
    if server_def is None or not server_def.job_name:
        return None
    task = f"/job:{server_def.job_name}/replica:0/task:{server_def.task_index}"
    return None if task == own_task else task
