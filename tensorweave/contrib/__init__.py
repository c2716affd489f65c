"""`tf.contrib`: the few TF 1.x contrib APIs tensorweave provides (explicit re-exports).

Only `tf.contrib.training`'s ps placement strategies are here; import the submodule
(`from tensorweave.contrib import training`) or use `tf.contrib.training` once the
top-level package imports it.
"""

from tensorweave.contrib import rnn, training

__all__ = ["rnn", "training"]
