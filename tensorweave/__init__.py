"""tensorweave: TensorFlow 1.x's graph API and distributed runtime in pure Python.

Use it as `import tensorweave as tf`. The names below are explicit re-exports; each op
module lists its public names in `__all__`.
"""

import gc as _gc

# NOTE: registering every op, kernel and gradient creates ~50,000 objects that the cyclic
# collector tracks and that live as long as the process; with it on, the import ran ~100
# young and one full collection over them (~3% of a server's start-up instructions). It is
# off for these imports only, and back to its previous state whatever they raise.
_gc_was_enabled = _gc.isenabled()
_gc.disable()
try:
    from tensorweave import errors
    from tensorweave import kernels as _kernels  # noqa: F401  (registers every kernel)
    from tensorweave import ops as _ops  # noqa: F401  (registers every op and gradient)
    from tensorweave.client.session import (
        InteractiveSession,
        Session,
        get_default_session,
    )
finally:
    if _gc_was_enabled:
        _gc.enable()
    del _gc_was_enabled
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
from tensorweave.ops.parsing_ops import *  # noqa: F403
from tensorweave.ops.partitioned_variables import *  # noqa: F403
from tensorweave.ops.random_ops import *  # noqa: F403
from tensorweave.ops.reader_ops import *  # noqa: F403
from tensorweave.ops.state_ops import *  # noqa: F403
from tensorweave.ops.string_io_ops import *  # noqa: F403
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

# Issue 12 ops (api-ops): math/array/linalg/sparse/random/string ops and their namespaces
# (tf.math, tf.linalg, tf.random, tf.sparse, tf.bitwise), appended as one block.
from tensorweave import bitwise, linalg, math, random, sparse  # noqa: E402, F401
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue  # noqa: E402
from tensorweave.ops.array_ops_misc import *  # noqa: E402, F403
from tensorweave.ops.array_ops_more import *  # noqa: E402, F403
from tensorweave.ops.check_ops_more import *  # noqa: E402, F403
from tensorweave.ops.complex_ops import *  # noqa: E402, F403
from tensorweave.ops.fake_quant_ops import *  # noqa: E402, F403
from tensorweave.ops.gradient_utils import *  # noqa: E402, F403
from tensorweave.ops.linalg_ops import *  # noqa: E402, F403
from tensorweave.ops.matrix_ops import *  # noqa: E402, F403
from tensorweave.ops.misc_ops import *  # noqa: E402, F403
from tensorweave.ops.random_more_ops import *  # noqa: E402, F403
from tensorweave.ops.scatter_nd_ops import *  # noqa: E402, F403
from tensorweave.ops.script_ops import *  # noqa: E402, F403
from tensorweave.ops.segment_ops import *  # noqa: E402, F403
from tensorweave.ops.sparse_ops import *  # noqa: E402, F403
from tensorweave.ops.sparse_ops_more import *  # noqa: E402, F403
from tensorweave.ops.special_math_ops import *  # noqa: E402, F403
from tensorweave.ops.string_ops import *  # noqa: E402, F403

# NOTE: namespaces that pull in the training library load on first use (PEP 562), so a
# `tensorweave server` process starts without them.
_LAZY_NAMESPACES = (
    "contrib", "distribute", "initializers", "layers", "losses", "nn", "summary", "train",
)
_LAZY_NAMESPACES += ("metrics",)

# NOTE: input pipelines (tf.data, tf.image, tf.io, tf.python_io) load on first use too.
_LAZY_NAMESPACES += ("data", "image", "io", "python_io")


def __getattr__(name: str):
    if name in _LAZY_NAMESPACES:
        import importlib

        module = importlib.import_module(f"tensorweave.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'tensorweave' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY_NAMESPACES))

# Program scaffolding (issue 12): build constants, TF2 behaviour switches, tf.get_logger,
# protos and tensor-proto helpers, and the `app`, `compat`, `flags`, `gfile` and `logging`
# namespaces.
from tensorweave.compat import dimension_at_index, dimension_value  # noqa: E402
from tensorweave.framework.behavior import *  # noqa: E402,F403
from tensorweave.framework.tensor_util import make_ndarray, make_tensor_proto  # noqa: E402
from tensorweave.framework.versions import *  # noqa: E402,F403
from tensorweave.logging import get_logger  # noqa: E402
from tensorweave.ops import summary_media_ops as _summary_media_ops  # noqa: E402,F401
from tensorweave.ops.check_ops_more import *  # noqa: E402,F403
from tensorweave.ops.print_ops import print_v2 as print  # noqa: E402,A004
from tensorweave.ops.script_ops import numpy_function, py_func, py_function  # noqa: E402
from tensorweave.ops.template import make_template  # noqa: E402
from tensorweave.ops.tensor_helpers import *  # noqa: E402,F403
from tensorweave.protos.attr_value_pb2 import AttrValue, NameAttrList  # noqa: E402
from tensorweave.protos.config_pb2 import OptimizerOptions  # noqa: E402
from tensorweave.protos.event_pb2 import Event, LogMessage, SessionLog  # noqa: E402
from tensorweave.protos.graph_pb2 import GraphDef  # noqa: E402
from tensorweave.protos.meta_graph_pb2 import MetaGraphDef, TensorInfo  # noqa: E402
from tensorweave.protos.node_def_pb2 import NodeDef  # noqa: E402
from tensorweave.protos.summary_pb2 import (  # noqa: E402
    HistogramProto,
    Summary,
    SummaryMetadata,
)

_LAZY_NAMESPACES += ("app", "compat", "flags", "gfile", "logging")
