"""Run as `python <script> tf|tw`: builds the same graph with TensorFlow (tf.compat.v1) or
tensorweave and prints the fetched values as JSON (used by tests/interop)."""

import json
import sys

import numpy as np

if sys.argv[1] == "tf":
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    tf.disable_resource_variables()
else:
    import tensorweave as tf
rng = np.random.RandomState(3)
x5 = rng.randn(2, 5, 6, 4, 3).astype(np.float32)
f5 = rng.randn(2, 3, 2, 3, 4).astype(np.float32)
x4 = rng.randn(2, 7, 6, 3).astype(np.float32)
fd = rng.randn(3, 2, 3, 2).astype(np.float32)
pw = rng.randn(1, 1, 6, 4).astype(np.float32)
x3 = rng.randn(2, 9, 3).astype(np.float32)
f3 = rng.randn(3, 3, 5).astype(np.float32)
ft = rng.randn(3, 3, 4, 3).astype(np.float32)
res = {}
g = tf.Graph()
with g.as_default():
    X5, X4, X3 = tf.constant(x5), tf.constant(x4), tf.constant(x3)
    out = {
        "conv3d_same": tf.nn.conv3d(X5, f5, [1, 1, 2, 1, 1], "SAME"),
        "conv3d_valid": tf.nn.conv3d(X5, f5, [1, 2, 1, 1, 1], "VALID"),
        "conv3d_dil": tf.nn.conv3d(X5, f5, [1, 1, 1, 1, 1], "SAME", dilations=[1, 2, 1, 2, 1]),
        "maxpool3d": tf.nn.max_pool3d(X5, [1, 2, 3, 2, 1], [1, 2, 2, 1, 1], "SAME"),
        "avgpool3d": tf.nn.avg_pool3d(X5, [1, 3, 2, 2, 1], [1, 1, 2, 2, 1], "SAME"),
        "avgpool3d_v": tf.nn.avg_pool3d(X5, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID"),
        "dw_same": tf.nn.depthwise_conv2d(X4, fd, [1, 2, 1, 1], "SAME"),
        "dw_rate": tf.nn.depthwise_conv2d(X4, fd, [1, 1, 1, 1], "VALID", rate=[2, 2]),
        "sep": tf.nn.separable_conv2d(X4, fd, pw, [1, 1, 1, 1], "SAME"),
        "conv1d": tf.nn.conv1d(X3, f3, 2, "SAME"),
        "conv1d_dil": tf.nn.conv1d(X3, f3, 1, "VALID", dilations=2),
        "maxpool1d": tf.nn.max_pool1d(X3, 3, 2, "SAME"),
        "avgpool1d": tf.nn.avg_pool1d(X3, 2, 1, "VALID"),
        "conv2d_t": tf.nn.conv2d_transpose(X4, ft, [2, 14, 12, 4], [1, 2, 2, 1], "SAME"),
        "conv2d_t_v": tf.nn.conv2d_transpose(X4, ft, [2, 9, 8, 4], 1, "VALID"),
        "conv3d_t": tf.nn.conv3d_transpose(
            tf.nn.conv3d(X5, f5, [1, 1, 2, 1, 1], "SAME"),
            f5,
            [2, 5, 6, 4, 3],
            [1, 1, 2, 1, 1],
            "SAME",
        ),
        "conv1d_t": tf.nn.conv1d_transpose(
            X3, rng.randn(3, 2, 3).astype(np.float32), [2, 18, 2], 2, "SAME"
        ),
        "atrous": tf.nn.atrous_conv2d(X4, ft[:, :, :3, :], 2, "SAME"),
        "atrous_t": tf.nn.atrous_conv2d_transpose(X4, ft, [2, 7, 6, 4], 2, "SAME"),
        "convolution": tf.nn.convolution(X5, f5, "SAME", strides=[1, 2, 1]),
        "pool_avg": tf.nn.pool(X4, [2, 2], "AVG", "SAME", strides=[2, 2]),
        "maxpool_v2": tf.nn.max_pool_v2(X3, 2, 2, "VALID"),
        "argmax_out": tf.nn.max_pool_with_argmax(X4, [1, 3, 2, 1], [1, 2, 2, 1], "SAME")[0],
        "argmax_idx": tf.nn.max_pool_with_argmax(X4, [1, 3, 2, 1], [1, 2, 2, 1], "SAME")[1],
        "argmax_idx_b": tf.nn.max_pool_with_argmax(
            X4, [1, 2, 2, 1], [1, 2, 2, 1], "VALID", include_batch_in_index=True
        )[1],
    }
    grads = {}
    for k in [
        "conv3d_same",
        "conv3d_dil",
        "maxpool3d",
        "avgpool3d",
        "dw_same",
        "dw_rate",
        "sep",
        "conv2d_t",
        "conv3d_t",
        "argmax_out",
    ]:
        w = tf.constant(rng.randn(*out[k].shape.as_list()).astype(np.float32))
        xs = [X5] if "3d" in k else [X4]
        grads[k] = tf.gradients(tf.reduce_sum(out[k] * w), xs)[0]
    grads["dw_filter"] = tf.gradients(
        tf.reduce_sum(out["dw_same"] ** 2), [out["dw_same"].op.inputs[1]]
    )[0]
    grads["conv3d_filter"] = tf.gradients(
        tf.reduce_sum(out["conv3d_valid"] ** 2), [out["conv3d_valid"].op.inputs[1]]
    )[0]
    with tf.Session() as s:
        for k, v in s.run(out).items():
            res[k] = np.asarray(v, np.float64).tolist()
        for k, v in s.run(grads).items():
            res["grad/" + k] = np.asarray(v, np.float64).tolist()
print(json.dumps(res))
