"""Op definitions as data: every op's inputs, outputs, attrs, shape function and statefulness.

One module per op family holds its `register_op` calls and shape functions, and nothing
that builds graphs or computes. Importing this package registers every op; `framework`
users (the graph, `import_graph_def`, servers) import it whole, so a process that only
imports a GraphDef or serves a cluster knows every op. Graph-building wrappers in `ops/`
and NumPy kernels in `kernels/` both look definitions up here (TensorFlow's
`core/ops/*.cc` REGISTER_OP files play the same role).
"""

# One line per family module, sorted, so that parallel additions merge.
import tensorweave.framework.op_defs.array  # noqa: F401
import tensorweave.framework.op_defs.array_gather  # noqa: F401
import tensorweave.framework.op_defs.array_index  # noqa: F401
import tensorweave.framework.op_defs.array_join  # noqa: F401
import tensorweave.framework.op_defs.array_misc  # noqa: F401
import tensorweave.framework.op_defs.array_more  # noqa: F401
import tensorweave.framework.op_defs.array_shape  # noqa: F401
import tensorweave.framework.op_defs.complex_fft  # noqa: F401
import tensorweave.framework.op_defs.constant  # noqa: F401
import tensorweave.framework.op_defs.control_flow  # noqa: F401
import tensorweave.framework.op_defs.cwise_binary  # noqa: F401
import tensorweave.framework.op_defs.cwise_unary  # noqa: F401
import tensorweave.framework.op_defs.data_flow  # noqa: F401
import tensorweave.framework.op_defs.data_flow_accumulators  # noqa: F401
import tensorweave.framework.op_defs.dataset  # noqa: F401
import tensorweave.framework.op_defs.fake_quant  # noqa: F401
import tensorweave.framework.op_defs.image  # noqa: F401
import tensorweave.framework.op_defs.io  # noqa: F401
import tensorweave.framework.op_defs.linalg  # noqa: F401
import tensorweave.framework.op_defs.logging  # noqa: F401
import tensorweave.framework.op_defs.matmul  # noqa: F401
import tensorweave.framework.op_defs.misc  # noqa: F401
import tensorweave.framework.op_defs.nn  # noqa: F401
import tensorweave.framework.op_defs.nn_conv  # noqa: F401
import tensorweave.framework.op_defs.nn_conv_nd  # noqa: F401
import tensorweave.framework.op_defs.nn_extra  # noqa: F401
import tensorweave.framework.op_defs.nn_misc  # noqa: F401
import tensorweave.framework.op_defs.no_op  # noqa: F401
import tensorweave.framework.op_defs.parsing  # noqa: F401
import tensorweave.framework.op_defs.random  # noqa: F401
import tensorweave.framework.op_defs.random_more  # noqa: F401
import tensorweave.framework.op_defs.readers  # noqa: F401
import tensorweave.framework.op_defs.reduction  # noqa: F401
import tensorweave.framework.op_defs.resource_variable  # noqa: F401
import tensorweave.framework.op_defs.scatter_nd  # noqa: F401
import tensorweave.framework.op_defs.script  # noqa: F401
import tensorweave.framework.op_defs.segment  # noqa: F401
import tensorweave.framework.op_defs.sendrecv  # noqa: F401
import tensorweave.framework.op_defs.sparse  # noqa: F401
import tensorweave.framework.op_defs.special_math  # noqa: F401
import tensorweave.framework.op_defs.stack  # noqa: F401
import tensorweave.framework.op_defs.staleness  # noqa: F401
import tensorweave.framework.op_defs.state  # noqa: F401
import tensorweave.framework.op_defs.string_format  # noqa: F401
import tensorweave.framework.op_defs.string_ops  # noqa: F401
import tensorweave.framework.op_defs.summary  # noqa: F401
import tensorweave.framework.op_defs.summary_media  # noqa: F401
import tensorweave.framework.op_defs.tensor_array  # noqa: F401
import tensorweave.framework.op_defs.training  # noqa: F401
import tensorweave.framework.op_defs.training_extra  # noqa: F401
