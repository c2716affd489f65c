"""`tf.make_template` (names as TF 2.21's `tf.compat.v1` gives them; cases follow
TensorFlow's template_test.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def _linear(x, n=2):
    w = tf.get_variable("w", [3, n], initializer=tf.ones_initializer())
    return tf.matmul(x, w)


def test_calls_share_variables():
    with tf.Graph().as_default():
        t = tf.make_template("lin", _linear, n=2)
        assert t.variable_scope is None and t.variable_scope_name is None
        x = tf.ones([1, 3])
        a, b = t(x), t(x)
        assert [v.name for v in tf.global_variables()] == ["lin/w:0"]
        assert (a.name, b.name, t.variable_scope_name, t.name) == (
            "lin/MatMul:0", "lin_1/MatMul:0", "lin/", "lin")
        assert t.var_scope is t.variable_scope
        second = tf.make_template("lin", _linear)
        c = second(x)
        assert [v.name for v in tf.global_variables()] == ["lin/w:0", "lin_1/w:0"]
        assert c.name == "lin_2/MatMul:0"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run([a, b]), [[[3.0, 3.0]], [[3.0, 3.0]]])


def test_scope_now_and_unique_name():
    with tf.Graph().as_default():
        x = tf.ones([1, 3])
        now = tf.make_template("s", _linear, create_scope_now_=True)
        assert now.variable_scope_name == "s/"
        assert now(x).name == "s/MatMul:0"
        shared = tf.make_template("u", _linear, unique_name_="shared")
        assert shared(x).name == "shared/MatMul:0"
        assert tf.global_variables()[-1].name == "shared/w:0"


def test_new_trainable_variable_after_first_call_raises():
    with tf.Graph().as_default():
        t = tf.make_template("bad", lambda x: x * tf.Variable(1.0))
        t(1.0)
        with pytest.raises(ValueError, match="Trainable variable created when calling a "
                                             "template after the first time"):
            t(1.0)


def test_custom_getter():
    seen = []

    def getter(getter, name, *args, **kwargs):
        seen.append(name)
        return getter(name, *args, **kwargs)

    with tf.Graph().as_default():
        t = tf.make_template("cg", _linear, custom_getter_=getter)
        t(tf.ones([1, 3]))
        t(tf.ones([1, 3]))
    assert seen == ["cg/w", "cg/w"]
