"""`tf.assert_integer`, `assert_scalar`, `assert_same_float_dtype`, `assert_proper_iterable`,
`assert_rank_in`, `assert_near` (messages and outcomes as TF 2.21's `tf.compat.v1`)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def test_assert_integer():
    with tf.Graph().as_default():
        op = tf.assert_integer(tf.constant(1))
        assert op.type == "NoOp" and op.name == "assert_integer/statically_determined_was_integer"
        with pytest.raises(TypeError, match='msg.  Expected "x" to be integer type.  Found: '
                                            "Const_1:0 of dtype"):
            tf.assert_integer(tf.constant(1.0), message="msg")


def test_assert_scalar():
    with tf.Graph().as_default():
        c = tf.constant(1.0)
        assert tf.assert_scalar(c) is c
        with pytest.raises(ValueError, match=r"m.  Expected scalar shape for Const_1:0, saw "
                                             r"shape: \(1,\)."):
            tf.assert_scalar(tf.constant([1.0]), message="m")
        with pytest.raises(ValueError, match="Expected scalar shape"):
            tf.assert_scalar(tf.placeholder(tf.float32))


def test_assert_same_float_dtype():
    with tf.Graph().as_default():
        a, b = tf.constant(1.0), tf.constant(2.0)
        assert tf.assert_same_float_dtype([a, b]) == tf.float32
        assert tf.assert_same_float_dtype(None, tf.float64) == tf.float64
        assert tf.assert_same_float_dtype() == tf.float32
        with pytest.raises(ValueError, match=r"Const_2:0, type=.*float64.*must be of the "
                                             r"same type \(.*float32.*\) as Const:0."):
            tf.assert_same_float_dtype([a, tf.constant(2.0, tf.float64)])
        with pytest.raises(ValueError, match="Expected floating point type, got .*int32"):
            tf.assert_same_float_dtype([tf.constant(1)])


def test_assert_proper_iterable():
    assert tf.assert_proper_iterable([1, 2]) is None
    assert tf.assert_proper_iterable(x for x in [1]) is None
    with tf.Graph().as_default():
        for bad in (tf.constant([1, 2]), np.ones(2), "ab", b"ab"):
            with pytest.raises(TypeError, match='to be a "proper" iterable'):
                tf.assert_proper_iterable(bad)
    with pytest.raises(TypeError, match='Expected argument "values" to be iterable'):
        tf.assert_proper_iterable(3)


def test_assert_rank_in():
    with tf.Graph().as_default():
        ok = tf.assert_rank_in(tf.ones([2, 3]), [1, 2])
        assert ok.name == "assert_rank_in/static_checks_determined_all_ok"
        with pytest.raises(ValueError, match=r"Tensor ones_1:0 must have rank in \(1, 3\).  "
                                             r"Received rank 2"):
            tf.assert_rank_in(tf.ones([2, 3]), [1, 3])
        p = tf.placeholder(tf.float32)
        check = tf.assert_rank_in(p, [1, 3])
        assert check.type == "Assert"
        with tf.Session() as sess:
            sess.run(check, {p: np.ones(3)})
            sess.run(check, {p: np.ones((1, 1, 1))})
            with pytest.raises(tf.errors.InvalidArgumentError, match="must have rank in"):
                sess.run(check, {p: np.ones((2, 2))})


def test_assert_near():
    with tf.Graph().as_default():
        q = tf.placeholder(tf.float32, [None])
        near = tf.assert_near(q, tf.constant([1.0]), atol=0.01)
        default = tf.assert_near(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0000001]))
        with tf.Session() as sess:
            sess.run([near, default], {q: [1.005]})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="x and y not equal to tolerance"):
                sess.run(near, {q: [1.5]})
            rel = tf.assert_near(tf.constant([100.0]), tf.constant([101.0]), rtol=0.02,
                                 atol=0.0)
            sess.run(rel)
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(tf.assert_near(tf.constant([100.0]), tf.constant([103.0]),
                                        rtol=0.02, atol=0.0))


def test_verify_tensor_all_finite():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [2])
        out = tf.verify_tensor_all_finite(p, "bad input")
        out2 = tf.verify_tensor_all_finite(x=p, message="m2")
        assert out.name.startswith("VerifyFinite/")
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out, {p: [1.0, 2.0]}), [1.0, 2.0])
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="bad input : Tensor had NaN values"):
                sess.run(out, {p: [np.nan, 1.0]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="m2 : Tensor had Inf"):
                sess.run(out2, {p: [np.inf, 1.0]})


def test_add_check_numerics_ops():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [], name="p")
        v = tf.Variable(1.0, name="v")
        y = tf.log(p, name="log")
        z = y + v
        check = tf.add_check_numerics_ops()
        assert check.type == "NoOp"
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run([z, check], {p: 1.0})[0] == 1.0
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="log:0 : Tensor had Inf values"):
                sess.run([z, check], {p: 0.0})
