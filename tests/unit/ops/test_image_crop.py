"""tf.image cropping, padding and rotating: `crop_to_bounding_box`, `pad_to_bounding_box`,
`resize_image_with_crop_or_pad`, `central_crop`, `rot90`, `transpose_image`. Expected values,
static shapes and error messages were produced by TensorFlow 2.21 (`compat.v1`) and pasted
here."""

import numpy as np
import pytest

import tensorweave as tf

X = np.arange(1, 25, dtype=np.int32).reshape(3, 4, 2)
X4 = np.stack([X, -X])

EXPECTED = {'cc': [[[[3, 4], [5, 6]], [[11, 12], [13, 14]], [[19, 20], [21, 22]]],
        [[[-3, -4], [-5, -6]], [[-11, -12], [-13, -14]], [[-19, -20], [-21, -22]]]],
 'crop': [[[11, 12], [13, 14]], [[19, 20], [21, 22]]],
 'pad': [[[0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0]],
         [[0, 0], [0, 0], [1, 2], [3, 4], [5, 6], [7, 8], [0, 0]],
         [[0, 0], [0, 0], [9, 10], [11, 12], [13, 14], [15, 16], [0, 0]],
         [[0, 0], [0, 0], [17, 18], [19, 20], [21, 22], [23, 24], [0, 0]]],
 'rcp': [[[[0, 0], [1, 2], [3, 4], [5, 6], [7, 8], [0, 0]],
          [[0, 0], [9, 10], [11, 12], [13, 14], [15, 16], [0, 0]]],
         [[[0, 0], [-1, -2], [-3, -4], [-5, -6], [-7, -8], [0, 0]],
          [[0, 0], [-9, -10], [-11, -12], [-13, -14], [-15, -16], [0, 0]]]],
 'rot0': [[[1, 2], [3, 4], [5, 6], [7, 8]], [[9, 10], [11, 12], [13, 14], [15, 16]],
          [[17, 18], [19, 20], [21, 22], [23, 24]]],
 'rot1': [[[7, 8], [15, 16], [23, 24]], [[5, 6], [13, 14], [21, 22]],
          [[3, 4], [11, 12], [19, 20]], [[1, 2], [9, 10], [17, 18]]],
 'rot1_4': [[[[7, 8], [15, 16], [23, 24]], [[5, 6], [13, 14], [21, 22]],
             [[3, 4], [11, 12], [19, 20]], [[1, 2], [9, 10], [17, 18]]],
            [[[-7, -8], [-15, -16], [-23, -24]], [[-5, -6], [-13, -14], [-21, -22]],
             [[-3, -4], [-11, -12], [-19, -20]], [[-1, -2], [-9, -10], [-17, -18]]]],
 'rot2': [[[23, 24], [21, 22], [19, 20], [17, 18]], [[15, 16], [13, 14], [11, 12], [9, 10]],
          [[7, 8], [5, 6], [3, 4], [1, 2]]],
 'rot3': [[[17, 18], [9, 10], [1, 2]], [[19, 20], [11, 12], [3, 4]],
          [[21, 22], [13, 14], [5, 6]], [[23, 24], [15, 16], [7, 8]]],
 'tr4': [[[[1, 2], [9, 10], [17, 18]], [[3, 4], [11, 12], [19, 20]],
          [[5, 6], [13, 14], [21, 22]], [[7, 8], [15, 16], [23, 24]]],
         [[[-1, -2], [-9, -10], [-17, -18]], [[-3, -4], [-11, -12], [-19, -20]],
          [[-5, -6], [-13, -14], [-21, -22]], [[-7, -8], [-15, -16], [-23, -24]]]]}


def run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


@pytest.mark.parametrize("key, fn, image", [
    ("crop", lambda x: tf.image.crop_to_bounding_box(x, 1, 1, 2, 2), X),
    ("pad", lambda x: tf.image.pad_to_bounding_box(x, 1, 2, 4, 7), X),
    ("rcp", lambda x: tf.image.resize_image_with_crop_or_pad(x, 2, 6), X4),
    ("rcp", lambda x: tf.image.resize_with_crop_or_pad(x, 2, 6), X4),
    ("cc", lambda x: tf.image.central_crop(x, 0.5), X4),
    ("rot0", lambda x: tf.image.rot90(x, 0), X),
    ("rot1", lambda x: tf.image.rot90(x), X),
    ("rot1", lambda x: tf.image.rot90(x, 5), X),
    ("rot2", lambda x: tf.image.rot90(x, 2), X),
    ("rot3", lambda x: tf.image.rot90(x, -1), X),
    ("rot1_4", lambda x: tf.image.rot90(x, 1), X4),
    ("tr4", lambda x: tf.image.transpose_image(x), X4),
    ("tr4", lambda x: tf.image.transpose(x), X4),
])
def test_values_equal_tensorflow(key, fn, image):
    expected = np.array(EXPECTED[key])
    out = fn(tf.constant(image))
    assert out.dtype == tf.int32
    np.testing.assert_array_equal(run(out), expected)
    # The same through a float placeholder of unknown height and width, 3-D per image.
    if image.ndim == 3:
        p = tf.placeholder(tf.float32, [None, None, 2])
        np.testing.assert_array_equal(run(fn(p), {p: image}), expected)


def test_uint8_and_the_batch_equal_per_image_results():
    u = (X4 + 30).astype(np.uint8)
    crop = tf.image.crop_to_bounding_box(tf.constant(u), 1, 1, 2, 2)
    assert crop.dtype == tf.uint8
    np.testing.assert_array_equal(run(crop), u[:, 1:3, 1:3])


@pytest.mark.parametrize("fn, shape, expected", [
    (lambda x: tf.image.crop_to_bounding_box(x, 1, 2, 2, 3), [None, None, 3], [2, 3, 3]),
    (lambda x: tf.image.pad_to_bounding_box(x, 1, 2, 7, 8), [None, None, 3], [7, 8, 3]),
    (lambda x: tf.image.resize_image_with_crop_or_pad(x, 3, 8), [None, None, 3], [3, 8, 3]),
    (lambda x: tf.image.central_crop(x, 0.5), [None, None, 3], [None, None, 3]),
    (lambda x: tf.image.central_crop(x, 0.5), [2, 4, 5, 3], [2, 2, 3, 3]),
    (lambda x: tf.image.central_crop(x, 0.33), [4, 5, 3], [2, 3, 3]),
    (lambda x: tf.image.rot90(x, 1), [None, None, 3], [None, None, 3]),
    (lambda x: tf.image.rot90(x, 2), [2, 4, 5, 3], [2, None, None, 3]),
    (lambda x: tf.image.rot90(x, 3), None, None),
    (lambda x: tf.image.transpose_image(x), [None, None, 3], [None, None, 3]),
    (lambda x: tf.image.transpose_image(x), [2, 4, 5, 3], [2, 5, 4, 3]),
    (lambda x: tf.image.transpose_image(x), None, None),
    (lambda x: tf.image.crop_to_bounding_box(x, 1, 2, 2, 3), None, [2, 3, None]),
])
def test_static_shapes_equal_tensorflow(fn, shape, expected):
    out = fn(tf.placeholder(tf.float32, shape))
    assert (out.shape.as_list() if out.shape.ndims is not None else None) == expected


def test_unknown_rank_runs_rank_3_and_4():
    p = tf.placeholder(tf.int32)
    rot, tr = tf.image.rot90(p, 3), tf.image.transpose_image(p)
    np.testing.assert_array_equal(run(rot, {p: X}), EXPECTED["rot3"])
    np.testing.assert_array_equal(run(tr, {p: X4}), EXPECTED["tr4"])


def test_tensor_offsets_and_targets():
    off, size = tf.placeholder(tf.int32, []), tf.placeholder(tf.int32, [])
    crop = tf.image.crop_to_bounding_box(X, off, off, size, size)
    np.testing.assert_array_equal(run(crop, {off: 1, size: 2}), EXPECTED["crop"])
    rcp = tf.image.resize_image_with_crop_or_pad(X4, size, 6)
    assert rcp.shape.as_list() == [2, None, 6, 2]
    np.testing.assert_array_equal(run(rcp, {size: 2}), EXPECTED["rcp"])
    frac = tf.placeholder(tf.float32, [])
    np.testing.assert_array_equal(run(tf.image.central_crop(X4, frac), {frac: 0.5}),
                                  EXPECTED["cc"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="central_fraction must be"):
        run(tf.image.central_crop(X4, frac), {frac: 0.0})


def test_central_crop_of_one_is_the_image():
    image = tf.constant(X)
    assert tf.image.central_crop(image, 1.0) is image


@pytest.mark.parametrize("fn, message", [
    (lambda: tf.image.crop_to_bounding_box(tf.zeros([4, 4]), 0, 0, 2, 2),
     r"'image' \(shape \(4, 4\)\) must have either 3 or 4 dimensions."),
    (lambda: tf.image.crop_to_bounding_box(tf.zeros([1, 1, 4, 4, 3]), 0, 0, 2, 2),
     "must have either 3 or 4 dimensions"),
    (lambda: tf.image.crop_to_bounding_box(tf.zeros([4, 4, 3]), -1, 0, 2, 2),
     "offset_height must be >= 0."),
    (lambda: tf.image.crop_to_bounding_box(tf.zeros([4, 4, 3]), 0, -1, 2, 2),
     "offset_width must be >= 0."),
    (lambda: tf.image.crop_to_bounding_box(tf.zeros([4, 4, 3]), 0, 0, 0, 2),
     "target_height must be > 0."),
    (lambda: tf.image.crop_to_bounding_box(tf.zeros([4, 4, 3]), 0, 3, 2, 2),
     "width must be >= target [+] offset."),
    (lambda: tf.image.crop_to_bounding_box(tf.zeros([4, 4, 3]), 3, 0, 2, 2),
     "height must be >= target [+] offset."),
    (lambda: tf.image.crop_to_bounding_box(tf.zeros([0, 4, 3]), 0, 0, 1, 1),
     r"inner 3 dims of 'image.shape' must be > 0: \(1, 0, 4, 3\)"),
    (lambda: tf.image.pad_to_bounding_box(tf.zeros([4, 4, 3]), -1, 0, 6, 6),
     "offset_height must be >= 0"),
    (lambda: tf.image.pad_to_bounding_box(tf.zeros([4, 4, 3]), 0, 3, 6, 6),
     "width must be <= target - offset"),
    (lambda: tf.image.pad_to_bounding_box(tf.zeros([4, 4, 3]), 3, 0, 6, 6),
     "height must be <= target - offset"),
    (lambda: tf.image.resize_image_with_crop_or_pad(tf.zeros([4, 4, 3]), 0, 3),
     "target_height must be > 0."),
    (lambda: tf.image.resize_image_with_crop_or_pad(tf.zeros([4, 4, 3]), 3, 0),
     "target_width must be > 0."),
    (lambda: tf.image.central_crop(tf.zeros([4, 4, 3]), 0.0),
     r"central_fraction must be within \(0, 1\]"),
    (lambda: tf.image.central_crop(tf.zeros([4, 4, 3]), 1.5), "central_fraction must be"),
    (lambda: tf.image.central_crop(tf.zeros([1, 1, 4, 4, 3]), 0.5),
     "`image` should either be a Tensor with rank = 3 or rank = 4. Had rank = 5."),
    (lambda: tf.image.central_crop(tf.zeros([4, 4]), 0.5),
     "must be at least three-dimensional"),
    (lambda: tf.image.rot90(tf.zeros([1, 1, 4, 4, 3])), "must have either 3 or 4 dimensions"),
    (lambda: tf.image.rot90(tf.zeros([4, 4])), "must be at least three-dimensional"),
    (lambda: tf.image.rot90(tf.zeros([4, 4, 3]), [1, 2]), r"Shape \(2,\) must have rank 0"),
    (lambda: tf.image.transpose_image(tf.zeros([1, 1, 4, 4, 3])), "either 3 or 4 dimensions"),
    (lambda: tf.image.transpose_image(tf.zeros([4, 4])), "at least three-dimensional"),
])
def test_bad_static_arguments_raise_value_error(fn, message):
    with pytest.raises(ValueError, match=message):
        fn()


def test_bad_dynamic_sizes_fail_at_run_time():
    p = tf.placeholder(tf.float32, [None, None, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="width must be >= target"):
        run(tf.image.crop_to_bounding_box(p, 0, 3, 2, 2), {p: np.zeros([4, 4, 3])})
    with pytest.raises(tf.errors.InvalidArgumentError, match="width must be <= target"):
        run(tf.image.pad_to_bounding_box(p, 0, 3, 6, 6), {p: np.zeros([4, 4, 3])})


def test_gradients_route_back_to_the_kept_pixels():
    x = tf.constant(np.random.RandomState(0).rand(2, 4, 5, 3).astype(np.float32))
    w = np.arange(2 * 3 * 8 * 3, dtype=np.float32).reshape(2, 3, 8, 3)
    y = tf.image.resize_image_with_crop_or_pad(x, 3, 8)
    (g,) = tf.gradients(tf.reduce_sum(y * w), [x])
    expected = np.zeros([2, 4, 5, 3], np.float32)
    expected[:, :3, :, :] = w[:, :, 1:6, :]
    np.testing.assert_array_equal(run(g), expected)
    (g,) = tf.gradients(tf.reduce_sum(tf.image.rot90(x) * np.float32(2.0)), [x])
    np.testing.assert_array_equal(run(g), np.full([2, 4, 5, 3], 2.0, np.float32))
