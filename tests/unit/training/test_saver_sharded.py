"""Sharded saves (one SaveV2 per variable device + MergeV2Checkpoints) and the merge op."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import (
    checkpoint_format,
    io_kernels,  # noqa: F401  (registers the checkpoint kernels)
)
from tensorweave.ops import io_ops
from tensorweave.protos import config_pb2
from tensorweave.training import checkpoint_management as cm
from tensorweave.training.saver import Saver

SOFT = config_pb2.ConfigProto(allow_soft_placement=True)


def test_sharded_single_device(tmp_path):
    with tf.Graph().as_default() as g:
        a = tf.Variable([1.0, 2.0], name="a")
        b = tf.Variable(3, name="b")
        saver = Saver(sharded=True)
        assert saver.saver_def.sharded
        assert saver.saver_def.save_tensor_name == "save/Identity:0"
        types = [op.type for op in g.get_operations() if op.name.startswith("save/")]
        assert types.count("SaveV2") == 1 and types.count("MergeV2Checkpoints") == 1
        with tf.Session() as sess:
            sess.run([a.initializer, b.initializer])
            prefix = saver.save(sess, str(tmp_path / "model"), global_step=5)
            sess.run(a.assign([0.0, 0.0]))
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(a), [1.0, 2.0])
    assert prefix == str(tmp_path / "model-5")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["checkpoint", "model-5.data-00000-of-00001", "model-5.index", "model-5.meta"]


def test_sharded_two_devices(tmp_path):
    with tf.Graph().as_default() as g:
        with tf.device("/device:CPU:0"):
            a = tf.Variable(np.arange(4, dtype=np.float32), name="a")
        with tf.device("/device:CPU:1"):
            b = tf.Variable(np.int64(9), name="b")
            c = tf.Variable([b"x", b"y"], name="c")
        saver = Saver(sharded=True)
        saves = {op.name: op.device for op in g.get_operations() if op.type == "SaveV2"}
        assert saves == {"save/SaveV2": "/device:CPU:0", "save/SaveV2_1": "/device:CPU:0"}
        restores = sorted(op.name for op in g.get_operations() if op.type == "RestoreV2")
        assert restores == ["save/RestoreV2", "save/RestoreV2_1"]
        with tf.Session(config=SOFT) as sess:
            sess.run([v.initializer for v in (a, b, c)])
            prefix = saver.save(sess, str(tmp_path / "m"))
            sess.run([a.assign(np.zeros(4, np.float32)), b.assign(0)])
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(a), np.arange(4))
            assert sess.run(b) == 9
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == [
        "checkpoint",
        "m.data-00000-of-00002",
        "m.data-00001-of-00002",
        "m.index",
        "m.meta",
    ]  # the temporary part directory is gone
    index = checkpoint_format.read_index(prefix)
    assert index["num_shards"] == 2
    assert index["tensors"]["a"]["shard"] == 0
    assert index["tensors"]["b"]["shard"] == 1 and index["tensors"]["c"]["shard"] == 1
    reader = cm.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {"a": [4], "b": [], "c": [2]}
    assert list(reader.get_tensor("c")) == [b"x", b"y"]


def test_sharded_checkpoint_restores_with_unsharded_saver(tmp_path):
    with tf.Graph().as_default():
        with tf.device("/device:CPU:1"):
            a = tf.Variable(1.5, name="a")
        b = tf.Variable(2.5, name="b")
        with tf.Session(config=SOFT) as sess:
            sess.run([a.initializer, b.initializer])
            prefix = Saver(sharded=True).save(sess, str(tmp_path / "s"))
    with tf.Graph().as_default():
        a2 = tf.Variable(0.0, name="a")
        b2 = tf.Variable(0.0, name="b")
        with tf.Session() as sess:
            Saver().restore(sess, prefix)
            assert sess.run([a2, b2]) == [1.5, 2.5]


def _write_part(prefix, names, values):
    with tf.Graph().as_default():
        op = io_ops.save_v2(prefix, names, [""] * len(names), [tf.constant(v) for v in values])
        with tf.Session() as sess:
            sess.run(op)


def _merge(prefixes, dest, delete_old_dirs=True):
    with tf.Graph().as_default():
        op = io_ops.merge_v2_checkpoints(prefixes, dest, delete_old_dirs=delete_old_dirs)
        with tf.Session() as sess:
            sess.run(op)


def test_merge_v2_checkpoints_op(tmp_path):
    tmp = tmp_path / "dest_temp_abc"
    p0, p1 = str(tmp / "part-00000-of-00002"), str(tmp / "part-00001-of-00002")
    _write_part(p0, ["x", "y"], [np.float32(1.0), np.array([1, 2], np.int32)])
    _write_part(p1, ["z"], [np.array([b"s"], dtype=object)])
    dest = str(tmp_path / "dest")
    _merge([p0, p1], dest)
    assert not tmp.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "dest.data-00000-of-00002",
        "dest.data-00001-of-00002",
        "dest.index",
    ]
    reader = checkpoint_format.CheckpointReader(dest)
    assert reader.get_tensor("x") == np.float32(1.0)
    np.testing.assert_array_equal(reader.get_tensor("y"), [1, 2])
    assert list(reader.get_tensor("z")) == [b"s"]


def test_merge_keeps_dirs_without_delete_old_dirs(tmp_path):
    part = str(tmp_path / "t" / "part-00000-of-00001")
    _write_part(part, ["x"], [np.float32(1.0)])
    _merge([part], str(tmp_path / "d"), delete_old_dirs=False)
    assert (tmp_path / "t").is_dir() and not list((tmp_path / "t").iterdir())
    assert checkpoint_format.CheckpointReader(str(tmp_path / "d")).has_tensor("x")


def test_merge_errors(tmp_path):
    p0, p1 = str(tmp_path / "a" / "p0"), str(tmp_path / "a" / "p1")
    _write_part(p0, ["x"], [np.float32(1.0)])
    _write_part(p1, ["x"], [np.float32(2.0)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tensor key 'x'"):
        _merge([p0, p1], str(tmp_path / "d"))
    assert not os.path.exists(str(tmp_path / "d.index"))
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        _merge([p0, str(tmp_path / "a" / "missing")], str(tmp_path / "d"))
    with tf.Graph().as_default(), pytest.raises(ValueError, match="rank 1"):
        io_ops.merge_v2_checkpoints("single", "dest")
