"""One task of `tensorweave demo` (run by the launcher as `python -m
tensorweave.deploy.demo_task ...`, with its cluster in `TF_CONFIG`).

ps tasks serve until the launcher stops them. Workers train an MLP between-graph
(`replica_device_setter`, `MonitoredTrainingSession`, asynchronous or with
`SyncReplicasOptimizer`) and report progress as JSON lines on stdout, which the demo's
orchestrator turns into progress bars. The chief also writes TensorBoard summaries and a
Chrome trace of one traced step.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import numpy as np

EVENT_PREFIX = "@tw "


def emit(event: str, **fields: Any) -> None:
    """Prints one machine-readable event line for the orchestrator."""
    print(EVENT_PREFIX + json.dumps({"event": event, **fields}), flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The flags `demo` passes to each task."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--output_dir", required=True)
    p.add_argument("--steps", type=int, default=1500, help="global steps to train")
    p.add_argument("--batch_size", type=int, default=128)
    p.add_argument("--learning_rate", type=float, default=0.1)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--sync", action="store_true")
    p.add_argument("--data", default="digits")
    p.add_argument("--data_dir", default=None)
    p.add_argument("--log_every", type=int, default=25)
    p.add_argument("--trace_step", type=int, default=50)
    return p.parse_args(argv)


def build_model(tf: Any, ds: Any, hidden: int) -> dict[str, Any]:
    """MLP `features-hidden-hidden-classes` with relu and softmax cross-entropy."""
    x = tf.placeholder(tf.float32, [None, ds.num_features], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    h = tf.layers.dense(x, hidden, activation=tf.nn.relu, name="hidden1")
    h = tf.layers.dense(h, hidden, activation=tf.nn.relu, name="hidden2")
    logits = tf.layers.dense(h, ds.num_classes, name="logits")
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    correct = tf.equal(tf.argmax(logits, 1), y)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("accuracy", accuracy)
    return {"x": x, "y": y, "loss": loss, "accuracy": accuracy}


def _write_trace(tf: Any, run_metadata: Any, path: str) -> int:
    from tensorweave.client.timeline import Timeline

    with open(path, "w", encoding="utf-8") as f:
        f.write(Timeline(run_metadata.step_stats).generate_chrome_trace_format())
    return len(run_metadata.step_stats.dev_stats)


RECOVERY_WAIT_S = 0.25


def run_worker(tf: Any, args: argparse.Namespace, cluster: Any, index: int,
               server: Any) -> None:
    """Trains worker `index` between-graph until the global step reaches `--steps`."""
    from tensorweave.deploy.datasets import batches, load

    ds = load(args.data, args.data_dir)
    num_workers = cluster.num_tasks("worker")
    is_chief = index == 0
    device = tf.train.replica_device_setter(
        worker_device=f"/job:worker/task:{index}", cluster=cluster)
    with tf.device(device):
        m = build_model(tf, ds, args.hidden)
        global_step = tf.train.get_or_create_global_step()
        opt = tf.train.GradientDescentOptimizer(args.learning_rate)
        hooks = [tf.train.StopAtStepHook(last_step=args.steps)]
        if args.sync:
            opt = tf.train.SyncReplicasOptimizer(
                opt, replicas_to_aggregate=num_workers, total_num_replicas=num_workers)
            hooks.append(opt.make_session_run_hook(is_chief))
        train_op = opt.minimize(m["loss"], global_step=global_step)
    events = os.path.join(args.output_dir, "events")
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"])
    data = batches(ds, args.batch_size, seed=index)
    steps, t0, last = 0, time.perf_counter(), 0.0
    # NOTE: a non-chief polls for the chief's initialization every `recovery_wait_secs`
    # (TensorFlow: 30 s, longer than the whole demo): worker 1 would join only at the end.
    with tf.train.MonitoredTrainingSession(
        master=server.target, is_chief=is_chief, checkpoint_dir=None, hooks=hooks,
        summary_dir=events if is_chief else None, save_summaries_steps=args.log_every,
        log_step_count_steps=0, config=config, recovery_wait_secs=RECOVERY_WAIT_S,
    ) as sess:
        while not sess.should_stop():
            bx, by = next(data)
            feed = {m["x"]: bx, m["y"]: by}
            if is_chief and steps == args.trace_step:
                _, loss, gs = _traced_step(tf, sess, [train_op, m["loss"], global_step], feed,
                                           os.path.join(args.output_dir, "trace.json"))
            else:
                _, loss, gs = sess.run([train_op, m["loss"], global_step], feed)
            steps += 1
            last = float(loss)
            if steps % args.log_every == 0:
                emit("progress", task=index, steps=steps, global_step=int(gs), loss=last,
                     steps_per_sec=steps / (time.perf_counter() - t0))
    seconds = time.perf_counter() - t0
    _finish(tf, args, m, ds, server, index, steps, seconds, last, is_chief, events)


def _traced_step(tf: Any, sess: Any, fetches: list, feed: dict, path: str) -> Any:
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    out = sess.run(fetches, feed, options=options, run_metadata=metadata)
    devices = _write_trace(tf, metadata, path)
    emit("trace", path=path, devices=devices)
    return out


def _finish(tf: Any, args: Any, m: dict, ds: Any, server: Any, index: int, steps: int,
            seconds: float, loss: float, is_chief: bool, events: str) -> None:
    with tf.Session(server.target, config=tf.ConfigProto(
            device_filters=["/job:ps", f"/job:worker/task:{index}"])) as sess:
        acc = float(sess.run(m["accuracy"], {m["x"]: ds.x_test, m["y"]: ds.y_test}))
    if is_chief:
        writer = tf.summary.FileWriter(events)
        summary = tf.summary.Summary(value=[tf.summary.Summary.Value(
            tag="test_accuracy", simple_value=acc)])
        writer.add_summary(summary, args.steps)
        writer.close()
    sent, received = server.runtime.stats.totals()
    emit("done", task=index, steps=steps, seconds=seconds, loss=loss, test_accuracy=acc,
         bytes_sent=sent, bytes_received=received, data=ds.name)


def main(argv: list[str] | None = None) -> int:
    """Runs one demo task (a ps serves; a worker trains and reports); the exit code."""
    args = parse_args(argv)
    import tensorweave as tf

    tf_config = json.loads(os.environ["TF_CONFIG"])
    cluster = tf.train.ClusterSpec(tf_config["cluster"])
    job, index = str(tf_config["task"]["type"]), int(tf_config["task"]["index"])
    server = tf.train.Server(cluster, job_name=job, task_index=index)
    if job == "ps":
        emit("ready", task=index, job=job)
        server.join()
        return 0
    np.random.seed(index)
    from tensorweave.deploy.datasets import DatasetError

    try:
        run_worker(tf, args, cluster, index, server)
    except DatasetError as e:
        print(f"tensorweave demo: {e}", file=sys.stderr, flush=True)
        return 2
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
