"""Helpers for running `examples/trainer.py` tasks as subprocesses (see `conftest.py`).

Every process is started on 127.0.0.1 ports picked free, read by a thread (so waits can be
bounded), and ended by PID at teardown (SIGKILL of its process group: a launcher's tasks
live in their own groups and are stopped by the launcher itself).
"""

from __future__ import annotations

import json
import os
import pathlib
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from tensorweave.testing.cluster import pick_unused_port
from tensorweave.testing.processes import spec_string

ROOT = pathlib.Path(__file__).resolve().parents[3]
TRAINER = str(ROOT / "examples" / "trainer.py")
READY_S = 60.0

_STEP_LINE = re.compile(r"worker (\d+): local_step (\d+) global_step (\d+) loss")
_SESSION_LINE = re.compile(r"worker (\d+): session ready at global_step (\d+)")
_ACCURACY_LINE = re.compile(r"worker (\d+): test accuracy ([0-9.]+)")
_PAUSED_LINE = re.compile(r"worker (\d+): paused at local_step (\d+) global_step (\d+)")


class TrainerProcess:
    """One trainer task (or the `tensorweave launch` of a whole cluster) as a subprocess.

    Args:
      argv: the command after the Python interpreter.
      name: used in failure messages.
    """

    def __init__(self, argv: list[str], name: str):
        self.name = name
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("TF_CONFIG", None)
        self.proc = subprocess.Popen(
            [sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env=env, start_new_session=True, cwd=str(ROOT),
        )  # fmt: skip
        self.lines: list[str] = []
        self._new: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        for line in iter(self.proc.stdout.readline, ""):
            self.lines.append(line.rstrip("\n"))
            self._new.put(line)
        self._new.put(None)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, predicate: Callable[[str], Any], timeout_s: float) -> Any:
        """Waits for a line (old or new) for which `predicate` is truthy; returns its value.

        Raises:
          AssertionError: on timeout or if the process ends first.
        """
        deadline = time.monotonic() + timeout_s
        seen = 0
        while True:
            while seen < len(self.lines):
                value = predicate(self.lines[seen])
                seen += 1
                if value:
                    return value
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"{self.name}: timed out after {timeout_s} s:\n{self.output}")
            try:
                line = self._new.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                continue
            if line is None and seen >= len(self.lines):
                raise AssertionError(f"{self.name} exited ({self.proc.poll()}):\n{self.output}")

    def wait(self, timeout_s: float) -> int:
        """Waits for the exit; returns the exit code (AssertionError on timeout)."""
        try:
            code = self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.name} still running after {timeout_s} s:\n"
                                 f"{self.output}") from None  # fmt: skip
        self._reader.join(5)
        return code

    def signal_group(self, signum: int) -> None:
        """Sends `signum` to the process group (the process and its children)."""
        try:
            os.killpg(self.proc.pid, signum)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        """SIGKILLs the process group and reaps the process."""
        self.signal_group(signal.SIGKILL)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass

    # ---------------------------------------------------------------- parsed output
    def global_steps(self) -> list[int]:
        """The global steps of the `local_step ... global_step ...` lines so far."""
        return [int(m.group(3)) for line in self.lines if (m := _STEP_LINE.search(line))]

    def session_steps(self) -> list[int]:
        """The global step at each `session ready` line so far."""
        return [int(m.group(2)) for line in self.lines if (m := _SESSION_LINE.search(line))]

    def paused_workers(self, local_step: int) -> set[int]:
        """The workers that printed their pause after `local_step` (`--pause_at_steps`)."""
        return {int(m.group(1)) for line in self.lines
                if (m := _PAUSED_LINE.search(line)) and int(m.group(2)) == local_step}  # fmt: skip

    def accuracies(self) -> dict[int, float]:
        """{worker index: test accuracy} from the `test accuracy` lines."""
        return {int(m.group(1)): float(m.group(2))
                for line in self.lines if (m := _ACCURACY_LINE.search(line))}  # fmt: skip

    def records(self) -> dict[int, dict]:
        """{worker index: JSON record} from the final JSON lines (launcher prefixes
        stripped)."""
        found = {}
        for line in self.lines:
            text = line.split("] ", 1)[1] if line.startswith("[") else line
            if text.startswith("{") and '"job": "worker"' in text:
                record = json.loads(text)
                found[record["task_index"]] = record
        return found


def final_model_accuracy(records: dict[int, dict]) -> float:
    """The test accuracy of the trained model: the one evaluated by the worker that stopped
    training last. (A worker that stopped earlier may have evaluated while the other's last
    updates were still being applied; async training's accuracy moves by several points
    between nearby steps on a busy machine.)"""
    return max(records.values(), key=lambda r: r["train_end_unix"])["test_accuracy"]


def global_step_at_least(step: int) -> Callable[[str], int | None]:
    """A `wait_for` predicate: the global step of a step line, once it is >= `step`."""

    def predicate(line: str) -> int | None:
        m = _STEP_LINE.search(line)
        return int(m.group(3)) if m and int(m.group(3)) >= step else None

    return predicate


def paused_at(local_step: int) -> Callable[[str], int | None]:
    """A `wait_for` predicate: the global step of the trainer's pause after `local_step`
    (`--pause_at_steps`)."""

    def predicate(line: str) -> int | None:
        m = _PAUSED_LINE.search(line)
        return int(m.group(3)) if m and int(m.group(2)) == local_step else None

    return predicate


def pause_flags(resume_dir: pathlib.Path, *local_steps: int) -> list[str]:
    """The trainer flags that pause it after `local_steps` until `resume` is called."""
    steps = ",".join(str(s) for s in local_steps)
    return ["--pause_at_steps", steps, "--resume_dir", str(resume_dir)]


def resume(resume_dir: pathlib.Path, local_step: int) -> None:
    """Lets the trainers paused after `local_step` (with this `resume_dir`) go on."""
    (resume_dir / f"resume-{local_step}").touch()


class LocalCluster:
    """Free 127.0.0.1 addresses for `num_ps` ps and `num_workers` workers, and the seed
    flags naming them."""

    def __init__(self, num_ps: int, num_workers: int):
        self.ps = [f"127.0.0.1:{pick_unused_port()}" for _ in range(num_ps)]
        self.workers = [f"127.0.0.1:{pick_unused_port()}" for _ in range(num_workers)]

    def spec(self) -> str:
        return spec_string({"ps": self.ps, "worker": self.workers})

    def flags(self, job: str, index: int) -> list[str]:
        return [f"--ps_hosts={','.join(self.ps)}", f"--worker_hosts={','.join(self.workers)}",
                f"--job_name={job}", f"--task_index={index}"]  # fmt: skip
