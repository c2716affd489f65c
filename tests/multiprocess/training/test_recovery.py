"""Fault tolerance of `examples/trainer.py` (reference §1.8 recovery, §4.5): a ps that is
SIGKILLed and restarted on its port, and a worker that is SIGKILLed and restarted.

The ps is a `tensorweave server` subprocess (what the trainer's ps does: serve until
stopped); the workers are trainer subprocesses given the seed's flags, 1 ps + 2 workers,
async Adagrad. Every wait is bounded, every process is killed by PID at teardown.
"""

from __future__ import annotations

import pytest
from trainer_procs import TRAINER, LocalCluster, final_model_accuracy, global_step_at_least

import tensorweave as tf

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

_WAIT_S = 60.0  # bound on every wait for a line or an exit


def _worker_argv(cluster: LocalCluster, index: int, *extra: str) -> list[str]:
    return [TRAINER, *cluster.flags("worker", index), "--log_every", "5", *extra]


def test_ps_killed_and_restarted_training_resumes_from_checkpoint(processes, tmp_path):
    cluster = LocalCluster(1, 2)
    ps = processes("ps", cluster, 0)
    # NOTE: far more steps than the kill point, so training cannot end (at several hundred
    # steps/s) before the test has seen step 100 and killed the ps.
    extra = ["--train_steps", "1500", "--checkpoint_dir", str(tmp_path / "ckpt"),
             "--save_checkpoint_steps", "20"]  # fmt: skip
    workers = [
        processes("trainer", _worker_argv(cluster, i, *extra), f"worker {i}") for i in range(2)
    ]
    chief = workers[0]
    chief.wait_for(global_step_at_least(100), _WAIT_S)
    ps.kill()  # SIGKILL: the variables on the ps are lost
    latest = tf.train.latest_checkpoint(str(tmp_path / "ckpt"))
    assert latest is not None and chief.session_steps(), chief.output
    checkpointed = int(latest.rsplit("-", 1)[1])
    assert checkpointed > 0
    ps = processes("ps", cluster, 0)  # the same address; fresh, uninitialized state
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
    assert max(w.records()[i]["global_step"] for i, w in enumerate(workers)) >= 1500 - 2


def test_worker_killed_and_restarted_other_worker_keeps_training(processes):
    cluster = LocalCluster(1, 2)
    processes("ps", cluster, 0)
    # Enough steps that worker 0 alone cannot finish before worker 1 is back, even on a
    # busy machine where the restart (Python, tensorweave, scikit-learn) takes seconds:
    # alone it trains ~500 steps/s here, and the restart took ~1.2 s (800 steps left the
    # restarted worker 26-124 steps).
    extra = ["--train_steps", "3000"]
    w0 = processes("trainer", _worker_argv(cluster, 0, *extra), "worker 0")
    w1 = processes("trainer", _worker_argv(cluster, 1, *extra), "worker 1")
    w1.wait_for(global_step_at_least(40), _WAIT_S)
    w1.kill()  # SIGKILL
    at_kill = max(w0.global_steps() + w1.global_steps())
    seen = len(w0.global_steps())
    # Restart worker 1 on its address; until its session is ready (process start-up, graph,
    # waiting for the model), worker 0 trains alone and keeps moving the global step.
    w1 = processes("trainer", _worker_argv(cluster, 1, *extra), "worker 1 (restarted)")
    w1.wait_for(lambda line: w1.session_steps(), _WAIT_S)
    alone = w0.global_steps()[seen:]
    assert len(alone) >= 2 and alone == sorted(alone), w0.output
    assert alone[-1] - at_kill >= 10, (at_kill, alone)
    # The restarted worker found the trained model (no re-initialization, and worker 0's
    # steps since the kill) and trains on.
    assert w1.session_steps()[0] >= at_kill + 10, (at_kill, w1.output)
    assert w1.wait(_WAIT_S) == 0 and w0.wait(_WAIT_S) == 0, w0.output + w1.output
    assert w1.records()[1]["local_steps"] >= 20, w1.output  # it trained after the restart
    records = {0: w0.records()[0], 1: w1.records()[1]}
    assert final_model_accuracy(records) >= 0.95, records
