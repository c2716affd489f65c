"""Training throughput of the digits MLP in one process; prints JSON.

The model of `examples/digits_mlp.py` (64-256-256-10, ReLU, sparse softmax cross-entropy,
`GradientDescentOptimizer(0.1)`, batch 128) runs `--warmup` steps, then `--steps` timed
steps per BLAS setting (`sess.run(train_op, feed_dict)` on minibatches sliced beforehand).
The test accuracy after all steps is reported too, and (unless `--no-reference`) the
steps/s of the same step written directly in NumPy, measured right after: on a shared
machine the ratio is more telling than either number.

BLAS threads: OpenBLAS's threads can make these small matmuls much slower on a busy 2-core
machine, so by default (`--blas-threads auto`) the timed steps run both capped at 1 thread
(threadpoolctl) and with the library default, in interleaved chunks; both rates are
reported (`steps_per_sec_by_blas_threads`) and `steps_per_sec` is the faster, whose setting
`blas.threads` / `blas.capped` name. `--blas-threads N` times only N threads,
`--blas-threads default` only the library default.

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


def _candidates(mode: str) -> dict[str, int | None]:
    """BLAS thread settings to time: label -> thread cap (None: the library default)."""
    if mode == "auto":
        return {"1": 1, "default": None}
    if mode == "default":
        return {"default": None}
    return {mode: int(mode)}


def _time_candidates(
    sess: Any, model: Any, batches: list[Any], candidates: dict[str, Any], steps: int, start: int
) -> dict[str, float]:
    """Steps/s per candidate: `steps` steps each, in 4 interleaved chunks (so a change in
    the machine's load affects every candidate alike)."""
    chunks = 4
    elapsed = dict.fromkeys(candidates, 0.0)
    done = dict.fromkeys(candidates, 0)
    for c in range(chunks):
        for label, threads in candidates.items():
            count = steps // chunks + (1 if c < steps % chunks else 0)
            with _blas_limit(threads):
                elapsed[label] += _run_steps(sess, model, batches, start, count)
            start += count
            done[label] += count
    return {label: done[label] / elapsed[label] for label in candidates}


def _numpy_reference(batches: list[Any], steps: int, lr: float = 0.1) -> float:
    """Steps/s of the same SGD step written directly in NumPy (the floor on this machine).

    Same shapes and float32 math, including the unused input-gradient matmul that
    `minimize`'s default `GATE_OP` gating computes.
    """
    rng = np.random.default_rng(0)
    shapes = [(64, 256), (256,), (256, 256), (256,), (256, 10), (10,)]
    params = [rng.normal(0.0, 0.05, s).astype(np.float32) for s in shapes]

    def step(x: np.ndarray, y: np.ndarray) -> None:
        w1, b1, w2, b2, w3, b3 = params
        h1 = np.maximum(x @ w1 + b1, 0)
        h2 = np.maximum(h1 @ w2 + b2, 0)
        logits = h2 @ w3 + b3
        e = np.exp(logits - logits.max(1, keepdims=True))
        g = e / e.sum(1, keepdims=True)
        g[np.arange(len(y)), y] -= 1
        g /= len(y)
        gh2 = (g @ w3.T) * (h2 > 0)
        gh1 = (gh2 @ w2.T) * (h1 > 0)
        _ = gh1 @ w1.T
        grads = [x.T @ gh1, gh1.sum(0), h1.T @ gh2, gh2.sum(0), h2.T @ g, g.sum(0)]
        for p, d in zip(params, grads):
            p -= lr * d

    for i in range(min(steps, 100)):
        step(*batches[i % len(batches)])
    t0 = time.perf_counter()
    for i in range(steps):
        step(*batches[i % len(batches)])
    return steps / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Runs the benchmark, prints the JSON result and returns it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--blas-threads", default="auto", help="auto, default or an integer")
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the pure-NumPy reference timing"
    )
    args = parser.parse_args(argv)
    data = digits_data.load_digits_split(0)
    stream = digits_data.minibatches(data.x_train, data.y_train, args.batch_size, seed=0)
    batches = [next(stream) for _ in range(len(data.x_train) // args.batch_size * 4)]
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        model = digits_mlp.build_training(0.1)
        init = tf.global_variables_initializer()
    candidates = _candidates(args.blas_threads)
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        _time_candidates(sess, model, batches, candidates, args.warmup, 0)
        rates = _time_candidates(sess, model, batches, candidates, args.steps, args.warmup)
        best = max(rates, key=rates.get)
        feeds = {model.images: data.x_test, model.labels: data.y_test}
        accuracy = float(sess.run(model.accuracy, feeds))
        total_steps = int(sess.run(model.global_step))
    reference = None
    if not args.no_reference:
        with _blas_limit(candidates[best]):
            reference = _numpy_reference(batches, args.steps)
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    result = {
        "benchmark": "local_training",
        "model": "digits MLP 64-256-256-10, SGD lr 0.1",
        "batch_size": args.batch_size,
        "timed_steps": args.steps,
        "warmup_steps": args.warmup,
        "steps_per_sec": round(rates[best], 1),
        "ms_per_step": round(1e3 / rates[best], 3),
        "steps_per_sec_by_blas_threads": {k: round(v, 1) for k, v in rates.items()},
        "total_steps_trained": total_steps,
        "test_accuracy": round(accuracy, 4),
        "numpy_reference_steps_per_sec": None if reference is None else round(reference, 1),
        "blas": {
            "library": blas[0].get("internal_api") if blas else None,
            "default_threads": blas[0].get("num_threads") if blas else None,
            "threads": best,
            "capped": candidates[best] is not None,
        },
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
