"""tf.losses.cosine_distance, huber_loss, mean_pairwise_squared_error: NumPy references
and values recorded from TensorFlow 2.21 (cases after TF's `losses_test.py`)."""

import numpy as np
import pytest

import tensorweave as tf

_RNG = np.random.RandomState(1)
L = _RNG.randn(3, 4).astype(np.float32)
P = (_RNG.randn(3, 4) * 2).astype(np.float32)
LN = L / np.linalg.norm(L, axis=1, keepdims=True)
PN = P / np.linalg.norm(P, axis=1, keepdims=True)
W = np.array([[1.0], [0.0], [2.0]], np.float32)
W2 = np.array([[1, 0, 2, 1], [1, 1, 0, 0], [3, 1, 1, 1]], np.float32)


def _run(build):
    g = tf.Graph()
    with g.as_default():
        out = build()
        with tf.Session() as s:
            return s.run(out), tf.get_collection(tf.GraphKeys.LOSSES)


def _huber(e, delta):
    a = np.abs(e)
    return np.where(a <= delta, 0.5 * a * a, delta * (a - 0.5 * delta))


def test_cosine_distance_against_numpy():
    per_row = 1.0 - np.sum(LN * PN, axis=1, keepdims=True)
    got, losses = _run(lambda: tf.losses.cosine_distance(LN, PN, axis=1))
    np.testing.assert_allclose(got, per_row.mean(), rtol=1e-6)
    assert len(losses) == 1
    got, _ = _run(lambda: tf.losses.cosine_distance(LN, PN, axis=1, weights=W))
    np.testing.assert_allclose(got, np.sum(per_row * W) / 2.0, rtol=1e-6)  # 2 non-zero
    got, _ = _run(
        lambda: tf.losses.cosine_distance(LN, PN, dim=1, reduction=tf.losses.Reduction.NONE)
    )
    np.testing.assert_allclose(got, per_row, rtol=1e-6)
    got, _ = _run(
        lambda: tf.losses.cosine_distance(LN, PN, axis=0, reduction=tf.losses.Reduction.SUM)
    )
    np.testing.assert_allclose(got, 3.537433624267578, rtol=1e-6)  # TensorFlow's value


def test_cosine_distance_needs_axis():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="You must specify 'axis'"):
            tf.losses.cosine_distance(LN, PN)
        with pytest.raises(ValueError, match="both 'axis' and 'dim'"):
            tf.losses.cosine_distance(LN, PN, axis=1, dim=1)


def test_huber_loss_against_numpy():
    e = P - L
    got, _ = _run(lambda: tf.losses.huber_loss(L, P))
    np.testing.assert_allclose(got, _huber(e, 1.0).mean(), rtol=1e-6)
    got, _ = _run(lambda: tf.losses.huber_loss(L, P, delta=0.5, weights=W2))
    np.testing.assert_allclose(got, np.sum(_huber(e, 0.5) * W2) / np.count_nonzero(W2), rtol=1e-6)
    got, _ = _run(
        lambda: tf.losses.huber_loss(
            L, P, delta=2.0, weights=W2, reduction=tf.losses.Reduction.MEAN
        )
    )
    np.testing.assert_allclose(got, np.sum(_huber(e, 2.0) * W2) / W2.sum(), rtol=1e-6)
    got, _ = _run(lambda: tf.losses.huber_loss(L, P, weights=W, reduction=tf.losses.Reduction.NONE))
    np.testing.assert_allclose(got, _huber(e, 1.0) * W, rtol=1e-6)


def _mpse(labels, preds, weights):
    total = 0.0
    for d, w in zip((preds - labels).reshape(len(labels), -1), np.broadcast_to(weights, (3,))):
        n = d.size
        pairs = [((d[i] - d[j]) ** 2) for i in range(n) for j in range(n)]
        total += w * np.sum(pairs) / (n * (n - 1))
    return total


def test_mean_pairwise_squared_error_against_numpy_and_tensorflow():
    got, _ = _run(lambda: tf.losses.mean_pairwise_squared_error(L, P))
    np.testing.assert_allclose(got, _mpse(L, P, 1.0), rtol=1e-5)
    np.testing.assert_allclose(got, 27.79024887084961, rtol=1e-6)
    got, _ = _run(lambda: tf.losses.mean_pairwise_squared_error(L, P, weights=W))
    np.testing.assert_allclose(got, 35.24617385864258, rtol=1e-6)
    got, _ = _run(
        lambda: tf.losses.mean_pairwise_squared_error(
            L.reshape(3, 2, 2), P.reshape(3, 2, 2), weights=3.0
        )
    )
    np.testing.assert_allclose(got, 83.37074279785156, rtol=1e-6)
    got, losses = _run(lambda: tf.losses.mean_pairwise_squared_error(L, P, weights=0.0))
    assert got == 0.0 and len(losses) == 1
