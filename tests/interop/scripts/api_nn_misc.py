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
rng = np.random.RandomState(2)
x = rng.randn(2, 4, 6, 8).astype(np.float32)
xs = rng.randn(2, 5, 4, 3).astype(np.float32)
f = rng.randn(3, 2, 3).astype(np.float32)
logits = rng.randn(6, 3, 5).astype(np.float32)
labels = np.array([[1, 2, 2], [3, 0, 0], [4, 1, 3]], np.int32)
res = {}
with tf.Graph().as_default():
    X, XS, LG = tf.constant(x), tf.constant(xs), tf.constant(logits)
    out = {
        "d2s": tf.nn.depth_to_space(X, 2),
        "s2d": tf.nn.space_to_depth(X, 2),
        "s2b": tf.nn.space_to_batch(XS, [[1, 0], [0, 2]], block_size=2),
        "dil": tf.nn.dilation2d(XS, f, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
        "dil2": tf.nn.dilation2d(XS, f, [1, 2, 1, 1], [1, 1, 2, 1], "VALID"),
        "ero": tf.nn.erosion2d(XS, f, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
        "wstb": tf.nn.with_space_to_batch(
            XS,
            [2, 2],
            "SAME",
            lambda inp, n, pad: tf.nn.conv2d(
                inp, tf.constant(rng.randn(3, 3, 3, 2).astype(np.float32)), [1, 1, 1, 1], pad
            ),
            filter_shape=[3, 3],
        ),
        "ctc2": tf.nn.ctc_loss_v2(labels, LG, [3, 1, 2], [6, 4, 5]),
        "ctc2_b": tf.nn.ctc_loss_v2(
            np.minimum(labels, 3), LG, [3, 1, 2], [6, 4, 5], blank_index=-1
        ),
        "ctc2_m": tf.nn.ctc_loss_v2(labels, LG, [3, 1, 2], [6, 4, 5], blank_index=2),
    }
    cl, cn = tf.nn.collapse_repeated(
        tf.constant([[1, 1, 2, 2, 3], [4, 4, 4, 0, 0], [5, 6, 6, 7, 7]]), [5, 3, 4]
    )
    out["cr_l"], out["cr_n"] = cl, cn
    gx = {
        "d2s": tf.gradients(
            tf.reduce_sum(out["d2s"] * tf.constant(rng.randn(2, 8, 12, 2).astype(np.float32))), X
        )[0],
        "s2b": tf.gradients(tf.reduce_sum(out["s2b"] ** 2), XS)[0],
        "dil_x": tf.gradients(tf.reduce_sum(out["dil"] * out["dil"]), XS)[0],
        "dil_f": tf.gradients(tf.reduce_sum(out["dil2"] * 1.5), out["dil2"].op.inputs[1])[0],
        "ctc": tf.gradients(tf.reduce_sum(out["ctc2_b"] * tf.constant([1.0, 2.0, 0.5])), LG)[0],
    }
    with tf.Session() as s:
        for k, v in s.run(out).items():
            res[k] = np.asarray(v, np.float64).tolist()
        for k, v in s.run(gx).items():
            res["grad/" + k] = np.asarray(v, np.float64).tolist()
print(json.dumps(res))
