"""Seed 004, "Graphs": variable values are shared, graphs are not.

Server 1's session gets an explicitly created `graph1` holding `var`; server 2's session
gets an empty `graph2`, which does not mirror graph1. Only after graph2 gets its own
variable named `var` can session 2 read the shared value that session 1 assigned. Prints
the blog's lines:

    [<tf.Operation 'var/initial_value' type=Const>, <tf.Operation 'var' type=VariableV2>,
     <tf.Operation 'var/Assign' type=Assign>, <tf.Operation 'var/read' type=Identity>]
    []
    1.0

(the list is printed on one line; `1.0` is the notebook's display of `sess2.run(var2)`).

Each server builds its own graph: the blog's "between-graph replication" (every graph holds
the shared parameters plus its own part), as opposed to "in-graph replication" (one graph
with everything, as in examples/seed004_placement.py).

Differences from the blog: free 127.0.0.1 ports instead of 2224/2225; sessions closed and
servers stopped at the end so the script exits by itself
(an unclosed distributed session currently keeps the interpreter from exiting; see
`test_script_leaving_a_distributed_session_open_exits`).

Run: `python examples/seed004_graphs.py`.
"""

from __future__ import annotations

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port

cluster = tf.train.ClusterSpec(
    {"local": [f"127.0.0.1:{pick_unused_port()}", f"127.0.0.1:{pick_unused_port()}"]}
)
server1 = tf.train.Server(cluster, job_name="local", task_index=0)
server2 = tf.train.Server(cluster, job_name="local", task_index=1)

# Who builds the graph?
graph1 = tf.Graph()
with graph1.as_default():
    var1 = tf.Variable(0.0, name="var")
sess1 = tf.Session(target=server1.target, graph=graph1)
print(graph1.get_operations())

graph2 = tf.Graph()
sess2 = tf.Session(target=server2.target, graph=graph2)
print(graph2.get_operations())

with graph2.as_default():
    var2 = tf.Variable(0.0, name="var")

sess1.run(var1.assign(1.0))
print(sess2.run(var2))

sess1.close()
sess2.close()
server1.stop()
server2.stop()
