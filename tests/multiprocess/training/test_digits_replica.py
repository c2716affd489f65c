"""`examples/digits_replica.py`, a `mnist_replica.py`-style program (flags, Supervisor,
`replica_device_setter`, `tf.app.run`), on a 1 ps + 2 worker cluster started by the
launcher with the seed flags: both workers train and reach the accuracy, async and sync."""

from __future__ import annotations

import io
import pathlib
import re
import sys

import pytest

from tensorweave.deploy.launcher import launch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

PROGRAM = pathlib.Path(__file__).resolve().parents[3] / "examples" / "digits_replica.py"
_STEP = re.compile(r"\[worker (\d)\] [0-9.]+: Worker (\d): training step (\d+) done "
                   r"\(global step: (\d+)\)")
_RESULT = re.compile(r"\[worker (\d)\] After 200 training step\(s\), validation cross "
                     r"entropy = ([0-9.e+-]+), accuracy = ([0-9.]+)")


@pytest.mark.parametrize("mode", [[], ["--sync_replicas"]], ids=["async", "sync"])
def test_both_workers_train_to_accuracy(mode):
    out = io.StringIO()
    result = launch([sys.executable, str(PROGRAM), "--train_steps=200", *mode], 1, 2,
                    seed_flags=True, stream=out, grace_secs=5)
    text = out.getvalue()
    assert result.ok, text
    steps = {0: 0, 1: 0}
    last_global = {}
    for m in _STEP.finditer(text):
        assert m.group(1) == m.group(2)
        steps[int(m.group(1))] = int(m.group(3))
        last_global[int(m.group(1))] = int(m.group(4))
    assert steps[0] > 0 and steps[1] > 0, text
    assert min(last_global.values()) >= 200
    results = {int(m.group(1)): float(m.group(3)) for m in _RESULT.finditer(text)}
    assert sorted(results) == [0, 1], text
    assert min(results.values()) >= 0.9, results
    if mode:
        assert "Worker 0: Initializing session..." in text
        assert "Worker 1: Waiting for session to be initialized..." in text
