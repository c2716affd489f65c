"""`tf.contrib.seq2seq.sequence_loss` (TF 1.15 contrib semantics) against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(7)
LOGITS = RNG.standard_normal((2, 3, 4)).astype(np.float32)
TARGETS = np.array([[0, 3, 1], [2, 2, 0]], np.int32)
WEIGHTS = np.array([[1.0, 0.5, 0.0], [2.0, 0.0, 0.0]], np.float32)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default() as g:
        yield g


def _crossent():
    shifted = LOGITS - LOGITS.max(-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -np.take_along_axis(log_p, TARGETS[..., None], -1)[..., 0]


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


def _loss(**kwargs):
    return tf.contrib.seq2seq.sequence_loss(
        tf.constant(LOGITS), tf.constant(TARGETS), tf.constant(WEIGHTS), **kwargs)


def test_default_is_the_weighted_mean_over_all_targets():
    loss = _loss()
    assert loss.shape.as_list() == []
    assert loss.op.name.startswith("sequence_loss/")
    c = _crossent() * WEIGHTS
    np.testing.assert_allclose(_run(loss), c.sum() / WEIGHTS.sum(), rtol=1e-6)


@pytest.mark.parametrize("kwargs,shape,expected", [
    ({"average_across_batch": False}, [None],
     lambda c: c.sum(1) / WEIGHTS.sum(1)),
    ({"average_across_timesteps": False}, [None],
     lambda c: np.divide(c.sum(0), WEIGHTS.sum(0), out=np.zeros(3, np.float32),
                         where=WEIGHTS.sum(0) != 0)),
    ({"average_across_timesteps": False, "average_across_batch": False}, [None, None],
     lambda c: c),
    ({"average_across_timesteps": False, "average_across_batch": False,
      "sum_over_timesteps": True, "sum_over_batch": True}, [],
     lambda c: c.sum() / 3.0),
    ({"average_across_timesteps": False, "sum_over_timesteps": True,
      "average_across_batch": False}, [None],
     lambda c: c.sum(1) / np.array([2.0, 1.0])),
    ({"average_across_batch": False, "sum_over_batch": True,
      "average_across_timesteps": False}, [None],
     lambda c: np.divide(c.sum(0), [2.0, 1.0, 1.0]) * [1, 1, 0]),
])
def test_reductions(kwargs, shape, expected):
    loss = _loss(**kwargs)
    c = _crossent() * WEIGHTS
    out = _run(loss)
    assert len(out.shape) == len(shape)
    np.testing.assert_allclose(out, expected(c), rtol=1e-6)


def test_softmax_loss_function_gets_flat_labels_and_logits():
    seen = {}

    def loss_fn(labels, logits):
        seen["ranks"] = (labels.shape.ndims, logits.shape.ndims)
        return tf.cast(labels, tf.float32)

    loss = _loss(softmax_loss_function=loss_fn, average_across_batch=False)
    assert seen["ranks"] == (1, 2)
    expected = (TARGETS * WEIGHTS).sum(1) / WEIGHTS.sum(1)
    np.testing.assert_allclose(_run(loss), expected, rtol=1e-6)


def test_gradient_reaches_the_logits_weighted():
    logits = tf.constant(LOGITS)
    loss = tf.contrib.seq2seq.sequence_loss(logits, TARGETS, WEIGHTS)
    (grad,) = tf.gradients(loss, [logits])
    e = np.exp(LOGITS - LOGITS.max(-1, keepdims=True))
    softmax = e / e.sum(-1, keepdims=True)
    expected = (softmax - np.eye(4)[TARGETS]) * (WEIGHTS / WEIGHTS.sum())[..., None]
    np.testing.assert_allclose(_run(grad), expected, rtol=1e-5, atol=1e-7)


def test_errors():
    with pytest.raises(ValueError, match=r"Logits must be a \[batch_size x sequence_length"):
        tf.contrib.seq2seq.sequence_loss(LOGITS[0], TARGETS, WEIGHTS)
    with pytest.raises(ValueError, match="Targets must be"):
        tf.contrib.seq2seq.sequence_loss(LOGITS, TARGETS[0], WEIGHTS)
    with pytest.raises(ValueError, match="Weights must be"):
        tf.contrib.seq2seq.sequence_loss(LOGITS, TARGETS, WEIGHTS[0])
    with pytest.raises(ValueError, match="average_across_timesteps and sum_over_timesteps"):
        _loss(sum_over_timesteps=True)
    with pytest.raises(ValueError, match="average_across_batch and sum_over_batch"):
        _loss(sum_over_batch=True)
    loss = tf.contrib.seq2seq.sequence_loss(LOGITS, [[0, 4, 1], [2, 2, 0]], WEIGHTS)
    with pytest.raises(tf.errors.InvalidArgumentError, match="outside the valid range"):
        _run(loss)
