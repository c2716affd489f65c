"""tf.image measures: `total_variation`, `image_gradients`, `psnr`. Expected values (and
gradients) were computed with TensorFlow 2.21 (`compat.v1`) and pasted here."""

import numpy as np
import pytest

import tensorweave as tf

# A, B: float32 [2, 3, 2, 3] in [0, 1]; AU, BU: their uint8 versions.
A = (np.arange(36, dtype=np.float32).reshape(2, 3, 2, 3) * 5 % 36) / 35
B = (np.arange(36, dtype=np.float32).reshape(2, 3, 2, 3) * 11 % 36) / 35
AU, BU = (A * 255).astype(np.uint8), (B * 255).astype(np.uint8)

EXPECTED = {'dx': [[[[0.4285714328289032, 0.4285714626312256, 0.4285714328289032], [0.0, 0.0, 0.0]],
         [[-0.6000000238418579, -0.6000000238418579, 0.4285714626312256], [0.0, 0.0, 0.0]],
         [[-0.6000000238418579, -0.6000000238418579, -0.6000000238418579], [0.0, 0.0, 0.0]]],
        [[[0.4285714030265808, -0.6000000238418579, -0.6000000238418579], [0.0, 0.0, 0.0]],
         [[0.4285714328289032, 0.4285714328289032, -0.6000000238418579], [0.0, 0.0, 0.0]],
         [[0.4285714626312256, 0.4285714328289032, 0.4285714328289032], [0.0, 0.0, 0.0]]]],
 'dy': [[[[0.8571428656578064, 0.8571428656578064, -0.1714285910129547],
          [-0.17142856121063232, -0.1714285910129547, -0.17142856121063232]],
         [[-0.17142856121063232, -0.17142856121063232, 0.8571428656578064],
          [-0.1714285910129547, -0.17142857611179352, -0.1714285910129547]],
         [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
        [[[-0.1714285910129547, -0.1714285910129547, -0.17142856121063232],
          [-0.17142856121063232, 0.8571428656578064, -0.17142857611179352]],
         [[-0.17142857611179352, -0.17142856121063232, -0.1714285910129547],
          [-0.17142856121063232, -0.17142856121063232, 0.8571428656578064]],
         [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]],
 'g_psnr': [[[[-0.0, 0.48254936933517456, 0.9650987386703491],
              [1.447648048400879, -0.9650988578796387, -0.4825493395328522]],
             [[-0.0, -2.4127469062805176, 0.9650987386703491],
              [1.447648048400879, -0.9650987386703491, -0.48254942893981934]],
             [[-0.0, 0.4825493395328522, -1.9301973581314087],
              [1.4476481676101685, 1.9301974773406982, -0.48254936933517456]]],
            [[[-0.0, 0.4825493395328522, -1.9301974773406982],
              [-1.447648048400879, 1.9301974773406982, -0.48254936933517456]],
             [[-0.0, 0.48254942893981934, 0.9650986790657043],
              [-1.447648048400879, -0.9650986790657043, 2.4127469062805176]],
             [[-0.0, 0.4825493395328522, 0.9650987386703491],
              [-1.4476481676101685, -0.9650987386703491, -0.4825493395328522]]]],
 'g_tv': [[[[-2.0, -2.0, 0.0], [2.0, 2.0, 2.0]], [[3.0, 3.0, -3.0], [-1.0, -1.0, 1.0]],
           [[0.0, 0.0, 2.0], [-2.0, -2.0, -2.0]]],
          [[[0.0, 4.0, 4.0], [4.0, -4.0, 0.0]], [[-2.0, -2.0, 2.0], [2.0, 6.0, -6.0]],
           [[-4.0, -4.0, -4.0], [0.0, 0.0, 4.0]]]],
 'psnr_b': [7.659167289733887, 7.659167289733887],
 'psnr_f': [7.659167289733887, 7.659167289733887],
 'psnr_u': [7.64776611328125, 7.659092903137207],
 'tv3': 8.828571319580078,
 'tv4': [8.828571319580078, 7.800000190734863]}


def run(t):
    with tf.Session() as sess:
        return sess.run(t)


def test_total_variation_equals_tensorflow():
    tv3, tv4 = tf.image.total_variation(A[0]), tf.image.total_variation(tf.constant(A))
    assert tv3.shape.as_list() == [] and tv4.shape.as_list() == [2]
    np.testing.assert_allclose(run(tv3), EXPECTED["tv3"], rtol=1e-6)
    np.testing.assert_allclose(run(tv4), EXPECTED["tv4"], rtol=1e-6)
    assert run(tf.image.total_variation(tf.constant(AU.astype(np.int32)))).dtype == np.int32


def test_image_gradients_equal_tensorflow():
    dy, dx = tf.image.image_gradients(tf.constant(A))
    assert dy.dtype == tf.float32
    np.testing.assert_allclose(run(dy), EXPECTED["dy"], rtol=1e-6)
    np.testing.assert_allclose(run(dx), EXPECTED["dx"], rtol=1e-6)


@pytest.mark.parametrize("key, a, b, max_val, shape", [
    ("psnr_f", A, B, 1.0, [2]),
    ("psnr_u", AU, BU, 255, [2]),
    ("psnr_b", A, B[:1], 1.0, [2]),
])
def test_psnr_equals_tensorflow(key, a, b, max_val, shape):
    out = tf.image.psnr(tf.constant(a), tf.constant(b), max_val)
    assert out.dtype == tf.float32 and out.shape.as_list() == shape
    np.testing.assert_allclose(run(out), EXPECTED[key], rtol=1e-6)


def test_gradients_equal_tensorflow():
    x = tf.constant(A)
    g_tv = tf.gradients(tf.reduce_sum(tf.image.total_variation(x) * [1.0, 2.0]), [x])[0]
    g_psnr = tf.gradients(tf.reduce_sum(tf.image.psnr(x, B, 1.0)), [x])[0]
    np.testing.assert_allclose(run(g_tv), EXPECTED["g_tv"], rtol=1e-6)
    np.testing.assert_allclose(run(g_psnr), EXPECTED["g_psnr"], rtol=1e-5)


@pytest.mark.parametrize("fn, message", [
    (lambda: tf.image.total_variation(tf.zeros([1, 1, 2, 2, 2])),
     "'images' must be either 3 or 4-dimensional."),
    (lambda: tf.image.image_gradients(tf.zeros([2, 2, 2])),
     r"image_gradients expects a 4D tensor \[batch_size, h, w, d\], not \(2, 2, 2\)."),
    (lambda: tf.image.psnr(tf.zeros([2, 2, 3]), tf.zeros([2, 3, 3]), 1.0),
     "Dimensions must be equal, but are 2 and 3"),
    (lambda: tf.image.psnr(tf.zeros([2, 2, 2, 3]), tf.zeros([3, 2, 2, 3]), 1.0),
     "Dimensions must be equal, but are 2 and 3"),
    (lambda: tf.image.psnr(tf.zeros([2, 3]), tf.zeros([2, 3]), 1.0),
     "Invalid reduction dimension -3 for input with 2 dimensions"),
])
def test_bad_shapes_raise_value_error(fn, message):
    with pytest.raises(ValueError, match=message):
        fn()


def test_psnr_checks_shapes_at_run_time():
    p = tf.placeholder(tf.float32, [None, None, 3])
    out = tf.image.psnr(p, p[:, :1], 1.0)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(out, {p: np.zeros([2, 2, 3])})
