"""custom_gradient, grad_pass_through, recompute_grad, hessians, UnconnectedGradients and
identity_n: values and gradients against closed forms."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_custom_gradient_replaces_backprop():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))

        return tf.log(1 + e), grad

    x = tf.constant([0.0, 100.0])
    y = log1pexp(x)
    g = tf.gradients(y, x)[0]
    out = tf.Session().run([y, g])
    assert out[1].tolist() == [0.5, 1.0]  # the naive gradient would be NaN at 100
    np.testing.assert_allclose(out[0][0], np.log(2.0))

    @tf.custom_gradient
    def two_outputs(a, b):
        return [a * b, a + b], lambda d1, d2: (d1 * 10.0, d2 * 20.0)

    a, b = tf.constant(2.0), tf.constant(3.0)
    p, s = two_outputs(a, b)
    grads = tf.Session().run(tf.gradients(p + s, [a, b]))
    assert grads == [10.0, 20.0]


def test_custom_gradient_errors():
    @tf.custom_gradient
    def wrong(a):
        return a * 2, lambda dy: (dy, dy)

    x = tf.constant(1.0)
    with pytest.raises(ValueError, match="expected to return 1 gradients"):
        tf.gradients(wrong(x), x)

    @tf.custom_gradient
    def with_vars(a):
        return a, lambda dy, variables=None: dy

    with pytest.raises(NotImplementedError, match="variables"):
        with_vars(x)


def test_pass_through_recompute_hessians_unconnected():
    x = tf.constant([0.3, 1.7])
    through = tf.gradients(tf.grad_pass_through(tf.round)(x * 2), x)[0]
    recomputed = tf.gradients(tf.recompute_grad(lambda a: tf.sin(a) * a)(x), x)[0]
    hess = tf.hessians(tf.reduce_sum(x * x * x), x)[0]
    zero = tf.gradients(tf.constant(1.0), x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    none = tf.gradients(tf.constant(1.0), x, unconnected_gradients="none")
    ids = tf.identity_n([x, tf.constant([1])])
    out = tf.Session().run([through, recomputed, hess, zero[0], ids])
    assert out[0].tolist() == [2.0, 2.0]
    xv = np.array([0.3, 1.7], np.float32)
    np.testing.assert_allclose(out[1], np.cos(xv) * xv + np.sin(xv), rtol=1e-6)
    np.testing.assert_allclose(out[2], np.diag(6 * xv), rtol=1e-6)
    assert out[3].tolist() == [0.0, 0.0] and none == [None]
    assert out[4][1].tolist() == [1] and ids[0].op.type == "IdentityN"
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tf.gradients(tf.constant(1.0), x, unconnected_gradients="sometimes")
