"""Fake quantization: outputs and gradients against TensorFlow 2.21's values (to a few
float32 ulps: TF's compiled kernel fuses multiply-adds), gradient flow, errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors

_X = np.array([-7.0, -1.234, 0.0, 0.03, 2.5, 5.99, 6.5], np.float32)


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_fake_quant_matches_tensorflow():
    out = _run([tf.fake_quant_with_min_max_args(_X),
                tf.fake_quant_with_min_max_args(_X, -1.0, 1.3, num_bits=4, narrow_range=True),
                tf.fake_quant_with_min_max_vars(_X, -0.5, 3.7),
                tf.fake_quant_with_min_max_vars_gradient(np.ones(7, np.float32), _X, -0.5, 3.7),
                tf.fake_quant_with_min_max_vars_per_channel(
                    _X.reshape(7, 1) * np.array([1, 2], np.float32), [-1.0, -2.0], [1.0, 3.0]),
                tf.fake_quant_with_min_max_args_gradient(np.ones(7, np.float32), _X)])
    tol = {"rtol": 1e-6, "atol": 3e-7}
    np.testing.assert_allclose(out[0], [-6.0235295, -1.2235295, 0.0, 0.04705882, 2.4941177,
                                        5.9764705, 5.9764705], **tol)
    np.testing.assert_allclose(out[1], [-0.9857142, -0.9857142, 0.0, 0.0, 1.3142856, 1.3142856,
                                        1.3142856], **tol)
    np.testing.assert_allclose(out[2], [-0.49411762, -0.49411762, 0.0, 0.03294117, 2.5035293,
                                        3.705882, 3.705882], **tol)
    assert out[3][0].tolist() == [0, 0, 1, 1, 1, 0, 0] and out[3][1] == 2.0 and out[3][2] == 2.0
    np.testing.assert_allclose(out[4], [[-0.9960785, -2.0], [-0.9960785, -2.0], [0.0, 0.0],
                                        [0.03137255, 0.05882353], [1.0039216, 3.0],
                                        [1.0039216, 3.0], [1.0039216, 3.0]], **tol)
    assert out[5].tolist() == [0, 1, 1, 1, 1, 0, 0]  # 5.99 is above the nudged max


def test_fake_quant_gradients_flow():
    x = tf.constant(_X)
    lo, hi = tf.constant(-0.5), tf.constant(3.7)
    y = tf.fake_quant_with_min_max_vars(x, lo, hi)
    grads = tf.gradients(tf.reduce_sum(y * 2.0), [x, lo, hi])
    args = tf.gradients(tf.reduce_sum(tf.fake_quant_with_min_max_args(x)), x)[0]
    per = tf.gradients(tf.reduce_sum(tf.fake_quant_with_min_max_vars_per_channel(
        tf.reshape(x, [7, 1]), [-0.5], [3.7])), x)[0]
    out = _run([grads, args, per])
    assert out[0][0].tolist() == [0, 0, 2, 2, 2, 0, 0]
    assert out[0][1] == 4.0 and out[0][2] == 4.0
    assert out[1].tolist() == [0, 1, 1, 1, 1, 0, 0] and out[2].tolist() == [0, 0, 1, 1, 1, 0, 0]
    with pytest.raises(errors.InvalidArgumentError, match="min has to be smaller"):
        _run(tf.fake_quant_with_min_max_vars(x, 2.0, 1.0))
