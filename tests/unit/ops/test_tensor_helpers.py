"""`tf.is_tensor`, `tf.get_static_value`, `tf.tables_initializer`/`initialize_all_tables`,
`tf.init_scope`, `tf.OpError` (expected values as TF 2.21's `tf.compat.v1` gives them)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def test_is_tensor():
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        c = tf.constant([1.0])
        assert tf.is_tensor(c) and tf.is_tensor(v) and tf.is_tensor(v.value())
        assert tf.is_tensor(tf.IndexedSlices(c, tf.constant([0])))
        assert not tf.is_tensor(1.0) and not tf.is_tensor(np.ones(2))


def test_get_static_value():
    with tf.Graph().as_default():
        np.testing.assert_array_equal(tf.get_static_value(tf.constant([1, 2])), [1, 2])
        assert tf.get_static_value(tf.placeholder(tf.int32)) is None
        assert tf.get_static_value(tf.Variable(1.0)) is None
        np.testing.assert_array_equal(tf.get_static_value([3, 4], partial=True), [3, 4])


def test_tables_initializer_runs_the_collection():
    with tf.Graph().as_default():
        empty = tf.tables_initializer()
        assert empty.type == "NoOp" and empty.name == "init_all_tables"
        w = tf.Variable([4, 5], collections=[])
        tf.add_to_collection(tf.GraphKeys.TABLE_INITIALIZERS, w.initializer)
        init = tf.initialize_all_tables()
        assert init.name == "init_all_tables_1"
        with tf.Session() as sess:
            sess.run(init)
            np.testing.assert_array_equal(sess.run(w), [4, 5])


def test_init_scope_leaves_control_dependencies():
    with tf.Graph().as_default():
        dep = tf.no_op()
        with tf.name_scope("outer"), tf.control_dependencies([dep]):
            with tf.init_scope():
                lifted = tf.constant(1, name="c")
            kept = tf.constant(2)
        assert lifted.op.control_inputs == [] and lifted.op.name == "outer/c"
        assert kept.op.control_inputs == [dep]


def test_op_error_is_the_errors_base():
    assert tf.OpError is tf.errors.OpError
    with pytest.raises(tf.OpError):
        raise tf.errors.NotFoundError(None, None, "x")
