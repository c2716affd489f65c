"""tensorweave: TensorFlow 1.x's graph API and distributed runtime in pure Python.

Use it as `import tensorweave as tf`. The names below are explicit re-exports; each op
module lists its public names in `__all__`.
"""

from tensorweave import errors
from tensorweave import kernels as _kernels  # noqa: F401  (registers the NumPy kernels)
from tensorweave.client.session import InteractiveSession, Session, get_default_session
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.framework.dtypes import *  # noqa: F403
from tensorweave.framework.dtypes import DType, as_dtype
from tensorweave.framework.graph import (
    Graph,
    add_to_collection,
    add_to_collections,
    colocate_with,
    container,
    control_dependencies,
    device,
    get_collection,
    get_collection_ref,
    get_default_graph,
    get_name_scope,
    name_scope,
    reset_default_graph,
    set_random_seed,
)
from tensorweave.framework.graph_io import import_graph_def
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorweave.framework.tensor_shape import Dimension, TensorShape
from tensorweave.ops import io_ops as _io_ops  # noqa: F401  (checkpoint ops on servers)
from tensorweave.ops import sendrecv_ops as _sendrecv_ops  # noqa: F401
from tensorweave.ops import staleness_ops as _staleness_ops  # noqa: F401
from tensorweave.ops import summary_ops as _summary_ops  # noqa: F401
from tensorweave.ops import training_ops as _training_ops  # noqa: F401
from tensorweave.ops.array_ops import *  # noqa: F403
from tensorweave.ops.clip_ops import *  # noqa: F403
from tensorweave.ops.constant_op import *  # noqa: F403
from tensorweave.ops.control_flow_ops import *  # noqa: F403
from tensorweave.ops.data_flow_ops import *  # noqa: F403
from tensorweave.ops.functional_ops import *  # noqa: F403
from tensorweave.ops.gradients_impl import (
    AggregationMethod,
    NoGradient,
    NotDifferentiable,
    RegisterGradient,
    gradients,
    no_gradient,
)
from tensorweave.ops.init_ops import *  # noqa: F403
from tensorweave.ops.logging_ops import *  # noqa: F403
from tensorweave.ops.math_ops import *  # noqa: F403
from tensorweave.ops.partitioned_variables import *  # noqa: F403
from tensorweave.ops.random_ops import *  # noqa: F403
from tensorweave.ops.sequence_ops import *  # noqa: F403
from tensorweave.ops.state_ops import *  # noqa: F403
from tensorweave.ops.tensor_array_ops import *  # noqa: F403
from tensorweave.ops.variable_scope import *  # noqa: F403
from tensorweave.ops.variables import *  # noqa: F403
from tensorweave.protos.config_pb2 import (
    ConfigProto,
    GPUOptions,
    GraphOptions,
    RPCOptions,
    RunMetadata,
    RunOptions,
    TensorweaveOptions,
)

__version__ = "0.1.0"

# NOTE: namespaces that pull in the training library load on first use (PEP 562), so a
# `tensorweave server` process starts without them.
_LAZY_NAMESPACES = (
    "contrib", "distribute", "initializers", "layers", "losses", "nn", "summary", "train",
)


def __getattr__(name: str):
    if name in _LAZY_NAMESPACES:
        import importlib

        module = importlib.import_module(f"tensorweave.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'tensorweave' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY_NAMESPACES))
