"""ClusterSpec propagation (`ConfigProto.cluster_def`): servers that only know themselves
(`tf.train.Server.create_local_server()`) serve a session as the tasks of the cluster the
session brings (cases of TensorFlow's `clusterspec_propagation_test.py`)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors


@pytest.fixture
def two_servers():
    servers = [tf.train.Server.create_local_server() for _ in range(2)]
    yield servers
    for s in servers:
        s.stop()


def _config(*servers, job="worker", **kwargs):
    cluster = tf.train.ClusterSpec({job: [s.target[len("grpc://"):] for s in servers]})
    return tf.ConfigProto(cluster_def=cluster.as_cluster_def(), **kwargs)


def test_op_on_the_second_task_of_the_propagated_cluster(two_servers):
    s1, _ = two_servers
    with tf.Graph().as_default() as g, tf.device("/job:worker/task:1"):
        const = tf.constant(17)
    with tf.Session(s1.target, graph=g, config=_config(*two_servers)) as sess:
        assert sess.run(const) == 17
        devices = {d.name for d in sess.list_devices()}
    assert "/job:worker/replica:0/task:1/device:CPU:0" in devices


def test_values_cross_between_propagated_tasks_and_trace_names_them(two_servers):
    s1, _ = two_servers
    with tf.Graph().as_default() as g:
        with tf.device("/job:worker/task:1"):
            v = tf.Variable(np.arange(3, dtype=np.float32), name="v")
            inc = v.assign_add([1.0, 1.0, 1.0])
        with tf.device("/job:worker/task:0"):
            doubled = tf.identity(inc) * 2.0
        init = tf.global_variables_initializer()
    with tf.Session(s1.target, graph=g, config=_config(*two_servers)) as sess:
        sess.run(init)
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        meta = tf.RunMetadata()
        out = sess.run(doubled, options=opts, run_metadata=meta)
        np.testing.assert_array_equal(out, [2.0, 4.0, 6.0])
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0, 3.0])
    devices = {d.device for d in meta.step_stats.dev_stats}
    assert {"/job:worker/replica:0/task:0/device:CPU:0",
            "/job:worker/replica:0/task:1/device:CPU:0"} <= devices


def test_propagated_sessions_are_isolated_unless_shared(two_servers):
    s1, _ = two_servers
    with tf.Graph().as_default() as g:
        with tf.device("/job:worker/task:1"):
            var = tf.Variable(5.0, name="var")
    config = _config(*two_servers)
    with tf.Session(s1.target, graph=g, config=config) as a, \
            tf.Session(s1.target, graph=g, config=config) as b:
        a.run(var.initializer)
        assert a.run(var) == 5.0
        with pytest.raises(errors.FailedPreconditionError):
            b.run(var)
    shared = _config(*two_servers)
    shared.experimental.share_session_state_in_clusterspec_propagation = True
    with tf.Session(s1.target, graph=g, config=shared) as a, \
            tf.Session(s1.target, graph=g, config=shared) as b:
        a.run(var.initializer)
        assert b.run(var) == 5.0


def test_target_missing_from_the_propagated_cluster_is_an_error(two_servers):
    s1, s2 = two_servers
    with tf.Graph().as_default() as g:
        const = tf.constant(1)
    with pytest.raises(errors.InvalidArgumentError, match="no task of the session's cluster"):
        with tf.Session(s1.target, graph=g, config=_config(s2)) as sess:
            sess.run(const)


def test_without_cluster_def_the_local_server_is_alone(two_servers):
    s1, _ = two_servers
    with tf.Graph().as_default() as g, tf.device("/job:worker/task:1"):
        const = tf.constant(17)
    with pytest.raises(errors.InvalidArgumentError, match="Cannot assign a device"):
        with tf.Session(s1.target, graph=g) as sess:
            sess.run(const)
