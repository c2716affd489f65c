"""Distributed digits training with model replicas, written as TensorFlow's
`tools/dist_test/python/mnist_replica.py` is: `tf.app.flags`, `tf.train.Server`,
`replica_device_setter`, `tf.train.Supervisor`, asynchronous or synchronous
(`--sync_replicas`, `tf.train.SyncReplicasOptimizer`) training, `tf.app.run`.

A softmax model with one hidden layer (64 -> `--hidden_units` ReLU -> 10) keeps its
weights and biases on the ps task; each worker computes on its own task and feeds its own
shuffle of scikit-learn's 8x8 digits (no downloads) with `feed_dict`. The chief
(`--task_index=0`) initializes the variables through its Supervisor; the other workers wait
until the model is ready. Every worker trains until the global step reaches
`--train_steps`, then prints the validation cross entropy and accuracy.

Differences from `mnist_replica.py`: the digits replace MNIST (`--data_dir` and
`--download_only` are gone); `--num_gpus` defaults to 0; in sync mode the global step is
read by its own `sess.run` after each training step, so that all workers see the same value
at the same update and stop together (read in the training step itself, two workers can see
different values, and the one that goes on waits for a partner gradient that never comes).
As in `mnist_replica.py`, the program ends without `sv.stop()`: in sync mode the chief's
queue runner may still wait for gradients of workers that already finished, and its
threads are daemons that end with the process.

Run a local cluster of 1 ps and 2 workers:

    tensorweave launch --ps 1 --workers 2 --seed-flags -- python examples/digits_replica.py
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import digits_data  # noqa: E402

import tensorweave as tf  # noqa: E402

flags = tf.app.flags
flags.DEFINE_integer("task_index", None, "Worker task index, should be >= 0. task_index=0 "
                     "is the master worker task that performs the variable initialization")
flags.DEFINE_integer("num_gpus", 0, "GPUs per machine (0: the CPU)")
flags.DEFINE_integer("replicas_to_aggregate", None, "Replicas to aggregate before an update "
                     "(sync_replicas mode only; default: num_workers)")
flags.DEFINE_integer("hidden_units", 100, "Number of units in the hidden layer of the NN")
flags.DEFINE_integer("train_steps", 200, "Number of (global) training steps to perform")
flags.DEFINE_integer("batch_size", 100, "Training batch size")
flags.DEFINE_float("learning_rate", 0.01, "Learning rate")
flags.DEFINE_boolean("sync_replicas", False, "Use the sync_replicas (synchronized replicas) "
                     "mode: the workers' gradients are aggregated before they are applied")
flags.DEFINE_boolean("existing_servers", False, "Use the worker hosts' existing servers "
                     "through their gRPC URLs instead of an in-process server")
flags.DEFINE_string("ps_hosts", "localhost:2222", "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("worker_hosts", "localhost:2223,localhost:2224",
                    "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("job_name", None, "job name: worker or ps")

FLAGS = flags.FLAGS

IMAGE_PIXELS = 8


def one_hot(labels: np.ndarray) -> np.ndarray:
    """float32 `[n, 10]` one-hot rows of int labels."""
    return np.eye(10, dtype=np.float32)[labels]


def main(unused_argv):
    data = digits_data.load_digits_split()
    if FLAGS.job_name is None or FLAGS.job_name == "":
        raise ValueError("Must specify an explicit `job_name`")
    if FLAGS.task_index is None:
        raise ValueError("Must specify an explicit `task_index`")
    print(f"job name = {FLAGS.job_name}")
    print(f"task index = {FLAGS.task_index}")

    ps_spec = FLAGS.ps_hosts.split(",")
    worker_spec = FLAGS.worker_hosts.split(",")
    num_workers = len(worker_spec)
    cluster = tf.train.ClusterSpec({"ps": ps_spec, "worker": worker_spec})
    if not FLAGS.existing_servers:
        server = tf.train.Server(cluster, job_name=FLAGS.job_name,
                                 task_index=FLAGS.task_index)
        if FLAGS.job_name == "ps":
            server.join()
            return

    is_chief = FLAGS.task_index == 0
    if FLAGS.num_gpus > 0:
        gpu = FLAGS.task_index % FLAGS.num_gpus
        worker_device = f"/job:worker/task:{FLAGS.task_index}/gpu:{gpu}"
    else:
        worker_device = f"/job:worker/task:{FLAGS.task_index}/cpu:0"
    with tf.device(tf.train.replica_device_setter(
            worker_device=worker_device, ps_device="/job:ps/cpu:0", cluster=cluster)):
        global_step = tf.Variable(0, name="global_step", trainable=False)
        hid_w = tf.Variable(tf.truncated_normal(
            [IMAGE_PIXELS * IMAGE_PIXELS, FLAGS.hidden_units],
            stddev=1.0 / IMAGE_PIXELS), name="hid_w")
        hid_b = tf.Variable(tf.zeros([FLAGS.hidden_units]), name="hid_b")
        sm_w = tf.Variable(tf.truncated_normal(
            [FLAGS.hidden_units, 10], stddev=1.0 / math.sqrt(FLAGS.hidden_units)), name="sm_w")
        sm_b = tf.Variable(tf.zeros([10]), name="sm_b")

        x = tf.placeholder(tf.float32, [None, IMAGE_PIXELS * IMAGE_PIXELS])
        y_ = tf.placeholder(tf.float32, [None, 10])
        hid = tf.nn.relu(tf.nn.xw_plus_b(x, hid_w, hid_b))
        y = tf.nn.softmax(tf.nn.xw_plus_b(hid, sm_w, sm_b))
        cross_entropy = -tf.reduce_sum(y_ * tf.log(tf.clip_by_value(y, 1e-10, 1.0)))
        correct = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))

        opt = tf.train.AdamOptimizer(FLAGS.learning_rate)
        if FLAGS.sync_replicas:
            replicas_to_aggregate = FLAGS.replicas_to_aggregate or num_workers
            opt = tf.train.SyncReplicasOptimizer(
                opt, replicas_to_aggregate=replicas_to_aggregate,
                total_num_replicas=num_workers, name="digits_sync_replicas")
        train_step = opt.minimize(cross_entropy, global_step=global_step)

        if FLAGS.sync_replicas:
            local_init_op = opt.chief_init_op if is_chief else opt.local_step_init_op
            ready_for_local_init_op = opt.ready_for_local_init_op
            chief_queue_runner = opt.get_chief_queue_runner()
            sync_init_op = opt.get_init_tokens_op()

        init_op = tf.global_variables_initializer()
        train_dir = tempfile.mkdtemp()
        if FLAGS.sync_replicas:
            sv = tf.train.Supervisor(
                is_chief=is_chief, logdir=train_dir, init_op=init_op,
                local_init_op=local_init_op, ready_for_local_init_op=ready_for_local_init_op,
                recovery_wait_secs=1, global_step=global_step)
        else:
            sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op,
                                     recovery_wait_secs=1, global_step=global_step)

        sess_config = tf.ConfigProto(
            allow_soft_placement=True, log_device_placement=False,
            device_filters=["/job:ps", f"/job:worker/task:{FLAGS.task_index}"])
        if is_chief:
            print(f"Worker {FLAGS.task_index}: Initializing session...")
        else:
            print(f"Worker {FLAGS.task_index}: Waiting for session to be initialized...")
        if FLAGS.existing_servers:
            target = "grpc://" + worker_spec[FLAGS.task_index]
            print(f"Using existing server at: {target}")
        else:
            target = server.target
        sess = sv.prepare_or_wait_for_session(target, config=sess_config)
        print(f"Worker {FLAGS.task_index}: Session initialization complete.")

        if FLAGS.sync_replicas and is_chief:
            sess.run(sync_init_op)
            sv.start_queue_runners(sess, [chief_queue_runner])

        time_begin = time.time()
        print(f"Training begins @ {time_begin:f}")
        batches = digits_data.minibatches(data.x_train, one_hot(data.y_train),
                                          FLAGS.batch_size, seed=FLAGS.task_index)
        local_step = 0
        while True:
            batch_xs, batch_ys = next(batches)
            train_feed = {x: batch_xs, y_: batch_ys}
            if FLAGS.sync_replicas:
                sess.run(train_step, feed_dict=train_feed)
                step = sess.run(global_step)
            else:
                _, step = sess.run([train_step, global_step], feed_dict=train_feed)
            local_step += 1
            print(f"{time.time():f}: Worker {FLAGS.task_index}: training step {local_step} "
                  f"done (global step: {step})")
            if step >= FLAGS.train_steps:
                break

        time_end = time.time()
        print(f"Training ends @ {time_end:f}")
        print("Training elapsed time: %f s" % (time_end - time_begin))
        val_feed = {x: data.x_test, y_: one_hot(data.y_test)}
        val_xent, val_acc = sess.run([cross_entropy, accuracy], feed_dict=val_feed)
        print(f"After {FLAGS.train_steps} training step(s), validation cross entropy = "
              f"{val_xent:g}, accuracy = {val_acc:g}")


if __name__ == "__main__":
    tf.app.run()
