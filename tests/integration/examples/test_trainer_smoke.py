"""A quick in-process smoke run of `examples/trainer.py`'s pieces: task resolution (seed
flags, TF_CONFIG), the replica's placement under `replica_device_setter`, and `run_worker`
for 2 workers (threads) on an in-process 1 ps + 2 workers cluster, async and sync."""

from __future__ import annotations

import importlib
import json
import pathlib
import sys
import threading

import pytest

import tensorweave as tf
from tensorweave.testing.cluster import create_local_cluster

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples"

pytestmark = pytest.mark.timeout(120)

_JOIN_S = 60.0


def _trainer():
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    return importlib.import_module("trainer")


def test_task_from_seed_flags_or_tf_config():
    trainer = _trainer()
    flags = trainer.build_parser().parse_args(
        ["--ps_hosts=a:1,b:2", "--worker_hosts=c:3,d:4", "--job_name=worker", "--task_index=1"]
    )
    task = trainer.resolve_task(flags, tf_config='{"ignored": true}')
    assert task == trainer.Task({"ps": ["a:1", "b:2"], "worker": ["c:3", "d:4"]}, "worker", 1)
    assert task.num_workers == 2 and not task.is_chief
    config = {"cluster": {"ps": ["a:1"], "worker": ["c:3"]}, "task": {"type": "worker", "index": 0}}
    task = trainer.resolve_task(trainer.build_parser().parse_args([]), json.dumps(config))
    assert task == trainer.Task({"ps": ["a:1"], "worker": ["c:3"]}, "worker", 0)
    assert task.is_chief
    with pytest.raises(SystemExit, match="TF_CONFIG"):
        trainer.resolve_task(trainer.build_parser().parse_args([]), None)
    with pytest.raises(SystemExit, match="'ps' or 'worker'"):
        trainer.resolve_task(trainer.build_parser().parse_args(["--job_name=chief"]), None)


def test_replica_places_variables_on_the_ps_and_compute_on_its_worker():
    trainer = _trainer()
    cluster = tf.train.ClusterSpec({"ps": ["a:1", "b:2"], "worker": ["c:3", "d:4"]})
    with tf.Graph().as_default() as graph:
        replica = trainer.build_replica(1, cluster, optimizer="adagrad", learning_rate=0.1)
    with graph.as_default():
        variables = {v.op.name: v.device for v in tf.global_variables()}
    # Round robin over the 2 ps tasks in creation order (the model's, then the global step).
    order = [f"{layer}/{kind}" for layer in ("dense", "dense_1", "dense_2")
             for kind in ("kernel", "bias")] + ["global_step"]  # fmt: skip
    assert [variables[name] for name in order] == [f"/job:ps/task:{i % 2}" for i in range(7)]
    slots = [name for name in variables if name.endswith("/Adagrad")]
    assert len(slots) == 6  # Adagrad accumulators, colocated with their variables
    for name in slots:
        assert variables[name] == variables[name[: -len("/Adagrad")]]
    assert replica.loss.device == "/job:worker/task:1"
    assert replica.images.device == "/job:worker/task:1"
    assert replica.hooks == ()


def test_sync_and_staleness_exclude_each_other():
    trainer = _trainer()
    with tf.Graph().as_default(), pytest.raises(ValueError, match="exclude"):
        trainer.build_replica(0, None, sync=True, staleness=1, num_workers=2)


@pytest.fixture
def cluster():
    workers, ps = create_local_cluster(2, 1)
    yield workers, ps
    for server in workers + ps:
        server.stop()


def _run_two_workers(trainer, cluster, *args):
    workers, ps = cluster
    addresses = {"ps": [ps[0].target[len("grpc://"):]],
                 "worker": [w.target[len("grpc://"):] for w in workers]}  # fmt: skip
    results, errors = {}, []

    def run(index):
        try:
            flags = trainer.build_parser().parse_args(list(args))
            task = trainer.Task(addresses, "worker", index)
            results[index] = trainer.run_worker(workers[index], task, flags)
        except BaseException as e:  # noqa: BLE001  (reported by the test)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(_JOIN_S)
    assert not any(t.is_alive() for t in threads), "a worker did not finish"
    assert errors == []
    return results


def test_run_worker_async_in_process(cluster, capsys, tmp_path):
    trainer = _trainer()
    results = _run_two_workers(
        trainer, cluster, "--train_steps", "40", "--checkpoint_dir", str(tmp_path),
        "--save_checkpoint_steps", "20", "--log_every", "10",
    )  # fmt: skip
    assert sorted(results) == [0, 1]
    assert all(r["global_step"] >= 40 - 1 for r in results.values())
    assert sum(r["local_steps"] for r in results.values()) >= 40 - 1
    assert all(0.0 <= r["test_accuracy"] <= 1.0 for r in results.values())
    assert tf.train.latest_checkpoint(str(tmp_path)) is not None  # the chief saved
    out = capsys.readouterr().out
    for i in (0, 1):
        assert f"worker {i}: session ready at global_step" in out
        assert f"worker {i}: test accuracy " in out
        assert json.dumps(results[i]) in out


def test_run_worker_sync_in_process(cluster):
    trainer = _trainer()
    results = _run_two_workers(trainer, cluster, "--sync", "--train_steps", "10")
    assert all(r["global_step"] >= 10 for r in results.values())
    # Each update averages 2 fresh gradients.
    assert sum(r["local_steps"] for r in results.values()) >= 2 * 10
