"""A bare `tensorweave server` ps must run every op a training graph places on it.

The checkpoint ops (`StringJoin`, `SaveV2`, `RestoreV2`, `MergeV2Checkpoints`,
`ShardedFilename`, `ShardedFilespec`) and the bounded-staleness `StepClock*` ops were once
unknown to `python -m tensorweave server` (the seeds' `grpc_tensorflow_server`), because
their definitions were registered by modules only `tf.train` imported: `RegisterGraph` of a
partition containing one failed with `Op type not registered 'SaveV2'`, and a
`MonitoredTrainingSession(checkpoint_dir=...)` whose variables lived on such a ps died in
the chief's `CheckpointSaverHook`. Every op definition now lives in `framework/op_defs`,
which any process imports whole (TensorFlow's server binary also has every op).
"""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port
from tensorweave.testing.processes import ServerProcess, spec_string
from tensorweave.training.bounded_staleness import BoundedStalenessOptimizer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]


@pytest.fixture
def ps_target():
    cluster = {"ps": [f"localhost:{pick_unused_port()}"]}
    with ServerProcess(spec_string(cluster), "ps", 0) as server:  # killed by PID on exit
        server.wait_ready()
        yield "grpc://" + cluster["ps"][0]


def _config():
    return tf.ConfigProto(operation_timeout_in_ms=20_000)


def test_saver_can_checkpoint_variables_on_a_tensorweave_server_ps(ps_target, tmp_path):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(3.0, name="v")
        saver = tf.train.Saver()
        with tf.Session(ps_target, config=_config()) as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
    assert tf.train.load_variable(path, "v") == 3.0


def test_bounded_staleness_clock_on_a_tensorweave_server_ps(ps_target):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(1.0, name="w")
            global_step = tf.train.get_or_create_global_step()
        opt = BoundedStalenessOptimizer(
            tf.train.GradientDescentOptimizer(0.1), max_staleness=0, num_workers=1,
            worker_index=0,
        )  # fmt: skip
        train_op = opt.minimize(tf.square(w), global_step=global_step)
        with tf.Session(ps_target, config=_config()) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op)
            assert sess.run(global_step) == 1
