"""Graph-construction functions: validate inputs, infer shapes, add nodes (never compute).

Importing this package imports every op module, so every gradient function and every
`no_gradient` declaration is registered (`tf.gradients` works on any graph, including an
imported one). One module per line, sorted, so that parallel additions merge; no op module
imports another for its registrations.
"""

import tensorweave.ops.array_grad  # noqa: F401
import tensorweave.ops.array_ops  # noqa: F401
import tensorweave.ops.array_ops_gather  # noqa: F401
import tensorweave.ops.array_ops_index  # noqa: F401
import tensorweave.ops.array_ops_join  # noqa: F401
import tensorweave.ops.array_ops_shape  # noqa: F401
import tensorweave.ops.clip_ops  # noqa: F401
import tensorweave.ops.constant_op  # noqa: F401
import tensorweave.ops.control_flow_ops  # noqa: F401
import tensorweave.ops.cwise_binary_ops  # noqa: F401
import tensorweave.ops.cwise_common  # noqa: F401
import tensorweave.ops.cwise_ops  # noqa: F401
import tensorweave.ops.cwise_unary_ops  # noqa: F401
import tensorweave.ops.data_flow_accumulators  # noqa: F401
import tensorweave.ops.data_flow_ops  # noqa: F401
import tensorweave.ops.embedding_ops  # noqa: F401
import tensorweave.ops.gradient_aggregation  # noqa: F401
import tensorweave.ops.gradients_impl  # noqa: F401
import tensorweave.ops.init_ops  # noqa: F401
import tensorweave.ops.io_ops  # noqa: F401
import tensorweave.ops.layers_impl  # noqa: F401
import tensorweave.ops.logging_ops  # noqa: F401
import tensorweave.ops.losses_impl  # noqa: F401
import tensorweave.ops.math_grad  # noqa: F401
import tensorweave.ops.math_grad_binary  # noqa: F401
import tensorweave.ops.math_grad_common  # noqa: F401
import tensorweave.ops.math_grad_reduction  # noqa: F401
import tensorweave.ops.math_grad_unary  # noqa: F401
import tensorweave.ops.math_ops  # noqa: F401
import tensorweave.ops.matmul_ops  # noqa: F401
import tensorweave.ops.nn_conv_ops  # noqa: F401
import tensorweave.ops.nn_grad  # noqa: F401
import tensorweave.ops.nn_impl  # noqa: F401
import tensorweave.ops.nn_ops  # noqa: F401
import tensorweave.ops.partitioned_variables  # noqa: F401
import tensorweave.ops.random_ops  # noqa: F401
import tensorweave.ops.reduction_ops  # noqa: F401
import tensorweave.ops.resource_variable_ops  # noqa: F401
import tensorweave.ops.sendrecv_ops  # noqa: F401
import tensorweave.ops.staleness_ops  # noqa: F401
import tensorweave.ops.state_ops  # noqa: F401
import tensorweave.ops.summary_ops  # noqa: F401
import tensorweave.ops.training_ops  # noqa: F401
import tensorweave.ops.variable_scope  # noqa: F401
import tensorweave.ops.variable_scope_object  # noqa: F401
import tensorweave.ops.variable_store  # noqa: F401
import tensorweave.ops.variable_store_partitioned  # noqa: F401
import tensorweave.ops.variables  # noqa: F401
