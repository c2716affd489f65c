"""The main job: `tensorweave demo` trains on a local cluster, prints the test accuracy,
and leaves TensorBoard event files and a Chrome trace with events from every task."""

import json
import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def _run_demo(out: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tensorweave", "demo", f"--output-dir={out}", "--no-progress",
         *extra],
        capture_output=True, text=True, timeout=300,
    )


def test_demo_trains_and_writes_events_and_trace(tmp_path):
    out = str(tmp_path / "demo")
    proc = _run_demo(out, "--steps=800")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("test accuracy: ")
    assert float(last.split(":")[1]) >= 0.95
    assert f"output directory: {out}" in proc.stdout
    # Both workers trained (a non-chief that waited TensorFlow's 30 s for the chief's
    # initialization would join after the training is over).
    steps = {int(m.group(1)): int(m.group(2))
             for m in re.finditer(r"worker (\d+):\s+(\d+) steps", proc.stdout)}
    assert sorted(steps) == [0, 1] and min(steps.values()) >= 100, proc.stdout

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(os.path.join(out, "events"))
    acc.Reload()
    scalars = acc.Tags()["scalars"]
    assert "loss" in scalars and "accuracy" in scalars and "test_accuracy" in scalars
    assert acc.Scalars("test_accuracy")[-1].value >= 0.95

    with open(os.path.join(out, "trace.json"), encoding="utf-8") as f:
        trace = json.load(f)
    names = {e["args"]["name"] for e in trace["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert any("/job:worker/replica:0/task:0" in n for n in names), names
    assert any("/job:ps/replica:0/task:0" in n for n in names), names
    busy_pids = {e["pid"] for e in trace["traceEvents"] if e.get("ph") == "X"}
    assert len(busy_pids) >= 2


def test_demo_reports_bad_mnist_directory(tmp_path):
    proc = _run_demo(str(tmp_path / "demo"), "--data=mnist", f"--data-dir={tmp_path}/nope")
    assert proc.returncode == 2
    assert "does not exist" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_demo_reports_corrupt_mnist_file(tmp_path):
    data = tmp_path / "mnist"
    data.mkdir()
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        (data / name).write_bytes(b"\x00\x00\x08\x03garbage")
    proc = _run_demo(str(tmp_path / "demo"), "--data=mnist", f"--data-dir={data}")
    assert proc.returncode == 2
    assert "corrupt" in proc.stdout or "not an IDX" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_demo_trains_over_tls_with_a_token(tmp_path):
    out = str(tmp_path / "demo")
    proc = _run_demo(out, "--steps=600", "--tls", "--mtls")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cluster token (generated), TLS (generated CA), mutual TLS" in proc.stdout
    last = proc.stdout.strip().splitlines()[-1]
    assert float(last.split(":")[1]) >= 0.95, proc.stdout
    with open(os.path.join(out, "tasks.log"), encoding="utf-8") as f:
        assert "Unauthenticated" not in f.read()
