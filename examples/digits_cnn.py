"""A small convolutional net on scikit-learn's digits as 8x8x1 images, trained with SGD.

conv 3x3x16 (ReLU, SAME) -> max pool 2x2 -> flatten -> dense 64 (ReLU) -> dense 10, sparse
softmax cross-entropy, `GradientDescentOptimizer`. The last line printed is
`test accuracy: 0.9xx`.

Run: `python examples/digits_cnn.py [--steps N] [--batch-size B] [--learning-rate LR]
[--blas-threads T]` (BLAS runs single-threaded unless `T` says otherwise; 0: its default).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import digits_data  # noqa: E402
import digits_mlp  # noqa: E402

import tensorweave as tf  # noqa: E402

IMAGE_SHAPE = (digits_data.IMAGE_SIZE, digits_data.IMAGE_SIZE, 1)


def build_model(images: Any, filters: int = 16, hidden_units: int = 64) -> Any:
    """The CNN's logits.

    Args:
      images: float32 `[batch, 8, 8, 1]`.
      filters: output channels of the convolution.
      hidden_units: width of the hidden dense layer.

    Returns:
      float32 `[batch, 10]` logits; variables `conv2d/{kernel,bias}`, `dense/...`,
      `dense_1/...`.
    """
    net = tf.layers.conv2d(images, filters, 3, padding="same", activation=tf.nn.relu)
    net = tf.layers.max_pooling2d(net, 2, 2)
    net = tf.layers.flatten(net)
    net = tf.layers.dense(net, hidden_units, activation=tf.nn.relu)
    return tf.layers.dense(net, digits_data.NUM_CLASSES)


def main(argv: Sequence[str] | None = None) -> float:
    """Trains the CNN and prints `test accuracy: ...` last; returns the accuracy."""
    parser = argparse.ArgumentParser(description="Digits CNN (SGD).")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--blas-threads", type=int, default=1, help="0: the BLAS default")
    args = parser.parse_args(argv)
    data = digits_data.load_digits_split(args.seed)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(args.seed)
        model = digits_mlp.build_training(args.learning_rate, build_model, IMAGE_SHAPE)
        init = tf.global_variables_initializer()
    with digits_data.blas_threads(args.blas_threads), tf.Session(graph=graph) as sess:
        sess.run(init)
        accuracy = digits_mlp.train(
            sess, model, data, args.steps, args.batch_size, args.seed, reshape=IMAGE_SHAPE
        )
    print(f"test accuracy: {accuracy:.3f}")
    return accuracy


if __name__ == "__main__":
    main()
