"""Scaffold: what it creates at finalize, its defaults, caching and copying (mirrors TF's
monitored_session_test.py: ScaffoldTest).
"""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave.training.monitored_session import Scaffold
from tensorweave.training.saver import Saver
from tensorweave.training.summary_io import FileWriterCache


@pytest.fixture(autouse=True)
def _clear_writers():
    yield
    FileWriterCache.clear()


# ------------------------------------------------------------------------- Scaffold
def test_nothing_created_before_finalize():
    with tf.Graph().as_default():
        scaffold = Scaffold()
        for attr in (
            "init_op",
            "init_feed_dict",
            "init_fn",
            "ready_op",
            "ready_for_local_init_op",
            "local_init_op",
            "summary_op",
            "saver",
        ):
            assert getattr(scaffold, attr) is None, attr


def test_defaults_empty_graph():
    with tf.Graph().as_default():
        scaffold = Scaffold()
        tf.Variable(1, name="my_var")
        tf.Variable(
            2, name="my_local_var", trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES]
        )
        scaffold.finalize()
        assert isinstance(scaffold.init_op, tf.Operation)
        assert scaffold.init_feed_dict is None and scaffold.init_fn is None
        assert isinstance(scaffold.ready_op, tf.Tensor)
        assert isinstance(scaffold.ready_for_local_init_op, tf.Tensor)
        assert isinstance(scaffold.local_init_op, tf.Operation)
        assert scaffold.summary_op is None
        assert isinstance(scaffold.saver, Saver)
        with tf.Session() as sess:
            assert sorted(sess.run(scaffold.ready_op)) == [b"my_local_var", b"my_var"]
            assert list(sess.run(scaffold.ready_for_local_init_op)) == [b"my_var"]
            sess.run([scaffold.init_op, scaffold.local_init_op])
            assert len(sess.run(scaffold.ready_op)) == 0
            assert len(sess.run(scaffold.ready_for_local_init_op)) == 0


def test_defaults_no_variables():
    with tf.Graph().as_default():
        scaffold = Scaffold()
        tf.constant(1, name="my_const")
        scaffold.finalize()
        assert isinstance(scaffold.init_op, tf.Operation)
        assert isinstance(scaffold.ready_op, tf.Tensor)
        assert isinstance(scaffold.local_init_op, tf.Operation)
        assert isinstance(scaffold.saver, Saver)


def test_caches_values():
    with tf.Graph().as_default():
        tf.Variable([1])
        scaffold1 = Scaffold().finalize()
        scaffold2 = Scaffold().finalize()
        for attr in ("init_op", "ready_op", "ready_for_local_init_op", "local_init_op", "saver"):
            assert getattr(scaffold1, attr) is getattr(scaffold2, attr), attr


def test_default_saver_is_sharded():
    with tf.Graph().as_default():
        tf.Variable([1])
        scaffold = Scaffold().finalize()
        assert scaffold.saver.saver_def.sharded
        assert tf.get_collection(tf.GraphKeys.SAVERS) == [scaffold.saver]


def test_raise_error_if_more_than_one_cached_item():
    with tf.Graph().as_default():
        tf.Variable([1])
        tf.add_to_collection(tf.GraphKeys.SAVERS, Saver())
        tf.add_to_collection(tf.GraphKeys.SAVERS, Saver())
        with pytest.raises(RuntimeError, match="More than one item"):
            Scaffold().finalize()
    with tf.Graph().as_default():
        tf.add_to_collection(tf.GraphKeys.INIT_OP, tf.no_op())
        tf.add_to_collection(tf.GraphKeys.INIT_OP, tf.no_op())
        with pytest.raises(RuntimeError, match='More than one item in the collection "init_op"'):
            Scaffold().finalize()


def test_uses_passed_values():
    with tf.Graph().as_default():
        tf.Variable([1])
        saver = Saver()
        scaffold = Scaffold(
            init_op=2,
            init_feed_dict=3,
            init_fn=lambda scaffold, sess: 4,
            ready_op=5,
            ready_for_local_init_op=6,
            local_init_op=7,
            saver=saver,
        )
        scaffold.finalize()
        assert scaffold.init_op == 2
        assert scaffold.init_feed_dict == 3
        assert scaffold.init_fn("sess") == 4
        assert (scaffold.ready_op, scaffold.ready_for_local_init_op) == (5, 6)
        assert scaffold.local_init_op == 7
        assert scaffold.saver is saver


def test_graph_is_finalized():
    with tf.Graph().as_default():
        tf.Variable([1])
        Scaffold().finalize()
        with pytest.raises(RuntimeError, match="Graph is finalized and cannot be modified"):
            tf.constant([0])


def test_copy_from_scaffold():
    def my_init_fn(scaffold, session):
        return (scaffold, session)

    with tf.Graph().as_default():
        tf.Variable([1])
        saver = Saver()
        scaffold1 = Scaffold(
            init_op=2,
            init_feed_dict=3,
            init_fn=my_init_fn,
            ready_op=5,
            ready_for_local_init_op=6,
            local_init_op=7,
            saver=saver,
        )
        scaffold2 = Scaffold(ready_op=8, copy_from_scaffold=scaffold1)
        scaffold2.finalize()
        assert scaffold2.init_op == 2 and scaffold2.init_feed_dict == 3
        assert scaffold2.init_fn("sess") == (scaffold2, "sess")  # bound to the new scaffold
        assert scaffold2.ready_op == 8
        assert scaffold2.ready_for_local_init_op == 6 and scaffold2.local_init_op == 7
        assert scaffold2.saver is saver


def test_copy_from_scaffold_is_scaffold():
    with pytest.raises(TypeError, match="copy_from_scaffold is not a Scaffold instance"):
        Scaffold(copy_from_scaffold=1)
