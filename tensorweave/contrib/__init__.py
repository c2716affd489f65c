"""`tf.contrib`: the few TF 1.x contrib APIs tensorweave provides (explicit re-exports).

`tf.contrib.training`'s ps placement strategies, `tf.contrib.rnn`,
`tf.contrib.framework.arg_scope`, the common
`tf.contrib.layers` helpers, `tf.contrib.seq2seq.sequence_loss` and
`tf.contrib.tensorboard.plugins.projector`; import a
submodule (`from tensorweave.contrib import training`) or use `tf.contrib.<name>`.
"""

from tensorweave.contrib import framework, layers, rnn, seq2seq, tensorboard, training

__all__ = ["framework", "layers", "rnn", "seq2seq", "tensorboard", "training"]
