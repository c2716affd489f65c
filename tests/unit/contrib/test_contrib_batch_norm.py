"""`tf.contrib.layers.batch_norm` and `tf.contrib.layers.dropout` (TF 1.15 contrib
semantics) against NumPy references."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(11)
EPS = 0.001


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default() as g:
        yield g


def _normalized(x, mean, var):
    return (x - mean) / np.sqrt(var + EPS)


def _names(collection):
    return sorted(v.op.name for v in tf.get_collection(collection))


def test_rank2_in_place_updates_with_a_training_placeholder():
    # The DeepLearningZeroToAll lab-10-7 setting: is_training fed, updates_collections=None.
    x = tf.placeholder(tf.float32, [None, 3])
    training = tf.placeholder(tf.bool)
    y = tf.contrib.layers.batch_norm(x, decay=0.9, is_training=training,
                                     updates_collections=None)
    assert y.shape.as_list() == [None, 3]
    assert _names(tf.GraphKeys.GLOBAL_VARIABLES) == [
        "BatchNorm/beta", "BatchNorm/moving_mean", "BatchNorm/moving_variance"]
    assert _names(tf.GraphKeys.MODEL_VARIABLES) == _names(tf.GraphKeys.GLOBAL_VARIABLES)
    assert _names(tf.GraphKeys.TRAINABLE_VARIABLES) == ["BatchNorm/beta"]
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    mm, mv = tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)[1:]
    xv = RNG.standard_normal((8, 3)).astype(np.float32) * [1.0, 2.0, 3.0] + [0.5, -1.0, 2.0]
    x2 = RNG.standard_normal((4, 3)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out_train = sess.run(y, {x: xv, training: True})
        moving = sess.run([mm, mv])
        out_infer = sess.run(y, {x: x2, training: False})
        assert np.allclose(sess.run([mm, mv]), moving)  # inference does not update
    np.testing.assert_allclose(out_train, _normalized(xv, xv.mean(0), xv.var(0)),
                               rtol=1e-4, atol=1e-5)
    expected_mean = 0.1 * xv.mean(0)
    expected_var = 0.9 + 0.1 * xv.var(0, ddof=1)  # the unbiased batch variance
    np.testing.assert_allclose(moving[0], expected_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(moving[1], expected_var, rtol=1e-5)
    np.testing.assert_allclose(out_infer, _normalized(x2, expected_mean, expected_var),
                               rtol=1e-4, atol=1e-5)


def test_rank2_default_collects_updates_and_scale_gamma_initializer():
    x = tf.constant(RNG.standard_normal((6, 2)).astype(np.float32))
    y = tf.contrib.layers.batch_norm(
        x, scale=True, center=False, decay=0.5, scope="bn",
        param_initializers={"gamma": tf.constant_initializer(2.0)},
        activation_fn=tf.nn.relu, variables_collections=["extra"])
    assert _names(tf.GraphKeys.GLOBAL_VARIABLES) == [
        "bn/gamma", "bn/moving_mean", "bn/moving_variance"]
    assert _names("extra") == _names(tf.GraphKeys.GLOBAL_VARIABLES)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv, out = sess.run([x, y])
        before = sess.run(updates[0])  # the update, run once
        np.testing.assert_allclose(before, 0.5 * xv.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, np.maximum(2.0 * _normalized(xv, xv.mean(0), xv.var(0)), 0),
                               rtol=1e-4, atol=1e-5)


def test_rank4_default_uses_the_layer_and_update_ops():
    xv = RNG.standard_normal((2, 3, 3, 4)).astype(np.float32)
    x = tf.constant(xv)
    y_train = tf.contrib.layers.batch_norm(x, scope="bn")
    y_infer = tf.contrib.layers.batch_norm(x, scope="bn", reuse=True, is_training=False)
    assert _names(tf.GraphKeys.GLOBAL_VARIABLES) == [
        "bn/beta", "bn/moving_mean", "bn/moving_variance"]
    assert _names(tf.GraphKeys.MODEL_VARIABLES) == _names(tf.GraphKeys.GLOBAL_VARIABLES)
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        train, infer = sess.run([y_train, y_infer])
    axes = (0, 1, 2)
    np.testing.assert_allclose(train, _normalized(xv, xv.mean(axes), xv.var(axes)),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(infer, _normalized(xv, 0.0, 1.0), rtol=1e-5, atol=1e-6)


def test_as_normalizer_of_fully_connected_in_an_arg_scope():
    x = tf.placeholder(tf.float32, [None, 5])
    with tf.contrib.framework.arg_scope(
            [tf.contrib.layers.fully_connected], normalizer_fn=tf.contrib.layers.batch_norm,
            normalizer_params={"is_training": False, "updates_collections": None}):
        y = tf.contrib.layers.fully_connected(x, 3, scope="h1")
    assert _names(tf.GraphKeys.GLOBAL_VARIABLES) == [
        "h1/BatchNorm/beta", "h1/BatchNorm/moving_mean", "h1/BatchNorm/moving_variance",
        "h1/weights"]
    xv = RNG.standard_normal((4, 5)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w = sess.run(tf.global_variables()[0])
        out = sess.run(y, {x: xv})
    np.testing.assert_allclose(out, np.maximum(_normalized(xv @ w, 0.0, 1.0), 0),
                               rtol=1e-4, atol=1e-5)


def test_batch_norm_errors():
    x = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(ValueError, match="data_format has to be either NCHW or NHWC"):
        tf.contrib.layers.batch_norm(x, data_format="NWC")
    with pytest.raises(ValueError, match="undefined rank"):
        tf.contrib.layers.batch_norm(tf.placeholder(tf.float32))
    with pytest.raises(ValueError, match="`C` dimension must be known"):
        tf.contrib.layers.batch_norm(tf.placeholder(tf.float32, [None, None]))
    with pytest.raises(NotImplementedError, match="batch_weights"):
        tf.contrib.layers.batch_norm(x, batch_weights=tf.ones([4]))
    with pytest.raises(NotImplementedError, match="unfused legacy path"):
        tf.contrib.layers.batch_norm(tf.placeholder(tf.float32, [None, 2, 3]),
                                     updates_collections=None)


def test_dropout_training_placeholder_and_scope():
    x = tf.placeholder(tf.float32, [None, 200])
    training = tf.placeholder(tf.bool)
    y = tf.contrib.layers.dropout(x, keep_prob=0.8, is_training=training)
    assert y.op.name.startswith("Dropout/")
    xv = RNG.uniform(1.0, 2.0, (50, 200)).astype(np.float32)
    with tf.Session() as sess:
        dropped = sess.run(y, {x: xv, training: True})
        kept = sess.run(y, {x: xv, training: False})
    np.testing.assert_array_equal(kept, xv)
    nonzero = dropped != 0
    np.testing.assert_allclose(dropped[nonzero], xv[nonzero] / 0.8, rtol=1e-6)
    assert 0.77 < nonzero.mean() < 0.83
    static = tf.contrib.layers.dropout(x, keep_prob=0.5, is_training=False, scope="d")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(static, {x: xv}), xv)
