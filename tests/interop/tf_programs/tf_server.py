"""One task of a TensorFlow cluster (run under TensorFlow's Python): prints
`{"target": ...}` once it serves, then blocks until killed.

argv: cluster JSON (`{"ps": ["localhost:1"], ...}`), job name, task index.
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402

cluster = tf.train.ClusterSpec(json.loads(sys.argv[1]))
server = tf.distribute.Server(cluster, job_name=sys.argv[2], task_index=int(sys.argv[3]))
print(json.dumps({"target": server.target}), flush=True)
server.join()
