"""A worker of `test_two_masters.py`: the layout most TF1 programs use (issue 15).

Its own `tf.train.Server`, the digits MLP under `replica_device_setter`, a plain
`tf.Session(server.target)` and `sess.run(train_op, feed_dict)` in a loop. The worker first
steps until the other worker's steps show in the global step, then counts `--steps` of its
own steps (noting how many global steps the other one made meanwhile), then marks itself
done on the ps and keeps stepping until both are done: so each worker's counted steps run
while the other trains too. Prints one JSON line (`blas_threads`, `steps`,
`others_during`); exits 1 if a phase passes `--deadline_s`.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples"))

import digits_data  # noqa: E402
from digits_mlp import build_model  # noqa: E402

import tensorweave as tf  # noqa: E402
from tensorweave.runtime import thread_budget  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--task_index", type=int, required=True)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--deadline_s", type=float, default=120.0)
    args = parser.parse_args()
    cluster, index = json.loads(args.cluster), args.task_index
    server = tf.train.Server(cluster, job_name="worker", task_index=index)
    with tf.device(tf.train.replica_device_setter(
            worker_device=f"/job:worker/task:{index}", cluster=cluster)):
        x = tf.placeholder(tf.float32, [None, 64])
        y = tf.placeholder(tf.int64, [None])
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=build_model(x)))
        global_step = tf.train.get_or_create_global_step()
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step)
        done = tf.Variable(0, name="workers_done")
        mark_done = tf.assign_add(done, 1)
    data = digits_data.load_digits_split()
    batches = digits_data.minibatches(data.x_train, data.y_train, 128, index)
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"],
                            operation_timeout_in_ms=120000)
    with tf.Session(server.target, config=config) as sess:
        if index == 0:
            sess.run(tf.global_variables_initializer())
        deadline = time.monotonic() + args.deadline_s
        while sess.run(tf.report_uninitialized_variables()).size:
            if time.monotonic() > deadline:
                return 1
            time.sleep(0.1)

        def step() -> int:
            bx, by = next(batches)
            return int(sess.run([train_op, global_step], {x: bx, y: by})[1])

        own, deadline = 0, time.monotonic() + args.deadline_s
        while True:  # until the other worker's steps show in the global step
            own += 1
            if step() > own:
                break
            if time.monotonic() > deadline:
                return 1
        start = int(sess.run(global_step))
        for _ in range(args.steps):
            end = step()
        sess.run(mark_done)
        deadline = time.monotonic() + args.deadline_s
        while sess.run(done) < 2:
            step()
            if time.monotonic() > deadline:
                return 1
    print(json.dumps({"task_index": index, "blas_threads": thread_budget.blas_threads(),
                      "steps": args.steps, "others_during": end - start - args.steps}),
          flush=True)
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
