"""Learning-rate schedules against their closed forms (TF 1.x `learning_rate_decay_test`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.training import learning_rate_decay as lrd


def _values(make, steps, dtype=tf.int64):
    g = tf.Graph()
    with g.as_default():
        step = tf.placeholder(dtype, [])
        lr = make(step)
        with tf.Session() as sess:
            return lr, [float(sess.run(lr, {step: s})) for s in steps]


STEPS = [0, 1, 5, 7, 10, 15, 23]


def test_exponential_decay():
    lr, got = _values(lambda s: lrd.exponential_decay(0.1, s, 10, 0.5), STEPS)
    assert lr.op.name == "ExponentialDecay" and lr.dtype == tf.float32
    np.testing.assert_allclose(got, [0.1 * 0.5 ** (s / 10) for s in STEPS], rtol=1e-6)
    _, got = _values(lambda s: lrd.exponential_decay(0.1, s, 10, 0.5, staircase=True), STEPS)
    np.testing.assert_allclose(got, [0.1 * 0.5 ** (s // 10) for s in STEPS], rtol=1e-6)


def test_piecewise_constant():
    def want(s):
        return 1.0 if s <= 5 else 0.5 if s <= 10 else 0.1

    lr, got = _values(lambda s: lrd.piecewise_constant(s, [5, 10], [1.0, 0.5, 0.1]), STEPS)
    assert lr.op.name == "PiecewiseConstant"
    np.testing.assert_allclose(got, [want(s) for s in STEPS], rtol=1e-6)
    _, got = _values(lambda s: lrd.piecewise_constant(s, [], [0.3]), [0, 100])
    np.testing.assert_allclose(got, [0.3, 0.3], rtol=1e-6)


def test_piecewise_constant_errors():
    with tf.Graph().as_default():
        x = tf.constant(1, tf.int64)
        with pytest.raises(ValueError, match="1 less than the length"):
            lrd.piecewise_constant(x, [1, 2], [0.1])
        with pytest.raises(ValueError, match="same dtype as x"):
            lrd.piecewise_constant(tf.constant(1.0), [1], [0.1, 0.2])
        with pytest.raises(ValueError, match="Values must have elements all with the same"):
            lrd.piecewise_constant(x, [1], [0.1, 2])


def test_polynomial_decay():
    def want(s, cycle):
        steps = 10.0
        if cycle:
            steps = steps * max(math.ceil(s / steps), 1)
        else:
            s = min(s, steps)
        return (0.1 - 0.01) * (1 - s / steps) ** 2 + 0.01

    for cycle in (False, True):
        lr, got = _values(
            lambda s, c=cycle: lrd.polynomial_decay(0.1, s, 10, 0.01, power=2.0, cycle=c), STEPS
        )
        np.testing.assert_allclose(got, [want(s, cycle) for s in STEPS], rtol=1e-5)
    assert lr.op.name == "PolynomialDecay"


def test_natural_exp_inverse_time_and_cosine_decay():
    _, got = _values(lambda s: lrd.natural_exp_decay(0.1, s, 5, 0.5), STEPS)
    np.testing.assert_allclose(got, [0.1 * math.exp(-0.5 * s / 5) for s in STEPS], rtol=1e-5)
    _, got = _values(lambda s: lrd.natural_exp_decay(0.1, s, 5, 0.5, staircase=True), STEPS)
    np.testing.assert_allclose(got, [0.1 * math.exp(-0.5 * (s // 5)) for s in STEPS], rtol=1e-5)
    _, got = _values(lambda s: lrd.inverse_time_decay(0.1, s, 5, 0.5), STEPS)
    np.testing.assert_allclose(got, [0.1 / (1 + 0.5 * s / 5) for s in STEPS], rtol=1e-5)
    _, got = _values(lambda s: lrd.inverse_time_decay(0.1, s, 5, 0.5, staircase=True), STEPS)
    np.testing.assert_allclose(got, [0.1 / (1 + 0.5 * (s // 5)) for s in STEPS], rtol=1e-5)
    lr, got = _values(lambda s: lrd.cosine_decay(0.1, s, 10, alpha=0.2), STEPS)
    assert lr.op.name == "CosineDecay"
    want = [0.1 * (0.8 * 0.5 * (1 + math.cos(math.pi * min(s, 10) / 10)) + 0.2) for s in STEPS]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_decays_with_global_step_variable_and_float64_rate():
    g = tf.Graph()
    with g.as_default():
        step = tf.Variable(3, dtype=tf.int64, name="global_step", trainable=False)
        lr = lrd.exponential_decay(tf.constant(1.0, tf.float64), step, 3, 0.1, name="my_lr")
        assert lr.dtype == tf.float64 and lr.op.name == "my_lr"
        with tf.Session() as sess:
            sess.run(step.initializer)
            np.testing.assert_allclose(sess.run(lr), 0.1)


def test_global_step_is_required():
    for fn in (lrd.exponential_decay, lrd.natural_exp_decay, lrd.inverse_time_decay):
        with pytest.raises(ValueError, match="global_step is required"):
            fn(0.1, None, 10, 0.5)
    with pytest.raises(ValueError, match="global_step is required for polynomial_decay"):
        lrd.polynomial_decay(0.1, None, 10)
    with pytest.raises(ValueError, match="cosine decay requires global_step"):
        lrd.cosine_decay(0.1, None, 10)
