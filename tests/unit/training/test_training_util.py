"""Global step helpers (TF 1.x `training_util_test.py`)."""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave.training import training_util


def test_create_global_step_is_an_int64_scalar_variable():
    g = tf.Graph()
    with g.as_default():
        with tf.name_scope("outer"):
            step = training_util.create_global_step()
        assert step.name == "global_step:0"
        assert step.dtype.base_dtype == tf.int64
        assert step.shape.as_list() == []
        assert not step.trainable
        assert g.get_collection(tf.GraphKeys.GLOBAL_STEP) == [step]
        assert step in tf.global_variables()
        assert step not in tf.trainable_variables()
        assert step.initializer.inputs[1].op.name == "global_step/Initializer/zeros"
        with pytest.raises(ValueError, match='"global_step" already exists.'):
            training_util.create_global_step()
        with tf.Session() as sess:
            sess.run(step.initializer)
            assert training_util.global_step(sess, step) == 0
            assert isinstance(training_util.global_step(sess, "global_step:0"), int)


def test_global_step_uses_the_current_device_scope():
    g = tf.Graph()
    with g.as_default(), tf.device("/job:ps/task:0"):
        step = training_util.get_or_create_global_step()
    assert step.device == "/job:ps/task:0"
    assert step.initializer.device == "/job:ps/task:0"


def test_get_or_create_and_get_with_graph_argument():
    g = tf.Graph()
    assert training_util.get_global_step(g) is None
    step = training_util.get_or_create_global_step(g)
    assert step.graph is g
    assert training_util.get_or_create_global_step(g) is step
    assert training_util.get_global_step(g) is step
    with g.as_default():
        assert training_util.get_global_step() is step


def test_get_global_step_by_name_and_validation():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(0, name="global_step", trainable=False)
        assert training_util.get_global_step().name == v.name
    g = tf.Graph()
    with g.as_default():
        tf.Variable(0.0, name="global_step")
        with pytest.raises(TypeError, match="does not have integer type"):
            training_util.get_global_step()
    g = tf.Graph()
    with g.as_default():
        tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.Variable([0, 1]))
        with pytest.raises(TypeError, match="is not scalar"):
            training_util.get_global_step()
    g = tf.Graph()
    with g.as_default():
        tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, "step")
        with pytest.raises(TypeError, match="must be a Variable or Tensor"):
            training_util.get_global_step()
    g = tf.Graph()
    with g.as_default():
        tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.Variable(0))
        tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.Variable(1))
        assert training_util.get_global_step() is None


def test_read_and_increment():
    g = tf.Graph()
    with g.as_default():
        with pytest.raises(ValueError, match="should be created by"):
            training_util._increment_global_step(1)
        assert training_util._get_or_create_global_step_read() is None
        step = training_util.get_or_create_global_step()
        read = training_util._get_or_create_global_step_read()
        assert read.op.name == "global_step/add"
        assert training_util._get_or_create_global_step_read() is read
        assert g.get_collection(training_util.GLOBAL_STEP_READ_KEY) == [read]
        inc = training_util._increment_global_step(5)
        assert inc.op.name.startswith("global_step/")
        with tf.Session() as sess:
            sess.run(step.initializer)
            assert sess.run(inc) == 5
            assert sess.run(read) == 5
            assert sess.run(inc) == 10
        tf.add_to_collection(training_util.GLOBAL_STEP_READ_KEY, read)
        with pytest.raises(RuntimeError, match="multiple items"):
            training_util._get_or_create_global_step_read()


def test_assert_global_step_accepts_int_tensors():
    with tf.Graph().as_default():
        training_util.assert_global_step(tf.constant(3, tf.int64))
        with pytest.raises(TypeError):
            training_util.assert_global_step(tf.constant(3.0))
