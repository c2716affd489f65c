"""Seed 004, "Placement": which task stores a variable and runs an op.

`run_with_location_trace` (exactly the blog's function) runs an op with
`RunOptions(trace_level=FULL_TRACE)` and prints, per device that ran something, the device
name and the nodes it ran. It shows that:

* unpinned variables and ops are placed on the first task of the cluster
  (`/job:local/replica:0/task:0`), whichever session runs them; a session on task 1 only
  contributes its client device (its `_SOURCE`);
* `tf.device("/job:local/task:1")` pins `var2` to task 1, from either session.

Prints the blog's trace blocks, one per `run_with_location_trace` call, each preceded by a
`>>> run_with_location_trace(...)` line naming the call. The devices and nodes are the
blog's; within one device the nodes are listed in execution order, which for the
`AssignAdd_1` step is `var` before `AssignAdd_1/value` here (two independent nodes; the
blog's TensorFlow ran them the other way round).

As in the blog's notebook, the section before this one already made `var.assign_add(1.0)`
once (an op named `AssignAdd`), so the traced increment is named `AssignAdd_1`.

Differences from the blog: free 127.0.0.1 ports; sessions closed and servers stopped at the
end so the script exits by itself
(an unclosed distributed session currently keeps the interpreter from exiting; see
`test_script_leaving_a_distributed_session_open_exits`).

Run: `python examples/seed004_placement.py`.
"""

from __future__ import annotations

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port


def run_with_location_trace(sess, op):
    # From https://stackoverflow.com/a/41525764/7832197
    run_options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    run_metadata = tf.RunMetadata()
    sess.run(op, options=run_options, run_metadata=run_metadata)
    for device in run_metadata.step_stats.dev_stats:
        print(device.device)
        for node in device.node_stats:
            print("  ", node.node_name)


tasks = [f"127.0.0.1:{pick_unused_port()}", f"127.0.0.1:{pick_unused_port()}"]
cluster = tf.train.ClusterSpec({"local": tasks})
server1 = tf.train.Server(cluster, job_name="local", task_index=0)
server2 = tf.train.Server(cluster, job_name="local", task_index=1)

# The previous section of the blog (see examples/seed004_shared_variable.py).
tf.reset_default_graph()
var = tf.Variable(initial_value=0.0, name="var")
sess1 = tf.Session(server1.target)
sess2 = tf.Session(server2.target)
sess1.run(tf.global_variables_initializer())
sess1.run(var.assign_add(1.0))

# Placement.
print(">>> run_with_location_trace(sess1, var)")
run_with_location_trace(sess1, var)
print(">>> run_with_location_trace(sess1, var.assign_add(1.0))")
run_with_location_trace(sess1, var.assign_add(1.0))
print(">>> run_with_location_trace(sess2, var)")
run_with_location_trace(sess2, var)

with tf.device("/job:local/task:0"):
    var1 = tf.Variable(0.0, name="var1")
with tf.device("/job:local/task:1"):
    var2 = tf.Variable(0.0, name="var2")

# (This will initialize both variables)
sess1.run(tf.global_variables_initializer())

print(">>> run_with_location_trace(sess1, var1)")
run_with_location_trace(sess1, var1)
print(">>> run_with_location_trace(sess1, var2)")
run_with_location_trace(sess1, var2)
print(">>> run_with_location_trace(sess2, var2)")
run_with_location_trace(sess2, var2)
print(">>> run_with_location_trace(sess2, var1)")
run_with_location_trace(sess2, var1)

sess1.close()
sess2.close()
server1.stop()
server2.stop()
