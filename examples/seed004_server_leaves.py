"""Seed 004, "What happens if a server leaves the cluster?" and "What happens if the server
then comes back?".

Each server runs in its own `multiprocessing.Process`, as in the blog; server 2's process
returns (and so dies) two seconds after starting. Three experiments:

1. Server 1 repeatedly runs a no-op pinned to itself (task 0): every run succeeds, before
   and after server 2 leaves.
2. The no-op is pinned to server 2 (task 1): once server 2 is gone, the run fails at once
   with `UnavailableError` naming task 1. (The blog's TensorFlow blocked here forever.)
3. Server 2 comes back on the same port: server 1, retrying on `UnavailableError` (the
   retry contract), now gets `AbortedError` for its old session, whose state died with the
   old server 2 (the blog's "Graph handle is not found"); a new session works.

Prints (the position of "Server 2 dieing..." among server 1's lines depends on timing, as in
the blog; so can the number of successes before the failure in experiment 2; long lines
are cut at "..." here):

    --- 1. the no-op is on server 1
    Server 1: about to run no-op...success!
    Server 1: about to run no-op...success!
    Server 2 dieing...
    Server 1: about to run no-op...success!     (4 times: 6 successes in all)
    --- 2. the no-op is on server 2, which leaves
    Server 1: about to run no-op...success!
    Server 1: about to run no-op...success!
    Server 2 dieing...
    Server 1: about to run no-op...failed after 0.0 s: UnavailableError: ...
        (the message: "/job:local/replica:0/task:1 at 127.0.0.1:<port> is unreachable: ...")
    --- 3. server 2 comes back
    Server 1: about to run no-op...success!
    Server 1: about to run no-op...success!
    Server 2 dieing...
    Server 1: about to run no-op...UnavailableError; retrying until server 2 is back...
    Restarting server 2...
    Server 1: AbortedError: Session handle is not found: <handle>. Possibly this worker ...
        (... "("/job:local/replica:0/task:1") just restarted.")
    Server 1: new session, about to run no-op...success!

Differences from the blog: free 127.0.0.1 ports instead of 2226/2227; stdout is line
buffered and the `end=""` prints flush, so lines appear in the order printed; the failing
run raises instead of hanging; instead of the notebook's `sleep(3.0)` before restarting
server 2, the parent waits (bounded) until server 2's process has exited and server 1 has
seen it gone; the restarted server 2 serves until the parent terminates it (the blog's
restarted server died again after 2 s); every process is joined, or terminated by PID.
The processes are forked: the parent never touches gRPC.

Run: `python examples/seed004_server_leaves.py`.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
from time import sleep

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port

cluster = tf.train.ClusterSpec(
    {"local": [f"127.0.0.1:{pick_unused_port()}", f"127.0.0.1:{pick_unused_port()}"]}
)
_ctx = multiprocessing.get_context("fork")
Process = _ctx.Process
_WAIT_S = 30.0  # bound on every wait of the parent and on server 1's retries


def s1():
    server1 = tf.train.Server(cluster, job_name="local", task_index=0)

    with tf.device("/job:local/task:0"):
        no_op = tf.no_op()

    sess1 = tf.Session(server1.target)
    for _ in range(6):
        print("Server 1: about to run no-op...", end="", flush=True)
        sess1.run(no_op)
        print("success!")
        sleep(1.0)


def s2():
    server2 = tf.train.Server(cluster, job_name="local", task_index=1)  # noqa: F841
    sleep(2.0)
    print("Server 2 dieing...")


def s1_op_on_leaving_server():
    server1 = tf.train.Server(cluster, job_name="local", task_index=0)

    # This time, we place the no-op on server 2,
    # which is going to leave
    with tf.device("/job:local/task:1"):
        no_op = tf.no_op()

    sess1 = tf.Session(server1.target)
    for _ in range(5):
        print("Server 1: about to run no-op...", end="", flush=True)
        start = time.monotonic()
        try:
            sess1.run(no_op)
        except tf.errors.UnavailableError as e:
            print(f"failed after {time.monotonic() - start:.1f} s: UnavailableError: {e.message}")
            return
        print("success!")
        sleep(1.0)


def s1_server_comes_back(server2_gone):
    server1 = tf.train.Server(cluster, job_name="local", task_index=0)

    with tf.device("/job:local/task:1"):
        no_op = tf.no_op()

    sess1 = tf.Session(server1.target)
    for _ in range(5):
        print("Server 1: about to run no-op...", end="", flush=True)
        try:
            sess1.run(no_op)
        except tf.errors.UnavailableError:
            print("UnavailableError; retrying until server 2 is back...")
            server2_gone.set()
            break
        print("success!")
        sleep(1.0)
    deadline = time.monotonic() + _WAIT_S
    while True:
        try:
            sess1.run(no_op)
        except tf.errors.UnavailableError:
            if time.monotonic() > deadline:
                raise
            sleep(0.05)
        except tf.errors.AbortedError as e:
            print(f"Server 1: AbortedError: {e.message}")
            break
    sess1.close()
    sess1 = tf.Session(server1.target)
    print("Server 1: new session, about to run no-op...", end="", flush=True)
    sess1.run(no_op)
    print("success!")
    sess1.close()


def s2_restarted():
    server2 = tf.train.Server(cluster, job_name="local", task_index=1)
    server2.join()  # Block


def finish(*procs):
    """Joins each process (bounded); terminates by PID any still running."""
    for p in procs:
        p.join(_WAIT_S)
        if p.is_alive():
            print(f"(terminating {p.name}, pid {p.pid})")
            p.terminate()
            p.join(10.0)


if __name__ == "__main__":
    # One write per line even under PYTHONUNBUFFERED, so that lines of different
    # processes never interleave mid-line.
    sys.stdout.reconfigure(line_buffering=True, write_through=False)

    print("--- 1. the no-op is on server 1")
    p1 = Process(target=s1, daemon=True)
    p2 = Process(target=s2, daemon=True)
    p1.start()
    p2.start()
    finish(p1, p2)

    print("--- 2. the no-op is on server 2, which leaves")
    p1 = Process(target=s1_op_on_leaving_server, daemon=True)
    p2 = Process(target=s2, daemon=True)
    p1.start()
    p2.start()
    finish(p1, p2)

    print("--- 3. server 2 comes back")
    server2_gone = _ctx.Event()
    p1 = Process(target=s1_server_comes_back, args=(server2_gone,), daemon=True)
    p2 = Process(target=s2, daemon=True)
    p1.start()
    p2.start()
    restarted = None
    try:
        finish(p2)
        # At this point, server 2 is dead, and server 1 has seen it gone.
        if server2_gone.wait(_WAIT_S):
            print("Restarting server 2...")
            restarted = Process(target=s2_restarted, daemon=True)
            restarted.start()
        finish(p1)
    finally:
        for p in (p1, restarted):
            if p is not None and p.is_alive():
                p.terminate()
                p.join(10.0)
    sys.exit(0 if p1.exitcode == 0 else 1)
