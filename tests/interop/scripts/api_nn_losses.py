"""Run as `python <script> tf|tw`: builds the same graph with TensorFlow (tf.compat.v1) or
tensorweave and prints the fetched values as JSON (used by tests/interop)."""

import json
import sys

import numpy as np

if sys.argv[1] == "tf":
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
else:
    import tensorweave as tf
rng = np.random.RandomState(1)
l = rng.randn(3, 4).astype(np.float32)
p = rng.randn(3, 4).astype(np.float32) * 2
ln = l / np.linalg.norm(l, axis=1, keepdims=True)
pn = p / np.linalg.norm(p, axis=1, keepdims=True)
w = np.array([[1.0], [0.0], [2.0]], np.float32)
w2 = np.array([[1, 0, 2, 1], [1, 1, 0, 0], [3, 1, 1, 1]], np.float32)
res = {}
g = tf.Graph()
with g.as_default():
    R = tf.losses.Reduction
    out = {
        "cos": tf.losses.cosine_distance(ln, pn, axis=1),
        "cos_w": tf.losses.cosine_distance(ln, pn, axis=1, weights=w),
        "cos_none": tf.losses.cosine_distance(ln, pn, dim=1, reduction=R.NONE),
        "cos0_sum": tf.losses.cosine_distance(ln, pn, axis=0, reduction=R.SUM),
        "huber": tf.losses.huber_loss(l, p),
        "huber_d": tf.losses.huber_loss(l, p, delta=0.5, weights=w2),
        "huber_mean": tf.losses.huber_loss(l, p, delta=2.0, weights=w2, reduction=R.MEAN),
        "huber_none": tf.losses.huber_loss(l, p, weights=w, reduction=R.NONE),
        "mpse": tf.losses.mean_pairwise_squared_error(l, p),
        "mpse_w": tf.losses.mean_pairwise_squared_error(l, p, weights=w),
        "mpse_3d": tf.losses.mean_pairwise_squared_error(
            l.reshape(3, 2, 2), p.reshape(3, 2, 2), weights=3.0
        ),
        "mpse_0": tf.losses.mean_pairwise_squared_error(l, p, weights=0.0),
    }
    res["n_losses"] = len(tf.get_collection(tf.GraphKeys.LOSSES))
    with tf.Session() as s:
        for k, v in s.run(out).items():
            res[k] = np.asarray(v, np.float64).tolist()
print(json.dumps(res))
