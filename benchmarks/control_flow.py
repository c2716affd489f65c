"""Control-flow benchmarks; prints JSON.

* `while_loop_us_per_iteration`: a 1,000-iteration scalar `tf.while_loop` (`i < 1000`,
  `(i + 1, s + 2.0)`), one `sess.run` per loop, median over `--loops` runs divided by
  1,000.
* `dynamic_rnn_lstm_steps_per_sec`: training steps/s of the classic MNIST-rows RNN shape:
  batch 32, 28 steps of 28 features, an LSTM of 128 units (`tf.nn.dynamic_rnn` +
  `BasicLSTMCell`), a dense layer to 10 logits, softmax cross-entropy, Adam; random data.
* `manual_lstm_steps_per_sec`: the same step with the LSTM written from core ops
  (`while_loop`, `TensorArray`, `matmul`, `split`, `sigmoid`): TensorFlow 2.21's Keras 3
  no longer ships `BasicLSTMCell`, so this is the form both runtimes can run. With the
  `tf_keras` package installed beside TensorFlow, `--with-tensorflow` also measures TF's
  `dynamic_rnn` (it sets `TF_USE_LEGACY_KERAS=1`, which brings the TF1 cells back).

* `numpy_floor_lstm_steps_per_sec`: the same training step written by hand in NumPy (the
  LSTM's forward and backward over the 28 steps, the dense layer, softmax cross-entropy,
  Adam; the same 84 matmuls; about 25 NumPy calls per time step where the graph has ~90
  kernels): no graph, no executor. It bounds what any runtime whose kernels are NumPy
  calls can reach on this machine; `dynamic_rnn_lstm_steps_per_sec` is measured against
  it and against TensorFlow.

`--backend tensorflow` runs the same code under a real TensorFlow (start this script with
that interpreter, e.g. `/path/to/tf/bin/python benchmarks/control_flow.py --backend
tensorflow`; TF 1.x control flow, `compat.v1` graph mode). `--with-tensorflow PYTHON` runs
both and prints both. BLAS keeps the library's default pool, as a user's program gets it
(both cores here, like TensorFlow's intra-op pool); `--blas-threads N` limits it to N.

Run: `python benchmarks/control_flow.py [--loops 20] [--steps 50]`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

BATCH, STEPS, FEATURES, UNITS, CLASSES = 32, 28, 28, 128, 10


def _import_backend(name: str) -> Any:
    if name == "tensorflow":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf

        tf.disable_eager_execution()
        tf.disable_control_flow_v2()
        tf.disable_resource_variables()
        return tf
    import tensorweave as tf

    return tf


def bench_while(tf: Any, loops: int) -> float:
    """µs per iteration of the 1,000-iteration scalar loop (median of `loops` runs)."""
    with tf.Graph().as_default():
        r = tf.while_loop(lambda i, s: i < 1000, lambda i, s: (i + 1, s + 2.0),
                          [tf.constant(0), tf.constant(0.0)])
        with tf.Session() as sess:
            assert sess.run(r)[1] == 2000.0
            times = []
            for _ in range(loops):
                t0 = time.perf_counter()
                sess.run(r)
                times.append(time.perf_counter() - t0)
    return statistics.median(times) / 1000 * 1e6


def _manual_lstm(tf: Any, x: Any) -> Any:
    """The last output of an LSTM over `x` [time, batch, features], from core ops."""
    kernel = tf.get_variable("kernel", [FEATURES + UNITS, 4 * UNITS],
                             initializer=tf.random_normal_initializer(stddev=0.05))
    bias = tf.get_variable("bias", [4 * UNITS], initializer=tf.zeros_initializer())
    inputs = tf.TensorArray(tf.float32, size=STEPS).unstack(x)

    def body(t, c, h):
        gates = tf.matmul(tf.concat([inputs.read(t), h], 1), kernel) + bias
        i, j, f, o = tf.split(gates, 4, axis=1)
        c = c * tf.sigmoid(f + 1.0) + tf.sigmoid(i) * tf.tanh(j)
        return t + 1, c, tf.tanh(c) * tf.sigmoid(o)

    zeros = tf.zeros([BATCH, UNITS])
    return tf.while_loop(lambda t, c, h: t < STEPS, body, [tf.constant(0), zeros, zeros])[2]


def bench_lstm(tf: Any, steps: int, manual: bool) -> float:
    """Training steps/s (after 3 warm-up steps)."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((BATCH, STEPS, FEATURES)).astype(np.float32)
    ys = rng.integers(0, CLASSES, BATCH).astype(np.int64)
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [BATCH, STEPS, FEATURES])
        y = tf.placeholder(tf.int64, [BATCH])
        if manual:
            last = _manual_lstm(tf, tf.transpose(x, [1, 0, 2]))
        else:
            outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(UNITS), x,
                                           dtype=tf.float32)
            last = outputs[:, -1]
        w = tf.get_variable("out_w", [UNITS, CLASSES])
        b = tf.get_variable("out_b", [CLASSES], initializer=tf.zeros_initializer())
        logits = tf.matmul(last, w) + b
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits))
        train = tf.train.AdamOptimizer(1e-3).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train, {x: xs, y: ys})
            t0 = time.perf_counter()
            for _ in range(steps):
                sess.run(train, {x: xs, y: ys})
            return steps / (time.perf_counter() - t0)


def _sigmoid(a: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-a))


class _NumpyLstmStep:
    """One hand-written training step of the `bench_lstm` model (BasicLSTMCell gate
    order i, j, f, o with forget bias 1.0; Adam as `tf.train.AdamOptimizer(1e-3)`)."""

    def __init__(self, rng: np.random.Generator):
        f32 = np.float32
        self.params = [(rng.standard_normal((FEATURES + UNITS, 4 * UNITS)) * 0.05).astype(f32),
                       np.zeros(4 * UNITS, f32),
                       (rng.standard_normal((UNITS, CLASSES)) * 0.1).astype(f32),
                       np.zeros(CLASSES, f32)]
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.t = 0

    def __call__(self, xs: np.ndarray, ys: np.ndarray) -> float:
        kernel, bias, w, b = self.params
        x = xs.transpose(1, 0, 2)
        h = np.zeros((BATCH, UNITS), np.float32)
        c = np.zeros_like(h)
        tape = []
        for t in range(STEPS):
            xh = np.concatenate([x[t], h], 1)
            i, j, f, o = np.split(xh @ kernel + bias, 4, 1)
            i, j, f, o = _sigmoid(i), np.tanh(j), _sigmoid(f + 1.0), _sigmoid(o)
            c_next = c * f + i * j
            tanh_c = np.tanh(c_next)
            tape.append((xh, c, i, j, f, o, tanh_c))
            c, h = c_next, tanh_c * o
        logits = h @ w + b
        e = np.exp(logits - logits.max(1, keepdims=True))
        p = e / e.sum(1, keepdims=True)
        loss = float(-np.log(p[np.arange(BATCH), ys]).mean())
        p[np.arange(BATCH), ys] -= 1.0
        dlogits = p / BATCH
        grads = [np.zeros_like(kernel), np.zeros_like(bias), h.T @ dlogits, dlogits.sum(0)]
        dh, dc = dlogits @ w.T, np.zeros_like(h)
        for xh, c_prev, i, j, f, o, tanh_c in reversed(tape):
            dc = dc + dh * o * (1.0 - tanh_c * tanh_c)
            dgates = np.concatenate([dc * j * i * (1.0 - i), dc * i * (1.0 - j * j),
                                     dc * c_prev * f * (1.0 - f),
                                     dh * tanh_c * o * (1.0 - o)], 1)
            dc = dc * f
            grads[0] += xh.T @ dgates
            grads[1] += dgates.sum(0)
            dh = (dgates @ kernel.T)[:, FEATURES:]
        self.t += 1
        lr = 1e-3 * np.sqrt(1 - 0.999 ** self.t) / (1 - 0.9 ** self.t)
        for param, grad, m, v in zip(self.params, grads, self.m, self.v):
            m += 0.1 * (grad - m)
            v += 0.001 * (grad * grad - v)
            param -= lr * m / (np.sqrt(v) + 1e-8)
        return loss


def bench_numpy_floor(steps: int) -> float:
    """Training steps/s of `_NumpyLstmStep` (after 3 warm-up steps)."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((BATCH, STEPS, FEATURES)).astype(np.float32)
    ys = rng.integers(0, CLASSES, BATCH)
    step = _NumpyLstmStep(rng)
    for _ in range(3):
        step(xs, ys)
    t0 = time.perf_counter()
    for _ in range(steps):
        step(xs, ys)
    return steps / (time.perf_counter() - t0)


def _has_basic_lstm_cell(tf: Any) -> bool:
    """Whether TensorFlow has its TF1 cells: Keras 3 dropped them; with the `tf_keras`
    package installed and `TF_USE_LEGACY_KERAS=1` (set for the `--with-tensorflow` run),
    `tf.compat.v1.nn.rnn_cell.BasicLSTMCell` is back."""
    try:
        return tf.nn.rnn_cell.BasicLSTMCell is not None
    except (AttributeError, ImportError):
        return False


def run(backend: str, loops: int, steps: int, blas_threads: int) -> dict[str, Any]:
    """All figures for one backend."""
    tf = _import_backend(backend)
    limit = None
    if blas_threads and backend == "tensorweave":
        # NOTE: TensorFlow's kernels use their own threads (Eigen), not NumPy's BLAS.
        from threadpoolctl import threadpool_limits

        limit = threadpool_limits(blas_threads, "blas")
    try:
        out: dict[str, Any] = {
            "backend": backend,
            "while_loop_us_per_iteration": round(bench_while(tf, loops), 2),
            "manual_lstm_steps_per_sec": round(bench_lstm(tf, steps, manual=True), 2),
        }
        if backend == "tensorweave" or _has_basic_lstm_cell(tf):
            out["dynamic_rnn_lstm_steps_per_sec"] = round(bench_lstm(tf, steps, False), 2)
        if backend == "tensorweave":
            out["numpy_floor_lstm_steps_per_sec"] = round(bench_numpy_floor(steps), 2)
    finally:
        if limit is not None:
            limit.restore_original_limits()
    return out


def main() -> None:
    """Parses flags and prints one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["tensorweave", "tensorflow"],
                        default="tensorweave")
    parser.add_argument("--with-tensorflow", metavar="PYTHON", default="",
                        help="also run under this Python (with tensorflow installed)")
    parser.add_argument("--loops", type=int, default=20)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--blas-threads", type=int, default=0,
                        help="BLAS threads of tensorweave's kernels (0: library default)")
    args = parser.parse_args()
    result = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "load_average": [round(v, 2) for v in os.getloadavg()]},
              **run(args.backend, args.loops, args.steps, args.blas_threads)}
    if args.with_tensorflow:
        proc = subprocess.run(
            [args.with_tensorflow, os.path.abspath(__file__), "--backend", "tensorflow",
             "--loops", str(args.loops), "--steps", str(args.steps),
             "--blas-threads", str(args.blas_threads)],
            capture_output=True, text=True, check=True,
            env={**os.environ, "TF_USE_LEGACY_KERAS": "1"})
        result["tensorflow"] = json.loads(proc.stdout.strip().splitlines()[-1])
    print(json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
