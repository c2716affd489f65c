"""`tensorweave launch` without processes: plans, placeholders, seed flags, TF_CONFIG, dry run,
output prefixing and result helpers."""

from __future__ import annotations

import io
import json
import shlex
import signal
import sys
import threading

import pytest

from tensorweave.cli.main import main
from tensorweave.deploy import launcher, output, plan
from tensorweave.deploy.launcher import LaunchResult, TaskResult, describe_exit
from tensorweave.deploy.plan import format_dry_run, plan_cluster

_PS = ["127.0.0.1:2222", "127.0.0.1:2223"]
_WORKERS = ["127.0.0.1:2224", "127.0.0.1:2225", "127.0.0.1:2226"]


@pytest.fixture
def no_popen(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("nothing may be started")

    monkeypatch.setattr(launcher.subprocess, "Popen", refuse)


def test_plan_ports_names_and_tf_config():
    p = plan_cluster(["trainer"], 2, 3, port_base=2222)
    assert p.cluster_dict() == {"ps": _PS, "worker": _WORKERS}
    assert [t.name for t in p.tasks] == ["ps 0", "ps 1", "worker 0", "worker 1", "worker 2"]
    assert [t.address for t in p.tasks] == _PS + _WORKERS
    for task in p.tasks:
        assert json.loads(task.tf_config) == {
            "cluster": {"ps": _PS, "worker": _WORKERS},
            "task": {"type": task.job, "index": task.index},
        }
        assert task.argv == ("trainer",)


def test_free_ports_are_distinct_and_bindable():
    p = plan_cluster("trainer", 2, 4)
    ports = [int(t.address.rpartition(":")[2]) for t in p.tasks]
    assert len(set(ports)) == 6 and all(0 < port < 65536 for port in ports)
    assert all(t.address.startswith("127.0.0.1:") for t in p.tasks)


def test_placeholders_always_substituted_other_braces_kept():
    command = [
        "trainer",
        "--job_name={job_name}",
        "--task_index={task_index}",
        "--ps_hosts={ps_hosts}",
        "--worker_hosts={worker_hosts}",
        "--cluster_spec={cluster_spec}",
        '{"json": {"kept": 1}}',
        "{unknown}",
    ]
    p = plan_cluster(command, 2, 3, port_base=2222)
    worker1 = p.tasks[3]
    assert worker1.argv == (
        "trainer",
        "--job_name=worker",
        "--task_index=1",
        "--ps_hosts=127.0.0.1:2222,127.0.0.1:2223",
        "--worker_hosts=127.0.0.1:2224,127.0.0.1:2225,127.0.0.1:2226",
        "--cluster_spec=ps|127.0.0.1:2222;127.0.0.1:2223,"
        "worker|127.0.0.1:2224;127.0.0.1:2225;127.0.0.1:2226",
        '{"json": {"kept": 1}}',
        "{unknown}",
    )
    assert p.tasks[0].argv[1:3] == ("--job_name=ps", "--task_index=0")


def test_cluster_spec_placeholder_parses_back():
    from tensorweave.distributed.cluster_spec import ClusterSpec, parse_cluster_spec

    p = plan_cluster(["t", "{cluster_spec}"], 2, 3, port_base=2222)
    assert parse_cluster_spec(p.tasks[0].argv[1]) == ClusterSpec(p.cluster_dict())


def test_seed_flags_appended_after_the_command():
    p = plan_cluster("trainer.py --steps 5", 2, 3, port_base=2222, with_seed_flags=True)
    assert p.tasks[1].argv == (
        "trainer.py",
        "--steps",
        "5",
        "--ps_hosts=127.0.0.1:2222,127.0.0.1:2223",
        "--worker_hosts=127.0.0.1:2224,127.0.0.1:2225,127.0.0.1:2226",
        "--job_name=ps",
        "--task_index=1",
    )


def test_zero_ps_leaves_the_job_out():
    p = plan_cluster(["t", "--ps_hosts={ps_hosts}"], 0, 1, port_base=3000, with_seed_flags=True)
    assert p.cluster_dict() == {"worker": ["127.0.0.1:3000"]}
    assert json.loads(p.tasks[0].tf_config)["cluster"] == {"worker": ["127.0.0.1:3000"]}
    assert p.tasks[0].argv[1:3] == ("--ps_hosts=", "--ps_hosts=")


@pytest.mark.parametrize("name", ["python", "python3", "python3.11"])
def test_python_means_sys_executable(name):
    p = plan_cluster([name, "t.py"], 0, 1, port_base=3000)
    assert p.tasks[0].argv == (sys.executable, "t.py")


@pytest.mark.parametrize("name", ["/usr/bin/python", "pythonic", "ipython"])
def test_other_programs_kept(name):
    assert plan_cluster([name], 0, 1, port_base=3000).tasks[0].argv == (name,)


def test_ipv6_host_is_bracketed():
    p = plan_cluster(["t"], 1, 1, port_base=4000, host="::1")
    assert p.cluster_dict() == {"ps": ["[::1]:4000"], "worker": ["[::1]:4001"]}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_workers": 0}, "--workers must be >= 1"),
        ({"num_ps": -1}, "--ps must be >= 0"),
        ({"command": []}, "No command"),
        ({"command": ["--"]}, "No command"),
        ({"command": "  "}, "No command"),
        ({"port_base": 65535}, "leaves no room"),
        ({"port_base": 0}, "leaves no room"),
        ({"host": "192.0.2.1"}, "Cannot pick free ports"),  # TEST-NET-1: not ours
    ],
)
def test_plan_errors(kwargs, message):
    args = {"command": ["t"], "num_ps": 1, "num_workers": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        plan_cluster(**args)


def test_launch_rejects_bad_arguments_before_starting(no_popen):
    with pytest.raises(ValueError, match="grace_secs"):
        launcher.launch(["t"], 1, 1, grace_secs=-1)
    with pytest.raises(ValueError, match="--workers"):
        launcher.launch(["t"], 1, 0)


def _parse_dry_run(text):
    lines = text.splitlines()
    assert lines[0].startswith("# tensorweave launch --dry-run: ")
    name, _, cluster = lines[1].partition(" = ")
    assert name == "cluster_spec"
    tasks = {}
    for line in lines[2:]:
        prefix, _, rest = line.partition("] ")
        words = shlex.split(rest)
        assert words[0].startswith("TF_CONFIG=")
        tasks[prefix.lstrip("[")] = (json.loads(words[0][len("TF_CONFIG=") :]), words[1:])
    return json.loads(cluster), tasks


def test_format_dry_run_is_parseable():
    p = plan_cluster(["python", "t.py", "--x={job_name}"], 2, 3, port_base=2222)
    text = format_dry_run(p)
    assert text.startswith("# tensorweave launch --dry-run: 2 ps, 3 workers\n")
    cluster, tasks = _parse_dry_run(text)
    assert cluster == {"ps": _PS, "worker": _WORKERS}
    assert list(tasks) == ["ps 0", "ps 1", "worker 0", "worker 1", "worker 2"]
    tf_config, argv = tasks["worker 2"]
    assert tf_config == {"cluster": cluster, "task": {"type": "worker", "index": 2}}
    assert argv == [sys.executable, "t.py", "--x=worker"]


def test_cli_dry_run_starts_nothing(capsys, no_popen):
    argv = ["launch", "--ps", "1", "--workers", "2", "--port-base", "5000", "--dry-run"]
    code = main([*argv, "--seed-flags", "--", "python", "t.py", "--ps", "9"])
    assert code == 0
    cluster, tasks = _parse_dry_run(capsys.readouterr().out)
    assert cluster == {"ps": ["127.0.0.1:5000"], "worker": ["127.0.0.1:5001", "127.0.0.1:5002"]}
    tf_config, command = tasks["worker 1"]
    assert tf_config["task"] == {"type": "worker", "index": 1}
    assert command == [
        sys.executable,
        "t.py",
        "--ps",
        "9",
        "--ps_hosts=127.0.0.1:5000",
        "--worker_hosts=127.0.0.1:5001,127.0.0.1:5002",
        "--job_name=worker",
        "--task_index=1",
    ]


def test_cli_without_double_dash_and_host(capsys, no_popen):
    assert main(["launch", "--workers", "1", "--ps", "0", "--dry-run", "--host", "localhost",
                 "--port-base", "7000", "t", "--workers", "5"]) == 0  # fmt: skip
    cluster, tasks = _parse_dry_run(capsys.readouterr().out)
    assert cluster == {"worker": ["localhost:7000"]}
    assert tasks["worker 0"][1] == ["t", "--workers", "5"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["launch", "--workers", "0", "--", "t"], "--workers must be >= 1"),
        (["launch", "--dry-run"], "No command"),
        (["launch", "--grace-secs", "-1", "--", "t"], "grace_secs"),
    ],
)
def test_cli_errors_exit_2(capsys, no_popen, argv, message):
    assert main(argv) == 2
    assert f"tensorweave launch: {message}" in capsys.readouterr().err


# ---------------------------------------------------------------- output


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_want_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert not output.want_color(io.StringIO(), None)
    assert output.want_color(_Tty(), None)
    assert output.want_color(io.StringIO(), True)
    assert not output.want_color(_Tty(), False)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not output.want_color(_Tty(), None)
    closed = _Tty()
    closed.close()
    assert not output.want_color(closed, None) and output.want_color(closed, True)


def test_prefixes_plain_and_coloured():
    stream = io.StringIO()
    writer = output.PrefixedWriter(stream)
    writer.write_line("worker 0", "hello\n")
    writer.write_line("ps 0", "no newline")
    writer.write_line("ps 0", "crlf\r\n")
    writer.message("done")
    assert stream.getvalue() == (
        "[worker 0] hello\n[ps 0] no newline\n[ps 0] crlf\ntensorweave launch: done\n"
    )
    stream = io.StringIO()
    writer = output.PrefixedWriter(stream, color=True)
    writer.write_line("ps 0", "a")
    writer.write_line("worker 0", "b")
    writer.write_line("ps 0", "c")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "\x1b[1;36m[ps 0]\x1b[0m a"
    assert lines[1] == "\x1b[1;33m[worker 0]\x1b[0m b"
    assert lines[2].startswith("\x1b[1;36m[ps 0]")


def test_pump_lines_decodes_and_finishes_the_last_line():
    stream = io.StringIO()
    writer = output.PrefixedWriter(stream)
    pipe = io.BytesIO(b"one\nbad \xff byte\nlast without newline")
    output.pump_lines(pipe, "worker 1", writer)
    assert stream.getvalue() == (
        "[worker 1] one\n[worker 1] bad \ufffd byte\n[worker 1] last without newline\n"
    )
    assert pipe.closed


def test_concurrent_writers_never_interleave_mid_line():
    stream = io.StringIO()
    writer = output.PrefixedWriter(stream)
    names = [f"worker {i}" for i in range(8)]

    def spam(name):
        for n in range(300):
            writer.write_line(name, f"{name} line {n} " + "x" * 200)

    threads = [threading.Thread(target=spam, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 8 * 300
    for line in lines:
        prefix, _, rest = line.partition("] ")
        assert rest.startswith(prefix[1:] + " line ") and rest.endswith("x" * 200)


def test_closed_stream_does_not_raise():
    stream = io.StringIO()
    writer = output.PrefixedWriter(stream)
    stream.close()
    writer.write_line("ps 0", "x")
    writer.message("y")


# ---------------------------------------------------------------- results


def test_describe_exit():
    assert describe_exit(0) == "exited with code 0"
    assert describe_exit(3) == "exited with code 3"
    assert describe_exit(-signal.SIGKILL) == "was killed by SIGKILL"
    assert describe_exit(-200) == "was killed by signal 200"


def test_launch_result_views():
    tasks = (
        TaskResult("ps", 0, "h:1", 11, -15, True),
        TaskResult("worker", 0, "h:2", 12, 0, False),
        TaskResult("worker", 1, "h:3", None, None, False),
    )
    result = LaunchResult(1, tasks, ("worker 1 could not start: boom",))
    assert not result.ok
    assert result.exit_codes == {"ps 0": -15, "worker 0": 0, "worker 1": None}
    assert result.pids == {"ps 0": 11, "worker 0": 12}
    assert LaunchResult(0, tasks).ok


def test_child_environ(monkeypatch):
    monkeypatch.setenv("TW_TEST_MARKER", "a")
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    env = launcher.child_environ({"EXTRA": "1", "PYTHONUNBUFFERED": "0"})
    assert env["TW_TEST_MARKER"] == "a" and env["EXTRA"] == "1"
    assert env["PYTHONUNBUFFERED"] == "0"
    assert launcher.child_environ()["PYTHONUNBUFFERED"] == "1"


def test_spec_string_and_make_tf_config():
    cluster = {"ps": ["a:1"], "worker": ["b:2", "c:3"]}
    assert plan.spec_string(cluster) == "ps|a:1,worker|b:2;c:3"
    assert json.loads(plan.make_tf_config(cluster, "worker", 1)) == {
        "cluster": cluster,
        "task": {"type": "worker", "index": 1},
    }
