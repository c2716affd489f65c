"""The seeds' snippets as one client program, written against TF1's API so that the same
text runs under `tensorflow.compat.v1` and under `tensorweave`; prints one JSON line.

argv: `tensorflow` or `tensorweave`, then the `host:port` of ps 0, worker 0 and worker 1.
Snippets: hello (a string constant), a variable shared by two sessions, placement on
/job:ps seen in a FULL_TRACE `RunMetadata`, two workers incrementing a ps variable (the
Distributed TensorFlow how-to), and a relu/softmax MLP trained with SGD and Adam (its
variables resource variables, as TF 2.x's `compat.v1` makes them by default).
"""
import json
import sys

import numpy as np

if sys.argv[1] == "tensorflow":
    import os
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
else:
    import tensorweave as tf

ps, w0, w1 = (f"grpc://{a}" for a in sys.argv[2:5])
res = {}
with tf.Graph().as_default():
    hello = tf.constant("Hello, distributed TensorFlow!")
    with tf.Session(w0) as sess:
        res["hello"] = sess.run(hello).decode()

with tf.Graph().as_default():
    with tf.device("/job:ps/task:0"):
        var = tf.Variable(initial_value=0.0, name="var", use_resource=False)
    with tf.device("/job:worker/task:0"):
        inc = var.assign_add(1.0)
    sess1, sess2 = tf.Session(w0), tf.Session(w1)
    sess1.run(tf.global_variables_initializer())
    res["shared_before"] = [float(sess1.run(var)), float(sess2.run(var))]
    sess1.run(inc)
    res["shared_after"] = [float(sess1.run(var)), float(sess2.run(var))]
    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    meta = tf.RunMetadata()
    sess2.run(inc, options=opts, run_metadata=meta)
    res["trace"] = sorted({(d.device, n.node_name) for d in meta.step_stats.dev_stats
                           for n in d.node_stats if n.node_name in ("var", "AssignAdd")})
    for sess in (sess1, sess2):
        sess.close()

with tf.Graph().as_default():
    with tf.device("/job:ps/task:0"):
        var = tf.Variable(0.0, name="counter")
    incs = []
    for i in range(2):
        with tf.device(f"/job:worker/task:{i}"):
            incs.append(var.assign_add(1.0))
    sessions = [tf.Session(w0), tf.Session(w1)]
    sessions[0].run(tf.global_variables_initializer())
    for _ in range(5):
        for sess, op in zip(sessions, incs):
            sess.run(op)
    res["increment"] = float(sessions[1].run(var))
    triple = var * 3.0  # the graph grows after the sessions ran: ExtendSession
    res["extended"] = [float(sessions[0].run(triple)), float(sessions[1].run(triple + 1.0))]
    res["counter_op"] = var.op.type
    for sess in sessions:
        sess.close()

rng = np.random.RandomState(0)
x_data = rng.normal(size=(64, 10)).astype(np.float32)
y_data = (x_data[:, :3].argmax(axis=1)).astype(np.int64)
w_init = [rng.normal(size=(10, 16)).astype(np.float32) * 0.3,
          rng.normal(size=(16, 3)).astype(np.float32) * 0.3]
for opt_name in ("sgd", "adam"):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            w1_ = tf.Variable(w_init[0], name="w1", use_resource=True)
            b1 = tf.Variable(tf.zeros([16]), name="b1", use_resource=True)
            w2_ = tf.Variable(w_init[1], name="w2", use_resource=True)
            b2 = tf.Variable(tf.zeros([3]), name="b2", use_resource=True)
            step = tf.train.get_or_create_global_step()
        with tf.device("/job:worker/task:1"):
            x = tf.placeholder(tf.float32, [None, 10])
            y = tf.placeholder(tf.int64, [None])
            h = tf.nn.relu(tf.matmul(x, w1_) + b1)
            probs = tf.nn.softmax(tf.matmul(h, w2_) + b2)
            loss = -tf.reduce_mean(tf.log(tf.gather(tf.reshape(probs, [-1]),
                                                    tf.range(64) * 3 + tf.cast(y, tf.int32))))
            opt = (tf.train.GradientDescentOptimizer(0.5) if opt_name == "sgd"
                   else tf.train.AdamOptimizer(0.05))
            train = opt.minimize(loss, global_step=step)
        with tf.Session(w0) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [float(sess.run([loss, train], {x: x_data, y: y_data})[0])
                      for _ in range(8)]
            res[f"mlp_{opt_name}"] = losses
            res[f"mlp_{opt_name}_step"] = int(sess.run(step))
            res[f"mlp_{opt_name}_var_op"] = w1_.op.type
print(json.dumps(res))
