"""Control flow across a mixed cluster: a real TensorFlow server as the ps, a `tensorweave
server` as the worker, the tensorweave client in the test process.

* A cond whose taken branch runs on the worker and whose other branch sits on the
  TensorFlow ps: the untaken branch's value crosses as a dead tensor both ways (TensorFlow
  pulls our dead Switch output, we pull its dead result), through `RecvTensorResponse.
  is_dead`; only the taken branch's update happens.
* A while loop on the worker updating a variable of the TensorFlow ps runs whole on the ps
  (a loop never spans a TensorFlow task: frame ids in rendezvous keys are executor-made).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import tensorweave as tf
from tensorweave.testing.cross_task_graphs import check_only_taken_branch_runs, cond_across_tasks
from tensorweave.testing.processes import ServerProcess, spec_string
from tests.interop.tf_cluster import TF_READY_TIMEOUT_S, TfServerProcess, cluster_dict

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]

PS = "/job:ps/replica:0/task:0"
WORKER = "/job:worker/replica:0/task:0"


@pytest.fixture(scope="module")
def mixed_target(tf_python) -> Iterator[str]:
    cluster = cluster_dict(num_ps=1, num_workers=1)
    procs = []
    try:
        procs.append(TfServerProcess(tf_python, cluster, "ps", 0))
        procs.append(ServerProcess(spec_string(cluster), "worker", 0))
        procs[0].wait_ready(TF_READY_TIMEOUT_S)
        procs[1].wait_ready(60.0)
        yield f"grpc://{cluster['worker'][0]}"
    finally:
        for p in procs:
            p.kill()


def test_cond_with_a_branch_on_a_tensorflow_ps(mixed_target):
    with tf.Graph().as_default():
        parts = cond_across_tasks(PS, WORKER)
        with tf.Session(mixed_target, config=tf.ConfigProto(
                operation_timeout_in_ms=60_000)) as sess:
            check_only_taken_branch_runs(sess, parts)


def test_loop_updating_a_tensorflow_ps_variable_runs_there(mixed_target):
    with tf.Graph().as_default():
        with tf.device(PS):
            v = tf.Variable(0.0, name="v")
        with tf.device(WORKER):
            def body(i, acc):
                return i + 1, acc + tf.assign_add(v, 1.5)

            r = tf.while_loop(lambda i, a: i < 6, body, [tf.constant(0), tf.constant(0.0)],
                              parallel_iterations=1)
            doubled = r[1] * 2.0
        with tf.Session(mixed_target, config=tf.ConfigProto(
                operation_timeout_in_ms=60_000)) as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run([r[0], r[1], doubled]) == [6, 31.5, 63.0]
            assert sess.run(v) == 9.0
