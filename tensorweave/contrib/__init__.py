"""`tf.contrib`: the few TF 1.x contrib APIs tensorweave provides (explicit re-exports).

`tf.contrib.training`'s ps placement strategies, `tf.contrib.rnn` and the common
`tf.contrib.layers` helpers are here; import the submodule
(`from tensorweave.contrib import training`) or use `tf.contrib.training` once the
top-level package imports it.
"""

from tensorweave.contrib import layers, rnn, training

__all__ = ["layers", "rnn", "training"]
