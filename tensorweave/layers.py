"""The `tf.layers` namespace (explicit re-exports of TF 1.x functional layers).

The logic lives in `tensorweave.ops.layers_impl`.
"""

from tensorweave.ops.layers_impl import (
    average_pooling2d,
    conv2d,
    dense,
    dropout,
    flatten,
    max_pooling2d,
)

__all__ = [
    "average_pooling2d",
    "conv2d",
    "dense",
    "dropout",
    "flatten",
    "max_pooling2d",
]
