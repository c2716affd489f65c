"""`tf.contrib.layers` helpers (TF 1.15 contrib semantics) against NumPy references."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(*fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches), feed)


def test_flatten_keeps_batch_and_uses_flatten_scope():
    x = tf.placeholder(tf.float32, [None, 2, 3, 4])
    y = tf.contrib.layers.flatten(x)
    assert y.shape.as_list() == [None, 24]
    assert y.op.name.startswith("Flatten/")
    xv = RNG.standard_normal((5, 2, 3, 4)).astype(np.float32)
    (out,) = _run(y, feed={x: xv})
    np.testing.assert_array_equal(out, xv.reshape(5, 24))


@pytest.mark.parametrize("shape,mode,n", [
    ([300, 200], "FAN_IN", 300.0),
    ([300, 200], "FAN_OUT", 200.0),
    ([300, 200], "FAN_AVG", 250.0),
    ([3, 3, 40, 50], "FAN_IN", 360.0),   # fan_in = 3*3*40, fan_out = 3*3*50
    ([3, 3, 40, 50], "FAN_AVG", 405.0),
])
def test_variance_scaling_uniform_limit(shape, mode, n):
    init = tf.contrib.layers.variance_scaling_initializer(2.0, mode, uniform=True, seed=1)
    (v,) = _run(init(shape))
    limit = math.sqrt(3.0 * 2.0 / n)
    assert v.dtype == np.float32 and list(v.shape) == shape
    assert np.abs(v).max() <= limit
    assert np.abs(v).max() > 0.99 * limit
    np.testing.assert_allclose(v.std(), math.sqrt(2.0 / n), rtol=0.03)


def test_variance_scaling_truncated_normal_std():
    init = tf.contrib.layers.variance_scaling_initializer(seed=2)   # factor 2, FAN_IN
    (v,) = _run(init([400, 300], tf.float64))
    stddev = math.sqrt(1.3 * 2.0 / 400)
    assert v.dtype == np.float64
    assert np.abs(v).max() <= 2 * stddev
    # The truncation at 2 sigma leaves 0.8796 of sigma; 1.3 in the variance undoes it.
    np.testing.assert_allclose(v.std(), math.sqrt(2.0 / 400), rtol=0.03)


def test_xavier_is_fan_avg_uniform():
    (v,) = _run(tf.contrib.layers.xavier_initializer(seed=3)([100, 60]))
    limit = math.sqrt(6.0 / 160)
    assert np.abs(v).max() <= limit and np.abs(v).max() > 0.98 * limit
    assert tf.contrib.layers.xavier_initializer_conv2d is tf.contrib.layers.xavier_initializer


def test_variance_scaling_bad_arguments():
    with pytest.raises(TypeError, match="non-floating point"):
        tf.contrib.layers.variance_scaling_initializer(dtype=tf.int32)
    with pytest.raises(TypeError, match="Unknown mode FAN_X"):
        tf.contrib.layers.variance_scaling_initializer(mode="FAN_X")


def test_regularizers_exact_values_and_bad_scales():
    wv = RNG.standard_normal((4, 3)).astype(np.float32)
    w = tf.constant(wv)
    l2, l1 = tf.contrib.layers.l2_regularizer(0.5)(w), tf.contrib.layers.l1_regularizer(0.25)(w)
    assert l2.op.name == "l2_regularizer" and l1.op.name == "l1_regularizer"
    a, b = _run(l2, l1)
    np.testing.assert_allclose(a, 0.5 * np.sum(wv ** 2) / 2, rtol=1e-6)
    np.testing.assert_allclose(b, 0.25 * np.sum(np.abs(wv)), rtol=1e-6)
    assert tf.contrib.layers.l2_regularizer(0.0)(w) is None
    with pytest.raises(ValueError, match="scale cannot be an integer: 1"):
        tf.contrib.layers.l2_regularizer(1)
    with pytest.raises(ValueError, match="less than 0"):
        tf.contrib.layers.l1_regularizer(-0.1)


def test_fully_connected_variables_values_and_regularization():
    xv = RNG.standard_normal((5, 4)).astype(np.float32)
    x = tf.constant(xv)
    y = tf.contrib.layers.fully_connected(
        x, 3, weights_regularizer=tf.contrib.layers.l2_regularizer(0.1))
    z = tf.contrib.layers.fully_connected(y, 2, activation_fn=None, scope="out")
    names = [v.op.name for v in tf.trainable_variables()]
    assert names == ["fully_connected/weights", "fully_connected/biases",
                     "out/weights", "out/biases"]
    assert tf.model_variables() == tf.trainable_variables() == tf.global_variables()
    reg = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(reg) == 1
    w1, b1, w2, b2, yv, zv, rv = _run(*tf.trainable_variables(), y, z, reg[0])
    np.testing.assert_array_equal(b1, np.zeros(3, np.float32))
    np.testing.assert_allclose(yv, np.maximum(xv @ w1 + b1, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(zv, yv @ w2 + b2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv, 0.1 * np.sum(w1 ** 2) / 2, rtol=1e-5)


def test_fully_connected_rank3_reuse_and_normalizer():
    x = tf.placeholder(tf.float32, [2, 3, 4])
    y = tf.contrib.layers.fully_connected(x, 5, activation_fn=None, scope="fc",
                                          biases_initializer=None)
    assert y.shape.as_list() == [2, 3, 5]
    again = tf.contrib.layers.fully_connected(x, 5, activation_fn=None, scope="fc",
                                              reuse=True, biases_initializer=None)
    assert [v.op.name for v in tf.global_variables()] == ["fc/weights"]
    doubled = tf.contrib.layers.fully_connected(
        x, 5, activation_fn=None, normalizer_fn=lambda t, k: t * k,
        normalizer_params={"k": 2.0}, scope="norm")
    assert "norm/biases" not in [v.op.name for v in tf.global_variables()]
    xv = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    w, w2, yv, av, dv = _run(tf.global_variables()[0], tf.global_variables()[1], y, again,
                             doubled, feed={x: xv})
    np.testing.assert_allclose(yv, xv @ w, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(av, yv)
    np.testing.assert_allclose(dv, 2.0 * (xv @ w2), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="num_outputs"):
        tf.contrib.layers.fully_connected(x, 2.5)
