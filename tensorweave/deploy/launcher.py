"""Local cluster launcher: start N ps and M worker tasks of one trainer and supervise them.

Answers the seeds' "Manually specifying these command lines can be tedious": one command
starts every task of a between-graph trainer on this machine, each with its cluster in
`TF_CONFIG` (and, if asked, in the seed trainer's flags; see `plan.py`). TensorFlow left
job setup to cluster managers (jhseu in #8344); this is the smallest such manager.

Lifecycle, following what users had to do by hand (reference §4.1):

* every task runs in its own process group (and session), with its stdout and stderr
  merged, prefixed `[worker 1] ` and copied to one stream a whole line at a time;
* TensorFlow's ps never exit (`server.join()` blocks forever), so once **all workers have
  exited** the launcher stops the ps tasks (SIGTERM, SIGKILL after `grace_secs`);
* a task that fails (non-zero exit) while the workers still run fails the launch: the
  launcher names it (`worker 1 exited with code 1`) and stops every other task, rather
  than leave the others hanging in CreateSession (§4.2, §4.3); a ps exiting 0 early (the
  shared-queue shutdown trick of §4.1) is not a failure;
* SIGINT and SIGTERM are forwarded to every task (a second one skips the grace period);
* in every case each process group is signalled until empty, so no task (nor any child it
  started in its group) is left behind. If the launcher itself is SIGKILLed its tasks
  survive: they live in their own sessions by design, so a terminal's Ctrl-C reaches them
  only through the launcher.

Exit status: 0 when every worker exited 0; 1 after a failure; 128 + signal number after
SIGINT/SIGTERM (130, 143), as a shell reports it.

POSIX only (process groups, `os.killpg`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from tensorweave.deploy.output import PrefixedWriter, pump_lines, want_color
from tensorweave.deploy.plan import WORKER, ClusterPlan, TaskSpec, plan_cluster

_POLL_S = 0.05
_READER_JOIN_S = 2.0
_VERDICT_JOIN_S = 0.5  # a task's last lines before our verdict; a grandchild may hold the pipe


@dataclass(frozen=True)
class TaskResult:
    """How one task ended.

    Attributes:
      job, index, address: the task.
      pid: int, or None when it could not start.
      exit_code: int (negative: killed by that signal, as `Popen.returncode`), or None
        when it could not start.
      stopped: bool, the launcher signalled it (ps after the workers; everything after a
        failure or a signal).
    """

    job: str
    index: int
    address: str
    pid: int | None
    exit_code: int | None
    stopped: bool

    @property
    def name(self) -> str:
        """`"worker 1"`."""
        return f"{self.job} {self.index}"


@dataclass(frozen=True)
class LaunchResult:
    """The outcome of `launch`.

    Attributes:
      returncode: int, 0 if every worker exited 0; 1 after a failure; 128 + signal number
        when the launcher was interrupted.
      tasks: tuple of TaskResult, in start order (ps first).
      failures: tuple of str, e.g. `("worker 1 exited with code 1",)`.
      signal: int or None, the signal that interrupted the launch.
    """

    returncode: int
    tasks: tuple[TaskResult, ...]
    failures: tuple[str, ...] = ()
    signal: int | None = None

    @property
    def ok(self) -> bool:
        """Whether the launch succeeded (returncode 0)."""
        return self.returncode == 0

    @property
    def exit_codes(self) -> dict[str, int | None]:
        """{"worker 0": 0, "ps 0": -15, ...}."""
        return {task.name: task.exit_code for task in self.tasks}

    @property
    def pids(self) -> dict[str, int]:
        """{"worker 0": pid, ...} of the tasks that started."""
        return {task.name: task.pid for task in self.tasks if task.pid is not None}


def describe_exit(code: int) -> str:
    """`"exited with code 1"` or `"was killed by SIGKILL"` for a `Popen.returncode`."""
    if code >= 0:
        return f"exited with code {code}"
    try:
        return f"was killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"was killed by signal {-code}"


def _killpg(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # the id now belongs to someone else's group
        return False
    return True


@dataclass
class _Task:
    spec: TaskSpec
    proc: subprocess.Popen[bytes]
    reader: threading.Thread
    stopped: bool = False
    reported: bool = False

    @property
    def pgid(self) -> int:
        return self.proc.pid  # start_new_session: the task leads its own group

    def alive(self) -> bool:
        """The task, or anything left in its process group, still runs."""
        return self.proc.poll() is None or _group_exists(self.pgid)


class _SignalTrap:
    """Records SIGINT/SIGTERM while supervising (main thread only; else a no-op)."""

    def __init__(self, wake: threading.Event):
        self.received: list[int] = []
        self._wake = wake
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _SignalTrap:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        self.received.append(signum)
        self._wake.set()

    def __exit__(self, *exc: Any) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


@dataclass
class _Supervisor:
    """Starts, watches and stops the tasks of one plan."""

    plan: ClusterPlan
    env: Mapping[str, str]
    writer: PrefixedWriter
    grace_secs: float
    tasks: list[_Task] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    wake: threading.Event = field(default_factory=threading.Event)

    def start_all(self) -> bool:
        """Starts every task, ps first; False (a failure recorded) if one cannot start."""
        for spec in self.plan.tasks:
            self.writer.prefix(spec.name)  # colours follow start order, not output order
        for spec in self.plan.tasks:
            env = {**self.env, "TF_CONFIG": spec.tf_config}
            try:
                proc = subprocess.Popen(
                    spec.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, env=env, start_new_session=True,
                )  # fmt: skip
            except OSError as e:
                self._fail(f"{spec.name} could not start: {e}")
                return False
            reader = threading.Thread(
                target=pump_lines, args=(proc.stdout, spec.name, self.writer),
                name=f"tensorweave-launch-{spec.job}-{spec.index}", daemon=True,
            )  # fmt: skip
            reader.start()
            self.tasks.append(_Task(spec, proc, reader))
            self.writer.message(f"started {spec.name} at {spec.address} (pid {proc.pid})")
        return True

    def _fail(self, text: str) -> None:
        self.failures.append(text)
        self.writer.message(text)

    def _collect_exits(self) -> None:
        for task in self.tasks:
            code = task.proc.poll()
            if code is None or task.reported:
                continue
            task.reported = True
            task.reader.join(_VERDICT_JOIN_S)
            text = f"{task.spec.name} {describe_exit(code)}"
            if code != 0 and not task.stopped:
                self._fail(text)
            else:
                self.writer.message(text + (" (stopped by the launcher)" if task.stopped else ""))

    def supervise(self, trap: _SignalTrap) -> int | None:
        """Waits for the end of the launch, then stops what runs; returns the signal, if any."""
        while True:
            self._collect_exits()
            if trap.received:
                signum = trap.received[0]
                self.writer.message(f"received {signal.Signals(signum).name}; stopping all tasks")
                self.stop(signum, trap)
                return signum
            if self.failures:
                self.writer.message("stopping the other tasks")
                self.stop(signal.SIGTERM, trap)
                return None
            if all(t.proc.poll() is not None for t in self.tasks if t.spec.job == WORKER):
                self._announce_final_stop()
                self.stop(signal.SIGTERM, trap)
                return None
            self.wake.wait(_POLL_S)
            self.wake.clear()

    def _announce_final_stop(self) -> None:
        running = [t.spec.name for t in self.tasks if t.proc.poll() is None]
        leftovers = [t.spec.name for t in self.tasks if t.proc.poll() is not None and t.alive()]
        if running:
            self.writer.message(f"all workers exited; stopping {', '.join(running)}")
        if leftovers:
            self.writer.message(f"stopping processes left behind by {', '.join(leftovers)}")

    def stop(self, signum: int, trap: _SignalTrap | None = None) -> None:
        """Signals every live task group, waits `grace_secs`, then SIGKILLs what remains.

        A further SIGINT/SIGTERM to the launcher while waiting ends the grace period.
        """
        live = [task for task in self.tasks if task.alive()]
        signals_seen = len(trap.received) if trap else 0
        for task in live:
            task.stopped = task.stopped or task.proc.poll() is None
            _killpg(task.pgid, signum)
        deadline = time.monotonic() + self.grace_secs
        while any(task.alive() for task in live) and time.monotonic() < deadline:
            if trap is not None and len(trap.received) > signals_seen:
                break
            self.wake.wait(_POLL_S)
            self.wake.clear()
        self.kill_all()
        self._collect_exits()

    def kill_all(self) -> None:
        """SIGKILLs every task group that still has a process, and reaps the tasks."""
        for task in self.tasks:
            if task.alive():
                if task.proc.poll() is None:
                    self.writer.message(f"{task.spec.name} did not stop; killing it")
                    task.stopped = True
                _killpg(task.pgid, signal.SIGKILL)
        for task in self.tasks:
            task.proc.wait()
        for task in self.tasks:
            task.reader.join(_READER_JOIN_S)

    def result(self, signum: int | None) -> LaunchResult:
        """The LaunchResult of the tasks as they ended."""
        results = [
            TaskResult(task.spec.job, task.spec.index, task.spec.address, task.proc.pid,
                       task.proc.returncode, task.stopped)
            for task in self.tasks
        ]  # fmt: skip
        started = {(r.job, r.index) for r in results}
        results += [
            TaskResult(spec.job, spec.index, spec.address, None, None, False)
            for spec in self.plan.tasks
            if (spec.job, spec.index) not in started
        ]
        returncode = 128 + signum if signum else (1 if self.failures else 0)
        return LaunchResult(returncode, tuple(results), tuple(self.failures), signum)


def child_environ(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The tasks' base environment: `os.environ`, `PYTHONUNBUFFERED=1`, then `env`.

    Unbuffered Python output lets the prefixed lines appear as they are printed. No BLAS
    thread variables: each task's `tf.train.Server` sizes its BLAS pool to its share of
    the host's cores (`runtime.thread_budget`).
    """
    return {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}


def launch(
    command: str | Sequence[str],
    num_ps: int,
    num_workers: int,
    port_base: int | None = None,
    host: str = "127.0.0.1",
    seed_flags: bool = False,
    env: Mapping[str, str] | None = None,
    stream: TextIO | None = None,
    color: bool | None = None,
    grace_secs: float = 10.0,
) -> LaunchResult:
    """Runs a ps/worker trainer on this machine until its workers exit (`tensorweave launch`).

    Each task gets `TF_CONFIG`; placeholders (`{ps_hosts}`, `{worker_hosts}`, `{job_name}`,
    `{task_index}`, `{cluster_spec}`) in `command` are substituted; see the module
    docstring for the lifecycle. Blocks until every task has ended. In the main thread,
    SIGINT and SIGTERM are trapped for the duration and forwarded to the tasks.

    Args:
      command: str (split like a shell would) or list of str. A leading `python` runs as
        `sys.executable`.
      num_ps: int >= 0, parameter server tasks.
      num_workers: int >= 1, worker tasks.
      port_base: int or None: consecutive ports from here, else free ports on `host`.
      host: str, the host in every task address.
      seed_flags: bool, append `--ps_hosts --worker_hosts --job_name --task_index`.
      env: dict of extra environment variables for the tasks (added to `os.environ`).
      stream: text stream for the prefixed output; None means `sys.stdout` at call time.
      color: bool or None (colour when `stream` is a terminal and NO_COLOR is unset).
      grace_secs: float, seconds between SIGTERM (or the forwarded signal) and SIGKILL.

    Returns:
      LaunchResult: per-task exit codes and PIDs, the failures, the overall returncode.

    Raises:
      ValueError: empty command, bad task counts or ports, negative `grace_secs`.
    """
    if grace_secs < 0:
        raise ValueError(f"grace_secs must be >= 0, got {grace_secs}")
    plan = plan_cluster(command, num_ps, num_workers, port_base, host, seed_flags)
    return run_plan(plan, env=env, stream=stream, color=color, grace_secs=grace_secs)


def run_plan(
    plan: ClusterPlan,
    env: Mapping[str, str] | None = None,
    stream: TextIO | None = None,
    color: bool | None = None,
    grace_secs: float = 10.0,
) -> LaunchResult:
    """Runs an already planned cluster (see `launch` for the arguments and lifecycle)."""
    stream = sys.stdout if stream is None else stream
    writer = PrefixedWriter(stream, want_color(stream, color))
    supervisor = _Supervisor(plan, child_environ(env), writer, grace_secs)
    signum = None
    with _SignalTrap(supervisor.wake) as trap:
        try:
            if supervisor.start_all():
                signum = supervisor.supervise(trap)
            else:
                supervisor.stop(signal.SIGTERM, trap)
        finally:
            supervisor.kill_all()
    result = supervisor.result(signum)
    if result.failures:
        writer.message(f"failed: {'; '.join(result.failures)}")
    return result
