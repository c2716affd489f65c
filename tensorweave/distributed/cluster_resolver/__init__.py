"""Cluster resolvers: where the `ClusterSpec` and the own task of a process come from.

Follows TensorFlow's `tf.distribute.cluster_resolver` (`python/distribute/cluster_resolver/`,
in `tf.contrib.cluster_resolver` for 1.x): `ClusterResolver`, `SimpleClusterResolver`,
`UnionClusterResolver`, `TFConfigClusterResolver` and `SlurmClusterResolver`, plus
`HostListClusterResolver`, a Kubernetes-style resolver over fixed pod DNS names that needs
no Kubernetes API client.

Modules: `base` (abstract, simple and union resolvers), `tf_config` (TF_CONFIG), `slurm`
(Slurm job steps) and `host_list` (fixed host lists, e.g. the pod DNS names that
`tensorweave k8s` gives). Every public name is re-exported here.

House rule: nothing here reads the environment on its own. `TFConfigClusterResolver` takes
the TF_CONFIG text or dict as `tf_config`, and `SlurmClusterResolver` takes an `environ`
mapping. Only `tf_config_from_env` and `SlurmClusterResolver.from_environ`, meant for the
CLI/launcher layer, look at `os.environ`.
"""

from __future__ import annotations

from tensorweave.distributed.cluster_resolver.base import (
    ClusterResolver,
    SimpleClusterResolver,
    UnionClusterResolver,
    format_master_url,
)
from tensorweave.distributed.cluster_resolver.host_list import (
    HostListClusterResolver,
    parse_host_list,
)
from tensorweave.distributed.cluster_resolver.slurm import (
    SlurmClusterResolver,
    expand_hostlist,
    expand_tasks_per_node,
)
from tensorweave.distributed.cluster_resolver.tf_config import (
    TFConfigClusterResolver,
    is_chief,
    tf_config_from_env,
)

__all__ = [
    "ClusterResolver",
    "HostListClusterResolver",
    "SimpleClusterResolver",
    "SlurmClusterResolver",
    "TFConfigClusterResolver",
    "UnionClusterResolver",
    "expand_hostlist",
    "expand_tasks_per_node",
    "format_master_url",
    "is_chief",
    "parse_host_list",
    "tf_config_from_env",
]
