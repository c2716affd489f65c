"""Two masters driving one ps concurrently both make progress (issue 15's regression test).

The layout most TF1 programs use: 1 ps (`tensorweave server`) and 2 worker processes, each
with its own `tf.train.Server` and a plain `tf.Session(server.target)` loop fed through
`feed_dict` (`two_masters_worker.py`), in the user's environment (no BLAS thread variables).
Each worker completes its steps while the other one also trains (the other's steps show in
the global step during its window), within a bounded wall time. The cause of the collapse
this guards against, every process's BLAS pool sized to all the cores, is checked directly:
each worker's pool is its share of the cores. No rate is asserted.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys

from tensorweave.runtime import thread_budget
from tensorweave.testing.cluster import pick_unused_port
from tensorweave.testing.processes import ServerProcess, spec_string

WORKER = pathlib.Path(__file__).with_name("two_masters_worker.py")
BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
STEPS = 150
WALL_S = 240.0


def _ports(n: int) -> list[int]:
    ports: set[int] = set()
    while len(ports) < n:
        ports.add(pick_unused_port())
    return sorted(ports)


def test_two_plain_session_workers_progress_concurrently_on_one_ps():
    ps_port, *worker_ports = _ports(3)
    cluster = {"ps": [f"127.0.0.1:{ps_port}"],
               "worker": [f"127.0.0.1:{p}" for p in worker_ports]}
    env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
    workers = []
    with ServerProcess(spec_string(cluster), "ps", 0) as ps:
        ps.wait_ready()
        try:
            for i in range(2):
                argv = [sys.executable, str(WORKER), "--cluster", json.dumps(cluster),
                        "--task_index", str(i), "--steps", str(STEPS)]
                workers.append(subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                                stderr=subprocess.STDOUT, text=True))
            outputs = [w.communicate(timeout=WALL_S)[0] for w in workers]
        finally:
            for w in workers:
                if w.poll() is None:
                    os.kill(w.pid, signal.SIGKILL)
                    w.wait()
    records = []
    for w, out in zip(workers, outputs):
        assert w.returncode == 0, out
        records.append(json.loads(out.strip().splitlines()[-1]))
    share = thread_budget.default_threads(thread_budget.host_cores(), 3)
    for record in records:
        assert record["steps"] == STEPS
        assert record["others_during"] >= 1, records
        assert 1 <= record["blas_threads"] <= share, records
