"""File-system ops on a server reach only its allowed directories: an absolute path
outside them, a `..` escape and a symlink pointing out are PermissionDeniedError naming
the op and the path; paths inside work; in-process sessions are unrestricted unless
configured."""

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.framework.file_sandbox import FileSandbox
from tensorweave.ops import io_ops
from tensorweave.protos import config_pb2


def _config(*allowed: str) -> config_pb2.ConfigProto:
    config = config_pb2.ConfigProto()
    config.tensorweave.security.allowed_dir.extend(allowed)
    return config


@pytest.fixture
def roots(tmp_path):
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    return inside, outside


@pytest.fixture
def server(roots):
    s = tf.train.Server.create_local_server(config=_config(str(roots[0])))
    yield s
    s.stop()


def _save(target, prefix):
    with tf.Graph().as_default():
        v = tf.Variable(np.arange(3, dtype=np.float32), name="v")
        saver = tf.train.Saver([v])
        with tf.Session(target) as sess:
            sess.run(v.initializer)
            return saver.save(sess, prefix)


def _restore(target, prefix):
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros(3, np.float32), name="v")
        saver = tf.train.Saver([v])
        with tf.Session(target) as sess:
            saver.restore(sess, prefix)
            return sess.run(v)


def test_inside_the_allowed_directory_works(server, roots):
    prefix = str(roots[0] / "ckpt" / "model")
    _save(server.target, prefix)
    np.testing.assert_array_equal(_restore(server.target, prefix), [0.0, 1.0, 2.0])


def test_absolute_path_outside_is_refused(server, roots):
    prefix = str(roots[1] / "payload")
    with pytest.raises(errors.PermissionDeniedError, match=r"SaveV2.*payload"):
        _save(server.target, prefix)
    assert not os.listdir(roots[1])


def test_dotdot_escape_is_refused(server, roots):
    prefix = str(roots[0]) + "/../outside/payload"
    with pytest.raises(errors.PermissionDeniedError, match=r"SaveV2.*\.\./outside"):
        _save(server.target, prefix)
    assert not os.listdir(roots[1])


def test_symlink_escape_is_refused(server, roots):
    _save("", str(roots[1] / "secret"))  # another job's checkpoint, in process
    os.symlink(roots[1], roots[0] / "link")
    with pytest.raises(errors.PermissionDeniedError, match=r"RestoreV2.*link.*resolves to"):
        _restore(server.target, str(roots[0] / "link" / "secret"))
    with pytest.raises(errors.PermissionDeniedError, match="SaveV2"):
        _save(server.target, str(roots[0] / "link" / "payload"))


def test_symlinked_index_file_is_refused(server, roots):
    _save("", str(roots[1] / "secret"))
    for suffix in (".index", ".data-00000-of-00001"):
        os.symlink(roots[1] / f"secret{suffix}", roots[0] / f"alias{suffix}")
    with pytest.raises(errors.PermissionDeniedError, match="RestoreV2"):
        _restore(server.target, str(roots[0] / "alias"))


def test_merge_cannot_delete_outside(server, roots):
    _save("", str(roots[1] / "part"))
    with tf.Graph().as_default():
        merge = io_ops.merge_v2_checkpoints(
            checkpoint_prefixes=[str(roots[1] / "part")],
            destination_prefix=str(roots[0] / "merged"))
        with tf.Session(server.target) as sess:
            with pytest.raises(errors.PermissionDeniedError, match="MergeV2Checkpoints"):
                sess.run(merge)
    assert os.path.exists(roots[1] / "part.index")


def test_in_process_sessions_are_unrestricted_unless_configured(roots):
    _save("", str(roots[1] / "free"))
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        saver = tf.train.Saver([v])
        with tf.Session(config=_config(str(roots[0]))) as sess:
            sess.run(v.initializer)
            with pytest.raises(errors.PermissionDeniedError):
                saver.save(sess, str(roots[1] / "confined"))


def test_default_roots_are_cwd_and_temp(tmp_path):
    import tempfile

    box = FileSandbox([os.getcwd(), tempfile.gettempdir()])
    assert box.allows(str(tmp_path / "x"))
    assert box.allows("relative/file")
    assert not box.allows("/proc/self/environ")


def _run(target, fetch_fn):
    with tf.Graph().as_default():
        fetch = fetch_fn()
        with tf.Session(target) as sess:
            return sess.run(fetch)


def test_read_write_and_matching_files_stay_inside(server, roots):
    inside, outside = roots
    (outside / "secret.txt").write_bytes(b"secret")
    _run(server.target, lambda: tf.io.write_file(str(inside / "a.txt"), "hello"))
    assert _run(server.target, lambda: tf.io.read_file(str(inside / "a.txt"))) == b"hello"
    assert list(_run(server.target, lambda: tf.io.matching_files(str(inside / "*.txt")))) == [
        str(inside / "a.txt").encode()]
    with pytest.raises(errors.PermissionDeniedError, match=r"ReadFile.*secret"):
        _run(server.target, lambda: tf.io.read_file(str(outside / "secret.txt")))
    with pytest.raises(errors.PermissionDeniedError, match=r"WriteFile.*payload"):
        _run(server.target, lambda: tf.io.write_file(str(inside) + "/../outside/payload", "x"))
    with pytest.raises(errors.PermissionDeniedError, match="MatchingFiles"):
        _run(server.target, lambda: tf.io.matching_files(str(outside / "*")))
    os.symlink(outside / "secret.txt", inside / "alias.txt")
    with pytest.raises(errors.PermissionDeniedError, match=r"MatchingFiles.*resolves to"):
        _run(server.target, lambda: tf.io.matching_files(str(inside / "*.txt")))
    assert sorted(os.listdir(outside)) == ["secret.txt"]


def _write_records(path, records):
    with tf.python_io.TFRecordWriter(str(path)) as w:
        for r in records:
            w.write(r)


def test_datasets_and_readers_read_only_inside(server, roots):
    inside, outside = roots
    _write_records(inside / "ok.tfrecord", [b"a", b"b"])
    _write_records(outside / "secret.tfrecord", [b"s"])

    def first_record(path):
        with tf.name_scope(path.stem):  # NOTE: one-shot iterators are shared by node name
            dataset = tf.data.TFRecordDataset([str(path)])
            return tf.data.make_one_shot_iterator(dataset).get_next()

    assert _run(server.target, lambda: first_record(inside / "ok.tfrecord")) == b"a"
    with pytest.raises(errors.PermissionDeniedError, match=r"TFRecordDataset.*secret"):
        _run(server.target, lambda: first_record(outside / "secret.tfrecord"))

    with tf.Graph().as_default():
        queue = tf.FIFOQueue(2, tf.string)
        enqueue = queue.enqueue_many([[str(outside / "secret.tfrecord")]])
        _, value = tf.WholeFileReader().read(queue)
        with tf.Session(server.target) as sess:
            sess.run(enqueue)
            with pytest.raises(errors.PermissionDeniedError, match=r"ReaderReadV2.*secret"):
                sess.run(value)
