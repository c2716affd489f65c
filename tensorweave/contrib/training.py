"""The `tf.contrib.training` namespace: ps placement strategies (explicit re-exports).

For `tf.train.replica_device_setter(ps_strategy=...)`.

Follows TF 1.x `tensorflow/contrib/training/python/training/device_setter.py`.
"""

from tensorweave.training.device_setter import (
    GreedyLoadBalancingStrategy,
    RandomStrategy,
    byte_size_load_fn,
)

__all__ = [
    "GreedyLoadBalancingStrategy",
    "RandomStrategy",
    "byte_size_load_fn",
]
