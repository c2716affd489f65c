"""`tensorweave demo`: the main job. Launches a local cluster (1 ps + 2 workers by default),
trains an MLP between-graph on real data (scikit-learn's bundled digits, or MNIST IDX files),
shows a live progress bar per worker, and ends with the test accuracy, a per-task summary and
the output directory (TensorBoard event files, a Chrome trace, the task logs).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import threading
import time
from typing import Any, TextIO

from tensorweave.deploy.demo_task import EVENT_PREFIX
from tensorweave.deploy.launcher import launch


@dataclasses.dataclass
class DemoOptions:
    """What to train and where (CLI flags of `tensorweave demo`)."""

    ps: int = 1
    workers: int = 2
    steps: int = 1500
    batch_size: int = 128
    learning_rate: float = 0.1
    sync: bool = False
    data: str = "digits"
    data_dir: str | None = None
    output_dir: str | None = None
    progress: bool | None = None
    env: dict | None = None  # security: the tasks' token/TLS settings
    security_summary: str = ""


@dataclasses.dataclass
class _WorkerState:
    steps: int = 0
    global_step: int = 0
    loss: float = float("nan")
    steps_per_sec: float = 0.0
    done: dict | None = None


class _EventSink:
    """The launcher's output stream: task lines go to a log file; `@tw` events update the
    progress display."""

    def __init__(self, log: TextIO, num_workers: int, total_steps: int, progress: Any):
        self._log = log
        self._lock = threading.Lock()
        self._buffer = ""
        self.workers = {i: _WorkerState() for i in range(num_workers)}
        self.trace: dict | None = None
        self.errors: list[str] = []
        self._progress = progress
        self._total = total_steps

    def write(self, text: str) -> int:
        with self._lock:
            self._buffer += text
            *lines, self._buffer = self._buffer.split("\n")
            for line in lines:
                self._line(line)
        return len(text)

    def flush(self) -> None:
        self._log.flush()

    def _line(self, line: str) -> None:
        self._log.write(line + "\n")
        body = line.split("] ", 1)[1] if line.startswith("[") and "] " in line else line
        if body.startswith(EVENT_PREFIX):
            self._event(json.loads(body[len(EVENT_PREFIX):]))
        elif "tensorweave demo:" in body or "tensorweave launch:" in line:
            self.errors.append(body)
            if self._progress is not None:
                self._progress.console.print(body)

    def _event(self, ev: dict) -> None:
        kind, task = ev.get("event"), ev.get("task", 0)
        if kind == "progress" and task in self.workers:
            w = self.workers[task]
            w.steps, w.global_step, w.loss = ev["steps"], ev["global_step"], ev["loss"]
            w.steps_per_sec = ev["steps_per_sec"]
            if self._progress is not None:
                self._progress.update(task, completed=min(w.global_step, self._total),
                                      loss=w.loss, rate=w.steps_per_sec, local=w.steps)
        elif kind == "done" and task in self.workers:
            self.workers[task].done = ev
            if self._progress is not None:
                self._progress.update(task, completed=self._total)
        elif kind == "trace":
            self.trace = ev


def _progress_display(opts: DemoOptions, stream: TextIO) -> Any:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(file=stream, force_terminal=opts.progress)
    progress = Progress(
        TextColumn("[bold]worker {task.id}"), BarColumn(),
        TextColumn("global step {task.completed:>5.0f}/{task.total:.0f}"),
        TextColumn("local {task.fields[local]:>5}"),
        TextColumn("{task.fields[rate]:6.1f} steps/s"),
        TextColumn("loss {task.fields[loss]:.4f}"), TimeElapsedColumn(),
        console=console, transient=False,
    )
    for i in range(opts.workers):
        progress.add_task(f"worker {i}", total=opts.steps, loss=float("nan"), rate=0.0, local=0)
    return progress


def _command(opts: DemoOptions, out: str) -> list[str]:
    cmd = [sys.executable, "-m", "tensorweave.deploy.demo_task", f"--output_dir={out}",
           f"--steps={opts.steps}", f"--batch_size={opts.batch_size}",
           f"--learning_rate={opts.learning_rate}", f"--data={opts.data}"]
    if opts.data_dir:
        cmd.append(f"--data_dir={opts.data_dir}")
    if opts.sync:
        cmd.append("--sync")
    return cmd


def run_demo(opts: DemoOptions, stream: TextIO | None = None) -> int:
    """Runs the demo; prints the result to `stream`. Returns the process exit status."""
    stream = stream or sys.stdout
    out = os.path.abspath(opts.output_dir or os.path.join(
        "tw_output", time.strftime("demo-%Y%m%d-%H%M%S")))
    os.makedirs(out, exist_ok=True)
    if opts.data == "mnist":
        from tensorweave.deploy.datasets import DatasetError, load_mnist

        try:
            load_mnist(opts.data_dir or "")
        except DatasetError as e:
            print(f"tensorweave demo: {e}", file=stream)
            return 2
    show = stream.isatty() if opts.progress is None else opts.progress
    progress = _progress_display(opts, stream) if show else None
    mode = "synchronous" if opts.sync else "asynchronous"
    print(f"tensorweave demo: {opts.ps} ps + {opts.workers} workers, {mode} training of an MLP "
          f"on {opts.data} for {opts.steps} global steps"
          + (f" ({opts.security_summary})" if opts.security_summary else ""),
          file=stream, flush=True)
    t0 = time.perf_counter()
    with open(os.path.join(out, "tasks.log"), "w", encoding="utf-8") as log:
        sink = _EventSink(log, opts.workers, opts.steps, progress)
        if progress is not None:
            progress.start()
        try:
            result = launch(_command(opts, out), opts.ps, opts.workers, stream=sink,
                            color=False, grace_secs=5.0, env=opts.env)
        finally:
            if progress is not None:
                progress.stop()
    return _report(opts, sink, result, out, time.perf_counter() - t0, stream)


def _report(opts: DemoOptions, sink: _EventSink, result: Any, out: str, seconds: float,
            stream: TextIO) -> int:
    print(f"\nper-task summary ({seconds:.1f} s wall):", file=stream)
    total_steps = 0
    for i, w in sorted(sink.workers.items()):
        d = w.done or {}
        total_steps += d.get("steps", 0)
        print(f"  worker {i}: {d.get('steps', w.steps):>5} steps  "
              f"{d.get('steps', 0) / max(d.get('seconds', 1e-9), 1e-9):7.1f} steps/s  "
              f"sent {_mb(d.get('bytes_sent', 0))}  received {_mb(d.get('bytes_received', 0))}"
              f"  test accuracy {d.get('test_accuracy', float('nan')):.4f}", file=stream)
    sent = sum((w.done or {}).get("bytes_sent", 0) for w in sink.workers.values())
    received = sum((w.done or {}).get("bytes_received", 0) for w in sink.workers.values())
    print(f"  ps (all {opts.ps}): received {_mb(sent)}  sent {_mb(received)} "
          "(the workers' traffic)", file=stream)
    chief = sink.workers[0].done
    accs = [chief["test_accuracy"]] if chief else []
    print(f"\noutput directory: {out}", file=stream)
    print(f"  TensorBoard: tensorboard --logdir {os.path.join(out, 'events')}", file=stream)
    if sink.trace:
        print(f"  Chrome trace ({sink.trace['devices']} devices): {sink.trace['path']} "
              "(open in chrome://tracing or https://ui.perfetto.dev)", file=stream)
    print(f"  task logs: {os.path.join(out, 'tasks.log')}", file=stream)
    if not result.ok or not accs:
        for line in sink.errors + list(result.failures):
            print(f"tensorweave demo: {line}", file=stream)
        return result.returncode or 1
    print(f"\ntest accuracy: {accs[0]:.4f}", file=stream, flush=True)
    return 0


def _mb(n: int) -> str:
    return f"{n / 1e6:8.2f} MB"
