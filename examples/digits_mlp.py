"""A 64-256-256-10 MLP on scikit-learn's digits, trained with SGD.

ReLU hidden layers (`tf.layers.dense`), softmax cross-entropy, plain gradient descent
(learning rate 0.1, batch 128, 2,000 steps). The last line printed is
`test accuracy: 0.9xx`.

Run: `python examples/digits_mlp.py [--steps N] [--batch-size B] [--learning-rate LR]
[--blas-threads T]` (BLAS runs single-threaded unless `T` says otherwise; 0: its default).
`build_model` and `build_training` are reused by the tests, the benchmark and the
distributed trainer.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import digits_data  # noqa: E402

import tensorweave as tf  # noqa: E402


def build_model(
    images: Any, hidden_units: Sequence[int] = (256, 256), num_classes: int = 10
) -> Any:
    """The MLP's logits: `dense(relu)` per hidden layer, then a linear `dense` layer.

    Args:
      images: float32 `[batch, 64]`.
      hidden_units: the width of each hidden layer.
      num_classes: the number of logits.

    Returns:
      float32 `[batch, num_classes]` logits. The variables are `dense/kernel`,
      `dense/bias`, `dense_1/...` (created in the current variable scope).
    """
    net = images
    for units in hidden_units:
        net = tf.layers.dense(net, units, activation=tf.nn.relu)
    return tf.layers.dense(net, num_classes)


@dataclasses.dataclass(frozen=True)
class Training:
    """The tensors of a training graph."""

    images: Any
    labels: Any
    logits: Any
    loss: Any
    train_op: Any
    accuracy: Any
    global_step: Any


def build_training(
    learning_rate: float = 0.1,
    model_fn: Any = build_model,
    image_shape: Sequence[int] = (64,),
) -> Training:
    """Placeholders, `model_fn`'s logits, the mean cross-entropy, an SGD step and accuracy.

    Args:
      learning_rate: the SGD learning rate.
      model_fn: maps float32 `[batch, *image_shape]` images to `[batch, 10]` logits.
      image_shape: the shape of one example.

    Returns:
      A `Training`; `images` (float32) and `labels` (int64 `[batch]`) are placeholders.
    """
    images = tf.placeholder(tf.float32, [None, *image_shape], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    logits = model_fn(images)
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits), name="loss"
    )
    global_step = tf.Variable(0, trainable=False, name="global_step", dtype=tf.int64)
    optimizer = tf.train.GradientDescentOptimizer(learning_rate)
    train_op = optimizer.minimize(loss, global_step=global_step)
    correct = tf.nn.in_top_k(logits, labels, 1)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32), name="accuracy")
    return Training(images, labels, logits, loss, train_op, accuracy, global_step)


def train(
    sess: Any,
    model: Training,
    data: digits_data.DigitsSplit,
    steps: int,
    batch_size: int,
    seed: int = 0,
    reshape: Sequence[int] | None = None,
) -> float:
    """Runs `steps` SGD steps on minibatches; returns the test accuracy.

    Args:
      sess: a session whose variables are initialized.
      model: the graph from `build_training`.
      data: the data set.
      steps: the number of training steps.
      batch_size: examples per step.
      seed: seed of the minibatch order.
      reshape: the example shape the model expects, if not `[64]`.
    """
    shape = (-1, *reshape) if reshape else (-1, 64)
    batches = digits_data.minibatches(data.x_train.reshape(shape), data.y_train, batch_size, seed)
    fetches = [model.train_op]
    for _ in range(steps):
        x, y = next(batches)
        sess.run(fetches, {model.images: x, model.labels: y})
    feeds = {model.images: data.x_test.reshape(shape), model.labels: data.y_test}
    return float(sess.run(model.accuracy, feeds))


def main(argv: Sequence[str] | None = None) -> float:
    """Trains the MLP and prints `test accuracy: ...` last; returns the accuracy."""
    parser = argparse.ArgumentParser(description="Digits MLP (SGD).")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--blas-threads", type=int, default=1, help="0: the BLAS default")
    args = parser.parse_args(argv)
    data = digits_data.load_digits_split(args.seed)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(args.seed)
        model = build_training(args.learning_rate)
        init = tf.global_variables_initializer()
    with digits_data.blas_threads(args.blas_threads), tf.Session(graph=graph) as sess:
        sess.run(init)
        accuracy = train(sess, model, data, args.steps, args.batch_size, args.seed)
    print(f"test accuracy: {accuracy:.3f}")
    return accuracy


if __name__ == "__main__":
    main()
