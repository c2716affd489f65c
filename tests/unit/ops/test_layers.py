"""`tf.layers`: variable and op names, unique layer names and reuse, initializers,
regularizers, shapes and values of dense, conv2d, pooling, flatten and dropout."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.kernels.nn_conv_kernels  # noqa: F401  (until kernels/__init__ imports it)
import tensorweave.kernels.nn_kernels  # noqa: F401
from tensorweave import layers, nn
from tensorweave.ops.variables import GraphKeys


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _names(variables):
    return [v.name for v in variables]


def _run_initialized(fetches, feed_dict=None):
    with tf.Session(graph=tf.get_default_graph()) as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def test_dense_variables_ops_and_values():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = layers.dense(x, 4, activation=nn.relu)
    assert y.shape.as_list() == [None, 4] and y.dtype == tf.float32
    assert y.op.name == "dense/Relu"
    assert _names(tf.trainable_variables()) == ["dense/kernel:0", "dense/bias:0"]
    ops = {op.name for op in tf.get_default_graph().get_operations()}
    assert {"dense/MatMul", "dense/BiasAdd"} <= ops
    kernel, bias = tf.trainable_variables()
    xv = np.array([[1.0, -2.0, 0.5]], np.float32)
    out, k, b = _run_initialized([y, kernel, bias], {x: xv})
    np.testing.assert_allclose(out, np.maximum(xv @ k + b, 0), rtol=1e-6)
    np.testing.assert_array_equal(b, np.zeros(4))
    limit = np.sqrt(6 / (3 + 4))  # Glorot uniform
    assert np.abs(k).max() <= limit and k.std() > 0


def test_dense_unique_names_and_reuse():
    x = tf.constant(np.ones((2, 3), np.float32))
    layers.dense(x, 2)
    layers.dense(x, 2)
    layers.dense(x, 2, name="head")
    shared = layers.dense(x, 2, name="head", reuse=True)
    assert _names(tf.trainable_variables()) == [
        "dense/kernel:0",
        "dense/bias:0",
        "dense_1/kernel:0",
        "dense_1/bias:0",
        "head/kernel:0",
        "head/bias:0",
    ]
    with pytest.raises(ValueError, match="already exists"):
        layers.dense(x, 2, name="head")
    with tf.variable_scope("tower"):
        layers.dense(x, 2)
    assert "tower/dense/kernel:0" in _names(tf.global_variables())
    out = _run_initialized(shared)
    assert out.shape == (2, 2)


def test_dense_options():
    x = tf.constant(np.ones((2, 2, 3), np.float64))
    y = layers.dense(
        x,
        5,
        use_bias=False,
        kernel_initializer=tf.ones_initializer(),
        kernel_regularizer=lambda w: tf.reduce_sum(w),
        activity_regularizer=lambda a: tf.reduce_mean(a),
        trainable=False,
        name="proj",
    )
    assert y.shape.as_list() == [2, 2, 5] and y.dtype == tf.float64
    assert tf.trainable_variables() == []
    assert _names(tf.global_variables()) == ["proj/kernel:0"]
    reg = tf.get_collection(GraphKeys.REGULARIZATION_LOSSES)
    assert len(reg) == 2
    out, reg_values = _run_initialized([y, reg])
    np.testing.assert_array_equal(out, np.full((2, 2, 5), 3.0))
    assert reg_values == [15.0, 3.0]


def test_dense_needs_a_known_last_dimension():
    with pytest.raises(ValueError, match="The last dimension of the inputs to `Dense`"):
        layers.dense(tf.placeholder(tf.float32, [None, None]), 2)


def test_conv2d_layer():
    x = tf.placeholder(tf.float32, [None, 6, 6, 2])
    y = layers.conv2d(x, 4, 3, padding="same", activation=nn.relu)
    assert y.shape.as_list() == [None, 6, 6, 4]
    kernel, bias = tf.trainable_variables()
    assert kernel.name == "conv2d/kernel:0" and kernel.shape.as_list() == [3, 3, 2, 4]
    assert bias.name == "conv2d/bias:0" and bias.shape.as_list() == [4]
    assert y.op.name == "conv2d/Relu"
    strided = layers.conv2d(x, 3, (2, 3), strides=2, padding="VALID")
    assert strided.shape.as_list() == [None, 3, 2, 3]
    assert "conv2d_1/kernel:0" in _names(tf.trainable_variables())
    xv = np.random.default_rng(0).normal(size=(1, 6, 6, 2)).astype(np.float32)
    out, k, b = _run_initialized([y, kernel, bias], {x: xv})
    ref = _run_initialized(nn.relu(nn.conv2d(xv, k, 1, "SAME") + b))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_conv2d_channels_first():
    x = tf.constant(np.random.default_rng(1).normal(size=(1, 2, 5, 5)).astype(np.float32))
    y = layers.conv2d(x, 3, 3, data_format="channels_first")
    assert y.shape.as_list() == [1, 3, 3, 3]
    assert _run_initialized(y).shape == (1, 3, 3, 3)


def test_conv2d_argument_errors():
    x = tf.placeholder(tf.float32, [None, 4, 4, 1])
    with pytest.raises(ValueError, match='The `padding` argument must be one of "valid", "same"'):
        layers.conv2d(x, 2, 3, padding="full")
    with pytest.raises(ValueError, match="The `kernel_size` argument must be a tuple of 2"):
        layers.conv2d(x, 2, (1, 2, 3))
    with pytest.raises(ValueError, match="The `data_format` argument must be one of"):
        layers.conv2d(x, 2, 3, data_format="nhwc")
    with pytest.raises(ValueError, match="channel dimension of the inputs should be defined"):
        layers.conv2d(tf.placeholder(tf.float32, [None, 4, 4, None]), 2, 3)


def test_pooling_and_flatten():
    xv = np.arange(2 * 4 * 4 * 3, dtype=np.float32).reshape(2, 4, 4, 3)
    x = tf.placeholder(tf.float32, [None, 4, 4, 3])
    mp = layers.max_pooling2d(x, 2, 2)
    ap = layers.average_pooling2d(x, (2, 2), (2, 2), padding="same")
    flat = layers.flatten(mp)
    assert mp.shape.as_list() == [None, 2, 2, 3] and mp.op.name == "max_pooling2d/MaxPool"
    assert ap.op.name == "average_pooling2d/AvgPool"
    assert flat.shape.as_list() == [None, 12]
    assert layers.max_pooling2d(x, 2, 2).op.name == "max_pooling2d_1/MaxPool"
    mp_v, ap_v, flat_v = _run_initialized([mp, ap, flat], {x: xv})
    windows = xv.reshape(2, 2, 2, 2, 2, 3)
    np.testing.assert_array_equal(mp_v, windows.max(axis=(2, 4)))
    np.testing.assert_allclose(ap_v, windows.mean(axis=(2, 4)))
    np.testing.assert_array_equal(flat_v, mp_v.reshape(2, -1))


def test_flatten_shapes():
    dynamic = layers.flatten(tf.placeholder(tf.float32, [None, None, 3]))
    assert dynamic.shape.as_list() == [None, None]
    batch = layers.flatten(tf.placeholder(tf.float32, [4, None, 3]))
    assert batch.shape.as_list() == [4, None]
    vector = layers.flatten(tf.placeholder(tf.float32, [5]))
    assert vector.shape.as_list() == [5, 1]
    first = layers.flatten(
        tf.constant(np.arange(12.0).reshape(1, 3, 2, 2)), data_format="channels_first"
    )
    out = _run_initialized(first)
    np.testing.assert_array_equal(
        out, np.arange(12.0).reshape(1, 3, 2, 2).transpose(0, 2, 3, 1).reshape(1, -1)
    )
    values = _run_initialized(dynamic, {dynamic.op.inputs[0]: np.ones((2, 2, 3))})
    assert values.shape == (2, 6)


def test_dropout_layer():
    x = tf.constant(np.ones((100, 100), np.float32))
    off = layers.dropout(x, rate=0.5)
    on = layers.dropout(x, rate=0.5, training=True, seed=1)
    training = tf.placeholder(tf.bool, [])
    switch = layers.dropout(x, rate=0.5, training=training, seed=2)
    constant_switch = layers.dropout(x, training=tf.constant(False))
    off_v, on_v, const_v = _run_initialized([off, on, constant_switch])
    np.testing.assert_array_equal(off_v, np.ones((100, 100)))
    np.testing.assert_array_equal(const_v, np.ones((100, 100)))
    assert set(np.unique(on_v)) == {0.0, 2.0} and 0.45 < (on_v == 0).mean() < 0.55
    assert (_run_initialized(switch, {training: False}) == 1).all()
    train_v = _run_initialized(switch, {training: True})
    assert set(np.unique(train_v)) == {0.0, 2.0}
    (grad,) = tf.gradients(switch, x)
    np.testing.assert_array_equal(_run_initialized(grad, {training: False}), np.ones((100, 100)))
