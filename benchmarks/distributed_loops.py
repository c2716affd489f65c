"""Loops that span tasks; prints JSON.

On an in-process cluster of real gRPC servers (1 ps, 1 worker), a `tf.while_loop` of
`--iterations` iterations placed on the worker:

* `spanning_us_per_iteration`: its body `assign_add`s a variable on the ps (the loop
  spans both partitions: the predicate and the update's value cross every iteration);
* `local_us_per_iteration`: the same loop with the variable on the worker (one
  partition);

each the median over `--loops` runs of one `sess.run`, divided by the iteration count.

Run: `python benchmarks/distributed_loops.py [--iterations 200] [--loops 5]`.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import tensorweave as tf
from tensorweave.testing.cluster import create_local_cluster


def bench(target: str, var_device: str, iterations: int, loops: int) -> float:
    """µs per iteration of the loop with its variable on `var_device`."""
    with tf.Graph().as_default():
        with tf.device(var_device):
            v = tf.Variable(0.0, name="v")
        with tf.device("/job:worker/task:0"):
            r = tf.while_loop(lambda i, a: i < iterations,
                              lambda i, a: (i + 1, a + tf.assign_add(v, 1.0)),
                              [tf.constant(0), tf.constant(0.0)])
        with tf.Session(target, config=tf.ConfigProto(operation_timeout_in_ms=120_000)) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(r)
            times = []
            for _ in range(loops):
                start = time.perf_counter()
                sess.run(r)
                times.append(time.perf_counter() - start)
            assert sess.run(v) == float(iterations * (loops + 1))
    return statistics.median(times) / iterations * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--loops", type=int, default=5)
    args = parser.parse_args()
    workers, ps = create_local_cluster(1, 1)
    try:
        target = workers[0].target
        spanning = bench(target, "/job:ps/task:0", args.iterations, args.loops)
        local = bench(target, "/job:worker/task:0", args.iterations, args.loops)
    finally:
        for server in workers + ps:
            server.stop()
    print(json.dumps({
        "benchmark": "distributed_loops", "iterations": args.iterations,
        "loops": args.loops, "spanning_us_per_iteration": round(spanning, 1),
        "local_us_per_iteration": round(local, 1), "python": platform.python_version(),
    }))


if __name__ == "__main__":
    main()
