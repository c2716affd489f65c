"""Hello, distributed TensorFlow! (seeds 001 and 002): one-task clusters, two ways.

1. Seed 002: an in-process server from `tf.train.Server.create_local_server()` and a
   session on its target.
2. Seed 001: a server started from the command line (the seed's `grpc_tensorflow_server
   --cluster_spec='local|localhost:2222' --job_name=local --task_index=0 &`, here
   `python -m tensorweave server ...`) and a session on `grpc://localhost:<port>`.

Prints (the middle line is the command the script runs for part 2):

    b'Hello, distributed TensorFlow!'
    $ python -m tensorweave server --cluster_spec='local|localhost:<port>' ... &
    b'Hello, distributed TensorFlow!'

Differences from the seeds: a free port instead of 2222; `sess.run(c)` returns `bytes` (as
TensorFlow 1.x does under Python 3; the seeds' Python 2 REPL showed `'...'`); sessions are
closed and both servers stopped (the subprocess by PID), so the script exits by itself
(an unclosed distributed session currently keeps the interpreter from exiting; see
`test_script_leaving_a_distributed_session_open_exits`).

Run: `python examples/hello_distributed.py`.
"""

from __future__ import annotations

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port
from tensorweave.testing.processes import ServerProcess


def in_process_server() -> None:
    """Seed 002: `create_local_server()` is a single-task cluster in this process."""
    c = tf.constant("Hello, distributed TensorFlow!")
    server = tf.train.Server.create_local_server()
    sess = tf.Session(server.target)  # Create a session on the server.
    print(sess.run(c))
    sess.close()
    server.stop()


def command_line_server() -> None:
    """Seed 001: a `tensorweave server` process, and a client session on its address."""
    port = pick_unused_port()
    spec = f"local|localhost:{port}"
    print(
        f"$ python -m tensorweave server --cluster_spec='{spec}' --job_name=local --task_index=0 &"
    )
    server = ServerProcess(spec, "local", 0)
    try:
        server.wait_ready()
        tf.reset_default_graph()
        c = tf.constant("Hello, distributed TensorFlow!")
        sess = tf.Session(f"grpc://localhost:{port}")
        print(sess.run(c))
        sess.close()
    finally:
        server.terminate()  # SIGTERM by PID; SIGKILL if it does not stop in time


if __name__ == "__main__":
    in_process_server()
    command_line_server()
