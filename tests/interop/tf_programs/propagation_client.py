"""ClusterSpec propagation from a client (run under TensorFlow or tensorweave): two servers
that only know themselves serve a session as /job:worker/task:0 and task:1 of the cluster
in its `ConfigProto.cluster_def`. Prints one JSON line.

argv: `tensorflow` or `tensorweave`, then the two servers' `host:port`.
"""
import json
import sys

if sys.argv[1] == "tensorflow":
    import os
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    string_join = tf.string_join
else:
    import tensorweave as tf
    from tensorweave.ops.io_ops import string_join  # NOTE: not in tf.* here yet

first, second = sys.argv[2:4]
cluster = tf.train.ClusterSpec({"worker": [first, second]})
config = tf.ConfigProto(cluster_def=cluster.as_cluster_def())
with tf.Graph().as_default():
    with tf.device("/job:worker/task:1"):
        v = tf.Variable(3.0, name="v", use_resource=False)
        inc = tf.assign_add(v, 2.0)
    with tf.device("/job:worker/task:0"):
        out = inc * 10.0
    with tf.Session(f"grpc://{first}", config=config) as sess:
        sess.run(v.initializer)
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        meta = tf.RunMetadata()
        value = float(sess.run(out, options=opts, run_metadata=meta))
with tf.Graph().as_default():  # string tensors crossing between the tasks both ways
    with tf.device("/job:worker/task:1"):
        words = tf.constant(["ab", "cde"])
        doubled = string_join([words, words], separator="+")
    with tf.device("/job:worker/task:0"):
        marked = string_join([doubled, tf.constant(["x", "y"])], separator="|")
    with tf.device("/job:worker/task:1"):
        back = string_join([marked, words])
    with tf.Session(f"grpc://{first}", config=config) as sess:
        strings = [b.decode() for b in sess.run(back)]
print(json.dumps({"value": value, "strings": strings,
                  "devices": sorted({d.device for d in meta.step_stats.dev_stats})}))
