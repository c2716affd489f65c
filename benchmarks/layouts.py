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
* (b) `monitored`: `tf.train.MonitoredTrainingSession(master=server.target, is_chief=...,
  recovery_wait_secs=0.2)` around the same loop (what `examples/trainer.py` does; with
  TensorFlow's 30 s the non-chief's first readiness poll would come after the chief ended).
* (e) `sync`: (b) with `tf.train.SyncReplicasOptimizer(replicas_to_aggregate=W,
  total_num_replicas=W)` and its session-run hook. Every global step takes a gradient
  from every worker, so a worker that waited or stopped would leave the others waiting
  for tokens (as in TensorFlow): its start line does not block (a worker trains on after
  its warm-up until every worker is ready, then measures), and a worker done with its
  measured steps trains on, unmeasured, until every worker is (its last step bounded by
  a 2 s `RunOptions.timeout_in_ms`). Its rate counts worker steps (W per global step).
* (f) `dataset`: (b) fed by a `tf.data` pipeline on the worker (`from_tensor_slices` ->
  `shuffle` -> `repeat` -> `batch(128)` -> `prefetch`, one-shot iterator) instead of
  `feed_dict` (the inputs are `placeholder_with_default`s of the iterator's next batch).
* (d) `ingraph`: in-graph replication from one client (worker 0's process): one tower of
  the MLP per worker task (`tf.device` + `replica_device_setter`, variables shared with
  `AUTO_REUSE` on the ps), each fed its own batch of 128; the W gradients are averaged on
  the ps and applied once per step. Its rate counts worker batches (W per client step), so
  it compares with the others' aggregate; its CPU figures are worker 0's process (client
  and tower 0) and the ps; the other workers only serve, until worker 0 is done.
* (c) `supervisor`: `tf.train.Supervisor(is_chief=..., logdir=<temp dir>)` and
  `sv.managed_session(server.target)` around the same loop (`mnist_replica.py`'s layout;
  the chief's checkpoint and summary services run on their default 600 s / 120 s timers).

A worker's rate is its steps per second after its first `--warmup` steps; after the
warm-up every worker waits at a start line (a file per worker in a directory this script
makes) so that the measured windows start together. `aggregate` is the sum of the workers'
rates, `scaling` the 2-worker aggregate over the 1-worker one. That sum is the cluster's
rate only while the windows coincide: a worker that starts late or ends early runs part of
its window alone, faster, and the sum overstates the cluster (up to W times the 1-worker
rate with no overlap at all). So each worker also reads the global step at both ends of its
window: `global_steps_per_sec` is the cluster's rate (every worker's steps) during a
worker's window, averaged over the workers, and `overlap` is the time all windows coincide
over the time any runs (1.0: the sum is exact).

Also in the JSON: the final test accuracy of each worker, the core count, the load average
before the run (figures measured on a busy machine are not final), and the CPU a step
costs, the figure to compare on a busy machine (wall-clock rates move with whatever else
runs, CPU time much less): `cpu_ms_per_step_by_worker` (each worker process's user +
system CPU over its measured steps), `ps_cpu_ms_per_global_step` (the ps process's CPU
over a worker's window, from `/proc/<pid>/stat`, over the global steps made meanwhile) and
`total_cpu_ms_per_global_step` (their sum: what the cluster pays per step; 2 cores fully
used give about 2000 / it steps/s). That sum leaves out the other workers' processes (and
(d)'s serving ones), so `cluster_cpu_ms_per_batch` counts every task: the CPU of the ps
and all workers over a worker's window (from `/proc/<pid>/stat`; the pids are in a file
this script writes), over the worker batches made meanwhile (global steps times W for
(d) and (e), else global steps), averaged over the workers; `cpu_bound_batches_per_sec`
is the core count times 1000 over it: the most the cluster could do with every core busy
and nothing else running.

`--backend tensorflow` runs every task under TensorFlow's `compat.v1` graph mode instead
(start this script with an interpreter that has TensorFlow and scikit-learn, e.g.
`/path/to/tf/bin/python benchmarks/layouts.py --backend tensorflow`; tensorweave is not
imported then). The model is then `_mlp` (TensorFlow 2.16+ has no `tf.layers`); the
non-chief's `MonitoredTrainingSession` polls for the chief every 30 s there (no
`recovery_wait_secs`), which the start line absorbs.

Same-run A/B: `--rounds N` runs every configuration N times, in turn within each round
(so slow spells of a busy machine fall on all of them), and `medians` gives each
configuration's median figures; `--tree DIR` makes the tasks import tensorweave from
another checkout, and `--ab DIR` adds that checkout as a second variant of every
configuration (e.g. `--ab /path/to/main` against this tree).

Cross-host (issue 15): `--netns` (= `per-job`) runs the ps task in one Linux network
namespace and the workers in another (`tensorweave.deploy.netns`: stand-in hosts joined by
a bridge, addresses `10.231.<N>.<i>` from the namespaces, TCP through the kernel's network
stack, no same-host socket between them); `--netns per-task` gives every task its own.
The namespaces are made for each run and removed after it; it needs root (and iproute2),
and without them the script exits saying why. The JSON then has `"cross_host": true` and
`"netns": <mode>` (else false and null). `ip netns exec` execs the task, so the PIDs are
the tasks' own, and a network namespace hides no process from /proc: the start line, the
CPU figures, `--rounds` and `--ab` work the same in both modes. Mind the cores: the
stand-in hosts share this machine's, but a task counts only the tasks it knows to be on its
host (by its host's names and IPs, which the namespaces' addresses are not) when it sizes
its BLAS pool (`runtime.thread_budget`), so each takes every core, as on a host of its own,
and on a small machine the pools oversubscribe it (`blas_threads_by_worker` in the JSON
says what each worker had); `--env-blas1` gives cross-host figures without that.

Run: `python benchmarks/layouts.py [--layouts plain,monitored] [--workers 1,2]
[--steps 400] [--env-blas1] [--rounds 3] [--tree DIR] [--ab DIR]
[--netns [per-job|per-task]] [--backend tensorflow]`. Linux for the CPU figures (/proc);
elsewhere they read 0.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

from layout_tasks import ROOT, Probe, run_ps, run_worker

BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
LAYOUTS = ("plain", "monitored", "supervisor", "dataset", "ingraph", "sync")
BACKENDS = ("tensorweave", "tensorflow")
NETNS_LAYOUTS = ("per-job", "per-task")  # tensorweave.deploy.netns.LAYOUTS


def _free_ports(n: int) -> list[int]:
    try:
        from tensorweave.testing.cluster import pick_unused_port
    except ImportError:  # NOTE: a TensorFlow interpreter without tensorweave's dependencies
        def pick_unused_port() -> int:
            import socket

            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                return s.getsockname()[1]

    ports: set[int] = set()
    while len(ports) < n:
        ports.add(pick_unused_port())
    return sorted(ports)


@contextlib.contextmanager
def _placement(workers: int, netns: str | None):
    """Yields (cluster, {(job, index): the task's command, to which its flags are added}):
    on 127.0.0.1 (free ports) or, with a `deploy.netns` layout, in namespaces made here
    and removed on exit."""
    base = [sys.executable, __file__]
    if netns is None:
        ports = _free_ports(1 + workers)
        cluster = {"ps": [f"127.0.0.1:{ports[0]}"],
                   "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}
        yield cluster, {(job, i): base for job in cluster for i in range(len(cluster[job]))}
        return
    # NOTE: imported here, by the parent only: the tasks import the tensorweave of `--tree`
    # / `--ab`, which may predate deploy.netns.
    from tensorweave.deploy import netns as netns_lib

    with netns_lib.Hosts(netns_lib.host_count(netns, 1, workers)) as hosts:
        plan = netns_lib.plan_in_hosts(base, 1, workers, hosts, netns)
        yield ({job: list(addrs) for job, addrs in plan.cluster.items()},
               {(t.job, t.index): list(t.argv) for t in plan.tasks})


def run_layout(layout: str, workers: int, steps: int, warmup: int, env_blas1: bool,
               tree: pathlib.Path = ROOT, netns: str | None = None,
               backend: str = "tensorweave") -> dict:
    """Starts 1 ps + `workers` worker processes importing tensorweave from `tree` (in
    network namespaces with a `deploy.netns` layout `netns`); returns the layout's
    figures."""
    with _placement(workers, netns) as (cluster, commands):
        load = os.getloadavg()[0]
        records = _run_tasks(cluster, commands, layout, steps, warmup, env_blas1, tree,
                             backend)
    return {**_summary(layout, workers, records, load, tree), "backend": backend,
            "netns": netns, "cluster": cluster}


def _run_tasks(cluster: dict, commands: dict, layout: str, steps: int, warmup: int,
               env_blas1: bool, tree: pathlib.Path, backend: str) -> list[dict]:
    """Runs the tasks of `cluster` (`commands`: each task's argv prefix) to the end and
    returns the workers' records."""
    workers = len(cluster["worker"])
    env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
    if env_blas1:
        env.update({k: "1" for k in BLAS_VARS})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")]))

    def spawn(job: str, index: int, *extra: str) -> subprocess.Popen:
        # NOTE: `ip netns exec` execs the command: the PID is the task's own.
        argv = [*commands[job, index], "--role", job, "--task", str(index), "--cluster",
                json.dumps(cluster), "--layouts", layout, "--steps", str(steps),
                "--warmup", str(warmup), "--backend", backend, *extra]
        return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True,
                                start_new_session=True)

    barrier = tempfile.mkdtemp(prefix="layouts-barrier-")
    ps = spawn("ps", 0)
    procs = [spawn("worker", i, "--ps-pid", str(ps.pid), "--barrier", barrier)
             for i in range(workers)]
    pathlib.Path(barrier, "pids").write_text(" ".join(str(p.pid) for p in [ps, *procs]))
    try:
        records = []
        for proc in procs:
            out, _ = proc.communicate(timeout=900)
            lines = [ln for ln in out.splitlines() if ln.startswith("{")]
            if proc.returncode or not lines:
                raise RuntimeError(f"{layout} worker failed (rc {proc.returncode}):\n{out}")
            record = json.loads(lines[-1])
            if not record.get("serving"):  # NOTE: (d)'s workers other than the client's
                records.append(record)
    finally:
        for proc in [ps, *procs]:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        shutil.rmtree(barrier, ignore_errors=True)
    return records


def _summary(layout: str, workers: int, records: list[dict], load: float,
             tree: pathlib.Path) -> dict:
    rates = [r["steps_per_sec"] for r in records]
    cpu = [r["cpu_ms_per_step"] for r in records]
    ps_cpu = statistics.mean(r["ps_cpu_ms_per_global_step"] for r in records)
    # Each global step is one worker's step: its CPU weighted by that worker's share.
    worker_cpu = sum(c * r for c, r in zip(cpu, rates)) / sum(rates)
    windows = [r["window_unix"] for r in records]
    cluster_cpu = [r["cluster_cpu_ms_per_batch"] for r in records
                   if r.get("cluster_cpu_ms_per_batch") is not None]
    cluster_cpu_ms = statistics.mean(cluster_cpu) if cluster_cpu else 0.0
    together = min(w[1] for w in windows) - max(w[0] for w in windows)
    span = max(w[1] for w in windows) - min(w[0] for w in windows)
    return {"layout": layout, "workers": workers, "tree": str(tree),
            "aggregate_steps_per_sec": round(sum(rates), 1),
            "global_steps_per_sec": round(statistics.mean(
                r["global_steps_per_sec"] for r in records), 1),
            "overlap": round(max(together, 0.0) / span, 3),
            "steps_per_sec_by_worker": [round(r, 1) for r in rates],
            "cpu_ms_per_step_by_worker": [round(c, 3) for c in cpu],
            "ps_cpu_ms_per_global_step": round(ps_cpu, 3),
            "total_cpu_ms_per_global_step": round(worker_cpu + ps_cpu, 3),
            "cluster_cpu_ms_per_batch": round(cluster_cpu_ms, 3),
            "cpu_bound_batches_per_sec": round(
                1e3 * len(os.sched_getaffinity(0)) / cluster_cpu_ms, 1) if cluster_cpu_ms else None,
            "test_accuracy_by_worker": [r["test_accuracy"] for r in records],
            "blas_threads_by_worker": [r.get("blas_threads") for r in records],
            "load_avg_1m_before": round(load, 2)}


def _medians(runs: list[dict]) -> dict:
    keys = ("aggregate_steps_per_sec", "global_steps_per_sec", "overlap",
            "total_cpu_ms_per_global_step", "cluster_cpu_ms_per_batch",
            "ps_cpu_ms_per_global_step", "load_avg_1m_before")
    return {k: round(statistics.median(r[k] for r in runs), 3) for k in keys}


def _measure(args: argparse.Namespace) -> dict:
    """Every layout, worker count and tree (`--tree`, `--ab`), `--rounds` times; each
    round runs every configuration once, in turn, so slow spells of a busy machine fall
    on all of them. Per configuration the median figures (`medians`)."""
    trees = [str(pathlib.Path(t).resolve()) for t in [args.tree, args.ab] if t]
    configs = [(layout, int(w), tree) for layout in args.layouts.split(",")
               for w in args.workers.split(",") for tree in trees]
    runs: dict[tuple, list[dict]] = {c: [] for c in configs}
    for _ in range(args.rounds):
        for layout, w, tree in configs:
            runs[layout, w, tree].append(run_layout(layout, w, args.steps, args.warmup,
                                                    args.env_blas1, pathlib.Path(tree),
                                                    args.netns, args.backend))
    medians = [{"layout": c[0], "workers": c[1], "tree": c[2], **_medians(rs)}
               for c, rs in runs.items()]
    for entry in medians:
        one = [e for e in medians if (e["layout"], e["workers"], e["tree"])
               == (entry["layout"], 1, entry["tree"])]
        if entry["workers"] == 2 and one:
            entry["scaling"] = round(entry["aggregate_steps_per_sec"]
                                     / one[0]["aggregate_steps_per_sec"], 3)
    return {"backend": args.backend, "cores": len(os.sched_getaffinity(0)),
            "cross_host": args.netns is not None,
            "netns": args.netns, "env_blas1": args.env_blas1,
            "steps_per_worker": args.steps, "rounds": args.rounds, "medians": medians,
            "results": [r for rs in runs.values() for r in rs]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--steps", type=int, default=400, help="steps per worker")
    parser.add_argument("--warmup", type=int, default=20, help="steps left out of the rate")
    parser.add_argument("--env-blas1", action="store_true", help="set the BLAS vars to 1")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each configuration")
    parser.add_argument("--tree", default=str(ROOT),
                        help="the checkout whose tensorweave the tasks import")
    parser.add_argument("--ab", help="another checkout to alternate with --tree")
    parser.add_argument("--netns", nargs="?", const="per-job", default=None,
                        choices=NETNS_LAYOUTS,
                        help="cross-host: tasks in network namespaces (root; default per-job)")
    parser.add_argument("--backend", choices=BACKENDS, default="tensorweave",
                        help="tensorflow: run the tasks under TensorFlow (start this script "
                        "with that interpreter)")
    parser.add_argument("--role", choices=("ps", "worker"), help=argparse.SUPPRESS)
    parser.add_argument("--task", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--cluster", help=argparse.SUPPRESS)
    parser.add_argument("--ps-pid", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--barrier", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "ps":
        run_ps(json.loads(args.cluster), args.task, args.backend)
        return
    if args.role == "worker":
        cluster = json.loads(args.cluster)
        probe = Probe(args.ps_pid, args.barrier, len(cluster["worker"]))
        record = run_worker(cluster, args.task, args.layouts, args.steps, args.warmup, probe,
                            args.backend)
        print(json.dumps(record), flush=True)
        if args.backend == "tensorflow":
            os._exit(0)  # NOTE: TensorFlow's server threads would keep the process alive
        return
    if args.netns is not None:
        from tensorweave.deploy import netns as netns_lib

        ok, why = netns_lib.available()
        if not ok:
            raise SystemExit(f"layouts.py: --netns is unavailable here: {why}")
    print(json.dumps(_measure(args), indent=1))


if __name__ == "__main__":
    main()
