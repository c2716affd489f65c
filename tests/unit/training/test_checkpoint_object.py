"""tf.train.Checkpoint / CheckpointManager / CheckpointOptions in graph mode: keys,
save counter, restore statuses, max_to_keep and the checkpoint state file."""

import os

import numpy as np
import pytest

import tensorweave as tf


def test_save_restore_and_keys(tmp_path):
    prefix = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        dense = tf.layers.Dense(2)
        dense(tf.zeros([1, 3]))
        ckpt = tf.train.Checkpoint(v=v, model=dense)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            path1 = ckpt.save(prefix)
            path2 = ckpt.save(prefix)
            kernel = s.run(dense.kernel)
            s.run(tf.assign(v, [9.0, 9.0]))
            status = ckpt.restore(path2)
            status.assert_consumed().assert_existing_objects_matched().assert_nontrivial_match()
            status.run_restore_ops()
            np.testing.assert_array_equal(s.run(v), [1.0, 2.0])
            assert s.run(ckpt.save_counter) == 2
            written = ckpt.write(str(tmp_path / "plain"))
    assert path1.endswith("ckpt-1") and path2.endswith("ckpt-2") and written.endswith("plain")
    keys = dict(tf.train.list_variables(path2))
    assert keys == {
        "v/.ATTRIBUTES/VARIABLE_VALUE": [2],
        "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE": [3, 2],
        "model/dense/bias/.ATTRIBUTES/VARIABLE_VALUE": [2],
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE": [],
    }
    np.testing.assert_array_equal(
        tf.train.load_variable(path2, "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"), kernel
    )


def test_restore_into_a_new_graph_and_partial_matches(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        ckpt = tf.train.Checkpoint(v=v)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            path = ckpt.save(str(tmp_path / "c"))
    with tf.Graph().as_default():
        v = tf.Variable([0.0, 0.0])
        w = tf.Variable(5.0)
        ckpt = tf.train.Checkpoint(v=v, w=w)
        status = ckpt.restore(path)
        with pytest.raises(AssertionError, match="w/.ATTRIBUTES"):
            status.assert_consumed()
        with tf.Session() as s:
            s.run(w.initializer)
            status.expect_partial().initialize_or_restore(s)
            np.testing.assert_array_equal(s.run(v), [1.0, 2.0])
        fresh = tf.train.Checkpoint(w=w).restore(None)
        with tf.Session() as s:
            fresh.initialize_or_restore(s)
            assert s.run(w) == 5.0
        with pytest.raises(ValueError, match="needs a session"):
            ckpt.save(str(tmp_path / "nosession"))


def test_checkpoint_manager(tmp_path):
    directory = str(tmp_path / "run")
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        step = tf.Variable(0, dtype=tf.int64)
        ckpt = tf.train.Checkpoint(v=v)
        manager = tf.train.CheckpointManager(ckpt, directory, max_to_keep=2)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert manager.restore_or_initialize() is None and manager.latest_checkpoint is None
            paths = [manager.save() for _ in range(3)]
            assert [os.path.basename(p) for p in paths] == ["ckpt-1", "ckpt-2", "ckpt-3"]
            assert manager.checkpoints == paths[1:]
            assert not os.path.exists(paths[0] + ".index")
            assert tf.train.latest_checkpoint(directory) == paths[2]
            stepped = tf.train.CheckpointManager(
                ckpt, str(tmp_path / "s"), None, step_counter=step, checkpoint_interval=5
            )
            assert os.path.basename(stepped.save()) == "ckpt-0"
            s.run(tf.assign(step, 3))
            assert stepped.save() is None
            s.run(tf.assign(step, 5))
            assert os.path.basename(stepped.save()) == "ckpt-5"
        again = tf.train.CheckpointManager(ckpt, directory, max_to_keep=2)
        assert again.checkpoints == paths[1:]
        with tf.Session() as s:
            assert again.restore_or_initialize(s) == paths[2]
    with pytest.raises(ValueError, match="step_counter"):
        tf.train.CheckpointManager(None, directory, 1, checkpoint_interval=2)
    opts = tf.train.CheckpointOptions(experimental_io_device="/job:localhost")
    assert opts.experimental_io_device == "/job:localhost" and not opts.enable_async
