"""The task side of `benchmarks/layouts.py`: what each ps and worker process of a layout
runs (the models, the training loops of every layout, the start line and the CPU window
each worker measures). `layouts.py` starts these processes (`--role ps|worker`), gathers
their JSON records and summarises them; its docstring describes the layouts and figures.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import sys
import tempfile
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

_BARRIER_S = 300.0


def _import_backend(backend: str) -> Any:
    """The `tf` module of a task: tensorweave, or TensorFlow's `compat.v1` graph mode."""
    if backend == "tensorflow":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()
        return tf
    import tensorweave as tf

    return tf


def _mlp(tf: Any, x: Any) -> Any:
    """The digits MLP's logits from `get_variable`s `w0..w2`, `b0..b2` (the in-graph
    towers share them; under TensorFlow every layout uses it: `digits_mlp.build_model`
    is tensorweave's `tf.layers`, which TensorFlow 2.16+ no longer has)."""
    net = x
    for k, (n_in, n_out) in enumerate([(64, 256), (256, 256), (256, 10)]):
        w = tf.get_variable(f"w{k}", [n_in, n_out],
                            initializer=tf.glorot_uniform_initializer())
        b = tf.get_variable(f"b{k}", [n_out], initializer=tf.zeros_initializer())
        net = tf.matmul(net, w) + b
        net = tf.nn.relu(net) if k < 2 else net
    return net


def _inputs(tf: Any, layout: str, task_index: int) -> tuple[Any, Any]:
    """The model's inputs: placeholders, or (`dataset`) placeholders defaulting to a
    `tf.data` pipeline's next batch (fed only to evaluate)."""
    if layout != "dataset":
        return (tf.placeholder(tf.float32, [None, 64], name="x"),
                tf.placeholder(tf.int64, [None], name="y"))
    import digits_data

    data = digits_data.load_digits_split()
    ds = (tf.data.Dataset.from_tensor_slices((data.x_train, data.y_train.astype("int64")))
          .shuffle(len(data.x_train), seed=task_index).repeat().batch(128).prefetch(1))
    bx, by = tf.data.make_one_shot_iterator(ds).get_next()
    return (tf.placeholder_with_default(bx, [None, 64], name="x"),
            tf.placeholder_with_default(by, [None], name="y"))


def _build(tf: Any, task_index: int, cluster: Any, layout: str = "plain",
           backend: str = "tensorweave") -> dict[str, Any]:
    workers = len(cluster["worker"])
    with tf.device(tf.train.replica_device_setter(
            worker_device=f"/job:worker/task:{task_index}", cluster=cluster)):
        x, y = _inputs(tf, layout, task_index)
        if backend == "tensorflow":
            logits = _mlp(tf, x)
        else:
            from digits_mlp import build_model

            logits = build_model(x)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        global_step = tf.train.get_or_create_global_step()
        opt, hooks = tf.train.GradientDescentOptimizer(0.1), []
        if layout == "sync":
            opt = tf.train.SyncReplicasOptimizer(
                opt, replicas_to_aggregate=workers, total_num_replicas=workers)
            hooks.append(opt.make_session_run_hook(is_chief=task_index == 0))
        train_op = opt.minimize(loss, global_step=global_step)
        correct = tf.cast(tf.nn.in_top_k(logits, y, 1), tf.float32)
        return {"x": x, "y": y, "train_op": train_op, "global_step": global_step,
                "accuracy": tf.reduce_mean(correct), "hooks": hooks,
                "feed": layout != "dataset",
                "batches_per_global_step": workers if layout == "sync" else 1}


def _build_in_graph(tf: Any, cluster: Any) -> dict[str, Any]:
    """(d): one tower per worker task, gradients averaged on the ps."""
    workers = len(cluster["worker"])
    towers, grads = [], []
    for i in range(workers):
        with tf.device(tf.train.replica_device_setter(
                worker_device=f"/job:worker/task:{i}", cluster=cluster)):
            with tf.variable_scope("model", reuse=tf.AUTO_REUSE):
                x = tf.placeholder(tf.float32, [None, 64], name=f"x{i}")
                y = tf.placeholder(tf.int64, [None], name=f"y{i}")
                net = _mlp(tf, x)
                loss = tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=net))
                params = tf.trainable_variables()
                grads.append(tf.gradients(loss, params))
                towers.append((x, y, net))
    with tf.device("/job:ps/task:0"):
        global_step = tf.train.get_or_create_global_step()
        averaged = [tf.add_n(list(gs)) / float(workers) for gs in zip(*grads)]
        train_op = tf.train.GradientDescentOptimizer(0.1).apply_gradients(
            zip(averaged, params), global_step=global_step)
    x, y, logits = towers[0]
    correct = tf.cast(tf.nn.in_top_k(logits, y, 1), tf.float32)
    return {"towers": towers, "x": x, "y": y, "train_op": train_op,
            "global_step": global_step, "accuracy": tf.reduce_mean(correct),
            "batches_per_global_step": workers}


def _run_in_graph(tf: Any, server: Any, cluster: Any, steps: int, warmup: int,
                  probe: Probe) -> dict:
    """Worker 0 of (d): the client's loop; a rate in worker batches per second."""
    import digits_data

    model = _build_in_graph(tf, cluster)
    data = digits_data.load_digits_split()
    streams = [digits_data.minibatches(data.x_train, data.y_train, 128, i)
               for i in range(len(model["towers"]))]
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        window = None
        for step in range(steps):
            if step == warmup:
                window = _Window(sess, model, probe)
            feed = {}
            for (x, y, _), batches in zip(model["towers"], streams):
                feed[x], feed[y] = next(batches)
            sess.run(model["train_op"], feed)
        record = window.figures(steps - warmup) if window else {}
        record["steps_per_sec"] *= len(model["towers"])
        record["cpu_ms_per_step"] /= len(model["towers"])
        acc = sess.run(model["accuracy"],
                       {model["x"]: data.x_test, model["y"]: data.y_test})
    return {**record, "test_accuracy": float(acc), "blas_threads": _blas_threads()}


def _serve_until_done(server: Any, barrier: str | None) -> None:
    """A worker of (d) other than 0: serves until worker 0 leaves `done` (bounded)."""
    deadline = time.monotonic() + 900.0
    while barrier and not os.path.exists(os.path.join(barrier, "done")):
        if time.monotonic() > deadline:
            raise RuntimeError("worker 0 of the in-graph layout did not finish in 900 s")
        time.sleep(0.05)  # NOTE: polls a file; the server's threads do the work


def _proc_cpu_s(pid: int | None) -> float:
    """User + system CPU seconds of process `pid` (0.0 without /proc or a pid)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, TypeError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclasses.dataclass(frozen=True)
class Probe:
    """How a worker measures: the ps's pid (its CPU), and the start line all workers wait
    at after their warm-up (`barrier`: a directory where each leaves `ready-<i>`), so
    that the measured windows coincide."""

    ps_pid: int | None = None
    barrier: str | None = None
    workers: int = 1

    def _count(self, prefix: str) -> int:
        return sum(name.startswith(prefix) for name in os.listdir(self.barrier))

    def ready(self, index: int) -> None:
        """Marks worker `index` ready (at the start line)."""
        if self.barrier is not None:
            pathlib.Path(self.barrier, f"ready-{index}").touch()

    def all_ready(self) -> bool:
        return self.barrier is None or self._count("ready-") >= self.workers

    def line_up(self, index: int) -> None:
        """Marks worker `index` ready and waits (bounded) until every worker is."""
        self.ready(index)
        deadline = time.monotonic() + _BARRIER_S
        while not self.all_ready():
            if time.monotonic() > deadline:
                raise RuntimeError(f"not every worker was ready within {_BARRIER_S} s")
            time.sleep(0.001)

    def finish(self, index: int) -> None:
        """Marks worker `index` done with its measured steps."""
        if self.barrier is not None:
            pathlib.Path(self.barrier, f"done-{index}").touch()

    def all_done(self) -> bool:
        return self.barrier is None or self._count("done-") >= self.workers

    def task_pids(self) -> list[int]:
        """Every task's pid (the ps's and the workers'), from the `pids` file the parent
        writes once it started them all (empty without it)."""
        if self.barrier is None:
            return []
        try:
            with open(os.path.join(self.barrier, "pids")) as f:
                return [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            return []


class _Window:
    """CPU and global-step counts over the measured steps (this process and the ps)."""

    def __init__(self, sess: Any, model: dict[str, Any], probe: Probe) -> None:
        self.sess, self.model, self.ps_pid = sess, model, probe.ps_pid
        self.pids = probe.task_pids()
        self.global_step = int(sess.run(model["global_step"]))
        self.ps_cpu = _proc_cpu_s(self.ps_pid)
        self.tasks_cpu = sum(_proc_cpu_s(p) for p in self.pids)
        times = os.times()
        self.cpu, self.wall = times.user + times.system, time.perf_counter()

    def figures(self, steps: int) -> dict[str, float]:
        wall = time.perf_counter() - self.wall
        times = os.times()
        cpu = times.user + times.system - self.cpu
        ps_cpu = _proc_cpu_s(self.ps_pid) - self.ps_cpu
        tasks_cpu = sum(_proc_cpu_s(p) for p in self.pids) - self.tasks_cpu
        global_steps = int(self.sess.run(self.model["global_step"])) - self.global_step
        batches = max(global_steps, 1) * self.model.get("batches_per_global_step", 1)
        end = time.time()
        return {"steps_per_sec": steps / wall, "global_steps_per_sec": global_steps / wall,
                "window_unix": [end - wall, end], "cpu_ms_per_step": 1e3 * cpu / steps,
                "ps_cpu_ms_per_global_step": 1e3 * ps_cpu / max(global_steps, 1),
                "cluster_cpu_ms_per_batch": 1e3 * tasks_cpu / batches if self.pids else None}


def _loop(sess: Any, model: dict[str, Any], steps: int, warmup: int, seed: int,
          probe: Probe) -> dict:
    import digits_data

    data = digits_data.load_digits_split()
    batches = digits_data.minibatches(data.x_train, data.y_train, 128, seed)
    window = None
    for step in range(steps):
        if step == warmup:
            probe.line_up(seed)
            window = _Window(sess, model, probe)
        if model["feed"]:
            bx, by = next(batches)
            sess.run(model["train_op"], {model["x"]: bx, model["y"]: by})
        else:
            sess.run(model["train_op"])
    record = window.figures(steps - warmup) if window else {}
    acc = sess.run(model["accuracy"], {model["x"]: data.x_test, model["y"]: data.y_test})
    return {**record, "test_accuracy": float(acc), "blas_threads": _blas_threads()}


def _sync_loop(tf: Any, sess: Any, model: dict[str, Any], steps: int, warmup: int,
               index: int, probe: Probe) -> dict:
    """(e): `steps - warmup` measured steps. A worker waiting at a start line or done would
    leave the others waiting for tokens (its gradients are part of every global step), so
    the start line does not block: a worker trains on after its warm-up until every worker
    is ready, then measures; and a finished worker trains on, unmeasured, until every
    worker has finished (its last step bounded: the others may stop first and leave it
    waiting for a token)."""
    import digits_data

    data = digits_data.load_digits_split()
    batches = digits_data.minibatches(data.x_train, data.y_train, 128, index)
    window, step, start = None, 0, 0
    while window is None or step - start < steps - warmup:
        if window is None and step >= warmup:
            probe.ready(index)
            if probe.all_ready():
                window, start = _Window(sess, model, probe), step
        bx, by = next(batches)
        sess.run(model["train_op"], {model["x"]: bx, model["y"]: by})
        step += 1
    record = window.figures(step - start)
    acc = sess.run(model["accuracy"], {model["x"]: data.x_test, model["y"]: data.y_test})
    probe.finish(index)
    drain = tf.RunOptions(timeout_in_ms=2000)
    deadline = time.monotonic() + _BARRIER_S
    while not probe.all_done() and time.monotonic() < deadline:
        bx, by = next(batches)
        try:
            sess.run(model["train_op"], {model["x"]: bx, model["y"]: by}, options=drain)
        except (tf.errors.DeadlineExceededError, tf.errors.OutOfRangeError):
            # NOTE: the others stopped meanwhile: this step's token never comes (or the
            # chief's session closed the token queue, TensorFlow's OutOfRangeError)
            break
    return {**record, "test_accuracy": float(acc), "blas_threads": _blas_threads()}


def _blas_threads() -> int | None:
    """This process's BLAS pool (the smallest of the loaded BLAS libraries'; None: none)."""
    from threadpoolctl import threadpool_info

    pools = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    return min(pools) if pools else None


def _stop(server: Any) -> None:
    """Stops a task's server (TensorFlow's cannot be stopped: its process exits instead)."""
    if hasattr(server, "stop"):
        server.stop()


def run_worker(cluster: dict, index: int, layout: str, steps: int, warmup: int,
               probe: Probe = Probe(), backend: str = "tensorweave") -> dict:
    """One worker task of `layout`; returns its record."""
    tf = _import_backend(backend)

    server = tf.train.Server(cluster, job_name="worker", task_index=index)
    if layout == "ingraph":
        if index:
            _serve_until_done(server, probe.barrier)
            _stop(server)
            return {"task_index": index, "serving": True}
        record = _run_in_graph(tf, server, cluster, steps, warmup, probe)
        if probe.barrier:
            pathlib.Path(probe.barrier, "done").touch()
        _stop(server)
        return {"task_index": index, **record}
    model = _build(tf, index, cluster, layout, backend)
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"],
                            operation_timeout_in_ms=120000)
    if layout == "plain":
        with tf.Session(server.target, config=config) as sess:
            if index == 0:
                sess.run(tf.global_variables_initializer())
            else:
                while len(sess.run(tf.report_uninitialized_variables())):
                    time.sleep(0.2)
            record = _loop(sess, model, steps, warmup, index, probe)
    elif layout == "supervisor":
        sv = tf.train.Supervisor(is_chief=index == 0, logdir=tempfile.mkdtemp(),
                                 recovery_wait_secs=0.2)
        with sv.managed_session(server.target, config=config) as sess:
            record = _loop(sess, model, steps, warmup, index, probe)
    else:
        # NOTE: recovery_wait_secs is tensorweave's (TensorFlow's non-chief polls every
        # 30 s); the Supervisor layout above polls as often.
        extra = {"recovery_wait_secs": 0.2} if backend == "tensorweave" else {}
        with tf.train.MonitoredTrainingSession(
                master=server.target, is_chief=index == 0, config=config,
                hooks=model["hooks"], save_checkpoint_secs=None, save_summaries_steps=None,
                save_summaries_secs=None, log_step_count_steps=None,
                stop_grace_period_secs=2, **extra) as sess:
            if layout == "sync":
                record = _sync_loop(tf, sess, model, steps, warmup, index, probe)
            else:
                record = _loop(sess, model, steps, warmup, index, probe)
    _stop(server)
    return {"task_index": index, **record}


def run_ps(cluster: dict, index: int, backend: str) -> None:
    """Serves ps task `index` of `cluster` until the process is killed."""
    tf = _import_backend(backend)
    tf.train.Server(cluster, job_name="ps", task_index=index).join()
