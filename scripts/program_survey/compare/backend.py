"""`tf` for the comparison scripts: tensorweave, or TensorFlow's `compat.v1` graph mode when
BACKEND=tf (run with an interpreter that has TensorFlow; `TF_USE_LEGACY_KERAS=1` and
`tf-keras` for `tf.nn.rnn_cell` under TensorFlow 2.16+)."""

import os

if os.environ.get("BACKEND") == "tf":
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
else:
    import tensorweave as tf

__all__ = ["tf"]
