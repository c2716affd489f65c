"""A program written in the style of the A3C programs with per-worker local copies
(`local_copies_program.py`: servers started by `multiprocessing`, 2 ps + 2 workers, local
gradients applied to variables striped over two ps tasks, pull by `assign`, a
`MonitoredTrainingSession` with a custom `Scaffold`, a third client reading through a ps
master). Found while surveying third-party TF1 programs (docs/program_survey.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tensorweave.testing.cluster import pick_unused_port

pytestmark = [pytest.mark.timeout(300)]

PROGRAM = os.path.join(os.path.dirname(__file__), "local_copies_program.py")


def test_local_copies_push_to_striped_global_net_and_pull_back():
    ports = [pick_unused_port() for _ in range(4)]
    hosts = [f"127.0.0.1:{p}" for p in ports]
    proc = subprocess.run(
        [sys.executable, PROGRAM, "--ps_hosts", ",".join(hosts[:2]),
         "--worker_hosts", ",".join(hosts[2:]), "--pushes", "100", "--timeout_s", "150"],
        capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    workers, final = records[:2], records[2]["final"]
    assert [w["task"] for w in workers] == [0, 1]
    for w in workers:
        assert w["pushes"] == 100
        assert w["pull_exact"], w     # a pull makes the local copy equal the global values
        # replica_device_setter stripes the global kernel and bias over the two ps tasks;
        # the local copy has no device (it lives on the worker's own task).
        assert w["global_devices"] == ["/job:ps/task:0", "/job:ps/task:1"]
        assert w["local_devices"] == ["", ""]
    # Every push incremented the shared step once, and nobody re-initialized it.
    assert final["global_step"] == 200
    # Noise-free linear regression: 200 gradient steps of 0.1 recover the weights.
    assert final["max_abs_err"] < 1e-3, final
