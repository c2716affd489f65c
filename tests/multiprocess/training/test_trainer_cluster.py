"""`examples/trainer.py` (seed 002's trainer) on a real local cluster of 2 ps + 2 workers,
started by `tensorweave launch`: asynchronous and synchronous training reach >= 0.95 test
accuracy (the final model), the ps tasks are stopped by the launcher once the workers are
done, and bounded staleness (`--staleness 1`) completes.

The cluster reaches the trainer through TF_CONFIG (async) or the seed's flags
(`--seed-flags`: sync, staleness). Every wait is bounded; the launcher runs in its own
process group and is killed by PID if it overstays.
"""

from __future__ import annotations

import os
import re
import signal

import psutil
import pytest
from trainer_procs import TRAINER, final_model_accuracy, pause_flags, resume

from tensorweave.testing.threads import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

_LAUNCH_S = 100.0  # bound on a whole launch
_STARTED = re.compile(r"tensorweave launch: started (\w+ \d+) at \S+ \(pid (\d+)\)")


def _launch(processes, *trainer_args: str, seed_flags: bool = False, during=None):
    launcher = ["-m", "tensorweave", "launch", "--ps", "2", "--workers", "2", "--grace-secs", "5"]
    if seed_flags:
        launcher.append("--seed-flags")
    argv = [*launcher, "--", "python", TRAINER, "--log_every", "25", *trainer_args]
    proc = processes("trainer", argv, "tensorweave launch")
    try:
        if during is not None:
            during(proc)
        code = proc.wait(_LAUNCH_S)
    finally:
        if proc.proc.poll() is None:  # overstayed: SIGTERM makes the launcher stop its tasks
            proc.signal_group(signal.SIGTERM)
            try:
                proc.proc.wait(15)
            finally:
                for pid in _pids(proc).values():  # each task leads its own process group
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
    return proc, code


def _pids(proc) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for line in proc.lines if (m := _STARTED.search(line))}


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _assert_gone(pids: dict[str, int]) -> None:
    wait_until(
        lambda: not any(_alive(pid) for pid in pids.values()),
        timeout=10,
        poll_s=0.05,
        what=lambda: f"the processes to end: {[n for n, p in pids.items() if _alive(p)]}",
    )


def _assert_trained(proc, code: int, last_step: int) -> None:
    assert code == 0, proc.output
    assert sorted(proc.accuracies()) == [0, 1], proc.output
    records = proc.records()
    assert sorted(records) == [0, 1], proc.output
    assert final_model_accuracy(records) >= 0.95, records
    assert all(r["global_step"] >= last_step - 2 for r in records.values()), records
    assert all(r["local_steps"] > 0 for r in records.values())


def test_async_reaches_95_percent_and_the_launcher_stops_the_ps(processes, tmp_path):
    def both_train(proc) -> None:
        # Each worker pauses after its 20th step; once both have, they go on together (the
        # chief alone could otherwise finish before worker 1 has joined).
        proc.wait_for(lambda line: proc.paused_workers(20) == {0, 1}, _LAUNCH_S)
        resume(tmp_path, 20)

    proc, code = _launch(
        processes, "--train_steps", "400", *pause_flags(tmp_path, 20), during=both_train
    )
    _assert_trained(proc, code, 400)
    records = proc.records()
    # Asynchronous: the global step counts the updates of both workers.
    assert sum(r["local_steps"] for r in records.values()) >= 400 - 2
    text = proc.output
    assert "tensorweave launch: all workers exited; stopping ps 0, ps 1" in text
    for i in (0, 1):
        assert f"tensorweave launch: ps {i} was killed by SIGTERM (stopped by the launcher)" in text
        assert f"[ps {i}] ps {i}: serving at grpc://" in text
    pids = _pids(proc)
    assert sorted(pids) == ["ps 0", "ps 1", "worker 0", "worker 1"]
    _assert_gone(pids)


def test_sync_replicas_reach_95_percent(processes):
    proc, code = _launch(processes, "--sync", "--train_steps", "200", seed_flags=True)
    _assert_trained(proc, code, 200)
    records = proc.records()
    # Synchronous: one global step per update averaging 2 fresh gradients (from either
    # worker: the accumulators do not tell them apart), so the workers run about twice as
    # many steps as there are global steps (plus the few whose gradients were stale).
    total = sum(r["local_steps"] for r in records.values())
    assert 2 * 200 - 4 <= total <= 2 * 200 + 20, records
    assert "ps 0 was killed by SIGTERM (stopped by the launcher)" in proc.output
    _assert_gone(_pids(proc))


def test_bounded_staleness_run_completes(processes):
    proc, code = _launch(processes, "--staleness", "1", "--train_steps", "100", seed_flags=True)
    assert code == 0, proc.output
    records = proc.records()
    assert sorted(records) == [0, 1], proc.output
    assert all(r["global_step"] >= 100 - 2 for r in records.values())
    # Neither worker ran ahead: with a bound of 1 their step counts stay close.
    steps = [r["local_steps"] for r in records.values()]
    assert abs(steps[0] - steps[1]) <= 2, records
    _assert_gone(_pids(proc))
