"""The `tf.train` namespace: cluster, server, training and checkpoint APIs (explicit
re-exports)."""

from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.framework.graph_io import write_graph
from tensorweave.protos.checkpoint_state_pb2 import CheckpointState
from tensorweave.protos.cluster_pb2 import ClusterDef, JobDef
from tensorweave.protos.saver_pb2 import SaverDef
from tensorweave.protos.tensorflow_server_pb2 import ServerDef
from tensorweave.training import queue_runner
from tensorweave.training.adagrad import AdagradOptimizer
from tensorweave.training.adam import AdamOptimizer
from tensorweave.training.basic_session_run_hooks import (
    CheckpointSaverHook,
    CheckpointSaverListener,
    FeedFnHook,
    FinalOpsHook,
    GlobalStepWaiterHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    SecondOrStepTimer,
    StepCounterHook,
    StopAtStepHook,
    SummarySaverHook,
)
from tensorweave.training.bounded_staleness import BoundedStalenessOptimizer
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
from tensorweave.training.checkpoint_object import (
    Checkpoint,
    CheckpointManager,
    CheckpointOptions,
)
from tensorweave.training.checkpoint_utils import (
    VocabInfo,
    checkpoints_iterator,
    init_from_checkpoint,
    warm_start,
)
from tensorweave.training.coordinator import Coordinator, LooperThread
from tensorweave.training.device_setter import replica_device_setter
from tensorweave.training.ftrl import FtrlOptimizer
from tensorweave.training.gradient_descent import GradientDescentOptimizer
from tensorweave.training.input import (
    batch,
    input_producer,
    limit_epochs,
    range_input_producer,
    shuffle_batch,
    slice_input_producer,
    string_input_producer,
)
from tensorweave.training.input_join import (
    batch_join,
    maybe_batch,
    maybe_batch_join,
    maybe_shuffle_batch,
    maybe_shuffle_batch_join,
    shuffle_batch_join,
)
from tensorweave.training.learning_rate_decay import (
    cosine_decay,
    exponential_decay,
    inverse_time_decay,
    natural_exp_decay,
    piecewise_constant,
    polynomial_decay,
)
from tensorweave.training.learning_rate_decay_cosine import (
    cosine_decay_restarts,
    linear_cosine_decay,
    noisy_linear_cosine_decay,
)
from tensorweave.training.momentum import MomentumOptimizer
from tensorweave.training.monitored_session import (
    ChiefSessionCreator,
    MonitoredSession,
    MonitoredTrainingSession,
    Scaffold,
    SessionCreator,
    SingularMonitoredSession,
    WorkerSessionCreator,
)
from tensorweave.training.moving_averages import ExponentialMovingAverage
from tensorweave.training.optimizer import Optimizer
from tensorweave.training.profiler_hook import ProfilerHook
from tensorweave.training.proximal_optimizers import (
    AdadeltaOptimizer,
    AdagradDAOptimizer,
    ProximalAdagradOptimizer,
    ProximalGradientDescentOptimizer,
)
from tensorweave.training.queue_runner import QueueRunner, add_queue_runner, start_queue_runners
from tensorweave.training.rmsprop import RMSPropOptimizer
from tensorweave.training.saver import Saver, export_meta_graph, import_meta_graph
from tensorweave.training.sdca import (
    do_quantize_training_on_graphdef,
    sdca_fprint,
    sdca_optimizer,
    sdca_shrink_l1,
)
from tensorweave.training.session_manager import SessionManager
from tensorweave.training.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from tensorweave.training.summary_io import summary_iterator
from tensorweave.training.sync_replicas_optimizer import SyncReplicasOptimizer
from tensorweave.training.training_util import (
    assert_global_step,
    create_global_step,
    get_global_step,
    get_or_create_global_step,
    global_step,
)

__all__ = [
    "SyncReplicasOptimizer",
    "BoundedStalenessOptimizer",
    "queue_runner",
    "string_input_producer",
    "slice_input_producer",
    "shuffle_batch",
    "range_input_producer",
    "input_producer",
    "limit_epochs",
    "batch",
    "start_queue_runners",
    "add_queue_runner",
    "QueueRunner",
    "LooperThread",
    "Coordinator",
    "AdagradOptimizer",
    "AdamOptimizer",
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "CheckpointState",
    "ChiefSessionCreator",
    "ClusterDef",
    "ClusterSpec",
    "FeedFnHook",
    "FinalOpsHook",
    "GlobalStepWaiterHook",
    "GradientDescentOptimizer",
    "JobDef",
    "LoggingTensorHook",
    "MomentumOptimizer",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "NewCheckpointReader",
    "Optimizer",
    "RMSPropOptimizer",
    "Saver",
    "SaverDef",
    "Scaffold",
    "SecondOrStepTimer",
    "Server",  # noqa: F822  (loaded on first use: __getattr__ below)
    "ServerDef",
    "SessionCreator",
    "SessionManager",
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunHook",
    "SessionRunValues",
    "SingularMonitoredSession",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
    "WorkerSessionCreator",
    "assert_global_step",
    "checkpoint_exists",
    "cosine_decay",
    "create_global_step",
    "exponential_decay",
    "export_meta_graph",
    "generate_checkpoint_state_proto",
    "get_checkpoint_mtimes",
    "get_checkpoint_state",
    "get_global_step",
    "get_or_create_global_step",
    "global_step",
    "import_meta_graph",
    "inverse_time_decay",
    "latest_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
    "natural_exp_decay",
    "piecewise_constant",
    "polynomial_decay",
    "remove_checkpoint",
    "replica_device_setter",
    "summary_iterator",
    "update_checkpoint_state",
    "write_graph",
]

# NOTE: `tf.train.Example` and its feature protos (input pipelines, issue 13).
from tensorweave.protos.example_pb2 import Example, SequenceExample  # noqa: E402
from tensorweave.protos.feature_pb2 import (  # noqa: E402
    BytesList,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
)

__all__ += [
    "BytesList", "Example", "Feature", "FeatureList", "FeatureLists", "Features", "FloatList",
    "Int64List", "SequenceExample",
]

# tf.train names added for issue 12 (nn/layers/losses/metrics/train helper).
piecewise_constant_decay = piecewise_constant
__all__ += [
    "Checkpoint",
    "CheckpointManager",
    "CheckpointOptions",
    "ProfilerHook",
    "do_quantize_training_on_graphdef",
    "sdca_fprint",
    "sdca_optimizer",
    "sdca_shrink_l1",
    "VocabInfo",
    "checkpoints_iterator",
    "init_from_checkpoint",
    "warm_start",
    "batch_join",
    "maybe_batch",
    "maybe_batch_join",
    "maybe_shuffle_batch",
    "maybe_shuffle_batch_join",
    "shuffle_batch_join",
    "ExponentialMovingAverage",
    "AdadeltaOptimizer",
    "AdagradDAOptimizer",
    "FtrlOptimizer",
    "ProximalAdagradOptimizer",
    "ProximalGradientDescentOptimizer",
    "cosine_decay_restarts",
    "linear_cosine_decay",
    "noisy_linear_cosine_decay",
    "piecewise_constant_decay",
]
# tf.train.Supervisor (issue 12).
from tensorweave.training.supervisor import Supervisor, basic_train_loop  # noqa: E402

__all__ += ["Supervisor", "basic_train_loop"]


# NOTE: `tf.train.Server` loads the distributed runtime (and grpc) on first use (PEP 562),
# so a one-process program using tf.train's optimizers does not pay for them at start-up
# (benchmarks/startup.py); `Session("grpc://...")` loads it the same way.
def __getattr__(name: str):
    if name == "Server":
        from tensorweave.distributed.server import Server

        globals()["Server"] = Server
        return Server
    raise AttributeError(f"module 'tensorweave.train' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"Server"})
