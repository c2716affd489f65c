"""`tensorweave launch` with real subprocesses: ps stopped after the workers, failures named
and everything stopped, SIGINT forwarded, output prefixed, no process left behind."""

from __future__ import annotations

import io
import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time

import psutil
import pytest

from tensorweave.deploy.launcher import launch
from tensorweave.testing.threads import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

_WAIT_S = 60.0

# One script for every task: the ps blocks like `server.join()`; workers print, then
# exit with the code given for their index (default 0) or block when it is "block".
_TASK = """
import json, os, sys, threading
task = json.loads(os.environ["TF_CONFIG"])["task"]
print(f"ready {task['type']} {task['index']} pid={os.getpid()}", flush=True)
print(f"stderr of {task['type']} {task['index']}", file=sys.stderr, flush=True)
if task["type"] == "ps":
    threading.Event().wait()
codes = dict(arg.split("=") for arg in sys.argv[1:])
code = codes.get(str(task["index"]), "0")
if code == "block":
    threading.Event().wait()
sys.exit(int(code))
"""


def _script(tmp_path, text=_TASK, name="task.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _ours(proc: psutil.Process, marker: str) -> bool:
    try:
        return any(marker in arg for arg in proc.cmdline())
    except psutil.Error:
        return False


def _assert_nothing_left(pids, marker: str) -> None:
    """The recorded PIDs are gone, and no descendant of this test runs a tmp_path script."""
    wait_until(
        lambda: all(_gone(pid) for pid in pids),
        timeout=10,
        poll_s=0.05,
        what=lambda: f"PIDs {[pid for pid in pids if not _gone(pid)]} to end",
    )
    children = psutil.Process().children(recursive=True)
    assert [child.pid for child in children if _ours(child, marker)] == []


def test_all_workers_succeed_then_ps_are_stopped(tmp_path):
    out = io.StringIO()
    start = time.monotonic()
    result = launch(["python", _script(tmp_path)], 2, 3, stream=out, grace_secs=10)
    assert time.monotonic() - start < _WAIT_S
    assert result.returncode == 0 and result.ok and result.failures == ()
    codes = result.exit_codes
    assert [codes[f"worker {i}"] for i in range(3)] == [0, 0, 0]
    for i in range(2):
        ps = result.tasks[i]
        assert (ps.name, ps.stopped, ps.exit_code) == (f"ps {i}", True, -signal.SIGTERM)
    assert not any(task.stopped for task in result.tasks[2:])
    assert "tensorweave launch: all workers exited; stopping ps 0, ps 1" in out.getvalue()
    _assert_nothing_left(result.pids.values(), str(tmp_path))


def test_failing_worker_is_named_and_everything_stops(tmp_path):
    out = io.StringIO()
    command = ["python", _script(tmp_path), "0=block", "1=1", "2=block"]
    result = launch(command, 1, 3, stream=out, grace_secs=10)
    assert result.returncode == 1
    assert result.failures == ("worker 1 exited with code 1",)
    assert "tensorweave launch: worker 1 exited with code 1" in out.getvalue()
    assert "tensorweave launch: failed: worker 1 exited with code 1" in out.getvalue()
    stopped = {task.name for task in result.tasks if task.stopped}
    assert stopped == {"ps 0", "worker 0", "worker 2"}
    assert result.exit_codes["worker 1"] == 1
    _assert_nothing_left(result.pids.values(), str(tmp_path))


def test_output_lines_are_prefixed_and_merged(tmp_path):
    out = io.StringIO()
    result = launch(["python", _script(tmp_path)], 1, 2, stream=out, color=None)
    assert result.ok
    lines = out.getvalue().splitlines()
    assert "\x1b" not in out.getvalue()  # a StringIO is no terminal
    for line in lines:
        assert line.startswith(("[ps 0] ", "[worker 0] ", "[worker 1] ", "tensorweave launch: "))
    for name in ("ps 0", "worker 0", "worker 1"):
        assert any(line.startswith(f"[{name}] ready {name} pid=") for line in lines)
        assert f"[{name}] stderr of {name}" in lines


def test_placeholders_seed_flags_and_tf_config_reach_the_tasks(tmp_path):
    script = _script(
        tmp_path,
        """
        import json, os, sys
        print(json.dumps({"argv": sys.argv[1:], "tf_config": os.environ["TF_CONFIG"],
                          "extra": os.environ.get("TW_EXTRA")}), flush=True)
        """,
        "echo.py",
    )
    out = io.StringIO()
    command = ["python", script, "--me={job_name}:{task_index}"]
    result = launch(command, 0, 2, seed_flags=True, env={"TW_EXTRA": "x"}, stream=out)
    assert result.ok
    reports = {}
    for line in out.getvalue().splitlines():
        if line.startswith("[worker "):
            name, _, text = line[1:].partition("] ")
            reports[name] = json.loads(text)
    worker_hosts = ",".join(result.tasks[i].address for i in range(2))
    for i in range(2):
        report = reports[f"worker {i}"]
        assert report["argv"] == [
            f"--me=worker:{i}",
            "--ps_hosts=",
            f"--worker_hosts={worker_hosts}",
            "--job_name=worker",
            f"--task_index={i}",
        ]
        assert json.loads(report["tf_config"]) == {
            "cluster": {"worker": worker_hosts.split(",")},
            "task": {"type": "worker", "index": i},
        }
        assert report["extra"] == "x"


def test_ps_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path):
    script = _script(
        tmp_path,
        """
        import json, os, signal, threading
        task = json.loads(os.environ["TF_CONFIG"])["task"]
        if task["type"] == "ps":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            threading.Event().wait()
        """,
        "stubborn.py",
    )
    out = io.StringIO()
    start = time.monotonic()
    result = launch(["python", script], 1, 1, stream=out, grace_secs=0.5)
    assert result.ok and time.monotonic() - start < _WAIT_S
    assert result.exit_codes["ps 0"] == -signal.SIGKILL
    assert "tensorweave launch: ps 0 did not stop; killing it" in out.getvalue()
    _assert_nothing_left(result.pids.values(), str(tmp_path))


def test_grandchildren_in_a_task_group_are_stopped(tmp_path):
    script = _script(
        tmp_path,
        """
        import json, os, subprocess, sys
        task = json.loads(os.environ["TF_CONFIG"])["task"]
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        print(f"grandchild pid={child.pid}", flush=True)
        """,
        "spawner.py",
    )
    out = io.StringIO()
    result = launch(["python", script], 0, 1, stream=out, grace_secs=5)
    assert result.ok
    (line,) = [line for line in out.getvalue().splitlines() if "grandchild pid=" in line]
    grandchild = int(line.rpartition("=")[2])
    assert "tensorweave launch: stopping processes left behind by worker 0" in out.getvalue()
    _assert_nothing_left([grandchild, *result.pids.values()], str(tmp_path))


def test_command_that_cannot_start_fails_and_stops_the_rest(tmp_path):
    out = io.StringIO()
    result = launch([str(tmp_path / "no-such-program")], 0, 2, stream=out, grace_secs=5)
    assert result.returncode == 1
    (failure,) = result.failures
    assert failure.startswith("worker 0 could not start:")
    assert result.exit_codes == {"worker 0": None, "worker 1": None}


def _read_lines(proc, lines: queue.Queue) -> None:
    for line in iter(proc.stdout.readline, ""):
        lines.put(line)
    lines.put(None)


def _wait_ready(lines: queue.Queue, names, transcript) -> dict[str, int]:
    pids, deadline = {}, time.monotonic() + _WAIT_S
    while set(pids) != set(names):
        line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        assert line is not None, "launcher exited early:\n" + "".join(transcript)
        transcript.append(line)
        for name in names:
            if line.startswith(f"[{name}] ready {name} pid="):
                pids[name] = int(line.rpartition("=")[2])
    return pids


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_the_cli_launcher_stops_everything(tmp_path, signum):
    launcher = [sys.executable, "-m", "tensorweave", "launch", "--ps", "1", "--workers", "2"]
    command = [*launcher, "--grace-secs", "10", "--", "python", _script(tmp_path), "0=block"]
    command.append("1=block")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env)  # fmt: skip
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_read_lines, args=(proc, lines), daemon=True).start()
    transcript: list[str] = []
    pids: dict[str, int] = {}
    try:
        pids = _wait_ready(lines, ["ps 0", "worker 0", "worker 1"], transcript)
        proc.send_signal(signum)
        assert proc.wait(_WAIT_S) == 128 + signum
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for pid in pids.values():  # only if the launcher failed to
            if not _gone(pid):
                os.killpg(pid, signal.SIGKILL)
    while (line := lines.get(timeout=10)) is not None:
        transcript.append(line)
    text = "".join(transcript)
    assert f"tensorweave launch: received {signal.Signals(signum).name}" in text
    _assert_nothing_left(pids.values(), str(tmp_path))


def test_between_graph_trainer_end_to_end(tmp_path):
    # The seeds' trainer shape: the ps serve until stopped; each worker adds to a variable on
    # ps 0 through its own server, contacting only the ps and itself (device filters, §4.2).
    script = _script(
        tmp_path,
        """
        import os, time
        import tensorweave as tf
        from tensorweave.distribute import Server, cluster_resolver

        resolver = cluster_resolver.TFConfigClusterResolver(tf_config=os.environ["TF_CONFIG"])
        job, index = resolver.task_type, resolver.task_id
        server = Server(resolver.cluster_spec(), job_name=job, task_index=index)
        print("serving", flush=True)
        if job == "ps":
            server.join()
        with tf.device("/job:ps/task:0"):
            counter = tf.Variable(0.0, name="counter")
            inc = tf.assign_add(counter, 1.0)
        config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"])
        with tf.Session(server.target, config=config) as sess:
            if index == 0:
                sess.run(tf.global_variables_initializer())
            deadline = time.monotonic() + 30
            while True:
                try:
                    value = sess.run(inc)
                    break
                except tf.errors.FailedPreconditionError:  # the chief has not initialized yet
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
        print(f"counter={value}", flush=True)
        server.stop()
        """,
        "trainer.py",
    )
    out = io.StringIO()
    result = launch(["python", script], 1, 2, stream=out, grace_secs=10)
    assert result.ok, out.getvalue()
    counters = [line for line in out.getvalue().splitlines() if "] counter=" in line]
    assert sorted(float(line.rpartition("=")[2]) for line in counters) == [1.0, 2.0]
    assert result.tasks[0].stopped
    _assert_nothing_left(result.pids.values(), str(tmp_path))
