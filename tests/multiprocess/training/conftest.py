"""Fixtures for the trainer's multi-process tests: every process they start is ended by PID
at teardown (helpers in `trainer_procs.py`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from trainer_procs import READY_S, TRAINER, TrainerProcess


@pytest.fixture
def processes() -> Iterator[Callable[..., Any]]:
    """`start(kind, ...)`: starts a tracked process; all are killed (by PID) at teardown.

    `start("trainer", argv, name)` gives a `TrainerProcess`; `start("ps", cluster, index)`
    gives ps task `index` of a `LocalCluster` (the trainer's ps: `server.join()`), once it
    serves.
    """
    started: list[Any] = []

    def start(kind: str, *args: Any) -> Any:
        if kind == "trainer":
            argv, name = args
            proc = TrainerProcess(argv, name)
            started.append(proc)
            return proc
        cluster, index = args
        ps = TrainerProcess([TRAINER, *cluster.flags("ps", index)], f"ps {index}")
        started.append(ps)
        ps.wait_for(lambda line: f"ps {index}: serving at" in line, READY_S)
        return ps

    yield start
    for proc in reversed(started):
        proc.kill()
