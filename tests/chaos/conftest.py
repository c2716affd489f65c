"""The chaos tier (`make chaos`, `pytest -m chaos tests/chaos`): kills, stops and restarts
tasks of real multi-process clusters during training, fuzzes every RPC, and soaks a
long-lived ps. Collected with the rest of the suite but run only when `-m chaos` selects
it (it takes minutes). Every process is ended by PID at teardown."""

from __future__ import annotations

import pathlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "multiprocess" / "training"))

from trainer_procs import READY_S, TRAINER, TrainerProcess  # noqa: E402


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    if "chaos" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="chaos tier: run with `make chaos` (pytest -m chaos)")
    for item in items:
        if "chaos" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def processes() -> Iterator[Callable[..., Any]]:
    """`start("trainer", argv, name)` or `start("ps", cluster, index)` (see
    tests/multiprocess/training/conftest.py); all are killed by PID at teardown."""
    started: list[Any] = []

    def start(kind: str, *args: Any) -> Any:
        if kind == "trainer":
            proc = TrainerProcess(*args)
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
