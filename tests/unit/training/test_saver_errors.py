"""Saver failure modes: restore errors from the kernels, corrupt files, interrupted saves."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import (
    checkpoint_format,
    io_kernels,  # noqa: F401  (registers the checkpoint kernels)
)
from tensorweave.training import checkpoint_management as cm
from tensorweave.training.saver import Saver


def _save(tmp_path, values, name="model", global_step=None, **saver_kwargs):
    with tf.Graph().as_default():
        variables = [tf.Variable(v, name=k) for k, v in values.items()]
        saver = Saver(**saver_kwargs)
        with tf.Session() as sess:
            sess.run([v.initializer for v in variables])
            return saver.save(sess, str(tmp_path / name), global_step=global_step)


def test_restore_missing_checkpoint_names_it(tmp_path):
    missing = str(tmp_path / "nope" / "model-3")
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        saver = Saver()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.NotFoundError) as info:
                saver.restore(sess, missing)
    assert f"Failed to find any matching files for {missing}" in str(info.value)
    assert "Unsuccessful TensorSliceReader constructor" in str(info.value)
    assert "Restoring from checkpoint failed" not in str(info.value)  # not a graph change
    not_a_checkpoint = tmp_path / "notes.txt"
    not_a_checkpoint.write_text("x")
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        saver = Saver()
        with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError) as info:
            saver.restore(sess, str(not_a_checkpoint))
    assert str(info.value).startswith("Unsuccessful TensorSliceReader constructor")


def test_restore_none_path():
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        with tf.Session() as sess, pytest.raises(ValueError, match="save_path when it is None"):
            Saver().restore(sess, None)


def test_restore_missing_variable_is_atomic(tmp_path):
    prefix = _save(tmp_path, {"a": np.float32(1.0)})
    with tf.Graph().as_default():
        a = tf.Variable(5.0, name="a")
        missing = tf.Variable(0.0, name="v_missing")
        with tf.Session() as sess:
            sess.run([a.initializer, missing.initializer])
            with pytest.raises(
                tf.errors.NotFoundError, match="Key v_missing not found in checkpoint"
            ):
                Saver().restore(sess, prefix)
            assert sess.run(a) == 5.0  # nothing was assigned


def test_restore_of_a_changed_graph_says_so_first_and_keeps_the_kernel_error(tmp_path):
    # TF 1.15's Saver.restore re-raises the restore op's NotFoundError (a missing key) and
    # InvalidArgumentError (a mismatch) as the same class, the op's message after its own.
    prefix = _save(tmp_path, {"w": np.zeros((2, 3), np.float32)})
    for name, shape, cls, cause in [
        ("Variable", (2, 3), tf.errors.NotFoundError, "Key Variable not found in checkpoint"),
        ("w", (4, 3), tf.errors.InvalidArgumentError, "[4,3]"),
    ]:
        with tf.Graph().as_default():
            tf.Variable(np.zeros(shape, np.float32), name=name)
            saver = Saver()
            with tf.Session() as sess, pytest.raises(cls) as info:
                saver.restore(sess, prefix)
        message = info.value.message
        assert message.startswith("Restoring from checkpoint failed, most likely because ")
        assert "Was the graph changed since the checkpoint was written?" in message
        assert message.index(cause) > message.index("The restore op's error:")
        original = info.value.__cause__
        assert type(original) is cls and cause in original.message
        assert info.value.op is original.op and info.value.node_def is original.node_def
        assert info.value.error_code == original.error_code


def test_restore_shape_mismatch_names_variable_and_shapes(tmp_path):
    prefix = _save(tmp_path, {"weights": np.zeros((2, 3), np.float32)})
    with tf.Graph().as_default():
        tf.Variable(np.zeros((4, 3), np.float32), name="weights")
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
            Saver().restore(sess, prefix)
    message = str(info.value)
    assert "weights" in message and "[4,3]" in message and "[2,3]" in message


def test_restore_scalar_shape_mismatch(tmp_path):
    prefix = _save(tmp_path, {"s": np.zeros((2,), np.float32)})
    with tf.Graph().as_default():
        tf.Variable(1.0, name="s")
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match=r"\[2\]"):
            Saver().restore(sess, prefix)


def test_restore_dtype_mismatch(tmp_path):
    prefix = _save(tmp_path, {"v": np.float64(1.0)})
    with tf.Graph().as_default():
        tf.Variable(1, name="v")
        with (
            tf.Session() as sess,
            pytest.raises(
                tf.errors.InvalidArgumentError,
                match="tensor_name = v; expected dtype int32 does not equal original dtype float64",
            ),
        ):
            Saver().restore(sess, prefix)


def _restore_error(prefix):
    with tf.Graph().as_default():
        tf.Variable(np.zeros(3, np.float32), name="v")
        with tf.Session() as sess:
            Saver().restore(sess, prefix)


def test_corrupt_index_is_data_loss(tmp_path):
    prefix = _save(tmp_path, {"v": np.arange(3, dtype=np.float32)})
    with open(prefix + ".index", "r+b") as f:
        f.truncate(20)
    with pytest.raises(tf.errors.DataLossError, match="index"):
        _restore_error(prefix)


def test_truncated_data_file_is_data_loss(tmp_path):
    prefix = _save(tmp_path, {"v": np.arange(3, dtype=np.float32)})
    data = prefix + ".data-00000-of-00001"
    with open(data, "r+b") as f:
        f.truncate(os.path.getsize(data) - 4)
    with pytest.raises(tf.errors.DataLossError, match="truncated"):
        _restore_error(prefix)


def test_flipped_bytes_are_data_loss(tmp_path):
    prefix = _save(tmp_path, {"v": np.arange(3, dtype=np.float32)})
    data = prefix + ".data-00000-of-00001"
    raw = bytearray(open(data, "rb").read())
    raw[-1] ^= 0xFF  # inside the tensor payload
    open(data, "wb").write(bytes(raw))
    with pytest.raises(tf.errors.DataLossError, match="Checksum does not match"):
        _restore_error(prefix)


def test_garbage_data_file_is_data_loss(tmp_path):
    prefix = _save(tmp_path, {"v": np.arange(3, dtype=np.float32)})
    data = prefix + ".data-00000-of-00001"
    size = os.path.getsize(data)
    open(data, "wb").write(b"\xff" * size)
    with pytest.raises(tf.errors.DataLossError):
        _restore_error(prefix)


def test_missing_data_file_is_not_found(tmp_path):
    prefix = _save(tmp_path, {"v": np.arange(3, dtype=np.float32)})
    os.remove(prefix + ".data-00000-of-00001")
    with pytest.raises(tf.errors.NotFoundError, match="data-00000-of-00001"):
        _restore_error(prefix)


# ---------------------------------------------------------------- interrupted saves
def _two_saves(tmp_path, crash, sharded=False):
    """Saves step 1, then step 2 with `crash` installed; returns both prefixes."""
    with tf.Graph().as_default():
        v = tf.Variable(np.array([1.0, 2.0], np.float32), name="v")
        saver = Saver(sharded=sharded)
        with tf.Session() as sess:
            sess.run(v.initializer)
            first = saver.save(sess, str(tmp_path / "model"), global_step=1)
            sess.run(v.assign([7.0, 7.0]))
            with crash(), pytest.raises((tf.errors.OpError, OSError)):
                saver.save(sess, str(tmp_path / "model"), global_step=2)
    return first, str(tmp_path / "model-2")


def _assert_previous_checkpoint_intact(tmp_path, first, second):
    assert cm.latest_checkpoint(str(tmp_path)) == first
    assert not cm.checkpoint_exists(second)
    assert not os.path.exists(second + ".index")
    assert not list(tmp_path.glob("*.tmp-*"))
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros(2, np.float32), name="v")
        with tf.Session() as sess:
            Saver().restore(sess, cm.latest_checkpoint(str(tmp_path)))
            np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def _failing_replace(monkeypatch, predicate):
    real = os.replace

    def replace(src, dst):
        if predicate(str(dst)):
            raise OSError("simulated crash")
        return real(src, dst)

    monkeypatch.setattr(checkpoint_format.os, "replace", replace)


@pytest.mark.parametrize("sharded", [False, True])
def test_crash_before_index_keeps_previous_checkpoint(tmp_path, monkeypatch, sharded):
    import contextlib

    @contextlib.contextmanager
    def crash():
        with monkeypatch.context() as m:
            _failing_replace(m, lambda dst: dst.endswith("model-2.index"))
            yield

    first, second = _two_saves(tmp_path, crash, sharded=sharded)
    assert os.path.exists(second + (".data-00000-of-00001"))  # the data made it to disk
    _assert_previous_checkpoint_intact(tmp_path, first, second)


def test_crash_in_index_writer_keeps_previous_checkpoint(tmp_path, monkeypatch):
    import contextlib

    real = checkpoint_format.write_index

    def write_index(prefix, shards, tensors):
        if prefix.endswith("model-2"):
            raise OSError("power loss")
        return real(prefix, shards, tensors)

    @contextlib.contextmanager
    def crash():
        with monkeypatch.context() as m:
            m.setattr(checkpoint_format, "write_index", write_index)
            yield

    first, second = _two_saves(tmp_path, crash)
    _assert_previous_checkpoint_intact(tmp_path, first, second)


def test_crash_while_writing_state_file_keeps_old_state(tmp_path, monkeypatch):
    import contextlib

    @contextlib.contextmanager
    def crash():
        with monkeypatch.context() as m:
            _failing_replace(m, lambda dst: os.path.basename(dst) == "checkpoint")
            yield

    first, second = _two_saves(tmp_path, crash)
    assert cm.latest_checkpoint(str(tmp_path)) == first
    assert cm.checkpoint_exists(second)  # complete, just not recorded
    assert not list(tmp_path.glob("*.tmp-*"))


def test_merge_crash_leaves_no_index(tmp_path, monkeypatch):
    import contextlib

    @contextlib.contextmanager
    def crash():
        with monkeypatch.context() as m:
            _failing_replace(
                m,
                lambda dst: (
                    dst.endswith(".data-00000-of-00001") and "model-2." in os.path.basename(dst)
                ),
            )
            yield

    first, second = _two_saves(tmp_path, crash, sharded=True)
    _assert_previous_checkpoint_intact(tmp_path, first, second)
