"""A TensorFlow worker of a between-graph digits trainer (run under TensorFlow's Python).

The seeds' trainer with `tf.compat.v1`: its own `tf.distribute.Server`, the 64-256-256-10
MLP under `replica_device_setter`, Adagrad(0.1), trained until the global step reaches the
last step, then the test accuracy through its server. Prints one JSON line. The chief
initializes, the other worker waits until `report_uninitialized_variables` is empty (the
seeds' pattern). NOTE: not `MonitoredTrainingSession`: its step hooks read the global step
through `tf.cond` (`Switch`/`Merge` on the ps), which tensorweave does not implement.

argv: cluster JSON, task index, data .npz (x_train, y_train, x_test, y_test), last step.
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_eager_execution()
cluster = tf.train.ClusterSpec(json.loads(sys.argv[1]))
task, data, last_step = int(sys.argv[2]), np.load(sys.argv[3]), int(sys.argv[4])
server = tf.distribute.Server(cluster, job_name="worker", task_index=task)
with tf.device(tf.train.replica_device_setter(
        worker_device=f"/job:worker/task:{task}", cluster=cluster)):
    images = tf.placeholder(tf.float32, [None, 64])
    labels = tf.placeholder(tf.int64, [None])
    hidden, width = images, 64
    for i, units in enumerate((256, 256, 10)):  # tf.layers.dense needs Keras 2
        kernel = tf.get_variable(f"dense_{i}/kernel", [width, units])  # Glorot uniform
        bias = tf.get_variable(f"dense_{i}/bias", [units], initializer=tf.zeros_initializer())
        hidden, width = tf.matmul(hidden, kernel) + bias, units
        if units != 10:
            hidden = tf.nn.relu(hidden)
    logits = hidden
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    step = tf.train.get_or_create_global_step()
    train = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=step)
    accuracy = tf.reduce_mean(tf.cast(tf.nn.in_top_k(logits, labels, 1), tf.float32))
rng = np.random.RandomState(task)
config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task}"])
uninitialized = tf.report_uninitialized_variables()
init = tf.global_variables_initializer()
local, global_step = 0, 0
with tf.Session(server.target, config=config) as sess:
    if task == 0:
        sess.run(init)
    while len(sess.run(uninitialized)):
        time.sleep(0.2)
    while global_step < last_step:
        idx = rng.randint(0, len(data["x_train"]), 128)
        _, global_step = sess.run([train, step], {images: data["x_train"][idx],
                                                  labels: data["y_train"][idx]})
        local += 1
    acc = sess.run(accuracy, {images: data["x_test"], labels: data["y_test"]})
print(json.dumps({"task": task, "local_steps": local, "test_accuracy": float(acc)}), flush=True)
