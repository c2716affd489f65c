"""An LSTM classifier on digits read row by row (the classic MNIST-rows RNN, at digits
scale): each 8x8 image of scikit-learn's digits is a sequence of 8 rows of 8 pixels.

`tf.nn.dynamic_rnn` runs a `BasicLSTMCell` (64 units) over the rows in a `while_loop`;
the last output goes through a dense layer to 10 logits; Adam (learning rate 0.01, batch
64) minimises the softmax cross-entropy, the gradients flowing back through the loop. The
last line printed is `test accuracy: 0.9xx`.

Single process:

    python examples/lstm_sequence.py [--steps 400] [--units 64] [--blas-threads 1]

Between-graph replication on a cluster (variables on the ps tasks through
`tf.train.replica_device_setter`, each worker training with its own client in a
`MonitoredTrainingSession` until the global step reaches `--steps`; the ps tasks serve):

    tensorweave launch --ps 1 --workers 2 -- python examples/lstm_sequence.py --steps 300

The cluster comes from `TF_CONFIG` (what the launcher gives each task).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import digits_data  # noqa: E402

import tensorweave as tf  # noqa: E402

ROWS = COLS = 8


def build(units: int, learning_rate: float) -> dict[str, Any]:
    """Placeholders, the LSTM's logits, loss, Adam step and accuracy.

    Args:
      units: the LSTM's cell size.
      learning_rate: Adam's learning rate.

    Returns:
      A dict of tensors: `images` (float32 `[batch, 8, 8]`), `labels` (int64 `[batch]`),
      `loss`, `train_op`, `accuracy`, `global_step`.
    """
    images = tf.placeholder(tf.float32, [None, ROWS, COLS], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    cell = tf.nn.rnn_cell.BasicLSTMCell(units)
    outputs, _ = tf.nn.dynamic_rnn(cell, images, dtype=tf.float32)
    logits = tf.layers.dense(outputs[:, -1], digits_data.NUM_CLASSES)
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(learning_rate).minimize(loss, global_step=global_step)
    correct = tf.equal(tf.argmax(logits, 1), labels)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    return {"images": images, "labels": labels, "loss": loss, "train_op": train_op,
            "accuracy": accuracy, "global_step": global_step}


def _as_sequences(x: Any) -> Any:
    return x.reshape(-1, ROWS, COLS)


def train_local(args: argparse.Namespace) -> float:
    """Trains in this process; returns the test accuracy."""
    data = digits_data.load_digits_split(seed=0)
    with tf.Graph().as_default():
        tf.set_random_seed(args.seed)
        m = build(args.units, args.learning_rate)
        batches = digits_data.minibatches(data.x_train, data.y_train, args.batch_size,
                                          seed=args.seed)
        with digits_data.blas_threads(args.blas_threads), tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            start = time.perf_counter()
            for step in range(1, args.steps + 1):
                x, y = next(batches)
                loss, _ = sess.run([m["loss"], m["train_op"]],
                                   {m["images"]: _as_sequences(x), m["labels"]: y})
                if args.log_every and step % args.log_every == 0:
                    print(f"step {step}: loss {loss:.4f}")
            rate = args.steps / (time.perf_counter() - start)
            accuracy = float(sess.run(m["accuracy"], {m["images"]: _as_sequences(data.x_test),
                                                      m["labels"]: data.y_test}))
    print(json.dumps({"steps_per_sec": round(rate, 1)}))
    print(f"test accuracy: {accuracy:.3f}")
    return accuracy


def train_cluster(args: argparse.Namespace) -> float | None:
    """One task of a between-graph cluster (from `TF_CONFIG`); returns a worker's test
    accuracy (None on a ps, which serves until it is stopped)."""
    config = json.loads(os.environ["TF_CONFIG"])
    cluster = tf.train.ClusterSpec(config["cluster"])
    job, index = config["task"]["type"], int(config["task"]["index"])
    server = tf.train.Server(cluster, job_name=job, task_index=index)
    if job == "ps":
        print(f"ps {index}: serving at {server.target}", flush=True)
        server.join()
        return None
    data = digits_data.load_digits_split(seed=0)
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(
                worker_device=f"/job:worker/task:{index}", cluster=cluster)):
            m = build(args.units, args.learning_rate)
        batches = digits_data.minibatches(data.x_train, data.y_train, args.batch_size,
                                          seed=args.seed + index)
        hooks = [tf.train.StopAtStepHook(last_step=args.steps)]
        config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"])
        with digits_data.blas_threads(args.blas_threads), tf.train.MonitoredTrainingSession(
                master=server.target, is_chief=index == 0, hooks=hooks, config=config) as sess:
            while not sess.should_stop():
                x, y = next(batches)
                _, step = sess.run([m["train_op"], m["global_step"]],
                                   {m["images"]: _as_sequences(x), m["labels"]: y})
                if args.log_every and step % args.log_every == 0:
                    print(f"worker {index}: global_step {step}", flush=True)
        with tf.Session(server.target, config=config) as sess:
            accuracy = float(sess.run(m["accuracy"], {m["images"]: _as_sequences(data.x_test),
                                                      m["labels"]: data.y_test}))
    print(f"worker {index}: test accuracy {accuracy:.3f}", flush=True)
    return accuracy


def main(argv: Sequence[str] | None = None) -> float | None:
    """Parses flags; trains in this process, or as a cluster task when `TF_CONFIG` is set."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--units", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-every", type=int, default=0)
    parser.add_argument("--blas-threads", type=int, default=1, help="0: the BLAS default")
    args = parser.parse_args(argv)
    if os.environ.get("TF_CONFIG"):
        return train_cluster(args)
    return train_local(args)


if __name__ == "__main__":
    main()
