"""Seed 004, "Who's responsible for initializing shared variables?": one server initializes,
the other waits with `tf.report_uninitialized_variables()`.

Each server runs in its own `multiprocessing.Process`, as in the blog. Server 2 waits 3
seconds, then runs `tf.global_variables_initializer()`; server 1 first waits for the
cluster (its first run blocks until server 2 is up), then polls
`report_uninitialized_variables` every second until the list is empty. Prints the blog's
lines (how they interleave depends on timing, as in the blog):

    Server 1: waiting for connection...
    Server 2: waiting 3 seconds before initializing...
    Server 1: waiting for initialization...
    Server 2: waiting 2 seconds before initializing...
    Server 1: waiting for initialization...
    Server 2: waiting 1 seconds before initializing...
    Server 1: waiting for initialization...
    Server 1: variables initialized!

Differences from the blog: free 127.0.0.1 ports instead of 2226/2227; stdout is line
buffered so lines appear in the order printed; both functions return by themselves (server
2 right after initializing: `var` and the polling op are placed on task 0, so server 1's
polls need only itself once its session exists), and the parent joins both processes
(bounded) instead of the notebook's later `terminate()`, terminating by PID any still
running. The processes are forked: the parent never touches gRPC.

Run: `python examples/seed004_init_wait.py`.
"""

# The blog's code is kept as written (%-formatting).
# ruff: noqa: UP031
from __future__ import annotations

import multiprocessing
import sys
from time import sleep

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port

cluster = tf.train.ClusterSpec(
    {"local": [f"127.0.0.1:{pick_unused_port()}", f"127.0.0.1:{pick_unused_port()}"]}
)
_ctx = multiprocessing.get_context("fork")
Process = _ctx.Process
_WAIT_S = 30.0  # bound on the parent's joins


def s1():
    server1 = tf.train.Server(cluster, job_name="local", task_index=0)
    var = tf.Variable(0.0, name="var")  # noqa: F841
    sess1 = tf.Session(server1.target)

    print("Server 1: waiting for connection...")
    sess1.run(tf.report_uninitialized_variables())
    while len(sess1.run(tf.report_uninitialized_variables())) > 0:
        print("Server 1: waiting for initialization...")
        sleep(1.0)
    print("Server 1: variables initialized!")


def s2():
    server2 = tf.train.Server(cluster, job_name="local", task_index=1)  # noqa: F841
    var = tf.Variable(0.0, name="var")  # noqa: F841
    sess2 = tf.Session(server2.target)

    for i in range(3):
        print("Server 2: waiting %d seconds before initializing..." % (3 - i))
        sleep(1.0)
    sess2.run(tf.global_variables_initializer())


if __name__ == "__main__":
    # One write per line even under PYTHONUNBUFFERED, so that lines of different
    # processes never interleave mid-line.
    sys.stdout.reconfigure(line_buffering=True, write_through=False)
    p1 = Process(target=s1, daemon=True)
    p2 = Process(target=s2, daemon=True)
    p1.start()
    p2.start()
    for p in (p1, p2):
        p.join(_WAIT_S)
    for p in (p1, p2):
        if p.is_alive():
            p.terminate()  # SIGTERM to p.pid
            p.join(10.0)
    sys.exit(0 if p1.exitcode == 0 and p2.exitcode == 0 else 1)
