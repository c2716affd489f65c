"""Run as `python <script> tf|tw`: builds the same graph with TensorFlow (tf.compat.v1) or
tensorweave and prints the fetched values as JSON (used by tests/interop)."""

import json
import sys

if sys.argv[1] == "tf":
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
else:
    import tensorweave as tf
res = {}
g = tf.Graph()
with g.as_default():
    step = tf.placeholder(tf.int64, [])
    out = {
        "sgdr": tf.train.cosine_decay_restarts(0.5, step, 10),
        "sgdr_t1": tf.train.cosine_decay_restarts(0.5, step, 7, t_mul=1.0, m_mul=0.5, alpha=0.1),
        "sgdr_t3": tf.train.cosine_decay_restarts(1.0, step, 5, t_mul=3.0, m_mul=0.9),
        "lin": tf.train.linear_cosine_decay(0.1, step, 30),
        "lin2": tf.train.linear_cosine_decay(0.1, step, 30, num_periods=2.0, alpha=0.2, beta=0.01),
        "pwc": tf.train.piecewise_constant_decay(step, [5, 20], [1.0, 0.5, 0.1]),
    }
    with tf.Session() as s:
        for st in [0, 1, 4, 5, 9, 10, 11, 16, 20, 29, 35, 47, 80]:
            for k, v in s.run(out, {step: st}).items():
                res.setdefault(k, []).append(float(v))
print(json.dumps(res))
