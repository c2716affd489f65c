"""Async between-graph training throughput of `examples/trainer.py` on a local cluster.

`bench_training(num_ps, num_workers, steps)` starts `num_ps` ps and `num_workers` worker
tasks of the trainer with the launcher's Python API (`tensorweave.deploy.launcher.launch`,
TF_CONFIG), trains the digits MLP asynchronously (batch 128, SGD learning rate 0.1) until
the global step reaches `steps * num_workers` (so each worker runs about `steps` steps),
and collects the JSON line each worker prints at the end:

* `steps_per_sec_by_worker`: each worker's own rate over its steady steps (its first step,
  which registers the graphs, excluded);
* `aggregate_steps_per_sec`: their sum (global steps per second while all workers run);
* `test_accuracy_by_worker`, and `wall_s` of the whole launch (start-up included).

With `netns="per-job"` (`--netns`) the ps tasks run in one network namespace and the
workers in another (`tensorweave.deploy.netns`: TCP between stand-in hosts, no same-host
socket or /dev/shm between them; root needed); `per-task` gives every task its own.
`cross_host` in the JSON says which.

Used by `benchmarks/cluster.py --training` (1 and 2 ps). Run alone:
`python benchmarks/cluster_training.py [--ps 1,2] [--workers 2] [--steps 1000]
[--netns [per-job|per-task]] [--trainer-args "--log_every 100"]`; prints JSON.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pathlib
import platform
import shlex
import time
from collections.abc import Sequence
from typing import Any

from tensorweave.deploy import netns as netns_lib
from tensorweave.deploy.launcher import LaunchResult, launch, run_plan

TRAINER = pathlib.Path(__file__).resolve().parents[1] / "examples" / "trainer.py"


def _records(output: str) -> dict[int, dict[str, Any]]:
    """The workers' final JSON records from the launcher's prefixed output."""
    found = {}
    for line in output.splitlines():
        if not line.startswith("[worker "):
            continue
        text = line.split("] ", 1)[1]
        if text.startswith("{"):
            record = json.loads(text)
            found[record["task_index"]] = record
    return found


def _launch(command: list[str], num_ps: int, num_workers: int, netns: str | None,
            out: io.StringIO) -> LaunchResult:
    if netns is None:
        return launch(command, num_ps, num_workers, stream=out, grace_secs=5)
    ok, why = netns_lib.available()
    if not ok:
        raise RuntimeError(f"--netns is unavailable here: {why}")
    with netns_lib.Hosts(netns_lib.host_count(netns, num_ps, num_workers)) as hosts:
        plan = netns_lib.plan_in_hosts(command, num_ps, num_workers, hosts, netns)
        return run_plan(plan, stream=out, grace_secs=5)


def bench_training(
    num_ps: int, num_workers: int, steps: int, trainer_args: Sequence[str] = (),
    netns: str | None = None,
) -> dict[str, Any]:
    """Trains on a fresh local cluster and returns the throughput and accuracy figures.

    Args:
      num_ps: ps tasks.
      num_workers: worker tasks.
      steps: steps per worker (the last global step is `steps * num_workers`).
      trainer_args: extra trainer flags (e.g. `["--log_every", "100"]`).
      netns: None (every task on 127.0.0.1) or a `deploy.netns` layout (`per-job`: the ps
        tasks on one stand-in host, the workers on another).

    Returns:
      A JSON-ready dict (see the module docstring).

    Raises:
      RuntimeError: if the launch fails or a worker printed no record.
    """
    command = [
        "python", str(TRAINER), "--optimizer", "sgd", "--learning_rate", "0.1",
        "--batch_size", "128", "--train_steps", str(steps * num_workers), *trainer_args,
    ]  # fmt: skip
    out = io.StringIO()
    load_before = os.getloadavg()
    start = time.perf_counter()
    result = _launch(command, num_ps, num_workers, netns, out)
    wall = time.perf_counter() - start
    records = _records(out.getvalue())
    if not result.ok or sorted(records) != list(range(num_workers)):
        raise RuntimeError(f"training launch failed:\n{out.getvalue()}")
    rates = {i: records[i]["steps_per_sec"] for i in sorted(records)}
    return {
        "num_ps": num_ps,
        "num_workers": num_workers,
        "cross_host": netns,
        "steps_per_worker": steps,
        "optimizer": "sgd lr 0.1, batch 128, "
                     + ("sync" if "--sync" in trainer_args else "async"),
        "trainer_args": list(trainer_args),
        "steps_per_sec_by_worker": rates,
        "aggregate_steps_per_sec": round(sum(rates.values()), 1),
        "local_steps_by_worker": {i: records[i]["local_steps"] for i in sorted(records)},
        "final_global_step": max(r["global_step"] for r in records.values()),
        "test_accuracy_by_worker": {i: records[i]["test_accuracy"] for i in sorted(records)},
        "wall_s": round(wall, 2),
        "loadavg_before": [round(x, 2) for x in load_before],
        "cpu_count": os.cpu_count(),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ps", default="1,2", help="ps task counts, comma separated")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=1000, help="steps per worker")
    parser.add_argument("--netns", nargs="?", const="per-job", default=None,
                        choices=netns_lib.LAYOUTS,
                        help="cross-host: tasks in network namespaces (root; default per-job)")
    parser.add_argument("--trainer-args", default="", help="extra trainer flags (one string)")
    args = parser.parse_args(argv)
    extra = shlex.split(args.trainer_args)
    report = {
        "benchmark": "cluster_training",
        "python": platform.python_version(),
        "runs": [bench_training(int(n), args.workers, args.steps, extra, args.netns)
                 for n in args.ps.split(",") if n],
    }  # fmt: skip
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
