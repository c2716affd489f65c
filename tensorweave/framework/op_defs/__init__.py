"""Op definitions as data: every op's inputs, outputs, attrs, shape function and statefulness.

One module per op family holds its `register_op` calls and shape functions, and nothing
that builds graphs or computes. Importing this package registers every op; `framework`
users (the graph, `import_graph_def`, servers) import it whole, so a process that only
imports a GraphDef or serves a cluster knows every op. Graph-building wrappers in `ops/`
and NumPy kernels in `kernels/` both look definitions up here (TensorFlow's
`core/ops/*.cc` REGISTER_OP files play the same role).
"""

import tensorweave.framework.op_defs.array_misc  # noqa: F401
import tensorweave.framework.op_defs.array_more  # noqa: F401
import tensorweave.framework.op_defs.complex_fft  # noqa: F401
import tensorweave.framework.op_defs.fake_quant  # noqa: F401
import tensorweave.framework.op_defs.linalg  # noqa: F401
import tensorweave.framework.op_defs.misc  # noqa: F401
import tensorweave.framework.op_defs.random_more  # noqa: F401
import tensorweave.framework.op_defs.scatter_nd  # noqa: F401
import tensorweave.framework.op_defs.script_ops  # noqa: F401
import tensorweave.framework.op_defs.segment  # noqa: F401
import tensorweave.framework.op_defs.sparse  # noqa: F401
import tensorweave.framework.op_defs.special_math  # noqa: F401
import tensorweave.framework.op_defs.string_ops  # noqa: F401
