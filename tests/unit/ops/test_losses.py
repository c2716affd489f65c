"""`tf.losses`: each loss against a NumPy formula, every reduction, weights, label
smoothing, dtypes and the loss collections."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.kernels.nn_kernels  # noqa: F401  (until kernels/__init__ imports it)
from tensorweave import losses
from tensorweave.ops.variables import GraphKeys


def _run(fetches, feed_dict=None):
    with tf.Session(graph=tf.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


LABELS = np.array([[1.0, 0.0, 2.0], [0.5, -1.0, 3.0]])
PREDICTIONS = np.array([[1.5, 0.0, 1.0], [0.5, 1.0, 0.0]])
WEIGHTS = np.array([[2.0], [0.0]])


def _reduce(values, weights, reduction):
    w = np.broadcast_to(weights, values.shape)
    weighted = values * w
    R = losses.Reduction
    if reduction == R.NONE:
        return weighted
    total = weighted.sum()
    if reduction == R.SUM:
        return total
    if reduction == R.MEAN:
        return total / w.sum()
    if reduction == R.SUM_OVER_BATCH_SIZE:
        return total / values.size
    return total / np.count_nonzero(w)


@pytest.mark.parametrize("reduction", losses.Reduction.all())
@pytest.mark.parametrize("weights", [1.0, 0.5, WEIGHTS])
def test_mean_squared_error_reductions(reduction, weights):
    y = losses.mean_squared_error(LABELS, PREDICTIONS, weights=weights, reduction=reduction)
    assert y.dtype == tf.float32
    expected = _reduce((PREDICTIONS - LABELS) ** 2, weights, reduction)
    np.testing.assert_allclose(_run(y), expected, rtol=1e-6)


def test_losses_are_collected():
    a = losses.absolute_difference(LABELS, PREDICTIONS)
    b = losses.mean_squared_error(LABELS, PREDICTIONS, loss_collection=None)
    assert losses.get_losses() == [a]
    assert tf.get_collection(GraphKeys.LOSSES) == [a]
    assert b not in losses.get_losses()
    np.testing.assert_allclose(_run(a), np.abs(PREDICTIONS - LABELS).mean(), rtol=1e-6)
    assert a.op.name.startswith("absolute_difference/")


def test_total_and_regularization_losses():
    a = losses.mean_squared_error(LABELS, PREDICTIONS)
    reg = tf.constant(0.25, name="reg")
    assert _run(losses.get_regularization_loss()) == 0.0
    losses.add_loss(reg, GraphKeys.REGULARIZATION_LOSSES)
    assert losses.get_regularization_losses() == [reg]
    total = losses.get_total_loss()
    without = losses.get_total_loss(add_regularization_losses=False, name="data_loss")
    assert total.op.name == "total_loss"
    a_v, t_v, w_v, r_v = _run([a, total, without, losses.get_regularization_loss()])
    assert t_v == pytest.approx(a_v + 0.25) and w_v == pytest.approx(a_v) and r_v == 0.25


def test_get_total_loss_without_losses():
    with pytest.raises(ValueError, match="No losses"):
        losses.get_total_loss()


def test_compute_weighted_loss_errors_and_dtype():
    with pytest.raises(ValueError, match="Invalid Reduction Key bogus"):
        losses.compute_weighted_loss([1.0], reduction="bogus")
    with pytest.raises(ValueError, match="weights can not be broadcast to values"):
        losses.compute_weighted_loss(np.ones((2, 3)), weights=np.ones((3, 2)))
    y = losses.compute_weighted_loss(np.array([1.0, 3.0]), reduction=losses.Reduction.SUM)
    assert y.dtype == tf.float64
    assert _run(y) == 4.0
    zero = losses.compute_weighted_loss(np.ones(2), weights=0.0)
    assert _run(zero) == 0.0  # div_no_nan: no present weights gives 0, not NaN


def test_log_loss_and_hinge_loss():
    z = np.array([[1.0], [0.0], [1.0]])
    p = np.array([[0.9], [0.2], [0.3]])
    eps = 1e-7
    expected_log = -(z * np.log(p + eps) + (1 - z) * np.log(1 - p + eps)).mean()
    np.testing.assert_allclose(_run(losses.log_loss(z, p)), expected_log, rtol=1e-6)
    logits = np.array([[0.5], [-2.0], [-0.3]])
    expected_hinge = np.maximum(0, 1 - (2 * z - 1) * logits).mean()
    np.testing.assert_allclose(_run(losses.hinge_loss(z, logits)), expected_hinge, rtol=1e-6)


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_sigmoid_cross_entropy(smoothing):
    z = np.array([[1.0, 0.0], [0.0, 1.0]])
    x = np.array([[2.0, -1.0], [0.5, 0.0]], np.float32)
    y = losses.sigmoid_cross_entropy(z, x, label_smoothing=smoothing)
    assert y.dtype == tf.float32
    zs = z * (1 - smoothing) + 0.5 * smoothing
    expected = (np.maximum(x, 0) - x * zs + np.log1p(np.exp(-np.abs(x)))).mean()
    np.testing.assert_allclose(_run(y), expected, rtol=1e-6)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_softmax_cross_entropy(smoothing):
    onehot = np.array([[0, 1, 0], [1, 0, 0]], np.int32)
    logits = np.array([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]], np.float32)
    weights = np.array([1.0, 3.0])
    y = losses.softmax_cross_entropy(onehot, logits, weights=weights, label_smoothing=smoothing)
    labels = onehot * (1 - smoothing) + smoothing / 3
    log_p = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    per_example = -(labels * log_p).sum(1)
    np.testing.assert_allclose(_run(y), (per_example * weights).sum() / 2, rtol=1e-6)


def test_softmax_cross_entropy_stops_label_gradients():
    labels = tf.constant([[0.0, 1.0]])
    logits = tf.constant([[1.0, 2.0]])
    y = losses.softmax_cross_entropy(labels, logits)
    assert tf.gradients(y, labels) == [None]
    assert tf.gradients(y, logits)[0] is not None


def test_sparse_softmax_cross_entropy_squeezes_labels_and_weights():
    logits = np.array([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]], np.float32)
    log_p = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    per_example = -log_p[[0, 1], [1, 2]]
    y = losses.sparse_softmax_cross_entropy(np.array([[1], [2]]), logits)
    np.testing.assert_allclose(_run(y), per_example.mean(), rtol=1e-6)
    weighted = losses.sparse_softmax_cross_entropy(
        [1, 2], logits, weights=tf.constant([[0.0], [2.0]]), reduction=losses.Reduction.SUM
    )
    np.testing.assert_allclose(_run(weighted), 2 * per_example[1], rtol=1e-6)


def test_argument_errors():
    with pytest.raises(ValueError, match="labels must not be None"):
        losses.mean_squared_error(None, [1.0])
    with pytest.raises(ValueError, match="predictions must not be None"):
        losses.absolute_difference([1.0], None)
    with pytest.raises(ValueError, match="logits must not be None"):
        losses.softmax_cross_entropy([[1.0]], None)
    with pytest.raises(ValueError):
        losses.mean_squared_error(np.ones(3), np.ones(4))


def test_reduction_keys():
    R = losses.Reduction
    assert R.SUM_OVER_NONZERO_WEIGHTS == R.SUM_BY_NONZERO_WEIGHTS
    assert set(R.all()) == {R.NONE, R.SUM, R.MEAN, R.SUM_OVER_BATCH_SIZE, R.SUM_BY_NONZERO_WEIGHTS}
    R.validate(R.MEAN)
