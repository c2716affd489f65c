"""Op definitions as data: every op's inputs, outputs, attrs, shape function and statefulness.

One module per op family holds its `register_op` calls and shape functions, and nothing
that builds graphs or computes. Importing this package registers every op; `framework`
users (the graph, `import_graph_def`, servers) import it whole, so a process that only
imports a GraphDef or serves a cluster knows every op. Graph-building wrappers in `ops/`
and NumPy kernels in `kernels/` both look definitions up here (TensorFlow's
`core/ops/*.cc` REGISTER_OP files play the same role).
"""

# One line per family module (sorted), so parallel additions merge.
from tensorweave.framework.op_defs import (
    array,  # noqa: F401
    array_gather,  # noqa: F401
    array_index,  # noqa: F401
    array_join,  # noqa: F401
    array_shape,  # noqa: F401
    cwise_binary,  # noqa: F401
    cwise_unary,  # noqa: F401
    matmul,  # noqa: F401
    nn,  # noqa: F401
    reduction,  # noqa: F401
)
