"""Seed 004, "Distributed TensorFlow": two servers in one cluster share `var`.

Two tasks of job `local` run as in-process servers (as in the blog's notebook); a session on
each server's target sees the same variable, so an increment made through session 1 shows
in session 2. Prints exactly the blog's block:

    Initial value of var in session 1: 0.0
    Initial value of var in session 2: 0.0
    Incremented var in session 1
    Value of var in session 1: 1.0
    Value of var in session 2: 1.0

(Compare `examples/seed_local_sessions.py`, where two plain `tf.Session()`s keep separate
values and session 2 still prints 0.0.)

Differences from the blog: free 127.0.0.1 ports instead of 2222/2223; the sessions are
closed and the servers stopped at the end, so the script exits by itself (an unclosed
distributed session currently keeps the interpreter from exiting).

Run: `python examples/seed004_shared_variable.py`.
"""

from __future__ import annotations

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port

tasks = [f"127.0.0.1:{pick_unused_port()}", f"127.0.0.1:{pick_unused_port()}"]
jobs = {"local": tasks}
cluster = tf.train.ClusterSpec(jobs)

# "This server corresponds to the the first task (task_index=0)
# of the tasks associated with the 'local' job."
server1 = tf.train.Server(cluster, job_name="local", task_index=0)
server2 = tf.train.Server(cluster, job_name="local", task_index=1)

tf.reset_default_graph()
var = tf.Variable(initial_value=0.0, name="var")
sess1 = tf.Session(server1.target)
sess2 = tf.Session(server2.target)

sess1.run(tf.global_variables_initializer())
sess2.run(tf.global_variables_initializer())

print("Initial value of var in session 1:", sess1.run(var))
print("Initial value of var in session 2:", sess2.run(var))

sess1.run(var.assign_add(1.0))
print("Incremented var in session 1")

print("Value of var in session 1:", sess1.run(var))
print("Value of var in session 2:", sess2.run(var))

sess1.close()
sess2.close()
server1.stop()
server2.stop()
