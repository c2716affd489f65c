"""The `tf.train` namespace: cluster, server, training and checkpoint APIs (explicit
re-exports)."""

from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.server import Server
from tensorweave.framework.graph_io import write_graph
from tensorweave.protos.checkpoint_state_pb2 import CheckpointState
from tensorweave.protos.cluster_pb2 import ClusterDef, JobDef
from tensorweave.protos.saver_pb2 import SaverDef
from tensorweave.protos.tensorflow_server_pb2 import ServerDef
from tensorweave.training.checkpoint_management import (
    NewCheckpointReader,
    checkpoint_exists,
    generate_checkpoint_state_proto,
    get_checkpoint_mtimes,
    get_checkpoint_state,
    latest_checkpoint,
    list_variables,
    load_checkpoint,
    load_variable,
    remove_checkpoint,
    update_checkpoint_state,
)
from tensorweave.training.saver import Saver, export_meta_graph, import_meta_graph
from tensorweave.training.summary_io import summary_iterator

__all__ = [
    "CheckpointState",
    "ClusterDef",
    "ClusterSpec",
    "JobDef",
    "NewCheckpointReader",
    "Saver",
    "SaverDef",
    "Server",
    "ServerDef",
    "checkpoint_exists",
    "export_meta_graph",
    "generate_checkpoint_state_proto",
    "get_checkpoint_mtimes",
    "get_checkpoint_state",
    "import_meta_graph",
    "latest_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
    "remove_checkpoint",
    "summary_iterator",
    "update_checkpoint_state",
    "write_graph",
]
