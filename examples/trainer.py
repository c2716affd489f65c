"""The seeds' distributed trainer ("Putting it all together: example trainer program").

Between-graph replication on a ps/worker cluster: every worker task runs this program with
its own client, builds the same graph under `tf.train.replica_device_setter` (variables
round-robin on the ps tasks, computation on its own task) and trains the digits MLP of
`digits_mlp.py` (64-256-256-10, ReLU, softmax cross-entropy, batch 128) in a
`tf.train.MonitoredTrainingSession` until `StopAtStepHook(last_step=--train_steps)` stops
it. The ps tasks only serve (`server.join()`; the launcher or cluster manager stops them).

* Asynchronous training by default: each worker applies its own gradients with
  `tf.train.AdagradOptimizer(0.1)` (or SGD, `--optimizer sgd`); the global step counts the
  updates of all workers.
* `--sync`: `tf.train.SyncReplicasOptimizer` with `replicas_to_aggregate` = the number of
  workers; the global step counts updates, each the average of that many fresh gradients
  (from whichever workers sent them first), so the workers together run about
  `replicas_to_aggregate` steps per global step.
* `--staleness N`: bounded staleness (`tensorweave.training.bounded_staleness`): a worker
  may begin its step `c` only once every active worker has completed `c - N` steps (its
  own steps, not global steps); 0 is lock-step.

Adagrad's learning rate 0.1, measured with 2 ps + 2 workers on a 2-core machine: async
reaches 0.958-0.975 test accuracy at global step 300 and 0.967-0.975 at 400; sync reaches
0.964-0.975 at global step 150 (4-5 runs each; 0.05 is slower, 0.3 unstable early on).

Each worker reads its own shuffle of the training set (the permutations are seeded by
`--data_seed` + the task index). At the end every worker evaluates the test set through its
server (`tf.Session(server.target)`) and prints `worker 0: test accuracy 0.97x`, then one
JSON line with its timing (`{"job": "worker", "task_index": 0, "steps_per_sec": ...}`;
the rate excludes the first step, which registers the graphs). With `--log_every N` it
prints `worker 0: local_step ... global_step ... loss ...` every N steps, and each time a
(recovered) session is ready, `worker 0: session ready at global_step G`. A ps prints
`ps 0: serving at grpc://...` once it serves. For tests, `--pause_at_steps 50,100
--resume_dir D` pauses after those local steps (printing `worker 0: paused at local_step 50
global_step G`) until the file `D/resume-50` exists (at most `--pause_timeout_secs`).

The cluster comes from the seed's flags (`--ps_hosts --worker_hosts --job_name
--task_index`) or, when `--job_name` is absent, from `TF_CONFIG`. One command starts a
local cluster of it (2 ps + 2 workers):

    tensorweave launch --ps 2 --workers 2 -- python examples/trainer.py --train_steps 400

With `--checkpoint_dir` (and `--save_checkpoint_steps`), a ps that dies and is restarted is
recovered from without intervention: the workers' runs fail with UnavailableError/
AbortedError, `MonitoredTrainingSession` builds new sessions, the chief restores the latest
checkpoint and the other workers wait until the model is ready again.

Deviations from the seed: `tf.train.get_or_create_global_step` (no `tf.contrib.framework`),
argparse without `tf.app.run`; device filters (`/job:ps` and the worker itself, reference
§4.2) so that a worker never waits for another worker (a dead or restarting one included);
non-chief workers poll for the chief's initialization every `--recovery_wait_secs`
(TensorFlow: 30 s, not configurable, so this sets `WorkerSessionCreator`'s class default);
and `--stop_grace_secs` (TensorFlow: 120 s), which bounds how long closing the chief's
session waits for the `SyncReplicasOptimizer` thread, blocked in `take_grad` once the other
workers stopped sending gradients (reference §4.10).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import digits_data  # noqa: E402
from digits_mlp import build_model  # noqa: E402

import tensorweave as tf  # noqa: E402
from tensorweave.training.bounded_staleness import BoundedStalenessOptimizer  # noqa: E402

PS, WORKER = "ps", "worker"
# Measured for the digits MLP, batch 128 (see the module docstring).
DEFAULT_LEARNING_RATE = {"adagrad": 0.1, "sgd": 0.1}


@dataclasses.dataclass(frozen=True)
class Task:
    """This process's place in the cluster.

    Attributes:
      cluster: dict {"ps": [...], "worker": [...]} of "host:port" (a job may be empty).
      job_name: "ps" or "worker".
      task_index: int, the index in the job.
    """

    cluster: dict[str, list[str]]
    job_name: str
    task_index: int

    @property
    def num_workers(self) -> int:
        return len(self.cluster.get(WORKER, []))

    @property
    def is_chief(self) -> bool:
        return self.job_name == WORKER and self.task_index == 0

    def cluster_spec(self) -> Any:
        """The `tf.train.ClusterSpec` (jobs without tasks left out)."""
        return tf.train.ClusterSpec({job: addrs for job, addrs in self.cluster.items() if addrs})


def _hosts(text: str) -> list[str]:
    return [h for h in text.split(",") if h]


def resolve_task(flags: argparse.Namespace, tf_config: str | None) -> Task:
    """The task from the seed's flags, or from `TF_CONFIG` text when `--job_name` is absent.

    Raises:
      SystemExit: neither gives a job, or the job is not ps/worker.
    """
    if flags.job_name:
        cluster = {PS: _hosts(flags.ps_hosts), WORKER: _hosts(flags.worker_hosts)}
        task = Task(cluster, flags.job_name, flags.task_index)
    elif tf_config and tf_config.strip():
        config = json.loads(tf_config)
        cluster = {job: list(config["cluster"].get(job, [])) for job in (PS, WORKER)}
        task = Task(cluster, config["task"]["type"], int(config["task"]["index"]))
    else:
        raise SystemExit("trainer: give --ps_hosts/--worker_hosts/--job_name or set TF_CONFIG")
    if task.job_name not in (PS, WORKER):
        raise SystemExit(f"trainer: job must be 'ps' or 'worker', got {task.job_name!r}")
    if not task.cluster[WORKER]:
        raise SystemExit("trainer: the cluster has no worker task")
    return task


@dataclasses.dataclass(frozen=True)
class Replica:
    """One worker's graph (`build_replica`).

    Attributes:
      images: float32 `[batch, 64]` placeholder.
      labels: int64 `[batch]` placeholder.
      loss: float32 scalar, mean cross-entropy.
      train_op: runs one training step (async: apply; sync: contribute and wait for a
        token).
      accuracy: float32 scalar, the fraction of `labels` in the top-1 logits.
      global_step: the int64 global step variable (on ps task 0).
      hooks: the `SessionRunHook`s the optimizer needs (sync: its session-run hook).
    """

    images: Any
    labels: Any
    loss: Any
    train_op: Any
    accuracy: Any
    global_step: Any
    hooks: tuple[Any, ...]


def make_optimizer(name: str, learning_rate: float) -> Any:
    """`tf.train.AdagradOptimizer` or `tf.train.GradientDescentOptimizer`."""
    if name == "adagrad":
        return tf.train.AdagradOptimizer(learning_rate)
    if name == "sgd":
        return tf.train.GradientDescentOptimizer(learning_rate)
    raise ValueError(f"unknown optimizer {name!r} (adagrad or sgd)")


def build_replica(
    task_index: int,
    cluster: Any,
    optimizer: str = "adagrad",
    learning_rate: float = DEFAULT_LEARNING_RATE["adagrad"],
    sync: bool = False,
    staleness: int | None = None,
    num_workers: int = 1,
    hidden_units: Sequence[int] = (256, 256),
) -> Replica:
    """Builds worker `task_index`'s graph in the default graph (the seed's `with tf.device`).

    Args:
      task_index: this worker's index (its compute ops go to `/job:worker/task:<index>`).
      cluster: the `ClusterSpec` (or dict); with no ps job every op stays unplaced, which
        runs in a local session.
      optimizer: "adagrad" or "sgd".
      learning_rate: the optimizer's learning rate.
      sync: wrap the optimizer in `tf.train.SyncReplicasOptimizer(replicas_to_aggregate=
        num_workers)`.
      staleness: if not None, `BoundedStalenessOptimizer(max_staleness=staleness)`: at
        most this many steps ahead of the slowest worker.
      num_workers: the number of worker replicas.
      hidden_units: the MLP's hidden layer widths.

    Returns:
      A `Replica`.

    Raises:
      ValueError: both `sync` and `staleness`.
    """
    if sync and staleness is not None:
        raise ValueError("--sync and --staleness exclude each other")
    device_fn = tf.train.replica_device_setter(
        worker_device=f"/job:worker/task:{task_index}", cluster=cluster
    )
    hooks: list[Any] = []
    with tf.device(device_fn):
        images = tf.placeholder(tf.float32, [None, 64], name="images")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        logits = build_model(images, hidden_units)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
            name="loss",
        )
        global_step = tf.train.get_or_create_global_step()
        opt = make_optimizer(optimizer, learning_rate)
        if sync:
            opt = tf.train.SyncReplicasOptimizer(
                opt, replicas_to_aggregate=num_workers, total_num_replicas=num_workers
            )
            hooks.append(opt.make_session_run_hook(is_chief=task_index == 0))
        if staleness is not None:
            opt = BoundedStalenessOptimizer(
                opt, max_staleness=staleness, num_workers=num_workers, worker_index=task_index
            )
            hooks.append(opt.make_session_run_hook())
        train_op = opt.minimize(loss, global_step=global_step)
        correct = tf.nn.in_top_k(logits, labels, 1)
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32), name="accuracy")
    return Replica(images, labels, loss, train_op, accuracy, global_step, tuple(hooks))


class SessionReadyHook(tf.train.SessionRunHook):
    """Prints `worker 0: session ready at global_step N` each time a session is created.

    A recovered session (after a ps restart) shows the step its checkpoint restored.
    """

    def __init__(self, prefix: str, global_step: Any):
        self._prefix = prefix
        self._global_step = global_step

    def after_create_session(self, session: Any, coord: Any) -> None:
        step = session.run(self._global_step)
        print(f"{self._prefix} session ready at global_step {step}", flush=True)


def session_config(task: Task) -> Any:
    """Device filters: a worker talks only to the ps tasks and itself (reference §4.2)."""
    return tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task.task_index}"])


def monitored_session(server: Any, task: Task, flags: argparse.Namespace, hooks: list) -> Any:
    """The seed's `tf.train.MonitoredTrainingSession` on this task's server.

    Checkpoints (chief only) go to `--checkpoint_dir` every `--save_checkpoint_steps` global
    steps (0: every 600 s); summaries and step counting are off.
    """
    checkpoint_steps = flags.save_checkpoint_steps or None
    return tf.train.MonitoredTrainingSession(
        master=server.target,
        is_chief=task.is_chief,
        checkpoint_dir=flags.checkpoint_dir or None,
        hooks=hooks,
        config=session_config(task),
        save_checkpoint_steps=checkpoint_steps,
        save_checkpoint_secs=None if checkpoint_steps else 600,
        save_summaries_steps=None,
        save_summaries_secs=None,
        log_step_count_steps=None,
        stop_grace_period_secs=flags.stop_grace_secs,
        # NOTE: a tensorweave argument (TensorFlow polls the chief every 30 s).
        recovery_wait_secs=flags.recovery_wait_secs,
    )


@dataclasses.dataclass
class _Progress:
    """What the training loop did: steps, the last fetched global step, times (s)."""

    local_steps: int = 0
    global_step: int = 0
    first_step_end: float | None = None
    end: float = 0.0


@dataclasses.dataclass(frozen=True)
class Pauses:
    """Testing aid: after local steps `at`, wait (bounded) for a file `resume-N` in `dir`.

    Lets a test act (kill a task, restart one) at a known point of training instead of
    relying on how fast steps run. `--pause_at_steps 50,100 --resume_dir D`.
    """

    at: frozenset[int] = frozenset()
    dir: str = ""
    timeout_s: float = 60.0

    def after_step(self, prefix: str, local_step: int, global_step: int) -> None:
        """Prints `<prefix> paused at local_step L global_step G` and waits, if L is a pause."""
        if local_step not in self.at:
            return
        print(f"{prefix} paused at local_step {local_step} global_step {global_step}",
              flush=True)  # fmt: skip
        resume = os.path.join(self.dir, f"resume-{local_step}")
        deadline = time.monotonic() + self.timeout_s
        while not os.path.exists(resume):
            if time.monotonic() > deadline:
                print(f"{prefix} no {resume} after {self.timeout_s} s; training on", flush=True)
                return
            time.sleep(0.01)


def train_loop(
    mon_sess: Any,
    replica: Replica,
    batches: Any,
    log_every: int,
    prefix: str,
    pauses: Pauses = Pauses(),
) -> _Progress:
    """The seed's `while not mon_sess.should_stop(): mon_sess.run(train_op)`, fed batches.

    Returns:
      A `_Progress`.
    """
    progress = _Progress()
    fetches = [replica.train_op, replica.global_step, replica.loss]
    while not mon_sess.should_stop():
        x, y = next(batches)
        # mon_sess.run recovers from AbortedError/UnavailableError (a preempted ps).
        _, global_step, loss = mon_sess.run(fetches, {replica.images: x, replica.labels: y})
        progress.local_steps += 1
        progress.global_step = int(global_step)
        if progress.first_step_end is None:
            progress.first_step_end = time.perf_counter()
        if log_every and progress.local_steps % log_every == 0:
            print(f"{prefix} local_step {progress.local_steps} global_step {global_step} "
                  f"loss {loss:.4f}", flush=True)  # fmt: skip
        pauses.after_step(prefix, progress.local_steps, progress.global_step)
    progress.end = time.perf_counter()
    return progress


def run_worker(server: Any, task: Task, flags: argparse.Namespace) -> dict[str, Any]:
    """Trains until the global step reaches `--train_steps`, then evaluates the test set.

    Args:
      server: this task's started `tf.train.Server`.
      task: this task.
      flags: the parsed flags.

    Returns:
      The timing and accuracy record that is also printed as JSON.
    """
    data = digits_data.load_digits_split(flags.data_seed)
    learning_rate = flags.learning_rate
    if learning_rate is None:
        learning_rate = DEFAULT_LEARNING_RATE[flags.optimizer]
    prefix = f"worker {task.task_index}:"
    # Each worker its own shuffle of the training set (seeded by the task index).
    batches = digits_data.minibatches(
        data.x_train, data.y_train, flags.batch_size, seed=flags.data_seed + task.task_index
    )
    with tf.Graph().as_default():
        tf.set_random_seed(flags.data_seed)
        replica = build_replica(
            task.task_index,
            task.cluster_spec(),
            optimizer=flags.optimizer,
            learning_rate=learning_rate,
            sync=flags.sync,
            staleness=flags.staleness,
            num_workers=task.num_workers,
        )
        # The StopAtStepHook handles stopping after running given steps.
        hooks = [
            tf.train.StopAtStepHook(last_step=flags.train_steps),
            *replica.hooks,
            SessionReadyHook(prefix, replica.global_step),
        ]
        started = time.perf_counter()
        with monitored_session(server, task, flags, hooks) as mon_sess:
            progress = train_loop(
                mon_sess, replica, batches, flags.log_every, prefix, pauses_from(flags)
            )
        with tf.Session(server.target, config=session_config(task)) as sess:
            feeds = {replica.images: data.x_test, replica.labels: data.y_test}
            accuracy = float(sess.run(replica.accuracy, feeds))
    steady = progress.end - (progress.first_step_end or progress.end)
    record = {
        "job": WORKER,
        "task_index": task.task_index,
        "local_steps": progress.local_steps,
        "global_step": progress.global_step,
        "train_seconds": round(progress.end - started, 3),
        "steady_seconds": round(steady, 3),
        # The first step registers the graphs on every task: not a steady-state step.
        "steps_per_sec": round((progress.local_steps - 1) / steady, 1) if steady > 0 else None,
        "test_accuracy": round(accuracy, 4),
        # Wall-clock end of training (Unix seconds): the worker that stopped last
        # evaluated the final model (an earlier one may have seen a few steps less).
        "train_end_unix": round(time.time() - (time.perf_counter() - progress.end), 3),
    }
    print(f"{prefix} test accuracy {accuracy:.3f}", flush=True)
    print(json.dumps(record), flush=True)
    return record


def pauses_from(flags: argparse.Namespace) -> Pauses:
    """The `Pauses` of `--pause_at_steps`, `--resume_dir` and `--pause_timeout_secs`."""
    steps = frozenset(int(s) for s in flags.pause_at_steps.split(",") if s.strip())
    return Pauses(steps, flags.resume_dir, flags.pause_timeout_secs)


def build_parser() -> argparse.ArgumentParser:
    """The seed's flags plus the training flags."""
    parser = argparse.ArgumentParser(description="Distributed digits trainer (seed 002).")
    parser.register("type", "bool", lambda v: v.lower() == "true")
    add = parser.add_argument
    # Flags for defining the tf.train.ClusterSpec (the seed's).
    add("--ps_hosts", type=str, default="", help="Comma-separated list of hostname:port pairs")
    add("--worker_hosts", type=str, default="", help="Comma-separated list of hostname:port pairs")
    add("--job_name", type=str, default="", help="One of 'ps', 'worker' (absent: TF_CONFIG)")
    # Flags for defining the tf.train.Server (the seed's).
    add("--task_index", type=int, default=0, help="Index of task within the job")
    # Training.
    add("--train_steps", type=int, default=400, help="the last global step")
    add("--batch_size", type=int, default=128)
    add("--optimizer", choices=("adagrad", "sgd"), default="adagrad")
    add("--learning_rate", type=float, default=None, help="default: 0.1 (adagrad and sgd)")
    add("--checkpoint_dir", type=str, default="", help="where the chief saves and restores")
    add("--save_checkpoint_steps", type=int, default=0, help="0: a checkpoint every 600 s")
    add("--sync", action="store_true", help="SyncReplicasOptimizer over all workers")
    add("--staleness", type=int, default=None, help="at most N steps ahead of the slowest")
    add("--log_every", type=int, default=0, help="print step and loss every N local steps")
    add("--recovery_wait_secs", type=float, default=0.5, help="non-chief readiness poll (TF: 30)")
    add("--stop_grace_secs", type=float, default=2.0, help="sync thread grace at close (TF: 120)")
    add("--data_seed", type=int, default=0, help="split seed; shuffle seed: this + task index")
    # Testing aid: pause after these local steps until `<resume_dir>/resume-<step>` exists.
    add("--pause_at_steps", type=str, default="", help="comma-separated local steps")
    add("--resume_dir", type=str, default=".", help="where the resume-<step> files appear")
    add("--pause_timeout_secs", type=float, default=60.0, help="bound on each pause")
    return parser


def main(argv: Sequence[str] | None = None) -> dict[str, Any] | None:
    """Runs this task: a ps serves until stopped; a worker trains and returns its record."""
    flags, unparsed = build_parser().parse_known_args(argv)
    if unparsed:
        print(f"trainer: ignoring unknown arguments {unparsed}", file=sys.stderr)
    task = resolve_task(flags, os.environ.get("TF_CONFIG"))
    # Create and start a server for the local task.
    server = tf.train.Server(
        task.cluster_spec(), job_name=task.job_name, task_index=task.task_index
    )
    if task.job_name == PS:
        print(f"ps {task.task_index}: serving at {server.target}", flush=True)
        server.join()
        return None
    try:
        return run_worker(server, task, flags)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
