"""Saver on an in-process gRPC cluster: each ps runs the SaveV2 of its own variables."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import io_kernels  # noqa: F401  (registers the checkpoint kernels)
from tensorweave.testing.cluster import create_local_cluster
from tensorweave.training import checkpoint_management as cm
from tensorweave.training.saver import Saver

FULL_TRACE = 3


@pytest.fixture
def cluster():
    workers, ps = create_local_cluster(1, 2)
    yield workers[0].target
    for server in workers + ps:
        server.stop()


def _model():
    with tf.device("/job:ps/task:0"):
        a = tf.Variable(np.array([1.0, 2.0], np.float32), name="a")
    with tf.device("/job:ps/task:1"):
        b = tf.Variable([b"x", b"yz"], name="b")
    return a, b


@pytest.mark.parametrize("sharded", [False, True])
def test_save_restore_on_cluster(cluster, tmp_path, sharded):
    with tf.Graph().as_default():
        a, b = _model()
        saver = Saver(sharded=sharded)
        with tf.Session(cluster) as sess:
            sess.run([a.initializer, b.initializer])
            prefix = saver.save(sess, str(tmp_path / "model"), global_step=1)
            sess.run(a.assign([0.0, 0.0]))
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(a), [1.0, 2.0])
            assert list(sess.run(b)) == [b"x", b"yz"]
    assert cm.latest_checkpoint(str(tmp_path)) == prefix
    shards = sorted(p for p in os.listdir(tmp_path) if ".data-" in p)
    assert len(shards) == (2 if sharded else 1)


def test_sharded_save_runs_on_each_ps(cluster, tmp_path):
    with tf.Graph().as_default():
        a, b = _model()
        saver = Saver(sharded=True)
        with tf.Session(cluster) as sess:
            sess.run([a.initializer, b.initializer])
            metadata = tf.RunMetadata()
            sess.run(
                saver.saver_def.save_tensor_name,
                {saver.saver_def.filename_tensor_name: str(tmp_path / "m")},
                options=tf.RunOptions(trace_level=FULL_TRACE),
                run_metadata=metadata,
            )
    ran_on = {
        node.node_name: dev.device
        for dev in metadata.step_stats.dev_stats
        for node in dev.node_stats
        if node.node_name in ("save/SaveV2", "save/SaveV2_1")
    }
    assert ran_on == {
        "save/SaveV2": "/job:ps/replica:0/task:0/device:CPU:0",
        "save/SaveV2_1": "/job:ps/replica:0/task:1/device:CPU:0",
    }
    assert cm.NewCheckpointReader(str(tmp_path / "m")).get_variable_to_shape_map() == {
        "a": [2],
        "b": [2],
    }
