"""Gradients through `cond` and `while_loop` (cases from TensorFlow's
control_flow_ops_py_test.py), by central differences in float64 and exact values."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.gradient_checker import compute_gradient_error


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default() as g:
        yield g


def test_while_grad_of_power():
    x = tf.placeholder(tf.float64, [])
    r = tf.while_loop(lambda i, y: i < 5, lambda i, y: (i + 1, y * x),
                      [tf.constant(0), tf.constant(1.0, tf.float64)])[1]
    g = tf.gradients(r, x)[0]
    with tf.Session() as sess:
        assert sess.run(g, {x: 2.0}) == pytest.approx(5 * 2.0 ** 4)


def test_back_prop_false_gives_no_gradient():
    x = tf.placeholder(tf.float64, [])
    r = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x),
                      [tf.constant(0), x], back_prop=False)[1]
    assert tf.gradients(r, x) == [None]


def test_gradient_wrt_loop_invariant_and_initial_value():
    x = tf.placeholder(tf.float64, [2])
    w = tf.placeholder(tf.float64, [2])
    r = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.sin(y) * w),
                      [tf.constant(0), x])[1]
    xv, wv = np.array([0.3, -0.7]), np.array([1.2, 0.4])
    with tf.Session():
        assert compute_gradient_error(x, [2], r, [2], x_init_value=xv,
                                      extra_feed_dict={w: wv}) < 1e-5
        assert compute_gradient_error(w, [2], r, [2], x_init_value=wv,
                                      extra_feed_dict={x: xv}) < 1e-5


def test_gradient_of_an_unused_exit_is_zero():
    x = tf.placeholder(tf.float64, [])
    a, b = tf.while_loop(lambda a, b: a < 10.0, lambda a, b: (a + x, b * 2.0),
                         [tf.constant(1.0, tf.float64), x])
    ga = tf.gradients(a, x)[0]
    with tf.Session() as sess:
        # a = 1 + n*x with n = ceil(9/x) iterations; for x = 2: n = 5
        assert sess.run(ga, {x: 2.0}) == pytest.approx(5.0)


def test_nested_loop_gradient_exact():
    x = tf.placeholder(tf.float64, [])

    def outer(i, y):
        inner = tf.while_loop(lambda j, z: j < 2, lambda j, z: (j + 1, z * x),
                              [tf.constant(0), y])[1]
        return i + 1, inner

    r = tf.while_loop(lambda i, y: i < 3, outer, [tf.constant(0), tf.constant(1.0, tf.float64)])
    g = tf.gradients(r[1], x)[0]
    with tf.Session() as sess:
        assert sess.run(r[1], {x: 1.5}) == pytest.approx(1.5 ** 6)
        assert sess.run(g, {x: 1.5}) == pytest.approx(6 * 1.5 ** 5)


def test_cond_gradient_only_through_the_taken_branch():
    x = tf.placeholder(tf.float64, [])
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p, lambda: x * x * x, lambda: tf.constant(5.0, tf.float64) * x)
    g = tf.gradients(r, x)[0]
    with tf.Session() as sess:
        assert sess.run(g, {x: 2.0, p: True}) == pytest.approx(12.0)
        assert sess.run(g, {x: 2.0, p: False}) == pytest.approx(5.0)


def test_training_a_variable_through_a_loop():
    w = tf.Variable(0.2, dtype=tf.float64)
    r = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * w + 1.0),
                      [tf.constant(0), tf.constant(0.0, tf.float64)])[1]
    loss = tf.square(r - 3.0)
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(50):
            sess.run(train)
        assert sess.run(loss) < first / 10


def test_tensor_array_dynamic_size_in_loop_with_gradient():
    x = tf.placeholder(tf.float64, [3])
    n = tf.placeholder(tf.int32, [])

    def body(i, ta):
        return i + 1, ta.write(i, x * tf.cast(i + 1, tf.float64))

    _, ta = tf.while_loop(lambda i, ta: i < n, body,
                          [tf.constant(0), tf.TensorArray(tf.float64, size=0,
                                                          dynamic_size=True)])
    stacked = ta.stack()
    g = tf.gradients(tf.reduce_sum(stacked), x)[0]
    with tf.Session() as sess:
        s, gv = sess.run([stacked, g], {x: [1.0, 2.0, 3.0], n: 4})
        assert s.shape == (4, 3)
        np.testing.assert_allclose(gv, [10.0, 10.0, 10.0])
