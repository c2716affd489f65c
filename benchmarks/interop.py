"""Interop benchmarks (issue 14); prints JSON.

* `tf_client_scalar_read_us`: a TensorFlow client (`tf.compat.v1.Session("grpc://...")`,
  in TensorFlow's own interpreter) reading a float32 scalar variable on `/job:ps/task:0`,
  against a 1 ps + 1 worker cluster of `tensorweave server` processes and against the same
  cluster of TensorFlow servers. One client process holds both sessions and alternates
  blocks of `--reads` reads between them for `--rounds` rounds (A/B in the same run, so
  load from other processes hits both sides alike); the record has each side's median of
  block medians and every block's median. Skipped (saying so) without TensorFlow: give its
  interpreter with `--tf-python` or `TENSORWEAVE_TF_PYTHON`.
* `tensorweave_scalar_read_us` (with `--baseline-tree DIR`): `benchmarks/cluster.py`'s
  remote scalar read, tensorweave on both ends, run alternately from this tree and from
  DIR (e.g. a checkout without the TensorFlow fallbacks), each round in fresh processes
  and in alternating order: the fallback paths' cost when no TensorFlow peer is involved.

Run: `python benchmarks/interop.py [--reads 500] [--rounds 4] [--baseline-tree DIR]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TF_CLIENT = """
import json, os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
reads, rounds = int(sys.argv[1]), int(sys.argv[2])
sessions = {}
for side, worker in zip(("tensorweave", "tensorflow"), sys.argv[3:5]):
    g = tf.Graph()
    with g.as_default(), tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="scalar")
    sess = tf.Session("grpc://" + worker, graph=g)
    sess.run(v.initializer)
    for _ in range(max(reads // 5, 50)):
        sess.run(v)
    sessions[side] = (sess, v)
blocks = {side: [] for side in sessions}
for _ in range(rounds):
    for side, (sess, v) in sessions.items():
        samples = np.empty(reads)
        for i in range(reads):
            t0 = time.perf_counter()
            sess.run(v)
            samples[i] = time.perf_counter() - t0
        blocks[side].append(float(np.median(samples) * 1e6))
print(json.dumps(blocks))
"""

TW_READ = """
import json, sys
from benchmarks.cluster import _cluster, _start, _stop, bench_roundtrip_and_read
cluster = _cluster(1, 1)
procs = _start(cluster)
try:
    for p in procs:
        p.wait_ready()
    out = bench_roundtrip_and_read(cluster["worker"][0], cluster["ps"][0], int(sys.argv[1]))
finally:
    _stop(procs)
print(json.dumps(out["remote_scalar_read_us"]))
"""


def _servers_of(kind: str, tf_python: str | None) -> tuple[list, list[str]]:
    from tensorweave.testing.cluster import pick_unused_port
    from tensorweave.testing.processes import ServerProcess, spec_string

    cluster = {"ps": [f"localhost:{pick_unused_port()}"],
               "worker": [f"localhost:{pick_unused_port()}"]}
    if kind == "tensorweave":
        procs = [ServerProcess(spec_string(cluster), job, 0) for job in ("ps", "worker")]
    else:
        server = textwrap.dedent("""
            import json, os, sys
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
            import tensorflow.compat.v1 as tf
            s = tf.distribute.Server(tf.train.ClusterSpec(json.loads(sys.argv[1])),
                                     job_name=sys.argv[2], task_index=0)
            print(json.dumps({"target": s.target}), flush=True)
            s.join()
        """)
        procs = [_tf_server(tf_python, server, cluster, job) for job in ("ps", "worker")]
    return procs, cluster["worker"]


def _tf_server(tf_python: str, script: str, cluster: dict, job: str):
    from tensorweave.testing.processes import ServerProcess, _LineReader

    proc = ServerProcess.__new__(ServerProcess)
    proc.cluster_spec, proc.job_name, proc.task_index, proc.info = "", job, 0, {}
    proc.proc = subprocess.Popen([tf_python, "-c", script, json.dumps(cluster), job],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    proc._reader = _LineReader(proc.proc.stdout)
    return proc


def bench_tf_client(tf_python: str | None, reads: int, rounds: int) -> dict:
    """The TensorFlow client's scalar read against tensorweave and TensorFlow servers."""
    if not tf_python or not os.path.exists(tf_python):
        return {"skipped": "no TensorFlow interpreter (--tf-python / TENSORWEAVE_TF_PYTHON)"}
    procs = []
    try:
        tw, tw_workers = _servers_of("tensorweave", None)
        procs += tw
        tf, tf_workers = _servers_of("tensorflow", tf_python)
        procs += tf
        for p in procs:
            p.wait_ready(180.0)
        out = subprocess.run([tf_python, "-c", TF_CLIENT, str(reads), str(rounds),
                              tw_workers[0], tf_workers[0]],
                             capture_output=True, text=True, timeout=1800, check=True)
    finally:
        for p in procs:
            p.kill()
    blocks = json.loads(out.stdout.strip().splitlines()[-1])
    return {side: {"median_us": round(float(np.median(b)), 1),
                   "block_medians_us": [round(x, 1) for x in b]}
            for side, b in blocks.items()} | {"reads_per_block": reads, "rounds": rounds}


def bench_tensorweave_ab(baseline: str, reads: int, rounds: int) -> dict:
    """`cluster.py`'s remote scalar read from this tree and from `baseline`, alternately."""
    medians: dict[str, list[float]] = {"this_tree": [], "baseline": []}
    order = [("this_tree", ROOT), ("baseline", baseline)]
    for _ in range(rounds):
        order.reverse()  # ABBA...: neither side always runs first
        for side, tree in order:
            env = {**os.environ, "PYTHONPATH": tree}
            out = subprocess.run([sys.executable, "-c", TW_READ, str(reads)], cwd=tree,
                                 env=env, capture_output=True, text=True, timeout=900,
                                 check=True)
            medians[side].append(json.loads(out.stdout.strip().splitlines()[-1])["median_us"])
    return {side: {"median_us": round(float(np.median(m)), 1), "round_medians_us": m}
            for side, m in medians.items()} | {"baseline_tree": baseline, "rounds": rounds,
                                               "reads_per_round": reads}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=500, help="reads per block")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--tf-python", default=os.environ.get("TENSORWEAVE_TF_PYTHON"))
    parser.add_argument("--baseline-tree", default=None,
                        help="another tensorweave checkout for the tensorweave-only A/B")
    args = parser.parse_args()
    result = {"benchmark": "interop", "load_avg": os.getloadavg(),
              "tf_client_scalar_read_us": bench_tf_client(args.tf_python, args.reads,
                                                          args.rounds)}
    if args.baseline_tree:
        result["tensorweave_scalar_read_us"] = bench_tensorweave_ab(
            os.path.abspath(args.baseline_tree), args.reads * 4, args.rounds)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
