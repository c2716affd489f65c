"""TensorFlow and tensorweave server processes for the RPC interop tests (ports on
127.0.0.1, bounded waits, every process ended by PID)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator

from tensorweave.testing.cluster import pick_unused_port
from tensorweave.testing.processes import ServerProcess, _LineReader, spec_string

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_programs")
# NOTE: TensorFlow's import alone takes 10-20 s on a loaded 2-core machine.
TF_READY_TIMEOUT_S = 180.0


class TfServerProcess(ServerProcess):
    """One `tf.distribute.Server` task in TensorFlow's interpreter (tf_programs/tf_server.py);
    `wait_ready`, `kill` and `output` as for a `ServerProcess`."""

    def __init__(self, tf_python: str, cluster: dict[str, list[str]], job_name: str,
                 task_index: int):
        self.cluster_spec = spec_string(cluster)
        self.job_name = job_name
        self.task_index = task_index
        self.info = {}
        self.proc = subprocess.Popen(
            [tf_python, os.path.join(PROGRAMS, "tf_server.py"), json.dumps(cluster), job_name,
             str(task_index)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        self._reader = _LineReader(self.proc.stdout)


def cluster_dict(num_ps: int = 1, num_workers: int = 2) -> dict[str, list[str]]:
    """`{"ps": [...], "worker": [...]}` with free localhost ports."""
    return {"ps": [f"localhost:{pick_unused_port()}" for _ in range(num_ps)],
            "worker": [f"localhost:{pick_unused_port()}" for _ in range(num_workers)]}


@contextlib.contextmanager
def servers(tasks: list[tuple[str, int]], cluster: dict[str, list[str]],
            tf_python: str | None) -> Iterator[list[ServerProcess]]:
    """Starts `tasks` ((job, index) pairs) of `cluster`: TensorFlow servers when `tf_python`
    is given, else `tensorweave server` processes; kills them all at the end."""
    procs: list[ServerProcess] = []
    try:
        for job, index in tasks:
            if tf_python:
                procs.append(TfServerProcess(tf_python, cluster, job, index))
            else:
                procs.append(ServerProcess(spec_string(cluster), job, index))
        for p in procs:
            p.wait_ready(TF_READY_TIMEOUT_S if tf_python else 60.0)
        yield procs
    finally:
        for p in procs:
            p.kill()


def run_program(python: str, program: str, *args: str, timeout: float = 600.0) -> dict:
    """Runs tf_programs/`program` (or any script path) with `python`; returns its last JSON
    line. Raises AssertionError with the output's tail when it fails."""
    path = program if os.path.isabs(program) else os.path.join(PROGRAMS, program)
    proc = subprocess.run([python, path, *args], capture_output=True, text=True,
                          timeout=timeout, check=False, env={**os.environ})
    if proc.returncode != 0:
        raise AssertionError(f"{program} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n"
                             f"{proc.stderr[-4000:]}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1])


def tw_python() -> str:
    """The interpreter running tensorweave (its subprocesses inherit PYTHONPATH)."""
    return sys.executable
