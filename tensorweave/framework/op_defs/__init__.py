"""Op definitions as data: every op's inputs, outputs, attrs, shape function and statefulness.

One module per op family holds its `register_op` calls and shape functions, and nothing
that builds graphs or computes. Importing this package registers every op; `framework`
users (the graph, `import_graph_def`, servers) import it whole, so a process that only
imports a GraphDef or serves a cluster knows every op. Graph-building wrappers in `ops/`
and NumPy kernels in `kernels/` both look definitions up here (TensorFlow's
`core/ops/*.cc` REGISTER_OP files play the same role).
"""
from tensorweave.framework.op_defs import (
    control_flow,  # noqa: F401
    reverse_sequence,  # noqa: F401
    stack,  # noqa: F401
    tensor_array,  # noqa: F401
)
