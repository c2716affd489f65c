"""`benchmarks/control_flow.py`'s NumPy floor does the work of the benchmarked graph: its
hand-written LSTM training step has the loss and gradients of `tf.nn.dynamic_rnn` with
`BasicLSTMCell` + dense + softmax cross-entropy, so its rate bounds what the runtime can
reach on the same step (and `dynamic_rnn`'s gradients match a NumPy reference)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np

import tensorweave as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "benchmarks"))

import control_flow as cf  # noqa: E402


def test_numpy_floor_step_has_dynamic_rnn_loss_and_gradients():
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((cf.BATCH, cf.STEPS, cf.FEATURES)).astype(np.float32)
    ys = rng.integers(0, cf.CLASSES, cf.BATCH)
    step = cf._NumpyLstmStep(np.random.default_rng(2))
    kernel0, bias0, w0, b0 = (p.copy() for p in step.params)
    floor_loss = step(xs, ys)
    floor_grads = [m / 0.1 for m in step.m]  # NOTE: Adam's first moment after one step

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [cf.BATCH, cf.STEPS, cf.FEATURES])
        y = tf.placeholder(tf.int64, [cf.BATCH])
        cell = tf.nn.rnn_cell.BasicLSTMCell(cf.UNITS)
        outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        w, b = tf.Variable(w0), tf.Variable(b0)
        logits = tf.matmul(outputs[:, -1], w) + b
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        kernel, bias = cell.variables
        grads = tf.gradients(loss, [kernel, bias, w, b])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run([kernel.assign(kernel0), bias.assign(bias0)])
            graph_loss, graph_grads = sess.run([loss, grads], {x: xs, y: ys})

    np.testing.assert_allclose(floor_loss, graph_loss, rtol=1e-5)
    for got, want in zip(floor_grads, graph_grads):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
