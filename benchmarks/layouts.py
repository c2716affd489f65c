"""Throughput of the distributed layouts users write (issue 15), as JSON.

Every layout trains the digits MLP (64-256-256-10, ReLU, batch 128, SGD 0.1) with
between-graph replication on a local cluster of 1 ps + W worker processes, each started by
this script as its own program (its own `tf.train.Server`), with the user's environment:
the BLAS thread variables (`OPENBLAS_NUM_THREADS`, ...) are removed unless `--env-blas1`
sets them to 1 (the hand-set workaround the runtime should make unnecessary).

* (a) `plain`: each worker opens `tf.Session(server.target, config=ConfigProto(
  device_filters=["/job:ps", "/job:worker/task:I"], operation_timeout_in_ms=120000))`;
  the chief runs `global_variables_initializer`, the others wait until
  `report_uninitialized_variables` is empty; then `sess.run(train_op, feed_dict)` in a loop.
* (b) `monitored`: `tf.train.MonitoredTrainingSession(master=server.target, is_chief=...)`
  around the same loop (what `examples/trainer.py` does).
* (c) `supervisor`: `tf.train.Supervisor(is_chief=..., logdir=<temp dir>)` and
  `sv.managed_session(server.target)` around the same loop (`mnist_replica.py`'s layout;
  the chief's checkpoint and summary services run on their default 600 s / 120 s timers).

A worker's rate is its steps per second after its first `--warmup` steps; `aggregate` is
the sum over workers (they run concurrently for nearly all of their steps), `scaling` the
2-worker aggregate over the 1-worker one. Also in the JSON: the final test accuracy of each
worker, the core count and the load average before the run (figures measured on a busy
machine are not final).

Run: `python benchmarks/layouts.py [--layouts plain,monitored] [--workers 1,2]
[--steps 400] [--env-blas1]`.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
LAYOUTS = ("plain", "monitored", "supervisor")


def _build(tf: Any, task_index: int, cluster: Any) -> dict[str, Any]:
    from digits_mlp import build_model

    with tf.device(tf.train.replica_device_setter(
            worker_device=f"/job:worker/task:{task_index}", cluster=cluster)):
        x = tf.placeholder(tf.float32, [None, 64], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        logits = build_model(x)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        global_step = tf.train.get_or_create_global_step()
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
        correct = tf.cast(tf.nn.in_top_k(logits, y, 1), tf.float32)
        return {"x": x, "y": y, "train_op": train_op, "accuracy": tf.reduce_mean(correct)}


def _loop(sess: Any, model: dict[str, Any], steps: int, warmup: int, seed: int) -> dict:
    import digits_data

    data = digits_data.load_digits_split()
    batches = digits_data.minibatches(data.x_train, data.y_train, 128, seed)
    start = time.perf_counter()
    for step in range(steps):
        if step == warmup:
            start = time.perf_counter()
        bx, by = next(batches)
        sess.run(model["train_op"], {model["x"]: bx, model["y"]: by})
    rate = (steps - warmup) / (time.perf_counter() - start)
    acc = sess.run(model["accuracy"], {model["x"]: data.x_test, model["y"]: data.y_test})
    return {"steps_per_sec": rate, "test_accuracy": float(acc)}


def run_worker(cluster: dict, index: int, layout: str, steps: int, warmup: int) -> dict:
    """One worker task of `layout`; returns its record."""
    import tensorweave as tf

    server = tf.train.Server(cluster, job_name="worker", task_index=index)
    model = _build(tf, index, cluster)
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"],
                            operation_timeout_in_ms=120000)
    if layout == "plain":
        with tf.Session(server.target, config=config) as sess:
            if index == 0:
                sess.run(tf.global_variables_initializer())
            else:
                while len(sess.run(tf.report_uninitialized_variables())):
                    time.sleep(0.2)
            record = _loop(sess, model, steps, warmup, index)
    elif layout == "supervisor":
        import tempfile

        sv = tf.train.Supervisor(is_chief=index == 0, logdir=tempfile.mkdtemp(),
                                 recovery_wait_secs=0.2)
        with sv.managed_session(server.target, config=config) as sess:
            record = _loop(sess, model, steps, warmup, index)
    else:
        with tf.train.MonitoredTrainingSession(
                master=server.target, is_chief=index == 0, config=config,
                save_checkpoint_secs=None, save_summaries_steps=None,
                save_summaries_secs=None, log_step_count_steps=None) as sess:
            record = _loop(sess, model, steps, warmup, index)
    server.stop()
    return {"task_index": index, **record}


def _free_ports(n: int) -> list[int]:
    from tensorweave.testing.cluster import pick_unused_port

    ports: set[int] = set()
    while len(ports) < n:
        ports.add(pick_unused_port())
    return sorted(ports)


def run_layout(layout: str, workers: int, steps: int, warmup: int, env_blas1: bool) -> dict:
    """Starts 1 ps + `workers` worker processes; returns the layout's figures."""
    ports = _free_ports(1 + workers)
    cluster = {"ps": [f"127.0.0.1:{ports[0]}"],
               "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}
    env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
    if env_blas1:
        env.update({k: "1" for k in BLAS_VARS})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))

    def spawn(job: str, index: int) -> subprocess.Popen:
        argv = [sys.executable, __file__, "--role", job, "--task", str(index), "--cluster",
                json.dumps(cluster), "--layouts", layout, "--steps", str(steps),
                "--warmup", str(warmup)]
        return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True,
                                start_new_session=True)

    load = os.getloadavg()[0]
    ps = spawn("ps", 0)
    procs = [spawn("worker", i) for i in range(workers)]
    try:
        records = []
        for proc in procs:
            out, _ = proc.communicate(timeout=900)
            lines = [ln for ln in out.splitlines() if ln.startswith("{")]
            if proc.returncode or not lines:
                raise RuntimeError(f"{layout} worker failed (rc {proc.returncode}):\n{out}")
            records.append(json.loads(lines[-1]))
    finally:
        for proc in [ps, *procs]:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    rates = [r["steps_per_sec"] for r in records]
    return {"layout": layout, "workers": workers, "aggregate_steps_per_sec": sum(rates),
            "steps_per_sec_by_worker": rates,
            "test_accuracy_by_worker": [r["test_accuracy"] for r in records],
            "load_avg_1m_before": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--steps", type=int, default=400, help="steps per worker")
    parser.add_argument("--warmup", type=int, default=20, help="steps left out of the rate")
    parser.add_argument("--env-blas1", action="store_true", help="set the BLAS vars to 1")
    parser.add_argument("--role", choices=("ps", "worker"), help=argparse.SUPPRESS)
    parser.add_argument("--task", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--cluster", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "ps":
        import tensorweave as tf

        tf.train.Server(json.loads(args.cluster), job_name="ps", task_index=args.task).join()
        return
    if args.role == "worker":
        record = run_worker(json.loads(args.cluster), args.task, args.layouts, args.steps,
                            args.warmup)
        print(json.dumps(record), flush=True)
        return
    results = []
    for layout in args.layouts.split(","):
        by_workers = {}
        for w in (int(n) for n in args.workers.split(",")):
            by_workers[w] = run_layout(layout, w, args.steps, args.warmup, args.env_blas1)
            results.append(by_workers[w])
        if 1 in by_workers and 2 in by_workers:
            by_workers[2]["scaling"] = (by_workers[2]["aggregate_steps_per_sec"]
                                        / by_workers[1]["aggregate_steps_per_sec"])
    print(json.dumps({"cores": len(os.sched_getaffinity(0)), "env_blas1": args.env_blas1,
                      "steps_per_worker": args.steps, "results": results}, indent=1))


if __name__ == "__main__":
    main()
