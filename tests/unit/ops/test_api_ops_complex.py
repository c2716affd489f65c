"""Exact values of the complex/FFT ops, the extra special functions and
`confusion_matrix`/`approx_max_k` (expected values from TensorFlow 2.21 where noted, or
NumPy)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tf


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_complex_parts_and_casts():
    z = tf.complex([1.0, -2.0], [3.0, 0.5])
    z64 = tf.complex(np.array([1.0]), np.array([-1.0]))
    out = _run([z, tf.real(z), tf.imag(z), tf.angle(z), z64, tf.math.real([2.0]),
                tf.math.imag([2.0]), tf.to_complex64([1.0]), tf.to_complex128([1])])
    np.testing.assert_array_equal(out[0], np.array([1 + 3j, -2 + 0.5j], np.complex64))
    assert out[0].dtype == np.complex64 and out[4].dtype == np.complex128
    np.testing.assert_array_equal(out[1], [1.0, -2.0])
    np.testing.assert_array_equal(out[2], [3.0, 0.5])
    np.testing.assert_allclose(out[3], np.angle(out[0]), rtol=1e-6)
    np.testing.assert_array_equal(out[5], [2.0])
    np.testing.assert_array_equal(out[6], [0.0])
    assert out[7].dtype == np.complex64 and out[8].dtype == np.complex128


def test_ffts_match_numpy_and_tensorflow():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 4, 4)) + 1j * rng.normal(size=(2, 4, 4))
    out = _run([tf.fft(x), tf.ifft(x), tf.fft2d(x), tf.ifft2d(x), tf.fft3d(x), tf.ifft3d(x),
                tf.fftnd(x, axes=[1]), tf.ifftnd(x, fft_length=[2], axes=[2]),
                tf.rfftnd(x.real, fft_length=[4, 4], axes=[1, 2]),
                tf.irfftnd(np.fft.rfftn(x.real, axes=[1, 2]), fft_length=[4, 4], axes=[1, 2]),
                tf.fft2d(tf.complex(np.arange(4.0).reshape(2, 2), np.ones((2, 2))))])
    refs = [np.fft.fft(x), np.fft.ifft(x), np.fft.fft2(x), np.fft.ifft2(x), np.fft.fftn(x,
            axes=(0, 1, 2)), np.fft.ifftn(x, axes=(0, 1, 2)), np.fft.fft(x, axis=1),
            np.fft.ifft(x, n=2, axis=2), np.fft.rfftn(x.real, axes=(1, 2)), x.real]
    for got, want in zip(out[:10], refs):
        np.testing.assert_allclose(got, want, atol=1e-12)
    assert out[10].tolist() == [[6 + 4j, -2 + 0j], [-4 + 0j, 0j]]  # TensorFlow's values


def test_inverse_error_functions_and_bessel_match_tensorflow():
    p = np.array([1e-300, 1e-10, 0.01, 0.3, 0.5, 0.7, 0.999])
    x = np.array([0.0, 0.5, 10.0, 31.0, 100.0, -3.0])
    out = _run([tf.math.ndtri(p), tf.math.erfinv(np.array([0.3, 0.7])),
                tf.math.erfcinv(np.array([0.5, 1.5])),
                tf.math.bessel_i0e(x), tf.math.bessel_i1e(x), tf.math.bessel_i0(x),
                tf.math.bessel_i1(x), tf.math.erfinv(np.array([1e-12, 1.0, -1.0, 2.0])),
                tf.math.nextafter(np.array([1.0]), 2.0)])
    # Reference values computed with TensorFlow 2.21 (float64).
    np.testing.assert_allclose(out[0], [-37.0470962993612, -6.361340902404056,
                                        -2.3263478740408408, -0.5244005127080409, 0.0,
                                        0.5244005127080407, 3.090232306167813], rtol=1e-12)
    np.testing.assert_allclose(out[1], [0.27246271472675443, 0.7328690779592171], rtol=1e-12)
    np.testing.assert_allclose(out[2], [0.4769362762044699, -0.4769362762044699], rtol=1e-12)
    np.testing.assert_allclose(out[3], [1.0, 0.6450352704491502, 0.1278333371634286,
                                        0.07194649669698383, 0.03994437929909669,
                                        0.24300035416182536], rtol=1e-12)
    np.testing.assert_allclose(out[4], [0.0, 0.15642080318487162, 0.12126268138445552,
                                        0.07077639283438568, 0.039744153025130256,
                                        -0.19682671329730084], rtol=1e-12)
    np.testing.assert_allclose(out[5], [1.0, 1.0634833707413238, 2815.7166284662544,
                                        2089962966491.9038, 1.073751707131074e42,
                                        4.880792585865024], rtol=1e-12)
    np.testing.assert_allclose(out[6], [0.0, 0.2578943053908962, 2670.988303701255,
                                        2055972795294.5647, 1.0683693903381627e42,
                                        -3.9533702174026093], rtol=1e-12)
    # erfinv near 0 is linear: sqrt(pi)/2 * y (TensorFlow's float polynomial is less exact).
    np.testing.assert_allclose(out[7][0], math.sqrt(math.pi) / 2 * 1e-12, rtol=1e-12)
    assert out[7][1] == np.inf and out[7][2] == -np.inf and np.isnan(out[7][3])
    assert out[8].tolist() == [1.0000000000000002]


def test_confusion_matrix_and_approx_top_k_match_tensorflow():
    out = _run([tf.confusion_matrix([1, 2, 4], [2, 2, 4]),
                tf.math.confusion_matrix([0, 1], [1, 1], num_classes=3, weights=[2.0, 3.0],
                                         dtype=tf.float32),
                tf.math.approx_max_k([[1.0, 5, 3], [7, 2, 9]], 2),
                tf.math.approx_min_k([[1.0, 5, 3], [7, 2, 9]], 1, reduction_dimension=0)])
    assert out[0].tolist() == [[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0],
                               [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]]
    assert out[1].tolist() == [[0.0, 2.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 0.0]]
    assert out[2][0].tolist() == [[5.0, 3.0], [9.0, 7.0]]
    assert out[2][1].tolist() == [[1, 2], [2, 0]]
    assert out[3][0].tolist() == [[1.0, 2.0, 3.0]] and out[3][1].tolist() == [[0, 1, 0]]
