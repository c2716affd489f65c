"""A TF1-style program in the manner of the A3C programs that keep per-worker local copies
of a global network (written for the program survey, docs/program_survey.md).

One program starts its whole cluster with `multiprocessing` (2 ps + 2 workers on the ports
given on the command line). The global network's variables are striped over the two ps
tasks by `replica_device_setter`; each worker builds a local copy outside the setter (its
own task holds it), computes gradients of its loss on the *local* variables, applies them
to the *global* ones (`apply_gradients(zip(local_grads, global_vars))`), then pulls the
global values back (`local.assign(global)`), inside a `MonitoredTrainingSession` with a
`Scaffold` (the chief initializes the shared variables, each worker its own copy, the other
worker waits; sessions filtered to the ps tasks and the worker itself, as `mnist_replica.py`
does). The model is a linear regression with known weights.

Prints one JSON line per worker (`{"task": ..., "pushes": ..., ...}`) and, after both
workers ended, one `{"final": ...}` line read through ps 0's master by the parent process.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp

import numpy as np

import tensorweave as tf

DIM = 4
TRUE_W = np.array([[1.5], [-2.0], [0.5], [3.0]], np.float32)
TRUE_B = 0.25


class Net:
    """A linear model `x @ w + b` in variable scope `scope`; with `global_net`, a local copy
    with its loss, local gradients, push (to the global net) and pull ops."""

    def __init__(self, scope, opt=None, global_net=None):
        with tf.variable_scope(scope):
            self.x = tf.placeholder(tf.float32, [None, DIM], "x")
            self.y = tf.placeholder(tf.float32, [None, 1], "y")
            pred = tf.layers.dense(self.x, 1, name="out",
                                   kernel_initializer=tf.zeros_initializer())
            self.params = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope=scope)
            if global_net is None:
                return
            self.loss = tf.reduce_mean(tf.square(pred - self.y))
            self.grads = tf.gradients(self.loss, self.params)
        self.global_step = tf.train.get_or_create_global_step()
        with tf.name_scope("push"):
            self.push = opt.apply_gradients(zip(self.grads, global_net.params),
                                            global_step=self.global_step)
        with tf.name_scope("pull"):
            self.pull = [l.assign(g) for l, g in zip(self.params, global_net.params)]


def build_global(cluster, task_index):
    with tf.device(tf.train.replica_device_setter(
            worker_device=f"/job:worker/task:{task_index}", cluster=cluster)):
        opt = tf.train.GradientDescentOptimizer(0.1)
        global_net = Net("global_net")
        global_step = tf.train.get_or_create_global_step()
    return opt, global_net, global_step


def work(job_name, task_index, spec, pushes, queue, chief_ready):
    cluster = tf.train.ClusterSpec(spec)
    server = tf.train.Server(cluster, job_name=job_name, task_index=task_index)
    if job_name == "ps":
        server.join()
        return
    opt, global_net, global_step = build_global(cluster, task_index)
    local_net = Net(f"local_{task_index}", opt, global_net)
    rng = np.random.RandomState(task_index)
    done, pull_exact = 0, True
    hooks = [tf.train.StopAtStepHook(last_step=100000)]
    # The local copy is a global variable the chief never sees: readiness looks at the
    # shared variables only, and each worker initializes its own copy (local_init_op), as
    # the Supervisor-based A3C programs do with their `variables_to_save`.
    shared = [*global_net.params, global_step]
    uninitialized_shared = tf.report_uninitialized_variables(shared)
    scaffold = tf.train.Scaffold(
        init_op=tf.variables_initializer(shared), ready_op=uninitialized_shared,
        ready_for_local_init_op=uninitialized_shared,
        local_init_op=tf.variables_initializer(local_net.params))
    # As mnist_replica.py: a worker's sessions need only the ps tasks and itself.
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task_index}"])
    if task_index != 0:
        # The non-chief's first readiness check would otherwise likely come before the
        # chief's initialization and then sleep `recovery_wait_secs` (30 s).
        chief_ready.wait(60)
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=task_index == 0,
                                           scaffold=scaffold, hooks=hooks,
                                           config=config) as sess:
        chief_ready.set()
        while not sess.should_stop() and done < pushes:
            xs = rng.randn(32, DIM).astype(np.float32)
            feed = {local_net.x: xs, local_net.y: xs @ TRUE_W + TRUE_B}
            sess.run(local_net.push, feed)
            done += 1
            pulled = sess.run(local_net.pull)
            local = sess.run(local_net.params)
            pull_exact &= all(np.array_equal(a, b) for a, b in zip(pulled, local))
    queue.put({"task": task_index, "pushes": done, "pull_exact": bool(pull_exact),
               "global_devices": [v.device for v in global_net.params],
               "local_devices": [v.device for v in local_net.params]})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ps_hosts", required=True)
    parser.add_argument("--worker_hosts", required=True)
    parser.add_argument("--pushes", type=int, default=150)
    parser.add_argument("--timeout_s", type=float, default=240.0)
    args = parser.parse_args()
    spec = {"ps": args.ps_hosts.split(","), "worker": args.worker_hosts.split(",")}
    ctx = mp.get_context("spawn")
    queue, chief_ready = ctx.Queue(), ctx.Event()
    jobs = [("ps", 0), ("ps", 1), ("worker", 0), ("worker", 1)]
    procs = [ctx.Process(target=work, args=(j, i, spec, args.pushes, queue, chief_ready))
             for j, i in jobs]
    for p in procs:
        p.start()
    try:
        for p in procs[2:]:
            p.join(args.timeout_s)
        results = [queue.get(timeout=5) for _ in procs[2:]]
        for r in sorted(results, key=lambda r: r["task"]):
            print(json.dumps(r), flush=True)
        # A third client reads the trained global variables through ps 0's master.
        cluster = tf.train.ClusterSpec(spec)
        with tf.Graph().as_default():
            _, global_net, global_step = build_global(cluster, 0)
            # The workers have exited: filter the session to the ps tasks.
            config = tf.ConfigProto(device_filters=["/job:ps"])
            with tf.Session("grpc://" + spec["ps"][0], config=config) as sess:
                (w, b), step = sess.run([global_net.params, global_step])
        print(json.dumps({"final": {"global_step": int(step),
                                    "max_abs_err": float(max(np.abs(w - TRUE_W).max(),
                                                             abs(float(b[0]) - TRUE_B)))}}),
              flush=True)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(10)
    return 0 if all(p.exitcode == 0 for p in procs[2:]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
