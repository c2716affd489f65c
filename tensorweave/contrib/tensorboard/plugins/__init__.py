"""`tf.contrib.tensorboard.plugins`: the embedding projector's configuration."""

from tensorweave.contrib.tensorboard.plugins import projector

__all__ = ["projector"]
