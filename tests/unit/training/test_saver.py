"""Saver: round trips, var_list forms, max_to_keep, the `checkpoint` state file."""

from __future__ import annotations

import os

import numpy as np
import pytest
from google.protobuf import text_format

import tensorweave as tf
from tensorweave.kernels import io_kernels  # noqa: F401  (registers the checkpoint kernels)
from tensorweave.protos import checkpoint_state_pb2, saver_pb2
from tensorweave.training import checkpoint_management as cm
from tensorweave.training.saver import Saver

VALUES = {
    "f32": np.arange(6, dtype=np.float32).reshape(2, 3),
    "f64_scalar": np.float64(2.5),
    "f16": np.array([1.5, -2.0], dtype=np.float16),
    "i32_scalar": np.int32(-7),
    "i64": np.array([[1, 2**40]], dtype=np.int64),
    "u8": np.array([0, 255], dtype=np.uint8),
    "i8": np.array([-128, 127], dtype=np.int8),
    "flag": np.array([True, False, True]),
    "flag_scalar": np.bool_(True),
    "c64": np.array([1 + 2j], dtype=np.complex64),
    "c128": np.array([[1 - 1j, 3j]], dtype=np.complex128),
    "text": np.array([b"a", b"", "\u00e9".encode()], dtype=object),
    "text_scalar": b"hello",
    "empty": np.zeros((0, 4), dtype=np.float32),
}


def _init(sess, variables):
    sess.run([v.initializer for v in variables])


def _build(values):
    return {k: tf.Variable(v, name=k) for k, v in values.items()}


def _assert_values(sess, variables, values):
    for name, want in values.items():
        got = sess.run(variables[name])
        want = np.asarray(want)
        assert np.asarray(got).dtype == want.dtype, name
        assert np.asarray(got).shape == want.shape, name
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)


def test_round_trip_many_dtypes_and_shapes(tmp_path):
    g = tf.Graph()
    with g.as_default():
        variables = _build(VALUES)
        saver = Saver()
        with tf.Session() as sess:
            _init(sess, variables.values())
            prefix = saver.save(sess, str(tmp_path / "model.ckpt"))
            assert prefix == str(tmp_path / "model.ckpt")
            for v in variables.values():  # clobber, then restore
                sess.run(v.initializer)
            sess.run(variables["f32"].assign(np.zeros((2, 3), np.float32)))
            saver.restore(sess, prefix)
            _assert_values(sess, variables, VALUES)
    assert os.path.exists(prefix + ".index")
    assert os.path.exists(prefix + ".data-00000-of-00001")
    assert os.path.exists(prefix + ".meta")


def test_restore_into_fresh_graph_by_name(tmp_path):
    values = {"w": np.ones((3, 2), np.float32), "step": np.int64(42), "on": np.bool_(False)}
    with tf.Graph().as_default():
        variables = _build(values)
        with tf.Session() as sess:
            _init(sess, variables.values())
            prefix = Saver().save(sess, str(tmp_path / "m"), global_step=7)
    assert prefix.endswith("m-7")
    with tf.Graph().as_default():
        fresh = _build({k: np.zeros_like(v) for k, v in values.items()})
        with tf.Session() as sess:
            Saver().restore(sess, prefix)  # no initializer needed
            _assert_values(sess, fresh, values)


def test_var_list_dict_with_other_names(tmp_path):
    with tf.Graph().as_default():
        a = tf.Variable([1.0, 2.0], name="a")
        b = tf.Variable(5, name="b")
        saver = Saver({"layer/kernel": a, "counter": b})
        with tf.Session() as sess:
            _init(sess, [a, b])
            prefix = saver.save(sess, str(tmp_path / "d"))
    assert sorted(n for n, _ in cm.list_variables(prefix)) == ["counter", "layer/kernel"]
    with tf.Graph().as_default():
        x = tf.Variable([0.0, 0.0], name="x")
        y = tf.Variable(0, name="y")
        with tf.Session() as sess:
            Saver({"layer/kernel": x, "counter": y}).restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(x), [1.0, 2.0])
            assert sess.run(y) == 5
            with pytest.raises(tf.errors.NotFoundError, match="Key x not found in checkpoint"):
                Saver([x]).restore(sess, prefix)


def test_var_list_subset_and_list_form(tmp_path):
    with tf.Graph().as_default():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        with tf.Session() as sess:
            _init(sess, [a, b])
            prefix = Saver([a]).save(sess, str(tmp_path / "s"))
    assert [n for n, _ in cm.list_variables(prefix)] == ["a"]
    assert cm.load_variable(prefix, "a:0") == np.float32(1.0)


def test_saver_graph_ops_and_saver_def():
    with tf.Graph().as_default() as g:
        tf.Variable(1.0, name="v")
        saver = Saver(max_to_keep=3, keep_checkpoint_every_n_hours=2.0)
        sd = saver.as_saver_def()
        assert isinstance(sd, saver_pb2.SaverDef)
        assert sd.filename_tensor_name == "save/Const:0"
        assert sd.save_tensor_name == "save/control_dependency:0"
        assert sd.restore_op_name == "save/restore_all"
        assert sd.max_to_keep == 3 and sd.keep_checkpoint_every_n_hours == 2.0
        assert sd.version == saver_pb2.SaverDef.V2 and not sd.sharded
        types = {op.name: op.type for op in g.get_operations()}
        assert types["save/SaveV2"] == "SaveV2"
        assert types["save/RestoreV2"] == "RestoreV2"
        assert types["save/Assign"] == "Assign"
        assert types["save/restore_all"] == "NoOp"
        assert types["save/Const"] == "PlaceholderWithDefault"
        second = Saver(name=None)
        assert second.saver_def.restore_op_name == "save_1/restore_all"
        assert saver.to_proto() is sd
        assert Saver.from_proto(sd).saver_def.save_tensor_name == sd.save_tensor_name


def test_filename_default_is_used_without_feed(tmp_path):
    path = str(tmp_path / "default_prefix")
    with tf.Graph().as_default():
        v = tf.Variable(3.0, name="v")
        saver = Saver(filename=path)
        with tf.Session() as sess:
            _init(sess, [v])
            sess.run(saver.saver_def.save_tensor_name)
    assert cm.checkpoint_exists(path)


def test_var_list_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="No variables to save"):
            Saver()
        empty = Saver(allow_empty=True)
        with tf.Session() as sess:
            assert empty.save(sess, "/nonexistent/x", write_meta_graph=False) is None
            assert empty.restore(sess, "/nonexistent/x") is None
        v = tf.Variable(1.0, name="v")
        with pytest.raises(ValueError, match="At least two variables have the same name: v"):
            Saver([v, v])
        with pytest.raises(TypeError, match="dict or a list"):
            Saver(v)
        with pytest.raises(TypeError, match="Not a variable"):
            Saver({"c": tf.constant(1.0)})
        with pytest.raises(ValueError, match="same saveable will be restored with two names"):
            Saver({"a": v, "b": v})
        with pytest.raises(ValueError, match="build cannot be deferred"):
            Saver([v], defer_build=True)
        with pytest.raises(ValueError, match="save_tensor_name"):
            Saver(saver_def=saver_pb2.SaverDef(restore_op_name="x"))


def test_defer_build(tmp_path):
    with tf.Graph().as_default():
        saver = Saver(defer_build=True)
        v = tf.Variable(1.0, name="late")
        with tf.Session() as sess:
            _init(sess, [v])
            with pytest.raises(RuntimeError, match="build"):
                saver.save(sess, str(tmp_path / "x"))
            saver.build()
            prefix = saver.save(sess, str(tmp_path / "x"))
    assert cm.load_variable(prefix, "late") == np.float32(1.0)


def test_global_step_forms(tmp_path):
    with tf.Graph().as_default():
        step = tf.Variable(12, name="global_step", trainable=False)
        saver = Saver(pad_step_number=False)
        padded = Saver(pad_step_number=True)
        with tf.Session() as sess:
            _init(sess, [step])
            assert saver.save(sess, str(tmp_path / "a"), global_step=step).endswith("a-12")
            assert saver.save(sess, str(tmp_path / "a"), global_step=np.int64(3)).endswith("a-3")
            assert padded.save(sess, str(tmp_path / "p"), global_step=5).endswith("p-00000005")
            with pytest.raises(ValueError, match="collides"):
                saver.save(sess, str(tmp_path / "checkpoint"))
            with pytest.raises(ValueError, match="path components"):
                saver.save(sess, str(tmp_path / "a"), latest_filename="sub/ckpt")


def _read_state(directory, name="checkpoint"):
    state = checkpoint_state_pb2.CheckpointState()
    with open(os.path.join(directory, name), encoding="utf-8") as f:
        text_format.Merge(f.read(), state)
    return state


def test_max_to_keep_prunes_files_and_state(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(0, name="v")
        saver = Saver(max_to_keep=2)
        with tf.Session() as sess:
            _init(sess, [v])
            prefixes = []
            for step in range(4):
                sess.run(v.assign(step))
                prefixes.append(saver.save(sess, str(tmp_path / "model"), global_step=step))
    for old in prefixes[:2]:
        assert not cm.checkpoint_exists(old)
        assert not any(p.name.startswith(os.path.basename(old) + ".") for p in tmp_path.iterdir())
    for kept in prefixes[2:]:
        assert cm.checkpoint_exists(kept) and os.path.exists(kept + ".meta")
    assert saver.last_checkpoints == prefixes[2:]
    state = _read_state(tmp_path)
    assert state.model_checkpoint_path == prefixes[-1]
    assert list(state.all_model_checkpoint_paths) == prefixes[2:]
    assert cm.latest_checkpoint(str(tmp_path)) == prefixes[-1]
    assert cm.load_variable(cm.latest_checkpoint(str(tmp_path)), "v") == 3


def test_max_to_keep_zero_keeps_everything(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(0, name="v")
        saver = Saver(max_to_keep=0)
        with tf.Session() as sess:
            _init(sess, [v])
            prefixes = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(3)]
    assert all(cm.checkpoint_exists(p) for p in prefixes)
    assert saver.last_checkpoints == []
    assert list(_read_state(tmp_path).all_model_checkpoint_paths) == prefixes[-1:]


def test_keep_checkpoint_every_n_hours(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("tensorweave.training.saver.time.time", lambda: clock[0])
    with tf.Graph().as_default():
        v = tf.Variable(0, name="v")
        saver = Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1.0)
        with tf.Session() as sess:
            _init(sess, [v])
            first = saver.save(sess, str(tmp_path / "m"), global_step=1)
            clock[0] += 2 * 3600  # past the first preservation time
            second = saver.save(sess, str(tmp_path / "m"), global_step=2)
            third = saver.save(sess, str(tmp_path / "m"), global_step=3)
    assert cm.checkpoint_exists(first) is False
    assert cm.checkpoint_exists(second)  # preserved by keep_checkpoint_every_n_hours
    assert cm.checkpoint_exists(third)
    assert saver.last_checkpoints == [third]


def test_state_file_format_and_relative_paths(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        relative = Saver(save_relative_paths=True)
        absolute = Saver()
        with tf.Session() as sess:
            _init(sess, [v])
            p1 = relative.save(sess, str(tmp_path / "rel" / "model"), global_step=1)
            p2 = absolute.save(
                sess, str(tmp_path / "abs" / "model"), global_step=1, latest_filename="latest"
            )
    text = (tmp_path / "rel" / "checkpoint").read_text()
    assert 'model_checkpoint_path: "model-1"' in text
    assert 'all_model_checkpoint_paths: "model-1"' in text
    assert _read_state(tmp_path / "abs", "latest").model_checkpoint_path == p2
    state = cm.get_checkpoint_state(str(tmp_path / "rel"))
    assert state.model_checkpoint_path == p1  # resolved against the directory
    assert cm.latest_checkpoint(str(tmp_path / "abs"), latest_filename="latest") == p2
    assert cm.latest_checkpoint(str(tmp_path / "abs")) is None
    assert not list((tmp_path / "rel").glob("*.tmp-*"))


def test_relative_save_dir_writes_relative_state(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        with tf.Session() as sess:
            _init(sess, [v])
            prefix = Saver().save(sess, os.path.join("ckpts", "model"), global_step=4)
    assert prefix == os.path.join("ckpts", "model-4")
    assert _read_state(tmp_path / "ckpts").model_checkpoint_path == "model-4"
    assert cm.latest_checkpoint("ckpts") == os.path.join("ckpts", "model-4")


def test_update_and_get_checkpoint_state(tmp_path):
    d = str(tmp_path)
    assert cm.get_checkpoint_state(d) is None
    assert cm.latest_checkpoint(d) is None
    cm.update_checkpoint_state(d, os.path.join(d, "b"), [os.path.join(d, "a")])
    state = cm.get_checkpoint_state(d)
    assert list(state.all_model_checkpoint_paths) == [os.path.join(d, "a"), os.path.join(d, "b")]
    assert cm.latest_checkpoint(d) is None  # the files do not exist
    (tmp_path / "checkpoint").write_text("garbage {{{")
    assert cm.get_checkpoint_state(d) is None
    with pytest.raises(RuntimeError, match="conflicts"):
        cm.update_checkpoint_state(d, os.path.join(d, "checkpoint"))


def test_recover_and_set_last_checkpoints(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        saver = Saver(max_to_keep=2)
        with tf.Session() as sess:
            _init(sess, [v])
            paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(2)]
        restarted = Saver(max_to_keep=2)
        restarted.recover_last_checkpoints(paths + [str(tmp_path / "missing")])
        assert restarted.last_checkpoints == paths
        mtimes = cm.get_checkpoint_mtimes(paths + [str(tmp_path / "missing")])
        assert len(mtimes) == 2 and all(t > 0 for t in mtimes)
        restarted.set_last_checkpoints_with_time([(paths[1], 1.0)])
        assert restarted.last_checkpoints == [paths[1]]
        with tf.Session() as sess:
            _init(sess, [v])
            newest = restarted.save(sess, str(tmp_path / "m"), global_step=9)
            restarted.save(sess, str(tmp_path / "m"), global_step=10)
        assert not cm.checkpoint_exists(paths[1])
        assert cm.checkpoint_exists(paths[0])  # not tracked any more, so never deleted
        assert cm.checkpoint_exists(newest)


def test_remove_checkpoint_and_meta_filename(tmp_path):
    assert cm.meta_graph_filename("/x/model-10") == "/x/model-10.meta"
    assert cm.meta_graph_filename("/x/model-10-00001-of-00002") == "/x/model-10.meta"
    assert cm.meta_graph_filename("/x/m-?????-of-00002", "pbtxt") == "/x/m.pbtxt"
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        with tf.Session() as sess:
            _init(sess, [v])
            prefix = Saver().save(sess, str(tmp_path / "r"))
    cm.remove_checkpoint(prefix)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]
    cm.remove_checkpoint(prefix)  # missing files are ignored


def test_reshape_restore(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(np.arange(6, dtype=np.float32), name="v")
        with tf.Session() as sess:
            _init(sess, [v])
            prefix = Saver().save(sess, str(tmp_path / "r"))
    with tf.Graph().as_default():
        w = tf.Variable(np.zeros((2, 3), np.float32), name="v")
        with tf.Session() as sess:
            Saver(reshape=True).restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(2, 3))
