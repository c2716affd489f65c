"""The A3C example (seed 004's use case): 1 ps holding the shared actor-critic network and 2
worker processes started by `tensorweave launch`; a short run improves the return."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


def test_short_a3c_run_improves_the_episode_return():
    proc = subprocess.run(
        [sys.executable, "-m", "tensorweave", "launch", "--ps", "1", "--workers", "2", "--",
         sys.executable, os.path.join(ROOT, "examples", "a3c_cartpole.py"),
         "--max_episodes", "300", "--max_seconds", "400", "--log_every", "50"],
        capture_output=True, text=True, timeout=540,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = [json.loads(line.split("] ", 1)[1]) for line in proc.stdout.splitlines()
               if line.startswith("[worker") and '"job": "worker"' in line]
    assert sorted(r["task_index"] for r in records) == [0, 1], proc.stdout
    for r in records:
        assert r["episodes"] >= 100, r  # trained, not stopped by the time limit early on
        # A random policy balances ~20 steps; the shared network learned from both workers.
        # Judged on the last 100 episodes: policy-gradient returns swing (a worker's last 20
        # episodes fell from ~130 to ~37 in one run while its last 100 still averaged > 70);
        # in 8 local runs of 300 episodes (16 worker records) the ratio was never below 3.7.
        assert r["last_100_avg"] >= 2 * r["first_20_avg"], r
    assert records[0]["global_step"] >= 2 * 100  # at least an update per episode
