"""tf.image: convert_image_dtype, rgb_to_grayscale, grayscale_to_rgb and the codec names.
Expected values follow TF 1.x's formulas (NumPy below); the integer cases were also
checked against TensorFlow 2.21 (`compat.v1`)."""

import numpy as np
import pytest

import tensorweave as tf

RGB8 = np.array([[[0, 0, 0], [255, 255, 255], [10, 200, 30]],
                 [[255, 0, 0], [0, 255, 0], [0, 0, 255]]], np.uint8)
WEIGHTS = np.array([0.2989, 0.5870, 0.1140], np.float32)


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def run(t):
    with tf.Session() as sess:
        return sess.run(t)


def test_rgb_to_grayscale_uint8_and_float():
    flt = RGB8.astype(np.float32) / np.float32(255)
    gray_f = (flt @ WEIGHTS)[..., None]
    got8 = run(tf.image.rgb_to_grayscale(RGB8))
    assert got8.dtype == np.uint8 and got8.shape == (2, 3, 1)
    np.testing.assert_array_equal(got8, (gray_f * np.float32(255.5)).astype(np.uint8))
    np.testing.assert_array_equal(got8[..., 0], [[0, 255, 124], [76, 149, 29]])
    gotf = run(tf.image.rgb_to_grayscale(flt))
    assert gotf.dtype == np.float32
    np.testing.assert_allclose(gotf, gray_f, rtol=1e-6)


def test_convert_image_dtype_int_float():
    u8 = np.array([0, 1, 128, 255], np.uint8)
    got = run(tf.image.convert_image_dtype(u8, tf.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, u8.astype(np.float32) * np.float32(1 / 255), rtol=1e-7)
    f = np.array([0.0, 0.5, 0.999, 1.0, 1.2, -0.1], np.float32)
    # Without saturation the float -> uint8 cast wraps (1.2 -> 306 -> 50, -25.5 -> 231).
    np.testing.assert_array_equal(run(tf.image.convert_image_dtype(f, tf.uint8)),
                                  [0, 127, 255, 255, 50, 231])
    np.testing.assert_array_equal(
        run(tf.image.convert_image_dtype(f, tf.uint8, saturate=True)),
        [0, 127, 255, 255, 255, 0])
    np.testing.assert_array_equal(
        run(tf.image.convert_image_dtype(np.array([-1.0, 0.25, 1.0], np.float32), tf.int8)),
        [-127, 31, 127])
    f16 = run(tf.image.convert_image_dtype(np.array([0.1, 0.7]), tf.float16))
    assert f16.dtype == np.float16
    np.testing.assert_array_equal(f16, np.array([0.1, 0.7], np.float16))


def test_convert_image_dtype_int_int():
    widened = run(tf.image.convert_image_dtype(np.array([0, 1, 127, 255], np.uint8), tf.int16))
    assert widened.dtype == np.int16
    np.testing.assert_array_equal(widened, np.array([0, 1, 127, 255]) * 128)
    i32 = np.array([0, 2**23, 2**31 - 1], np.int32)
    np.testing.assert_array_equal(run(tf.image.convert_image_dtype(i32, tf.uint8)),
                                  i32 // 2**23)
    # Narrowing divides with floor division, then clips with saturate=True.
    big = np.array([-2**31, -300000, 0, 300000, 2**31 - 1], np.int32)
    np.testing.assert_array_equal(
        run(tf.image.convert_image_dtype(big, tf.int16, saturate=True)),
        [-32768, -5, 0, 4, 32767])


def test_convert_image_dtype_same_dtype_and_errors():
    x = tf.constant([0.5])
    same = tf.image.convert_image_dtype(x, tf.float32, name="keep")
    assert same.op.type == "Identity" and same.op.name == "keep"
    with pytest.raises(AttributeError, match="^dtype must be either floating point or integer"):
        tf.image.convert_image_dtype(x, tf.bool)
    with pytest.raises(AttributeError, match="^image dtype must be"):
        tf.image.rgb_to_grayscale(np.zeros([2, 2, 3], np.bool_))


def test_grayscale_to_rgb():
    g = tf.constant(np.array([[[1], [2]]], np.int32))
    rgb = tf.image.grayscale_to_rgb(g)
    assert rgb.shape.as_list() == [1, 2, 3] and rgb.dtype == tf.int32
    np.testing.assert_array_equal(run(rgb), [[[1, 1, 1], [2, 2, 2]]])
    p = tf.placeholder(tf.float32, [None, None, 1])
    assert tf.image.grayscale_to_rgb(p).shape.as_list() == [None, None, 3]
    with pytest.raises(ValueError, match="should be size 1"):
        tf.image.grayscale_to_rgb(tf.zeros([2, 2, 3]))
    with pytest.raises(ValueError, match=r"shape \(1,\)\) must be at least two-dimensional"):
        tf.image.grayscale_to_rgb(tf.zeros([1]))


def test_png_round_trip_through_the_namespace():
    png = tf.image.encode_png(RGB8)
    np.testing.assert_array_equal(run(tf.image.decode_png(png)), RGB8)
    gray = tf.image.rgb_to_grayscale(tf.image.decode_image(png, channels=3))
    np.testing.assert_array_equal(run(gray)[..., 0], [[0, 255, 124], [76, 149, 29]])


def test_rgb_to_grayscale_gradient_is_the_weights():
    x = tf.constant(np.random.RandomState(0).rand(2, 4, 4, 3).astype(np.float32))
    (grad,) = tf.gradients(tf.reduce_sum(tf.image.rgb_to_grayscale(x)), [x])
    np.testing.assert_allclose(run(grad), np.broadcast_to(WEIGHTS, (2, 4, 4, 3)), rtol=1e-6)
