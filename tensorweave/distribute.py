"""The `tf.distribute` namespace (TF 2.x's home of the TF 1.x server and resolvers).

`Server` is the same class as `tf.train.Server` (as in TensorFlow), and `cluster_resolver`
is the `tf.distribute.cluster_resolver` module: `TFConfigClusterResolver`,
`SimpleClusterResolver`, `UnionClusterResolver`, `SlurmClusterResolver` and tensorweave's
`HostListClusterResolver`. Strategies (`MirroredStrategy`, `ParameterServerStrategy`) are
not provided.
"""

from __future__ import annotations

from tensorweave.distributed import cluster_resolver
from tensorweave.distributed.server import Server

__all__ = ["Server", "cluster_resolver"]
