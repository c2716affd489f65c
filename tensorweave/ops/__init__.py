"""Graph-construction functions: validate inputs, infer shapes, add nodes (never compute).

Importing this package imports every module that registers something: gradient functions
and `no_gradient` declarations (so `tf.gradients` works on any graph, an imported one
included), tensor conversion functions and the `Tensor` operators. One module per line,
sorted, so that parallel additions merge; no op module imports another for its
registrations, and `tests/unit/ops/test_registries.py` checks that importing every module
registers nothing more. The other modules (`nn_impl`, `layers_impl`, ...) load with the
namespaces that use them.
"""

import tensorweave.ops.array_grad  # noqa: F401
import tensorweave.ops.array_misc_grad  # noqa: F401
import tensorweave.ops.array_more_grad  # noqa: F401
import tensorweave.ops.array_ops_join  # noqa: F401
import tensorweave.ops.candidate_sampling_ops  # noqa: F401
import tensorweave.ops.complex_grad  # noqa: F401
import tensorweave.ops.constant_op  # noqa: F401
import tensorweave.ops.control_dependency_ops  # noqa: F401
import tensorweave.ops.control_flow_grad  # noqa: F401
import tensorweave.ops.control_flow_ops  # noqa: F401
import tensorweave.ops.data_flow_accumulators  # noqa: F401
import tensorweave.ops.data_flow_ops  # noqa: F401
import tensorweave.ops.dataset_ops  # noqa: F401
import tensorweave.ops.gradient_aggregation  # noqa: F401
import tensorweave.ops.image_grad  # noqa: F401
import tensorweave.ops.image_io_ops  # noqa: F401
import tensorweave.ops.io_ops  # noqa: F401
import tensorweave.ops.linalg_grad  # noqa: F401
import tensorweave.ops.logging_ops  # noqa: F401
import tensorweave.ops.math_grad_binary  # noqa: F401
import tensorweave.ops.math_grad_reduction  # noqa: F401
import tensorweave.ops.math_grad_unary  # noqa: F401
import tensorweave.ops.math_ops  # noqa: F401
import tensorweave.ops.matrix_grad  # noqa: F401
import tensorweave.ops.misc_grad  # noqa: F401
import tensorweave.ops.nn_conv_nd_grad  # noqa: F401
import tensorweave.ops.nn_extra_grad  # noqa: F401
import tensorweave.ops.nn_grad  # noqa: F401
import tensorweave.ops.nn_misc_grad  # noqa: F401
import tensorweave.ops.parsing_ops  # noqa: F401
import tensorweave.ops.partitioned_variables  # noqa: F401
import tensorweave.ops.random_more_grad  # noqa: F401
import tensorweave.ops.random_ops  # noqa: F401
import tensorweave.ops.reader_ops  # noqa: F401
import tensorweave.ops.resource_variable_ops  # noqa: F401
import tensorweave.ops.scatter_nd_grad  # noqa: F401
import tensorweave.ops.segment_grad  # noqa: F401
import tensorweave.ops.sendrecv_ops  # noqa: F401
import tensorweave.ops.sparse_grad  # noqa: F401
import tensorweave.ops.special_math_grad  # noqa: F401
import tensorweave.ops.staleness_ops  # noqa: F401
import tensorweave.ops.state_ops  # noqa: F401
import tensorweave.ops.string_io_ops  # noqa: F401
import tensorweave.ops.summary_ops  # noqa: F401
import tensorweave.ops.tensor_array_grad  # noqa: F401
import tensorweave.ops.training_ops  # noqa: F401
import tensorweave.ops.training_ops_extra  # noqa: F401
import tensorweave.ops.variables  # noqa: F401
