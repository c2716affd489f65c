"""Training survives SIGKILL-and-restart of a worker, a ps and the chief, and a SIGSTOPped
ps, with the recovery guarantees stated in the README: accuracy >= 0.95, at most one
checkpoint interval lost when a ps dies, no step lost when the chief restarts."""

from __future__ import annotations

import signal
import time

import pytest
from trainer_procs import TRAINER, LocalCluster, final_model_accuracy, global_step_at_least

import tensorweave as tf

pytestmark = [pytest.mark.chaos, pytest.mark.slow, pytest.mark.timeout(240)]

_WAIT_S = 90.0
_CKPT_EVERY = 50


def _argv(cluster: LocalCluster, index: int, *extra: str) -> list[str]:
    return [TRAINER, *cluster.flags("worker", index), "--log_every", "5", *extra]


def _finish(workers, train_steps: int) -> None:
    for worker in workers:
        assert worker.wait(_WAIT_S) == 0, worker.output
    records = {i: w.records()[i] for i, w in enumerate(workers)}
    assert final_model_accuracy(records) >= 0.95, records
    assert max(r["global_step"] for r in records.values()) >= train_steps - 2


def test_worker_sigkill_and_restart(processes):
    cluster = LocalCluster(1, 2)
    processes("ps", cluster, 0)
    extra = ["--train_steps", "2000"]
    w0 = processes("trainer", _argv(cluster, 0, *extra), "worker 0")
    w1 = processes("trainer", _argv(cluster, 1, *extra), "worker 1")
    w1.wait_for(global_step_at_least(60), _WAIT_S)
    w1.kill()
    w1 = processes("trainer", _argv(cluster, 1, *extra), "worker 1 (restarted)")
    _finish([w0, w1], 2000)


def test_ps_sigkill_loses_at_most_one_checkpoint_interval(processes, tmp_path):
    cluster = LocalCluster(1, 2)
    ps = processes("ps", cluster, 0)
    extra = ["--train_steps", "1500", "--checkpoint_dir", str(tmp_path / "ckpt"),
             "--save_checkpoint_steps", str(_CKPT_EVERY)]
    workers = [processes("trainer", _argv(cluster, i, *extra), f"worker {i}")
               for i in range(2)]
    chief = workers[0]
    chief.wait_for(global_step_at_least(150), _WAIT_S)
    ps.kill()
    at_kill = max(workers[0].global_steps() + workers[1].global_steps())
    ps = processes("ps", cluster, 0)
    chief.wait_for(lambda line: len(chief.session_steps()) >= 2, _WAIT_S)
    restored = chief.session_steps()[1]
    assert at_kill - restored <= _CKPT_EVERY, (at_kill, restored)
    _finish(workers, 1500)


def test_chief_restart_loses_no_step(processes, tmp_path):
    cluster = LocalCluster(1, 2)
    processes("ps", cluster, 0)
    # NOTE: a checkpoint only at the start (every 100000 steps): TensorFlow's chief would
    # restore it and rewind the model to step ~0.
    extra = ["--train_steps", "2500", "--checkpoint_dir", str(tmp_path / "ckpt"),
             "--save_checkpoint_steps", "100000"]
    chief = processes("trainer", _argv(cluster, 0, *extra), "worker 0")
    w1 = processes("trainer", _argv(cluster, 1, *extra), "worker 1")
    chief.wait_for(global_step_at_least(200), _WAIT_S)
    assert tf.train.latest_checkpoint(str(tmp_path / "ckpt")) is not None
    chief.kill()
    at_kill = max(chief.global_steps() + w1.global_steps())
    chief = processes("trainer", _argv(cluster, 0, *extra), "worker 0 (restarted)")
    chief.wait_for(lambda line: chief.session_steps(), _WAIT_S)
    assert chief.session_steps()[0] >= at_kill, (at_kill, chief.output)
    _finish([chief, w1], 2500)


def test_ps_sigstop_and_sigcont(processes):
    cluster = LocalCluster(1, 2)
    ps = processes("ps", cluster, 0)
    extra = ["--train_steps", "1200"]
    workers = [processes("trainer", _argv(cluster, i, *extra), f"worker {i}")
               for i in range(2)]
    workers[0].wait_for(global_step_at_least(100), _WAIT_S)
    ps.signal_group(signal.SIGSTOP)
    stopped_at = max(workers[0].global_steps())
    time.sleep(3.0)  # NOTE: the fault itself: a ps frozen for 3 s
    frozen = max(workers[0].global_steps())
    ps.signal_group(signal.SIGCONT)
    assert frozen - stopped_at <= 10, (stopped_at, frozen)  # nothing trains without the ps
    _finish(workers, 1200)
