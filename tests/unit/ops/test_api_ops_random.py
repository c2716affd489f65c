"""Gamma/Poisson samplers, stateless random ops, random_crop and the tf.random namespace:
determinism, shapes, dtypes and distribution moments; RandomGamma's gradient against the
implicit-function derivative of the gamma CDF."""

from __future__ import annotations

from math import lgamma

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_random_gamma_and_poisson_moments():
    tf.set_random_seed(7)
    g = tf.random.gamma([20000], [2.0, 5.0], beta=[1.0, 2.0])
    p = tf.random.poisson([3.0], [20000])
    gv, pv = _run([g, p])
    assert gv.shape == (20000, 2) and gv.dtype == np.float32
    np.testing.assert_allclose(gv.mean(axis=0), [2.0, 2.5], rtol=0.03)
    np.testing.assert_allclose(gv.var(axis=0), [2.0, 1.25], rtol=0.08)
    assert pv.shape == (20000, 1)
    np.testing.assert_allclose(pv.mean(), 3.0, rtol=0.03)
    assert tf.random_gamma is tf.random.gamma and tf.random_poisson is tf.random.poisson


def test_random_gamma_gradient_is_implicit_derivative():
    alpha = tf.constant([0.7, 2.5], tf.float64)
    sample = tf.random_gamma([5], alpha, dtype=tf.float64, seed=3)
    grad = tf.gradients(sample, alpha)[0]
    per_sample = tf.gradients(sample[2, 1], alpha)[0]
    with tf.Session() as sess:
        x, g, g1 = sess.run([sample, grad, per_sample])
    # d x / d a = -(dP/da) / (dP/dx) at the drawn sample (P: regularized lower gamma).
    a_ph = tf.placeholder(tf.float64)
    x_ph = tf.placeholder(tf.float64)
    p = tf.igamma(a_ph, x_ph)
    h = 1e-6
    with tf.Session() as sess:
        dp_da = (sess.run(p, {a_ph: [0.7 + h, 2.5 + h], x_ph: x})
                 - sess.run(p, {a_ph: [0.7 - h, 2.5 - h], x_ph: x})) / (2 * h)
    a = np.array([0.7, 2.5])
    density = np.exp((a - 1) * np.log(x) - x - np.array([lgamma(v) for v in a]))
    want = -dp_da / density
    np.testing.assert_allclose(g, want.sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(g1, [0.0, want[2, 1]], rtol=1e-5)


def test_stateless_ops_are_pure_functions_of_the_seed():
    ops = [tf.random.stateless_uniform([3, 2], [1, 2]),
           tf.random.stateless_uniform([4], [1, 2], minval=5, maxval=9, dtype=tf.int64),
           tf.random.stateless_normal([2, 2], seed=[3, 4], mean=1.0),
           tf.random.stateless_truncated_normal([1000], [5, 6]),
           tf.random.stateless_categorical([[0.0, 0.0, -1e9]], 5, [7, 8]),
           tf.random.stateless_multinomial([[-1e9, 0.0]], 3, [7, 8]),
           tf.random.stateless_gamma([3], [1, 1], alpha=2.0),
           tf.random.stateless_poisson([1000], [2, 2], lam=4.0),
           tf.random.stateless_binomial([1000], [3, 3], counts=10.0, probs=0.3),
           tf.random.stateless_parameterized_truncated_normal([1000], [4, 4], minvals=0.0,
                                                              maxvals=1.0)]
    first, second = _run(ops), _run(ops)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert first[0].shape == (3, 2) and ((first[0] >= 0) & (first[0] < 1)).all()
    assert first[1].dtype == np.int64 and ((first[1] >= 5) & (first[1] < 9)).all()
    assert np.abs(first[3]).max() <= 2.0
    assert set(first[4].ravel()) <= {0, 1} and first[5].tolist() == [[1, 1, 1]]
    assert first[6].shape == (3,) and (first[6] > 0).all()
    np.testing.assert_allclose(first[7].mean(), 4.0, rtol=0.1)
    np.testing.assert_allclose(first[8].mean(), 3.0, rtol=0.1)
    assert (first[9] >= 0).all() and (first[9] <= 1).all()
    other = _run(tf.random.stateless_uniform([3, 2], [2, 1]))
    assert not np.array_equal(other, first[0])
    with pytest.raises(ValueError, match="maxval"):
        tf.random.stateless_uniform([2], [1, 2], dtype=tf.int32)
    with pytest.raises(errors.InvalidArgumentError, match="shape \\[2\\]"):
        _run(tf.random.stateless_normal([2], [1, 2, 3]))


def test_random_crop_and_namespace_aliases():
    value = np.arange(20).reshape(4, 5)
    crop = _run(tf.random_crop(value, [2, 3], seed=1))
    assert crop.shape == (2, 3)
    r, c = np.argwhere(value == crop[0, 0])[0]
    np.testing.assert_array_equal(crop, value[r:r + 2, c:c + 3])
    with pytest.raises(errors.InvalidArgumentError):
        _run(tf.random_crop(value, [5, 1]))
    tf.random.set_random_seed(3)
    out = _run([tf.random.normal([2]), tf.random.uniform([2]), tf.random.truncated_normal([2]),
                tf.random.shuffle([1, 2, 3]), tf.random.multinomial([[0.0, -1e9]], 2),
                tf.random.categorical([[0.0, -1e9]], 2)])
    assert [o.shape for o in out] == [(2,), (2,), (2,), (3,), (1, 2), (1, 2)]
    assert out[5].dtype == np.int64 and out[5].tolist() == [[0, 0]]
    assert tf.random.get_seed(5)[1] == 5
    for name in ("Generator", "Algorithm", "get_global_generator", "set_global_generator",
                 "create_rng_state", "fold_in", "split"):
        with pytest.raises(NotImplementedError, match="Generator API"):
            getattr(tf.random, name)()


def test_candidate_samplers_forward_to_nn(monkeypatch):
    import tensorweave.nn as nn

    def sampler():
        return "sampled"

    monkeypatch.setattr(nn, "log_uniform_candidate_sampler", sampler, raising=False)
    assert tf.random.log_uniform_candidate_sampler is sampler
    with pytest.raises(AttributeError, match="no attribute 'not_a_sampler'"):
        tf.random.not_a_sampler  # noqa: B018
