"""SessionManager (mirrors TF's session_manager_test.py, with short polling intervals)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.training.saver import Saver
from tensorweave.training.session_manager import SessionManager


def _initialized(sess, name):
    return sess.run(tf.is_variable_initialized(sess.graph.get_tensor_by_name(name)))


def test_prepare_session_succeeds():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0, 3.0], name="v")
        sm = SessionManager(ready_op=tf.report_uninitialized_variables())
        sess = sm.prepare_session("", init_op=tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(v), [1.0, 2.0, 3.0])


def test_prepare_session_with_init_feed_dict():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, shape=(3,))
        v = tf.Variable(p, name="v")
        sm = SessionManager(ready_op=tf.report_uninitialized_variables())
        sess = sm.prepare_session(
            "", init_op=tf.global_variables_initializer(), init_feed_dict={p: [1.0, 2.0, 3.0]}
        )
        np.testing.assert_allclose(sess.run(v), [1.0, 2.0, 3.0])


def test_prepare_session_with_init_fn():
    with tf.Graph().as_default():
        v = tf.Variable([125], name="v")
        sm = SessionManager(ready_op=tf.report_uninitialized_variables())
        sess = sm.prepare_session("", init_fn=lambda sess: sess.run(v.initializer))
        np.testing.assert_allclose(sess.run(v), [125])


def test_prepare_session_without_anything_to_init_fails():
    with tf.Graph().as_default():
        tf.Variable([1.0], name="v")
        sm = SessionManager(ready_op=tf.report_uninitialized_variables())
        with pytest.raises(RuntimeError, match="no init_op or init_fn or local_init_op was given"):
            sm.prepare_session("")


def test_prepare_session_not_ready_fails():
    with tf.Graph().as_default():
        tf.Variable([1.0], name="v")
        sm = SessionManager(ready_op=tf.report_uninitialized_variables())
        with pytest.raises(RuntimeError, match="Init operations did not make model ready.*v"):
            sm.prepare_session("", init_op=tf.no_op())


def test_prepare_session_restores_or_waits_for_checkpoint(tmp_path):
    checkpoint_dir = str(tmp_path / "prepare_session")
    os.makedirs(checkpoint_dir)
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0, 3.0], name="v")
        sm = SessionManager(ready_op=tf.report_uninitialized_variables())
        saver = Saver({"v": v})
        sess = sm.prepare_session(
            "",
            init_op=tf.global_variables_initializer(),
            saver=saver,
            checkpoint_dir=checkpoint_dir,
        )
        np.testing.assert_allclose(sess.run(v), [1.0, 2.0, 3.0])
        saver.save(sess, os.path.join(checkpoint_dir, "prepare_session_checkpoint"))
    empty_dir = str(tmp_path / "empty")
    os.makedirs(empty_dir)
    with tf.Graph().as_default():
        v = tf.Variable([6.0, 7.0, 8.0], name="v")
        sm = SessionManager(ready_op=tf.report_uninitialized_variables(), recovery_wait_secs=0.01)
        saver = Saver({"v": v})
        # No checkpoint appears within the wait: nothing can initialize the model.
        with pytest.raises(RuntimeError, match="no init_op or init_fn or local_init_op"):
            sm.prepare_session(
                "",
                init_op=None,
                saver=saver,
                checkpoint_dir=empty_dir,
                wait_for_checkpoint=True,
                max_wait_secs=0.05,
            )
        sess = sm.prepare_session(
            "",
            init_op=None,
            saver=saver,
            checkpoint_dir=checkpoint_dir,
            wait_for_checkpoint=True,
            max_wait_secs=0.05,
        )
        assert _initialized(sess, "v:0")
        np.testing.assert_allclose(sess.run(v), [1.0, 2.0, 3.0])


def test_prepare_session_from_checkpoint_filename(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(3, name="v")
        saver = Saver({"v": v})
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "ckpt"))
        sm = SessionManager(ready_op=tf.report_uninitialized_variables())
        sess = sm.prepare_session("", saver=saver, checkpoint_filename_with_path=path)
        assert sess.run(v) == 3
        with pytest.raises(ValueError, match="Can not provide both checkpoint_dir and"):
            sm.prepare_session(
                "", saver=saver, checkpoint_dir=str(tmp_path), checkpoint_filename_with_path=path
            )


def test_recover_session(tmp_path):
    checkpoint_dir = str(tmp_path)
    with tf.Graph().as_default():
        v = tf.Variable(1, name="v")
        sm = SessionManager(ready_op=tf.report_uninitialized_variables())
        saver = Saver({"v": v})
        sess, initialized = sm.recover_session("", saver=saver, checkpoint_dir=checkpoint_dir)
        assert not initialized
        sess.run(v.initializer)
        assert sess.run(v) == 1
        saver.save(sess, os.path.join(checkpoint_dir, "recover_session_checkpoint"))
    with tf.Graph().as_default():
        v = tf.Variable(2, name="v")
        sm2 = SessionManager(ready_op=tf.report_uninitialized_variables())
        saver = Saver({"v": v})
        sess, initialized = sm2.recover_session("", saver=saver, checkpoint_dir=checkpoint_dir)
        assert initialized
        assert _initialized(sess, "v:0")
        assert sess.run(v) == 1


def test_init_with_ready_for_local_init_op_but_no_local_init_op():
    with tf.Graph().as_default():
        tf.Variable(1, name="v")
        with pytest.raises(
            ValueError,
            match="If you pass a ready_for_local_init_op you must also pass a local_init_op",
        ):
            SessionManager(
                ready_for_local_init_op=tf.report_uninitialized_variables(tf.global_variables()),
                local_init_op=None,
            )


def _save_v(checkpoint_dir, value=1):
    with tf.Graph().as_default():
        v = tf.Variable(value, name="v")
        saver = Saver({"v": v})
        with tf.Session() as sess:
            sess.run(v.initializer)
            saver.save(sess, os.path.join(checkpoint_dir, "recover_session_checkpoint"))


def _v_and_local_w():
    v = tf.Variable(2, name="v")
    w = tf.Variable(v, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="w")
    return v, w


def test_recover_session_with_ready_for_local_init_op(tmp_path):
    _save_v(str(tmp_path))
    with tf.Graph().as_default():
        v, w = _v_and_local_w()
        sm = SessionManager(
            ready_op=tf.report_uninitialized_variables(),
            ready_for_local_init_op=tf.report_uninitialized_variables(tf.global_variables()),
            local_init_op=w.initializer,
        )
        sess, initialized = sm.recover_session(
            "", saver=Saver({"v": v}), checkpoint_dir=str(tmp_path)
        )
        assert initialized
        assert _initialized(sess, "v:0") and _initialized(sess, "w:0")
        assert sess.run(v) == 1 and sess.run(w) == 1


def test_recover_session_ready_for_local_init_fails_to_ready_local(tmp_path):
    _save_v(str(tmp_path))
    with tf.Graph().as_default():
        v, w = _v_and_local_w()
        # Too strict: w itself is checked, so local_init_op never runs.
        sm = SessionManager(
            ready_op=tf.report_uninitialized_variables(),
            ready_for_local_init_op=tf.report_uninitialized_variables(),
            local_init_op=w.initializer,
        )
        sess, initialized = sm.recover_session(
            "", saver=Saver({"v": v}), checkpoint_dir=str(tmp_path)
        )
        assert not initialized
        assert _initialized(sess, "v:0") and not _initialized(sess, "w:0")
        assert sess.run(v) == 1


def test_recover_session_without_checkpoint_still_runs_local_init_op():
    with tf.Graph().as_default():
        w = tf.Variable(1, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="w")
        sm = SessionManager(
            ready_op=tf.report_uninitialized_variables(),
            ready_for_local_init_op=None,
            local_init_op=w.initializer,
        )
        sess, initialized = sm.recover_session("", saver=None, checkpoint_dir=None)
        assert not initialized
        assert _initialized(sess, "w:0") and sess.run(w) == 1


def test_recover_session_fails_still_runs_local_init_op(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(2, name="v")
        w = tf.Variable(1, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="w")
        sm = SessionManager(
            ready_op=tf.report_uninitialized_variables(),
            ready_for_local_init_op=None,
            local_init_op=w.initializer,
        )
        sess, initialized = sm.recover_session(
            "", saver=Saver({"v": v}), checkpoint_dir=str(tmp_path), wait_for_checkpoint=False
        )
        assert not initialized
        assert not _initialized(sess, "v:0") and _initialized(sess, "w:0")


def test_wait_for_session_times_out():
    with tf.Graph().as_default():
        tf.Variable(1, name="v")
        sm = SessionManager(ready_op=tf.report_uninitialized_variables(), recovery_wait_secs=0.02)
        with pytest.raises(
            tf.errors.DeadlineExceededError, match="Session was not ready after waiting 0 secs"
        ):
            sm.wait_for_session(master="", max_wait_secs=0.1)


def test_wait_for_session_ready_for_local_init_op_fails_to_ready_local():
    with tf.Graph().as_default():
        _, w = _v_and_local_w()
        sm = SessionManager(
            ready_op=tf.report_uninitialized_variables(),
            ready_for_local_init_op=tf.report_uninitialized_variables(),
            local_init_op=w.initializer,
            recovery_wait_secs=0.02,
        )
        with pytest.raises(tf.errors.DeadlineExceededError):
            sm.wait_for_session("", max_wait_secs=0.1)


def test_wait_for_session_insufficient_ready_for_local_init_check():
    with tf.Graph().as_default():
        _, w = _v_and_local_w()
        # ready_for_local_init_op checks nothing, so w's initializer reads an uninitialized v.
        sm = SessionManager(
            ready_op=tf.report_uninitialized_variables(),
            ready_for_local_init_op=None,
            local_init_op=w.initializer,
            recovery_wait_secs=0.02,
        )
        with pytest.raises(tf.errors.FailedPreconditionError):
            sm.wait_for_session("", max_wait_secs=0.1)


def test_wait_for_session_returns_ready_session_without_ready_op():
    with tf.Graph().as_default():
        c = tf.constant(3)
        sess = SessionManager().wait_for_session("")
        assert sess.run(c) == 3


def test_ready_treats_uninitialized_failed_precondition_as_not_ready():
    with tf.Graph().as_default():
        v = tf.Variable(1, name="v")
        read = v + 1
        sm = SessionManager(ready_op=read)
        with tf.Session() as sess:
            ready, msg = sm._model_ready(sess)
            assert not ready and "uninitialized" in msg
            sess.run(v.initializer)
            assert sm._model_ready(sess) == (True, None)  # an int32 value counts as ready
        other = SessionManager(ready_op=tf.constant([b"a", b"b"]))
        with tf.Session() as sess:
            assert other._model_ready(sess) == (False, "Variables not initialized: a, b")
