"""Seed 004, "Example": one parameter server and two workers sharing `var`.

Three processes, as in the blog: the parameter server (`/job:ps/task:0`) holds `var`,
waits for the cluster, initializes `var` and prints its value five times, a second apart;
each worker (`/job:worker/task:0` and `task:1`) waits for the cluster and for the
initialization, then increments `var` five times, a second apart. Each task builds its own
graph with `var` pinned to the ps (between-graph replication).

Prints the blog's lines (interleaved by timing; the values the ps prints while the workers
run depend on timing, as in the blog, which showed 0.0 2.0 4.0 5.0 7.0):

    Parameter server: waiting for cluster connection...
    Worker 0: waiting for cluster connection...
    Worker 1: waiting for cluster connection...
    Parameter server: cluster ready!
    Parameter server: initializing variables...
    Parameter server: variables initialized
    Parameter server: var has value 0.0
    Worker 0: cluster ready!
    Worker 0: variables initialized            (or: waiting for variable initialization...)
    Worker 0: incrementing var                 (5 times per worker)
    ...
    Worker 0: blocking...
    Worker 1: blocking...
    Parameter server: waiting for the workers to finish...
    Parameter server: var has value 10.0
    Parameter server: blocking...

Differences from the blog: free 127.0.0.1 ports instead of 3333-3335; the three processes
start together (the blog started them from separate notebook cells); stdout is line
buffered so lines appear in the order printed; `while len(...) > 0:` instead of
`while sess.run(tf.report_uninitialized_variables()):` (NumPy 2 refuses the truth value of
an empty array); after its five prints the ps waits for both workers to report that they
finished (a `multiprocessing.Queue`, bounded) and prints the final value, 10.0; the parent
then terminates the three processes by PID, as the notebook's last cell did, and joins them.
The processes are forked: the parent never touches gRPC.

Run: `python examples/seed004_ps_workers.py`.
"""

# The blog's code is kept as written: %-formatting and unused loop indices.
# ruff: noqa: UP031, B007
from __future__ import annotations

import multiprocessing
import sys
from time import sleep

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port

cluster = tf.train.ClusterSpec({
    "worker": [
        f"127.0.0.1:{pick_unused_port()}",
        f"127.0.0.1:{pick_unused_port()}",
    ],
    "ps": [
        f"127.0.0.1:{pick_unused_port()}",
    ],
})  # fmt: skip
_ctx = multiprocessing.get_context("fork")
Process = _ctx.Process
_WAIT_S = 60.0  # bound on every cross-process wait
workers_done = _ctx.Queue()  # each worker puts its index after its last increment
ps_done = _ctx.Event()  # set by the ps after printing the final value


def parameter_server():
    with tf.device("/job:ps/task:0"):
        var = tf.Variable(0.0, name="var")

    server = tf.train.Server(cluster, job_name="ps", task_index=0)
    sess = tf.Session(target=server.target)

    print("Parameter server: waiting for cluster connection...")
    sess.run(tf.report_uninitialized_variables())
    print("Parameter server: cluster ready!")

    print("Parameter server: initializing variables...")
    sess.run(tf.global_variables_initializer())
    print("Parameter server: variables initialized")

    for i in range(5):
        val = sess.run(var)
        print("Parameter server: var has value %.1f" % val)
        sleep(1.0)

    print("Parameter server: waiting for the workers to finish...")
    for _ in range(2):
        workers_done.get(timeout=_WAIT_S)
    print("Parameter server: var has value %.1f" % sess.run(var))

    print("Parameter server: blocking...")
    ps_done.set()
    server.join()


def worker(worker_n):
    with tf.device("/job:ps/task:0"):
        var = tf.Variable(0.0, name="var")

    server = tf.train.Server(cluster, job_name="worker", task_index=worker_n)
    sess = tf.Session(target=server.target)

    print("Worker %d: waiting for cluster connection..." % worker_n)
    sess.run(tf.report_uninitialized_variables())
    print("Worker %d: cluster ready!" % worker_n)

    while len(sess.run(tf.report_uninitialized_variables())) > 0:
        print("Worker %d: waiting for variable initialization..." % worker_n)
        sleep(1.0)
    print("Worker %d: variables initialized" % worker_n)

    for i in range(5):
        print("Worker %d: incrementing var" % worker_n)
        sess.run(var.assign_add(1.0))
        sleep(1.0)

    print("Worker %d: blocking..." % worker_n)
    workers_done.put(worker_n)
    server.join()


if __name__ == "__main__":
    # One write per line even under PYTHONUNBUFFERED, so that lines of different
    # processes never interleave mid-line.
    sys.stdout.reconfigure(line_buffering=True, write_through=False)
    ps_proc = Process(target=parameter_server, daemon=True)
    w1_proc = Process(target=worker, args=(0,), daemon=True)
    w2_proc = Process(target=worker, args=(1,), daemon=True)
    ps_proc.start()
    w1_proc.start()
    w2_proc.start()
    try:
        finished = ps_done.wait(_WAIT_S)
    finally:
        for proc in [w1_proc, w2_proc, ps_proc]:
            proc.terminate()  # SIGTERM to proc.pid
        for proc in [w1_proc, w2_proc, ps_proc]:
            proc.join(10.0)
    if not finished:
        sys.exit(f"the parameter server did not finish within {_WAIT_S} s")
