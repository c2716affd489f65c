"""Fault tolerance of `examples/trainer.py` (reference §1.8 recovery, §4.5): a ps that is
SIGKILLed and restarted on its port, and a worker that is SIGKILLed and restarted.

The ps is a `tensorweave server` subprocess (what the trainer's ps does: serve until
stopped); the workers are trainer subprocesses given the seed's flags, 1 ps + 2 workers,
async Adagrad. The workers pause after known local steps until the test lets them go on, so
kills and restarts happen at known points of training. Every wait is bounded, every process
is killed by PID at teardown.
"""

from __future__ import annotations

import pytest
from trainer_procs import (
    TRAINER,
    LocalCluster,
    final_model_accuracy,
    global_step_at_least,
    pause_flags,
    paused_at,
    resume,
)

import tensorweave as tf

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

_WAIT_S = 60.0  # bound on every wait for a line or an exit
# The trainers pause at known steps (`--pause_at_steps`) while the test kills and restarts
# tasks, so training length needs no margin for how fast steps run.
_TRAIN_STEPS = 400


def _worker_argv(cluster: LocalCluster, index: int, *extra: str) -> list[str]:
    return [TRAINER, *cluster.flags("worker", index), "--log_every", "5", *extra]


def test_ps_killed_and_restarted_training_resumes_from_checkpoint(processes, tmp_path):
    cluster = LocalCluster(1, 2)
    ps = processes("ps", cluster, 0)
    # Both workers pause after their 100th step: the ps is killed while no step runs.
    extra = ["--train_steps", str(_TRAIN_STEPS), "--checkpoint_dir", str(tmp_path / "ckpt"),
             "--save_checkpoint_steps", "20", *pause_flags(tmp_path, 100)]  # fmt: skip
    workers = [
        processes("trainer", _worker_argv(cluster, i, *extra), f"worker {i}") for i in range(2)
    ]
    chief = workers[0]
    paused = [w.wait_for(paused_at(100), _WAIT_S) for w in workers]
    ps.kill()  # SIGKILL: the variables on the ps are lost
    latest = tf.train.latest_checkpoint(str(tmp_path / "ckpt"))
    assert latest is not None and chief.session_steps(), chief.output
    checkpointed = int(latest.rsplit("-", 1)[1])
    assert 0 < checkpointed <= max(paused)
    ps = processes("ps", cluster, 0)  # the same address; fresh, uninitialized state
    resume(tmp_path, 100)
    # The chief's MonitoredTrainingSession recovers by itself: a new session that restores
    # the latest checkpoint rather than the initial values. (By the time the chief prints
    # its step, worker 1 may have trained on from there.)
    chief.wait_for(lambda line: len(chief.session_steps()) >= 2, _WAIT_S)
    assert chief.session_steps()[1] >= checkpointed, chief.output
    for worker in workers:
        assert worker.wait(_WAIT_S) == 0, worker.output
    assert len(chief.session_steps()) == 2, chief.output
    assert len(workers[1].session_steps()) >= 2, workers[1].output  # it recovered too
    records = {i: w.records()[i] for i, w in enumerate(workers)}
    assert final_model_accuracy(records) >= 0.95, records
    assert max(w.records()[i]["global_step"] for i, w in enumerate(workers)) >= _TRAIN_STEPS - 2


def test_worker_killed_and_restarted_other_worker_keeps_training(processes, tmp_path):
    cluster = LocalCluster(1, 2)
    processes("ps", cluster, 0)
    extra = ["--train_steps", str(_TRAIN_STEPS)]
    dir0, dir1 = tmp_path / "w0", tmp_path / "w1"
    dir0.mkdir(), dir1.mkdir()
    w0 = processes("trainer", _worker_argv(cluster, 0, *extra, *pause_flags(dir0, 50, 100)),
                   "worker 0")  # fmt: skip
    w1 = processes("trainer", _worker_argv(cluster, 1, *extra, *pause_flags(dir1, 20)),
                   "worker 1")  # fmt: skip
    # Once both are paused nothing trains; the later pause saw (about) every step so far.
    at_kill = max(w1.wait_for(paused_at(20), _WAIT_S), w0.wait_for(paused_at(50), _WAIT_S))
    w1.kill()  # SIGKILL (while paused; it is never resumed)
    resume(dir0, 50)
    # Worker 0 trains alone for 50 steps, then waits for the restarted worker 1.
    alone = w0.wait_for(paused_at(100), _WAIT_S)
    assert alone - at_kill >= 45, (at_kill, w0.output)
    w1 = processes("trainer", _worker_argv(cluster, 1, *extra), "worker 1 (restarted)")
    w1.wait_for(lambda line: w1.session_steps(), _WAIT_S)
    # The restarted worker found the trained model (no re-initialization, and worker 0's
    # steps since the kill) and trains on, alone while worker 0 is still paused.
    assert w1.session_steps()[0] >= alone, (alone, w1.output)
    w1.wait_for(global_step_at_least(alone + 20), _WAIT_S)
    resume(dir0, 100)
    assert w1.wait(_WAIT_S) == 0 and w0.wait(_WAIT_S) == 0, w0.output + w1.output
    assert w1.records()[1]["local_steps"] >= 20, w1.output  # it trained after the restart
    records = {0: w0.records()[0], 1: w1.records()[1]}
    assert final_model_accuracy(records) >= 0.95, records
