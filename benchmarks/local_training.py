"""Training throughput of the digits MLP in one process; prints JSON.

The model of `examples/digits_mlp.py` (64-256-256-10, ReLU, sparse softmax cross-entropy,
`GradientDescentOptimizer(0.1)`, batch 128) runs `--warmup` steps, then `--steps` timed
steps (`sess.run(train_op, feed_dict)` on minibatches sliced beforehand); the test accuracy
after all steps is reported too.

BLAS threads: OpenBLAS's threads make these small matmuls much slower on a busy 2-core
machine, so by default (`--blas-threads auto`) both 1 thread and the library default are
timed during the warm-up and the faster is kept; `--blas-threads N` forces N and
`--blas-threads default` leaves the library alone. The JSON says what was used
(`blas.threads`, `blas.capped`).

Run: `python benchmarks/local_training.py [--steps 1000] [--warmup 200]`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import time
from typing import Any

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import digits_data  # noqa: E402
import digits_mlp  # noqa: E402

import tensorweave as tf  # noqa: E402


def _blas_limit(threads: int | None) -> Any:
    return contextlib.nullcontext() if threads is None else threadpool_limits(threads, "blas")


def _run_steps(sess: Any, model: Any, batches: list[Any], start: int, count: int) -> float:
    """Runs `count` steps from batch `start` on; returns the elapsed seconds."""
    n = len(batches)
    fetches = [model.train_op]
    t0 = time.perf_counter()
    for i in range(start, start + count):
        x, y = batches[i % n]
        sess.run(fetches, {model.images: x, model.labels: y})
    return time.perf_counter() - t0


def _choose_threads(sess: Any, model: Any, batches: list[Any], warmup: int, mode: str):
    """Runs the warm-up; returns `(threads or None, {candidate: steps/s during warm-up})`."""
    if mode != "auto":
        threads = None if mode == "default" else int(mode)
        with _blas_limit(threads):
            _run_steps(sess, model, batches, 0, warmup)
        return threads, {}
    half = max(warmup // 2, 1)
    trial = {}
    for i, threads in enumerate((1, None)):
        with _blas_limit(threads):
            _run_steps(sess, model, batches, i * half, max(half // 4, 1))  # settle
            elapsed = _run_steps(sess, model, batches, i * half, half)
        trial["1" if threads == 1 else "default"] = round(half / elapsed, 1)
    best = 1 if trial["1"] >= trial["default"] else None
    return best, trial


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Runs the benchmark, prints the JSON result and returns it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--blas-threads", default="auto", help="auto, default or an integer")
    args = parser.parse_args(argv)
    data = digits_data.load_digits_split(0)
    stream = digits_data.minibatches(data.x_train, data.y_train, args.batch_size, seed=0)
    batches = [next(stream) for _ in range(len(data.x_train) // args.batch_size * 4)]
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        model = digits_mlp.build_training(0.1)
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        threads, trial = _choose_threads(sess, model, batches, args.warmup, args.blas_threads)
        with _blas_limit(threads):
            elapsed = _run_steps(sess, model, batches, args.warmup, args.steps)
            feeds = {model.images: data.x_test, model.labels: data.y_test}
            accuracy = float(sess.run(model.accuracy, feeds))
        total_steps = int(sess.run(model.global_step))
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    result = {
        "benchmark": "local_training",
        "model": "digits MLP 64-256-256-10, SGD lr 0.1",
        "batch_size": args.batch_size,
        "timed_steps": args.steps,
        "warmup_steps": args.warmup,
        "steps_per_sec": round(args.steps / elapsed, 1),
        "ms_per_step": round(elapsed / args.steps * 1e3, 3),
        "total_steps_trained": total_steps,
        "test_accuracy": round(accuracy, 4),
        "blas": {
            "library": blas[0].get("internal_api") if blas else None,
            "default_threads": blas[0].get("num_threads") if blas else None,
            "threads": threads if threads is not None else "default",
            "capped": threads is not None,
            "warmup_steps_per_sec": trial,
        },
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
