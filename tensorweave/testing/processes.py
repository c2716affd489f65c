"""Subprocess helpers for multi-process tests.

They start `tensorweave server` tasks on 127.0.0.1, wait (bounded) until they serve, and
always end them by PID.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from typing import Any

_READY_TIMEOUT_S = 30.0


class _LineReader:
    """Reads a process's stdout lines on a thread so waits can be bounded."""

    def __init__(self, stream: Any):
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.all: list[str] = []
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: Any) -> None:
        for line in iter(stream.readline, ""):
            self.all.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def next_line(self, timeout_s: float) -> str | None:
        """The next line, or None at EOF. Raises `queue.Empty` on timeout."""
        return self.lines.get(timeout=timeout_s)


class ServerProcess:
    """One `python -m tensorweave server` task.

    Args:
      cluster_spec: the `--cluster_spec` text (`job|host:port;...,job2|...`).
      job_name, task_index: the task to run.
    """

    def __init__(
        self, cluster_spec: str, job_name: str, task_index: int, env: dict[str, str] | None = None,
        argv_prefix: tuple[str, ...] = (),
    ):
        self.cluster_spec = cluster_spec
        self.job_name = job_name
        self.task_index = task_index
        self.info: dict[str, Any] = {}
        cmd = [
            *argv_prefix,  # e.g. `ip netns exec <host>` (deploy.netns)
            sys.executable,
            "-m",
            "tensorweave",
            "server",
            f"--cluster_spec={cluster_spec}",
            f"--job_name={job_name}",
            f"--task_index={task_index}",
        ]
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self._reader = _LineReader(self.proc.stdout)

    @property
    def pid(self) -> int:
        """The process id."""
        return self.proc.pid

    def wait_ready(self, timeout_s: float = _READY_TIMEOUT_S) -> dict[str, Any]:
        """Waits for the server's JSON line (target, address, devices).

        Raises:
          RuntimeError: if the process exits or stays silent for `timeout_s`.
        """
        try:
            while True:
                line = self._reader.next_line(timeout_s)
                if line is None:
                    raise RuntimeError(f"server exited early: {''.join(self._reader.all)}")
                if line.startswith("{"):
                    self.info = json.loads(line)
                    return self.info
        except queue.Empty:
            self.kill()
            raise RuntimeError(f"server not ready after {timeout_s} s") from None

    @property
    def output(self) -> str:
        """Everything the process printed so far."""
        return "".join(self._reader.all)

    def terminate(self, timeout_s: float = 10.0) -> int:
        """SIGTERM, wait; SIGKILL if it does not exit in time. Returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.wait(timeout_s)

    def kill(self) -> None:
        """SIGKILL by PID (a crash, as far as the cluster can tell)."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.kill()


def spec_string(cluster: dict[str, list[str]]) -> str:
    """The command-line form `job|a;b,job2|c` of a cluster dict."""
    return ",".join(f"{job}|{';'.join(addrs)}" for job, addrs in cluster.items())
