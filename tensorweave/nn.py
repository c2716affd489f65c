"""The `tf.nn` namespace (explicit re-exports of TF 1.x `tf.nn` names).

Activations, softmax, cross-entropy, convolution, pooling, dropout and embeddings.

The logic lives in `tensorweave.ops.nn_ops`, `nn_conv_ops`, `nn_impl` and
`embedding_ops`; the NumPy kernels in `tensorweave.kernels.nn_kernels` and
`nn_conv_kernels`.
"""

from tensorweave.ops import rnn_cell  # noqa: F401  (the `tf.nn.rnn_cell` namespace module)
from tensorweave.ops.cwise_ops import sigmoid, tanh
from tensorweave.ops.embedding_ops import embedding_lookup
from tensorweave.ops.nn_conv_ops import (
    avg_pool,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    max_pool,
)
from tensorweave.ops.nn_impl import (
    dropout,
    l2_normalize,
    moments,
    relu_layer,
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits,
    weighted_cross_entropy_with_logits,
    xw_plus_b,
    zero_fraction,
)
from tensorweave.ops.nn_ops import (
    bias_add,
    elu,
    in_top_k,
    l2_loss,
    leaky_relu,
    log_softmax,
    relu,
    relu6,
    softmax,
    softplus,
    softsign,
    top_k,
)
from tensorweave.ops.rnn import bidirectional_dynamic_rnn, dynamic_rnn, raw_rnn, static_rnn

__all__ = [
    "avg_pool",
    "bias_add",
    "conv2d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "dropout",
    "elu",
    "embedding_lookup",
    "in_top_k",
    "l2_loss",
    "l2_normalize",
    "leaky_relu",
    "log_softmax",
    "max_pool",
    "moments",
    "relu",
    "relu6",
    "relu_layer",
    "sigmoid",
    "sigmoid_cross_entropy_with_logits",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2",
    "softplus",
    "softsign",
    "sparse_softmax_cross_entropy_with_logits",
    "tanh",
    "top_k",
    "weighted_cross_entropy_with_logits",
    "xw_plus_b",
    "zero_fraction",
    # Recurrent networks (tensorweave.ops.rnn, rnn_cell_impl).
    "bidirectional_dynamic_rnn",
    "dynamic_rnn",
    "raw_rnn",
    "static_rnn",
]
