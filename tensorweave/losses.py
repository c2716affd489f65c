"""The `tf.losses` namespace (explicit re-exports of TF 1.x `tf.losses` names).

The logic lives in `tensorweave.ops.losses_impl`.
"""

from tensorweave.ops.losses_extra import (
    cosine_distance,
    huber_loss,
    mean_pairwise_squared_error,
)
from tensorweave.ops.losses_impl import (
    Reduction,
    absolute_difference,
    add_loss,
    compute_weighted_loss,
    get_losses,
    get_regularization_loss,
    get_regularization_losses,
    get_total_loss,
    hinge_loss,
    log_loss,
    mean_squared_error,
    sigmoid_cross_entropy,
    softmax_cross_entropy,
    sparse_softmax_cross_entropy,
)

__all__ = [
    "Reduction",
    "absolute_difference",
    "add_loss",
    "compute_weighted_loss",
    "cosine_distance",
    "get_losses",
    "get_regularization_loss",
    "get_regularization_losses",
    "get_total_loss",
    "hinge_loss",
    "huber_loss",
    "log_loss",
    "mean_pairwise_squared_error",
    "mean_squared_error",
    "sigmoid_cross_entropy",
    "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]
