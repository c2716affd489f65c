"""Seed 004, "What happens if we try to run something on the cluster before all servers have
connected?": a run blocks until every task of the cluster is up.

Each server runs in its own `multiprocessing.Process`, as in the blog. Server 1 starts at
once and runs a no-op; server 2 counts down 3 seconds before it starts. Server 1's run
blocks (session creation waits for every task) until server 2 is up. Prints the blog's
lines; the first two can come in either order (the two processes start together), and so
can the last two (server 2 prints "connected!" just after its server starts, while server 1
finishes its run):

    server 2: 3 seconds left before connecting...
    server 1: running no-op...
    server 2: 2 seconds left before connecting...
    server 2: 1 seconds left before connecting...
    server 2: connected!
    server 1: no-op run!

Differences from the blog: free 127.0.0.1 ports instead of 2226/2227; stdout is line
buffered so the processes' lines appear in the order they are printed; instead of the
notebook's later `p1.terminate()`, the parent waits (bounded: 60 s) until server 1 reports
that its no-op ran and server 2 that it connected, then terminates both processes by PID
and joins them. (The waiting run
itself is unbounded, as in the blog; `ConfigProto(operation_timeout_in_ms=...)` would bound
it with a `DeadlineExceededError` naming the missing task, and the master logs
"CreateSession still waiting for response from worker: /job:local/replica:0/task:1" every
5 s meanwhile.) The processes are forked: the parent never touches gRPC before forking.

Run: `python examples/seed004_wait_for_servers.py`.
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
no_op_ran = _ctx.Event()  # set by server 1 once its no-op ran
connected = _ctx.Event()  # set by server 2 once it printed that it is connected


def s1():
    server1 = tf.train.Server(cluster, job_name="local", task_index=0)
    sess1 = tf.Session(server1.target)
    print("server 1: running no-op...")
    sess1.run(tf.no_op())
    print("server 1: no-op run!")
    no_op_ran.set()
    server1.join()  # Block


def s2():
    for i in range(3):
        print("server 2: %d seconds left before connecting..." % (3 - i))
        sleep(1.0)
    server2 = tf.train.Server(cluster, job_name="local", task_index=1)
    print("server 2: connected!")
    connected.set()
    server2.join()  # Block


if __name__ == "__main__":
    # One write per line even under PYTHONUNBUFFERED, so that lines of different
    # processes never interleave mid-line.
    sys.stdout.reconfigure(line_buffering=True, write_through=False)
    # daemon=True so that these processes will definitely be killed
    # when the parent process exits
    p1 = Process(target=s1, daemon=True)
    p2 = Process(target=s2, daemon=True)
    p1.start()
    p2.start()
    try:
        ok = no_op_ran.wait(timeout=60.0) and connected.wait(timeout=60.0)
    finally:
        for p in (p1, p2):
            p.terminate()  # SIGTERM to p.pid
            p.join(10.0)
    if not ok:
        sys.exit("server 1's no-op did not run within 60 s")
