"""The main job: `tensorweave demo` trains on a local cluster, prints the test accuracy,
and leaves TensorBoard event files and a Chrome trace with events from every task."""

import json
import os
import re
import socket
import subprocess
import sys
import urllib.request

import pytest

from tensorweave.testing.threads import wait_until

pytestmark = pytest.mark.slow


def _run_demo(out: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tensorweave", "demo", f"--output-dir={out}", "--no-progress",
         *extra],
        capture_output=True, text=True, timeout=300,
    )


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("demo") / "out")
    return out, _run_demo(out, "--steps=800")


def test_demo_trains_and_writes_events_and_trace(demo_run):
    out, proc = demo_run
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


def _get_json(url: str) -> object:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read().decode())


def test_tensorboard_serves_the_demo_scalars_and_graph(demo_run):
    """The installed `tensorboard` reads the demo's event files: scalars and graph over HTTP."""
    out, proc = demo_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tb = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), "tensorboard"),
         f"--logdir={os.path.join(out, 'events')}", "--host=127.0.0.1", f"--port={port}",
         "--load_fast=false", "--reload_interval=1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    base = f"http://127.0.0.1:{port}/data/plugin"
    try:
        found: dict = {}

        def loaded() -> bool:
            found["tags"] = _tags_or_none(f"{base}/scalars/tags")
            return found["tags"] is not None

        wait_until(loaded, timeout=120, poll_s=0.5)
        tags = found["tags"]
        run = next(r for r, t in tags.items() if "test_accuracy" in t)
        assert "loss" in tags[run]
        points = _get_json(f"{base}/scalars/scalars?run={run}&tag=test_accuracy")
        assert points[-1][2] >= 0.95  # (wall_time, step, value)
        graph_runs = _get_json(f"{base}/graphs/info")
        graph_run = next(r for r in graph_runs if graph_runs[r].get("run_graph"))
        with urllib.request.urlopen(f"{base}/graphs/graph?run={graph_run}", timeout=10) as r:
            graph = r.read().decode()
        assert 'op: "MatMul"' in graph and "global_step" in graph
    finally:
        tb.terminate()
        try:
            tb.wait(timeout=30)
        except subprocess.TimeoutExpired:
            tb.kill()
            tb.wait(timeout=30)


def _tags_or_none(url: str) -> dict | None:
    try:
        tags = _get_json(url)
    except OSError:
        return None
    return tags if any("test_accuracy" in t for t in tags.values()) else None


def test_demo_trains_over_tls_with_a_token(tmp_path):
    out = str(tmp_path / "demo")
    proc = _run_demo(out, "--steps=600", "--tls", "--mtls")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cluster token (generated), TLS (generated CA), mutual TLS" in proc.stdout
    last = proc.stdout.strip().splitlines()[-1]
    assert float(last.split(":")[1]) >= 0.95, proc.stdout
    with open(os.path.join(out, "tasks.log"), encoding="utf-8") as f:
        assert "Unauthenticated" not in f.read()
