"""The seed examples run as scripts (`python examples/<name>.py`), finish by themselves, leave
no process behind, and print what the seeds print.

Each example runs in a subprocess with a marker in its environment; every process that
still carries the marker afterwards (a server or `multiprocessing` child the example
failed to end) is killed by PID and fails the test.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import time
import uuid

import psutil
import pytest

from tensorweave.testing.threads import wait_until

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
_MARKER = "TENSORWEAVE_SEED_EXAMPLE_RUN"
_TIMEOUT_S = 60.0  # the examples take < ~20 s; slack for a loaded machine

pytestmark = pytest.mark.timeout(300)

HELLO = "b'Hello, distributed TensorFlow!'"

SEED004_LOCAL = """\
Initial value of var in session 1: 0.0
Initial value of var in session 2: 0.0
Incremented var in session 1
Value of var in session 1: 1.0
Value of var in session 2: 0.0
"""

SEED004_SHARED = SEED004_LOCAL.replace(
    "Value of var in session 2: 0.0", "Value of var in session 2: 1.0"
)

CLUSTER_SPEC_FORMS = """\
tf.train.ClusterSpec({"local": ["localhost:2222", "localhost:2223"]})
  /job:local/task:0
  /job:local/task:1
tf.train.ClusterSpec({"worker": ["worker0.example.com:2222", "worker1.example.com:2222", \
"worker2.example.com:2222"], "ps": ["ps0.example.com:2222", "ps1.example.com:2222"]})
  /job:worker/task:0
  /job:worker/task:1
  /job:worker/task:2
  /job:ps/task:0
  /job:ps/task:1
--ps_hosts=ps0.example.com:2222,ps1.example.com:2222 \
--worker_hosts=worker0.example.com:2222,worker1.example.com:2222
  /job:ps/task:0
  /job:ps/task:1
  /job:worker/task:0
  /job:worker/task:1
--cluster_spec='local|localhost:2222'
  /job:local/task:0
--cluster_spec='local|localhost:2222;localhost:2223'
  /job:local/task:0
  /job:local/task:1
--cluster_spec='worker|worker0:2222;worker1:2222;worker2:2222,ps|ps0:2222;ps1:2222'
  /job:worker/task:0
  /job:worker/task:1
  /job:worker/task:2
  /job:ps/task:0
  /job:ps/task:1
dict and --cluster_spec forms define the same cluster: True
"""

_DEV0 = "/job:local/replica:0/task:0/device:CPU:0"
_DEV1 = "/job:local/replica:0/task:1/device:CPU:0"

# The blog's placement traces: call -> [(device, nodes)], devices in the blog's order.
SEED004_PLACEMENT = {
    "run_with_location_trace(sess1, var)": [(_DEV0, {"_SOURCE", "var"})],
    "run_with_location_trace(sess1, var.assign_add(1.0))": [
        (_DEV0, {"_SOURCE", "AssignAdd_1/value", "var", "AssignAdd_1"})
    ],
    "run_with_location_trace(sess2, var)": [(_DEV1, {"_SOURCE"}), (_DEV0, {"_SOURCE", "var"})],
    "run_with_location_trace(sess1, var1)": [(_DEV0, {"_SOURCE", "var1"})],
    "run_with_location_trace(sess1, var2)": [(_DEV0, {"_SOURCE"}), (_DEV1, {"_SOURCE", "var2"})],
    "run_with_location_trace(sess2, var2)": [(_DEV1, {"_SOURCE", "var2"})],
    "run_with_location_trace(sess2, var1)": [(_DEV1, {"_SOURCE"}), (_DEV0, {"_SOURCE", "var1"})],
}

SEED004_GRAPHS = """\
[<tf.Operation 'var/initial_value' type=Const>, <tf.Operation 'var' type=VariableV2>, \
<tf.Operation 'var/Assign' type=Assign>, <tf.Operation 'var/read' type=Identity>]
[]
1.0
"""

SEED004_WAIT = [
    "server 2: 3 seconds left before connecting...",
    "server 1: running no-op...",
    "server 2: 2 seconds left before connecting...",
    "server 2: 1 seconds left before connecting...",
    "server 2: connected!",
    "server 1: no-op run!",
]


# ------------------------------------------------------------------ helpers
def _marked(marker: str) -> list[psutil.Process]:
    """Live processes whose environment carries `marker`."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get(_MARKER) == marker and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except (psutil.Error, OSError):
            pass
    return found


def _end_marked(marker: str, grace_s: float = 5.0) -> list[str]:
    """Kills (by PID) the processes still carrying `marker` after `grace_s`; describes them."""
    try:  # a process may be exiting right now
        wait_until(lambda: not _marked(marker), grace_s, poll_s=0.05)
    except AssertionError:
        pass  # killed and described below
    left = _marked(marker)
    described = []
    for proc in left:
        try:
            described.append(f"pid {proc.pid}: {' '.join(proc.cmdline())}")
            proc.kill()
        except psutil.Error:
            pass
    return described


def run_script(path: pathlib.Path, timeout_s: float = _TIMEOUT_S) -> subprocess.CompletedProcess:
    """Runs `python <path>` to completion (bounded); ends anything it left behind."""
    marker = uuid.uuid4().hex
    proc = subprocess.Popen(
        [sys.executable, str(path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, _MARKER: marker},
    )
    start = time.monotonic()
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        leftovers = _end_marked(marker, grace_s=0.0)
        if proc.poll() is None:
            proc.kill()
        out, err = proc.communicate(timeout=10)
        pytest.fail(
            f"{path.name} did not finish within {timeout_s} s (ended: {leftovers})\n"
            f"--- stdout\n{out}\n--- stderr\n{err}"
        )
    elapsed = time.monotonic() - start
    leftovers = _end_marked(marker)
    assert leftovers == [], f"{path.name} left processes running: {leftovers}"
    assert proc.returncode == 0, f"exit code {proc.returncode}\n{out}\n{err}"
    print(f"{path.name}: {elapsed:.1f} s")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def run_example(name: str) -> str:
    """The stdout of `python examples/<name>.py`."""
    return run_script(EXAMPLES / f"{name}.py").stdout


def _lines(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(prefix)]


def _sections(text: str) -> dict[str, str]:
    """`--- <title>` header -> the text up to the next header."""
    parts = re.split(r"^--- (.*)$", text, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


# --------------------------------------------------------------- fast examples
def test_seed_local_sessions_prints_the_blogs_first_block():
    assert run_example("seed_local_sessions") == SEED004_LOCAL


def test_hello_distributed():
    lines = run_example("hello_distributed").splitlines()
    assert len(lines) == 3, lines
    assert lines[0] == HELLO
    assert re.fullmatch(
        r"\$ python -m tensorweave server --cluster_spec='local\|localhost:\d+' "
        r"--job_name=local --task_index=0 &",
        lines[1],
    ), lines[1]
    assert lines[2] == HELLO


def test_cluster_spec_forms():
    assert run_example("cluster_spec_forms") == CLUSTER_SPEC_FORMS


def test_seed004_shared_variable():
    assert run_example("seed004_shared_variable") == SEED004_SHARED


def test_seed004_placement():
    out = run_example("seed004_placement")
    traces: dict[str, list[tuple[str, set[str]]]] = {}
    call = None
    for line in out.splitlines():
        if line.startswith(">>> "):
            call = line[4:]
            traces[call] = []
        elif line.startswith("/job:"):
            traces[call].append((line, set()))
        else:
            assert line.startswith("   "), line
            traces[call][-1][1].add(line.strip())
    assert traces == SEED004_PLACEMENT
    assert list(traces) == list(SEED004_PLACEMENT)  # and in the blog's order


def test_seed004_graphs():
    assert run_example("seed004_graphs") == SEED004_GRAPHS


# ----------------------------------------------------- multi-process examples
@pytest.mark.slow
def test_seed004_wait_for_servers():
    lines = run_example("seed004_wait_for_servers").splitlines()
    assert sorted(lines) == sorted(SEED004_WAIT)
    # The run blocked until server 2 started (right after its countdown); the countdown is
    # in order. ("connected!" is printed after the server starts, so it may come second.)
    started = lines.index("server 2: 1 seconds left before connecting...")
    assert started < lines.index("server 1: no-op run!")
    assert lines.index("server 1: running no-op...") < started
    countdown = [line for line in lines if line.startswith("server 2:")]
    assert countdown == [line for line in SEED004_WAIT if line.startswith("server 2:")]


@pytest.mark.slow
def test_seed004_server_leaves():
    sections = _sections(run_example("seed004_server_leaves"))
    assert list(sections) == [
        "1. the no-op is on server 1",
        "2. the no-op is on server 2, which leaves",
        "3. server 2 comes back",
    ]
    first, second, third = sections.values()

    # 1. Ops on server 1 keep running after server 2 left.
    assert first.count("Server 1: about to run no-op...") == 6
    assert first.count("success!") == 6
    assert first.count("Server 2 dieing...") == 1

    # 2. An op on the server that left fails fast with UnavailableError naming it.
    assert second.count("Server 2 dieing...") == 1
    assert second.count("success!") >= 1
    failure = re.search(
        r"failed after (\d+\.\d) s: UnavailableError: /job:local/replica:0/task:1 at "
        r"127\.0\.0\.1:\d+ is unreachable",
        second,
    )
    assert failure is not None, second
    assert float(failure.group(1)) < 2.0
    assert second.index("Server 2 dieing...") < failure.start()

    # 3. The old session gets AbortedError once server 2 is back; a new session works.
    marks = [
        "Server 2 dieing...",
        "UnavailableError; retrying until server 2 is back...",
        "Restarting server 2...",
        "Server 1: AbortedError: ",
        "Server 1: new session, about to run no-op...success!",
    ]
    positions = [third.find(mark) for mark in marks]
    assert -1 not in positions and positions == sorted(positions), third
    aborted = _lines(third, "Server 1: AbortedError: ")
    assert len(aborted) == 1 and "/job:local/replica:0/task:1" in aborted[0]


@pytest.mark.slow
def test_seed004_init_wait():
    lines = run_example("seed004_init_wait").splitlines()
    assert lines.count("Server 1: waiting for connection...") == 1
    assert lines[-1] == "Server 1: variables initialized!"
    assert _lines("\n".join(lines), "Server 2:") == [
        f"Server 2: waiting {n} seconds before initializing..." for n in (3, 2, 1)
    ]
    waits = lines.count("Server 1: waiting for initialization...")
    assert waits >= 1
    assert len(lines) == 1 + 3 + waits + 1, lines


@pytest.mark.slow
def test_seed004_ps_workers_end_at_ten():
    out = run_example("seed004_ps_workers")
    ps = _lines(out, "Parameter server: ")
    values = [float(line.rpartition(" ")[2]) for line in ps if "var has value" in line]
    assert [line for line in ps if "var has value" not in line] == [
        "Parameter server: waiting for cluster connection...",
        "Parameter server: cluster ready!",
        "Parameter server: initializing variables...",
        "Parameter server: variables initialized",
        "Parameter server: waiting for the workers to finish...",
        "Parameter server: blocking...",
    ]
    assert ps[4:9] == [f"Parameter server: var has value {v:.1f}" for v in values[:5]]
    assert ps[-2:] == ["Parameter server: var has value 10.0", "Parameter server: blocking..."]
    assert len(values) == 6 and values == sorted(values) and values[-1] == 10.0
    for n in (0, 1):
        worker = _lines(out, f"Worker {n}: ")
        assert worker[:2] == [
            f"Worker {n}: waiting for cluster connection...",
            f"Worker {n}: cluster ready!",
        ]
        waits = worker.count(f"Worker {n}: waiting for variable initialization...")
        assert worker[2 + waits :] == [
            f"Worker {n}: variables initialized",
            *[f"Worker {n}: incrementing var"] * 5,
            f"Worker {n}: blocking...",
        ]


# ------------------------------------------------------------- runtime bugs
@pytest.mark.slow
def test_script_leaving_a_distributed_session_open_exits(tmp_path):
    script = tmp_path / "hello_unclosed.py"
    script.write_text(
        "import tensorweave as tf\n"
        'c = tf.constant("Hello, distributed TensorFlow!")\n'
        "server = tf.train.Server.create_local_server()\n"
        "sess = tf.Session(server.target)\n"
        "print(sess.run(c))\n"
    )
    assert run_script(script, timeout_s=10.0).stdout == HELLO + "\n"
