"""Latency of `Session.run` in process; prints JSON.

Workloads: (a) reading a float32 scalar variable, (b) a chain of 10 element-wise ops on a
float32 [16] vector fed from a placeholder-free constant (the executor folds this constant
subgraph, as Grappler does, so it measures a run that computes nothing), (c) the same chain
on a float32 [16] variable, which runs all 10 ops. Median and p99 in microseconds.

Run: `python benchmarks/local_session.py [--runs N]`.
"""

import argparse
import json
import time

import numpy as np

import tensorweave as tf


def _timings(fn, runs: int, warmup: int = 500) -> dict:
    for _ in range(warmup):
        fn()
    samples = np.empty(runs)
    for i in range(runs):
        t0 = time.perf_counter()
        fn()
        samples[i] = time.perf_counter() - t0
    us = samples * 1e6
    return {"median_us": round(float(np.median(us)), 2),
            "p99_us": round(float(np.percentile(us, 99)), 2), "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20000)
    args = parser.parse_args()
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0, name="scalar")
        x = tf.constant(np.linspace(0.1, 1.0, 16, dtype=np.float32))
        w = tf.Variable(np.linspace(0.1, 1.0, 16, dtype=np.float32), name="vector")
        y, z = x, w
        for i in range(10):
            y = (y * 1.01) if i % 2 else (y + 0.5)
            z = (z * 1.01) if i % 2 else (z + 0.5)
    sess = tf.Session(graph=g)
    sess.run([v.initializer, w.initializer])
    result = {
        "benchmark": "local_session",
        "scalar_variable_read": _timings(lambda: sess.run(v), args.runs),
        "elementwise_chain_10_ops": _timings(lambda: sess.run(y), args.runs),
        "elementwise_chain_10_ops_on_variable": _timings(lambda: sess.run(z), args.runs),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
