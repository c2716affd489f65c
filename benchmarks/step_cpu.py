"""CPU time per training step, per process: where a distributed step's cost goes.

`bench_step_cpu(num_ps, steps)` starts `num_ps` ps tasks of `examples/trainer.py` as
processes on 127.0.0.1, runs one worker of the same trainer graph in this process (the
digits MLP, batch 128, SGD learning rate 0.1, `MonitoredTrainingSession`, one BLAS
thread), and after 50 warm-up steps measures `steps` steps:

* `steps_per_sec`: the one worker's rate (nothing else competes for the cores);
* `worker_cpu_ms_per_step`, `ps_cpu_ms_per_step` (one per ps task): user + system CPU
  time of each process per step, in milliseconds (`os.times`, `/proc/<pid>/stat`), and
  the system part alone (`*_sys_ms_per_step`);
* `total_cpu_ms_per_step`: their sum, what two workers sharing two cores pay per global
  step.

With `--no-streams` the session sets `TensorweaveOptions.disable_step_streams` (values
pulled with `RecvTensors`). With `--netns` the ps tasks run in one network namespace and the
worker in another (`tensorweave.deploy.netns`, root needed): the cross-host path (TCP between
stand-in hosts); the worker is then a child process of this script (`--worker-json`) and
`cross_host` is true; `--netns shared` puts the ps tasks and the worker in one namespace
(one stand-in host: the tasks find its IP assigned there, so it counts as their own host,
as on a real one).
`--no-tcp-streams` sets `disable_tcp_streams` (gRPC carries the per-step calls, on one host
as between hosts). `--ab tcp` alternates cross-host runs with and without the TCP step-call
socket, `--rounds` times, and adds each variant's median figures (`ab`). (`--ab unix`
compared the same-host Unix socket, removed after issue 15's A/B: docs/scaling.md.) CPU
per step is the figure to compare between runs on a loaded machine: wall-clock rates move
with whatever else runs, CPU time much less. Run:
`python benchmarks/step_cpu.py [--ps 1,2] [--steps 2000] [--no-streams] [--netns [shared]]
[--no-tcp-streams] [--ab tcp --rounds 3]`; prints JSON. Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import select
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

import digits_data  # noqa: E402
from trainer import build_replica  # noqa: E402

import tensorweave as tf  # noqa: E402
from tensorweave.testing.cluster import pick_unused_port  # noqa: E402

_WARMUP_STEPS = 50
_READY_TIMEOUT_S = 60.0


def _proc_cpu_s(pid: int) -> tuple[float, float]:
    """(user + system, system) CPU seconds of process `pid`."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    user, system = int(fields[11]) / tick, int(fields[12]) / tick
    return user + system, system


def _start_ps(num_ps: int, ps_hosts: list[str], worker_host: str,
              wrap: Callable[[list[str]], list[str]] = list) -> list[subprocess.Popen]:
    procs = []
    for i in range(num_ps):
        procs.append(subprocess.Popen(wrap(
            [sys.executable, str(EXAMPLES / "trainer.py"), "--job_name", "ps",
             "--task_index", str(i), "--ps_hosts", ",".join(ps_hosts),
             "--worker_hosts", worker_host]),
            stdout=subprocess.PIPE, text=True))
    deadline = time.monotonic() + _READY_TIMEOUT_S
    for p in procs:
        ready, _, _ = select.select([p.stdout], [], [], max(deadline - time.monotonic(), 0))
        line = p.stdout.readline() if ready else ""
        if "serving" not in line:
            for q in procs:
                q.kill()
            raise RuntimeError(f"ps task did not start within {_READY_TIMEOUT_S} s: {line!r}")
    return procs


def bench_step_cpu(num_ps: int, steps: int, streams: bool = True,
                   hosts: Any = None, tcp_streams: bool = True,
                   shared: bool = False) -> dict[str, Any]:
    """Measures one worker's training steps against `num_ps` ps processes.

    Args:
      num_ps: ps tasks (processes).
      steps: measured steps (after the warm-up).
      streams: False sets `disable_step_streams`.
      hosts: None (every task on 127.0.0.1) or a `deploy.netns.Hosts` of two: the ps tasks
        in host 0, the worker in host 1 (a child process); in host 0 too with `shared`.
      tcp_streams: False sets `disable_tcp_streams`.
      shared: the worker on the ps tasks' host (with `hosts`).

    Returns:
      A JSON-ready dict (see the module docstring).

    Raises:
      RuntimeError: if a ps task does not start or the worker child fails.
    """
    if hosts is None:
        ps_hosts = [f"127.0.0.1:{pick_unused_port()}" for _ in range(num_ps)]
        worker_host = f"127.0.0.1:{pick_unused_port()}"
        procs = _start_ps(num_ps, ps_hosts, worker_host)
    else:
        ps_hosts = [f"{hosts.address(0)}:{2222 + i}" for i in range(num_ps)]
        worker_host = (f"{hosts.address(0)}:{2222 + num_ps}" if shared
                       else f"{hosts.address(1)}:2222")
        procs = _start_ps(num_ps, ps_hosts, worker_host, lambda a: hosts.command(0, a))
    pids = [p.pid for p in procs]  # NOTE: `ip netns exec` execs: the PID is the task's
    try:
        if hosts is None:
            figures = measure_worker(ps_hosts, worker_host, pids, steps, streams, tcp_streams)
        else:
            spec = json.dumps({"ps": ps_hosts, "worker": worker_host, "pids": pids,
                               "steps": steps, "streams": streams, "tcp": tcp_streams})
            argv = [sys.executable, __file__, "--worker-json", spec]
            child = subprocess.run(
                hosts.command(0 if shared else 1, argv),
                capture_output=True, text=True, timeout=_READY_TIMEOUT_S + steps)
            if child.returncode != 0:
                raise RuntimeError(f"worker child failed:\n{child.stderr[-4000:]}")
            figures = json.loads(child.stdout)
    finally:
        for p in procs:
            p.kill()  # by PID
            p.wait(10)
    return {"num_ps": num_ps, "streams": streams,
            "cross_host": hosts is not None and not shared, "shared_netns": shared,
            "tcp_streams": tcp_streams, "steps": steps, **figures}


def measure_worker(ps_hosts: list[str], worker_host: str, ps_pids: list[int], steps: int,
                   streams: bool, tcp_streams: bool = True) -> dict[str, Any]:
    """Runs the worker in this process against running ps tasks; returns the figures."""
    spec = tf.train.ClusterSpec({"ps": ps_hosts, "worker": [worker_host]})
    server = tf.train.Server(spec, job_name="worker", task_index=0)
    data = digits_data.load_digits_split(0)
    batches = digits_data.minibatches(data.x_train, data.y_train, 128, seed=0)
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"],
                            operation_timeout_in_ms=int(_READY_TIMEOUT_S * 1000))
    config.tensorweave.disable_step_streams = not streams
    config.tensorweave.disable_tcp_streams = not tcp_streams
    with digits_data.blas_threads(1), tf.Graph().as_default():
        r = build_replica(0, spec, optimizer="sgd", learning_rate=0.1, num_workers=1)
        with tf.train.MonitoredTrainingSession(
                master=server.target, is_chief=True, config=config,
                save_checkpoint_secs=None, save_summaries_steps=None,
                save_summaries_secs=None, log_step_count_steps=None) as sess:
            fetches = [r.train_op, r.global_step, r.loss]
            for _ in range(_WARMUP_STEPS):
                x, y = next(batches)
                sess.run(fetches, {r.images: x, r.labels: y})
            load = os.getloadavg()
            ps0 = [_proc_cpu_s(pid) for pid in ps_pids]
            w0, t0 = os.times(), time.perf_counter()
            for _ in range(steps):
                x, y = next(batches)
                sess.run(fetches, {r.images: x, r.labels: y})
            wall = time.perf_counter() - t0
            w1 = os.times()
            ps1 = [_proc_cpu_s(pid) for pid in ps_pids]
    server.stop()
    ms = 1e3 / steps
    worker_cpu = (w1.user - w0.user + w1.system - w0.system) * ms
    ps_cpu = [(b[0] - a[0]) * ms for a, b in zip(ps0, ps1)]
    return {
        "steps_per_sec": round(steps / wall, 1),
        "worker_cpu_ms_per_step": round(worker_cpu, 3),
        "worker_sys_ms_per_step": round((w1.system - w0.system) * ms, 3),
        "ps_cpu_ms_per_step": [round(c, 3) for c in ps_cpu],
        "ps_sys_ms_per_step": [round((b[1] - a[1]) * ms, 3) for a, b in zip(ps0, ps1)],
        "total_cpu_ms_per_step": round(worker_cpu + sum(ps_cpu), 3),
        "loadavg_at_start": [round(x, 2) for x in load],
    }


# --ab: (netns mode, TCP step-call socket) of variant A, then B.
AB_VARIANTS = {
    "tcp": [("per-job", True), ("per-job", False)],
}


def _run(num_ps: int, args: argparse.Namespace, netns_mode: str | None,
         tcp: bool) -> dict[str, Any]:
    streams = not args.no_streams
    if netns_mode is None:
        return bench_step_cpu(num_ps, args.steps, streams, tcp_streams=tcp)
    from tensorweave.deploy import netns

    ok, why = netns.available()
    if not ok:
        raise SystemExit(f"--netns unavailable: {why}")
    with netns.Hosts(2) as hosts:
        return bench_step_cpu(num_ps, args.steps, streams, hosts, tcp,
                              shared=netns_mode == "shared")


def _ab_summary(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Median figures per (ps count, variant) over the alternated rounds."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in runs:
        key = (r["num_ps"], r["cross_host"], r["shared_netns"], r["tcp_streams"])
        groups.setdefault(key, []).append(r)
    out = []
    for (num_ps, cross, shared, tcp), rs in groups.items():
        out.append({
            "num_ps": num_ps, "cross_host": cross, "shared_netns": shared, "tcp_streams": tcp,
            "rounds": len(rs),
            "median_total_cpu_ms_per_step": _median([r["total_cpu_ms_per_step"] for r in rs]),
            "median_steps_per_sec": _median([r["steps_per_sec"] for r in rs]),
        })
    return out


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    mid = len(xs) // 2
    return round(xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2, 3)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ps", default="1,2", help="ps task counts, comma separated")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--no-streams", action="store_true", help="pull values instead")
    parser.add_argument("--netns", nargs="?", const="per-job", choices=("per-job", "shared"),
                        help="cross-host: ps and worker in two network namespaces (root); "
                        "shared: one namespace, TCP step-call socket")
    parser.add_argument("--no-tcp-streams", action="store_true",
                        help="set disable_tcp_streams (gRPC between hosts)")
    parser.add_argument("--ab", choices=sorted(AB_VARIANTS),
                        help="alternate variants A and B (see the module docstring)")
    parser.add_argument("--rounds", type=int, default=3, help="A/B rounds")
    parser.add_argument("--worker-json", help=argparse.SUPPRESS)  # the --netns worker child
    args = parser.parse_args(argv)
    if args.worker_json:
        w = json.loads(args.worker_json)
        print(json.dumps(measure_worker(w["ps"], w["worker"], w["pids"], w["steps"],
                                        w["streams"], w["tcp"])))
        return
    counts = [int(n) for n in args.ps.split(",") if n]
    report = {
        "benchmark": "step_cpu",
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "runs": [],
    }
    if args.ab:
        variants = AB_VARIANTS[args.ab]
        for _ in range(args.rounds):
            for n in counts:
                for netns_mode, tcp in variants:
                    report["runs"].append(_run(n, args, netns_mode, tcp))
        report["ab"] = _ab_summary(report["runs"])
    else:
        netns_mode = args.netns
        for n in counts:
            report["runs"].append(_run(n, args, netns_mode, not args.no_tcp_streams))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
