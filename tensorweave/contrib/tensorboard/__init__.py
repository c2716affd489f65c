"""`tf.contrib.tensorboard`: only `plugins.projector` (TF 1.x contrib)."""

from tensorweave.contrib.tensorboard import plugins

__all__ = ["plugins"]
