"""The `tf.train` namespace: cluster, server, training and checkpoint APIs (explicit
re-exports)."""

from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.server import Server
from tensorweave.framework.graph_io import write_graph
from tensorweave.protos.cluster_pb2 import ClusterDef, JobDef
from tensorweave.protos.tensorflow_server_pb2 import ServerDef

__all__ = ["ClusterSpec", "ClusterDef", "JobDef", "Server", "ServerDef", "write_graph"]
