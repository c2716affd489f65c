"""A scale model of asynchronous ps/worker training: predicts aggregate steps/s for P ps x W
workers from measured per-message, per-byte and per-step costs (see docs/scaling.md).

Measured here (`measure`), same-host or with `--netns` cross-host (ps tasks in one network
namespace, the worker in another), against ps tasks of `examples/trainer.py`:

* `read_rtt_us`, `read_client_cpu_us`, `read_ps_cpu_us`: a one-partition step on the ps
  (`sess.run` of a scalar variable there): the per-message round trip and its CPU on
  both ends (the per-partition fixed cost of a step).
* `bytes_per_s`, `cpu_s_per_byte`: from fetching a float32 variable of 1 and 8 MiB from
  the ps (slope between the two sizes: wall time, and client + ps CPU).
* `step`: `step_cpu.measure_worker` figures with 1 and 2 ps: the one worker's steps/s and
  CPU per step of the worker and of each ps.

The model (`predict`) is a roofline: the aggregate rate is the least of
  W / t_step(P)               the workers' own loops (t_step from the one-worker rate),
  1 / c_ps0(P)                the busiest ps, one core (Python's GIL; global step on ps 0),
  NIC / bytes_per_ps(P)       the ps network link,
  cores / c_total(W, P)       the CPU the tasks share (only when they share a host, as here),
where c_ps(P) = f + a / P (fixed per-step cost + apply work split across ps), ps 0 also
pays g (the global step), and the worker's CPU grows by m per ps (one message each).

`--validate` launches `benchmarks/cluster_training.py` at 1-2 ps x 1,2,4 workers and
reports predicted against measured aggregates. On a machine other processes load, the
prediction uses the cores this run can expect (`effective_cores`: the host's cores times
our runnable tasks over the load average, capped at the core count): a crude fair-share
estimate; say so when quoting it. Run: `python benchmarks/scale_model.py [--netns]
[--validate] [--steps 300] [--costs previous.json]`; prints JSON. Linux, root for `--netns`.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

BENCH = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import step_cpu  # noqa: E402

import tensorweave as tf  # noqa: E402
from tensorweave.testing.cluster import pick_unused_port  # noqa: E402

MIB = 1 << 20
# The digits MLP of examples/trainer.py: 64 -> 256 -> 256 -> 10, float32.
PARAM_BYTES = 4 * (64 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10)
NICS_BYTES_PER_S = {"1GbE": 125e6, "10GbE": 1.25e9, "100GbE": 12.5e9}


def _probe(ps_hosts: list[str], worker_host: str, ps_pid: int, reads: int) -> dict[str, Any]:
    """Per-message and per-byte costs, measured from this process as the worker."""
    spec = tf.train.ClusterSpec({"ps": ps_hosts, "worker": [worker_host]})
    server = tf.train.Server(spec, job_name="worker", task_index=0)
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            scalar = tf.Variable(1.0, name="scalar")
            big = {mib: tf.Variable(tf.zeros([mib * MIB // 4]), name=f"big{mib}")
                   for mib in (1, 8)}
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"])
    out: dict[str, Any] = {}
    with tf.Session(server.target, graph=g, config=config) as sess:
        sess.run([scalar.initializer] + [v.initializer for v in big.values()])
        for _ in range(50):
            sess.run(scalar)
        rtt, cpu_c, cpu_ps = _timed(lambda: sess.run(scalar), reads, ps_pid)
        out.update(read_rtt_us=round(rtt * 1e6, 1), read_client_cpu_us=round(cpu_c * 1e6, 1),
                   read_ps_cpu_us=round(cpu_ps * 1e6, 1))
        per_size = {}
        for mib, v in big.items():
            sess.run(v)
            per_size[mib] = _timed(lambda v=v: sess.run(v), 5, ps_pid)
        d_bytes = 7 * MIB
        wall = per_size[8][0] - per_size[1][0]
        cpu = (per_size[8][1] + per_size[8][2]) - (per_size[1][1] + per_size[1][2])
        out.update(bytes_per_s=round(d_bytes / max(wall, 1e-9)),
                   cpu_ns_per_byte=round(cpu / d_bytes * 1e9, 3),
                   fetch_8MiB_ms=round(per_size[8][0] * 1e3, 2))
    server.stop()
    return out


def _timed(fn: Any, n: int, ps_pid: int) -> tuple[float, float, float]:
    """Mean (wall, this process's CPU, the ps's CPU) seconds per call of `fn`."""
    p0 = step_cpu._proc_cpu_s(ps_pid)[0]
    c0, t0 = os.times(), time.perf_counter()
    for _ in range(n):
        fn()
    wall = time.perf_counter() - t0
    c1 = os.times()
    p1 = step_cpu._proc_cpu_s(ps_pid)[0]
    return wall / n, (c1.user - c0.user + c1.system - c0.system) / n, (p1 - p0) / n


def measure(hosts: Any, steps: int, reads: int) -> dict[str, Any]:
    """The costs (see the module docstring); `hosts`: None or a two-host `netns.Hosts`."""
    if hosts is None:
        ps_hosts = [f"127.0.0.1:{pick_unused_port()}"]
        worker_host = f"127.0.0.1:{pick_unused_port()}"
        procs = step_cpu._start_ps(1, ps_hosts, worker_host)
    else:
        ps_hosts, worker_host = [f"{hosts.address(0)}:2222"], f"{hosts.address(1)}:2222"
        procs = step_cpu._start_ps(1, ps_hosts, worker_host, lambda a: hosts.command(0, a))
    try:
        if hosts is None:
            probe = _probe(ps_hosts, worker_host, procs[0].pid, reads)
        else:
            arg = json.dumps({"ps": ps_hosts, "worker": worker_host, "pid": procs[0].pid,
                              "reads": reads})
            child = subprocess.run(
                hosts.command(1, [sys.executable, __file__, "--probe-json", arg]),
                capture_output=True, text=True, timeout=300)
            if child.returncode != 0:
                raise RuntimeError(f"probe failed:\n{child.stderr[-4000:]}")
            probe = json.loads(child.stdout)
    finally:
        for p in procs:
            p.kill()  # by PID
            p.wait(10)
    probe["step"] = {f"{n}ps": step_cpu.bench_step_cpu(n, steps, True, hosts) for n in (1, 2)}
    return probe


def fit(costs: dict[str, Any]) -> dict[str, float]:
    """Model parameters in seconds from the measured costs."""
    s1, s2 = costs["step"]["1ps"], costs["step"]["2ps"]
    c1 = s1["ps_cpu_ms_per_step"][0] / 1e3
    ps2 = [c / 1e3 for c in s2["ps_cpu_ms_per_step"]]
    g = max(ps2[0] - ps2[1], 0.0)  # NOTE: ps 0 also holds the global step
    a = max(2 * (c1 - g - ps2[1]), 0.0)  # f + a = c1 - g, f + a/2 = ps2[1]
    return {
        "f_ps_s": c1 - g - a, "a_ps_s": a, "g_ps0_s": g,
        "c_w1_s": s1["worker_cpu_ms_per_step"] / 1e3,
        "m_w_s": max((s2["worker_cpu_ms_per_step"] - s1["worker_cpu_ms_per_step"]) / 1e3, 0),
        "t_step1_s": 1 / s1["steps_per_sec"], "t_step2_s": 1 / s2["steps_per_sec"],
        "msg_rtt_s": costs["read_rtt_us"] / 1e6,
        "cpu_s_per_byte": costs["cpu_ns_per_byte"] / 1e9,
    }


def predict(m: dict[str, float], num_ps: int, num_workers: int, shared_cores: float | None,
            nic_bytes_per_s: float | None = None, quiet: bool = False) -> dict[str, Any]:
    """Aggregate steps/s and the binding limit (see the module docstring).

    Args:
      m: `fit` parameters.
      num_ps, num_workers: the layout.
      shared_cores: cores all tasks share (one host), or None (each task has its own core).
      nic_bytes_per_s: a ps's link, or None (not binding).
      quiet: a worker's step time from CPU costs alone (its own CPU, then waiting for ps
        0's partition: `c_w + c_ps0`), not from the measured one-worker rate (which a
        loaded machine stretches).
    """
    p = num_ps
    c_ps = m["f_ps_s"] + m["a_ps_s"] / p
    c_ps0 = c_ps + m["g_ps0_s"]
    c_w = m["c_w1_s"] + m["m_w_s"] * (p - 1)
    # NOTE: one worker's step time: measured at 1 and 2 ps, more ps add a message each.
    t_step = m["t_step1_s"] if p == 1 else m["t_step2_s"] + (p - 2) * m["m_w_s"]
    if quiet:
        t_step = c_w + c_ps0
    limits = {"workers": num_workers / t_step, "ps0_cpu": 1 / c_ps0}
    if nic_bytes_per_s:
        limits["ps_nic"] = nic_bytes_per_s / (2 * PARAM_BYTES / p)
    if shared_cores is not None:
        limits["shared_cpu"] = shared_cores / (c_w + p * c_ps + m["g_ps0_s"])
    bound = min(limits, key=limits.get)
    return {"num_ps": p, "num_workers": num_workers,
            "steps_per_sec": round(limits[bound], 1), "bound": bound,
            "limits": {k: round(v, 1) for k, v in limits.items()}}


def effective_cores(num_tasks: int) -> float:
    """Cores a run of `num_tasks` busy tasks can expect on this loaded host (fair share)."""
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0]
    return round(min(cores, cores * num_tasks / max(load, num_tasks)), 2)


def validate(m: dict[str, float], netns: str | None, steps: int) -> list[dict[str, Any]]:
    """Predicted against measured aggregates at 1-2 ps x 1, 2, 4 workers."""
    from cluster_training import bench_training

    rows = []
    for p in (1, 2):
        for w in (1, 2, 4):
            cores = effective_cores(p + w)
            pred = predict(m, p, w, cores)
            got = bench_training(p, w, steps, netns=netns)
            rows.append({**pred, "effective_cores": cores,
                         "measured_steps_per_sec": got["aggregate_steps_per_sec"],
                         "ratio_measured_to_predicted": round(
                             got["aggregate_steps_per_sec"] / pred["steps_per_sec"], 2),
                         "loadavg_before": got["loadavg_before"]})
    return rows


def saturation(m: dict[str, float]) -> list[dict[str, Any]]:
    """Each worker and ps on its own host (its own core), 10 GbE: for 10, 100 and 1,000
    workers, the fewest ps reaching 95% of the best rate with up to 64 ps, and what binds."""
    out = []
    for w in (10, 100, 1000):
        rows = [predict(m, p, w, None, NICS_BYTES_PER_S["10GbE"], quiet=True)
                for p in range(1, 65)]
        top = max(r["steps_per_sec"] for r in rows)
        best = next(r for r in rows if r["steps_per_sec"] >= 0.95 * top)
        out.append({"num_workers": w, "best": best, "with_1_ps": rows[0],
                    "steps_per_sec_per_worker": round(best["steps_per_sec"] / w, 2)})
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--netns", action="store_true", help="cross-host (root)")
    parser.add_argument("--validate", action="store_true", help="also train 1-2 ps x 1-4 w")
    parser.add_argument("--steps", type=int, default=500, help="steps per measurement")
    parser.add_argument("--reads", type=int, default=300)
    parser.add_argument("--costs", help="a previous report (JSON file): refit and predict "
                        "from its costs instead of measuring")
    parser.add_argument("--probe-json", help=argparse.SUPPRESS)  # the --netns probe child
    args = parser.parse_args(argv)
    if args.probe_json:
        a = json.loads(args.probe_json)
        print(json.dumps(_probe(a["ps"], a["worker"], a["pid"], a["reads"])))
        return
    report: dict[str, Any] = {"benchmark": "scale_model", "cross_host": args.netns,
                              "python": platform.python_version(),
                              "cpu_count": os.cpu_count(),
                              "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]}
    if args.costs:
        with open(args.costs) as f:
            report["costs"] = json.load(f)["costs"]
    elif args.netns:
        from tensorweave.deploy import netns

        ok, why = netns.available()
        if not ok:
            raise SystemExit(f"--netns unavailable: {why}")
        with netns.Hosts(2) as hosts:
            report["costs"] = measure(hosts, args.steps, args.reads)
    else:
        report["costs"] = measure(None, args.steps, args.reads)
    m = fit(report["costs"])
    report["model"] = {k: float(np.round(v * 1e6, 1)) for k, v in m.items()
                       if k != "cpu_s_per_byte"}
    report["model"] = {f"{k[:-2]}_us": v for k, v in report["model"].items()}
    report["model"]["cpu_ns_per_byte"] = report["costs"]["cpu_ns_per_byte"]
    if args.validate and not args.costs:
        report["validation"] = validate(m, "per-job" if args.netns else None, args.steps)
    report["saturation_10GbE_own_hosts"] = saturation(m)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
