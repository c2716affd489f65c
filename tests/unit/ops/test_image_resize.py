"""tf.image resizing and flipping: `ResizeBilinear`, `ResizeNearestNeighbor`, their gradients,
`resize_images` and the flips. Expected values were computed with TensorFlow 2.21
(`compat.v1`) and pasted here; the kernels reproduce them exactly (float32 arithmetic as in
TensorFlow's kernels, gradient sums in TensorFlow's order)."""

import numpy as np
import pytest

import tensorweave as tf

# The input image [1, 3, 4, 1] (float32 /4 and uint8 *20 of these).
PIXELS = np.array([[0, 5, 2, 9], [4, 1, 7, 3], [8, 6, 10, 11]], np.float32).reshape(1, 3, 4, 1)
X = PIXELS / 4
XU = (PIXELS * 20).astype(np.uint8)

# TF 2.21, per (align_corners, half_pixel_centers, size): b = resize_bilinear(X),
# bu = resize_bilinear(XU), gb / gn = d sum(W * resize(X)) / dX with W = 1, 2, ... in
# row-major order, n = resize_nearest_neighbor(PIXELS) (equal to 4 * the float result).
EXPECTED = {
    (False, False, (5, 6)): {
        "b": [
            0.0, 0.8333333730697632, 1.0, 0.5, 1.6666667461395264, 2.25, 0.6000000238418579,
            0.6333333253860474, 0.8500000238418579, 1.25, 1.316666603088379, 1.3499999046325684,
            1.2000000476837158, 0.7333333492279053, 0.9666667580604553, 1.9000000953674316,
            1.4000000953674316, 1.1500000953674316, 1.8000000715255737, 1.433333396911621,
            1.6166667938232422, 2.3499999046325684, 2.3500001430511475, 2.3500001430511475, 2.0,
            1.6666666269302368, 1.8333333730697632, 2.5, 2.6666667461395264, 2.75
        ],
        "bu": [
            0.0, 66.66667175292969, 80.0, 40.0, 133.33334350585938, 180.0, 48.0, 50.66666793823242,
            68.0, 100.0, 105.33332824707031, 108.0, 96.0, 58.66667175292969, 77.33334350585938,
            152.0, 112.0, 92.00000762939453, 144.0, 114.66667175292969, 129.33334350585938, 188.0,
            188.0, 188.00001525878906, 160.0, 133.3333282470703, 146.6666717529297, 200.0,
            213.3333282470703, 220.0
        ],
        "gb": [
            5.533332824707031, 7.866665840148926, 13.333332061767578, 17.066667556762695,
            25.066665649414062, 27.73333168029785, 38.66666030883789, 42.93333053588867,
            57.73332977294922, 61.0666618347168, 81.33333587646484, 86.66666412353516
        ],
        "gn": [
            18, 12, 30, 18, 66, 36, 78, 42, 51, 27, 57, 30
        ],
        "n": [
            0, 0, 5, 2, 2, 9, 0, 0, 5, 2, 2, 9, 4, 4, 1, 7, 7, 3, 4, 4, 1, 7, 7, 3, 8, 8, 6, 10, 10,
            11
        ],
    },
    (False, False, (2, 3)): {
        "b": [
            0.0, 1.0, 1.6666667461395264, 1.5, 1.2916667461395264, 1.875
        ],
        "bu": [
            0.0, 80.0, 133.33334350585938, 120.0, 103.33334350585938, 150.0
        ],
        "gb": [
            1.0, 1.3333332538604736, 1.6666665077209473, 2.000000238418579, 2.0, 1.6666665077209473,
            1.8333332538604736, 2.000000238418579, 2.0, 1.6666665077209473, 1.8333332538604736,
            2.000000238418579
        ],
        "gn": [
            1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0, 0
        ],
        "n": [
            0, 5, 2, 4, 1, 7
        ],
    },
    (True, False, (5, 6)): {
        "b": [
            0.0, 0.75, 1.0999999046325684, 0.6499999761581421, 1.2000001668930054, 2.25, 0.5,
            0.6499999761581421, 0.824999988079071, 1.0499999523162842, 1.2750000953674316, 1.5, 1.0,
            0.5499999523162842, 0.5500000715255737, 1.4500000476837158, 1.3499999046325684, 0.75,
            1.5, 1.125, 1.125, 1.8750001192092896, 1.9749999046325684, 1.75, 2.0,
            1.7000000476837158, 1.7000000476837158, 2.3000001907348633, 2.5999999046325684, 2.75
        ],
        "bu": [
            0.0, 60.000003814697266, 88.0, 51.999996185302734, 96.00001525878906, 180.0, 40.0, 52.0,
            66.0, 84.0, 102.0, 120.0, 80.0, 44.0, 44.00000762939453, 116.00000762939453,
            107.99999237060547, 60.0, 120.0, 90.0, 90.0, 150.0, 158.0, 140.0, 160.0, 136.0, 136.0,
            184.0, 208.0, 220.0
        ],
        "gb": [
            6.900000095367432, 11.399999618530273, 15.0, 16.200000762939453, 37.20000076293945,
            47.20000076293945, 52.000003814697266, 49.60000228881836, 48.900001525878906,
            59.399993896484375, 63.0, 58.20000457763672
        ],
        "gn": [
            1, 5, 9, 6, 20, 46, 54, 30, 44, 94, 102, 54
        ],
        "n": [
            0, 5, 5, 2, 2, 9, 4, 1, 1, 7, 7, 3, 4, 1, 1, 7, 7, 3, 8, 6, 6, 10, 10, 11, 8, 6, 6, 10,
            10, 11
        ],
    },
    (True, False, (2, 3)): {
        "b": [
            0.0, 0.875, 2.25, 2.0, 2.0, 2.75
        ],
        "bu": [
            0.0, 70.0, 180.0, 160.0, 160.0, 220.0
        ],
        "gb": [
            1.0, 1.0, 1.0, 3.0, 0.0, 0.0, 0.0, 0.0, 4.0, 2.5, 2.5, 6.0
        ],
        "gn": [
            1, 0, 2, 3, 0, 0, 0, 0, 4, 0, 5, 6
        ],
        "n": [
            0, 2, 9, 8, 10, 11
        ],
    },
    (False, True, (5, 6)): {
        "b": [
            0.0, 0.625, 1.125, 0.6249998807907104, 1.375, 2.25, 0.40000003576278687, 0.625, 0.875,
            0.9750000238418579, 1.3250000476837158, 1.649999976158142, 1.0, 0.625,
            0.5000001192092896, 1.500000238418579, 1.25, 0.75, 1.6000001430511475,
            1.3000001907348633, 1.200000286102295, 2.000000238418579, 2.075000286102295,
            1.950000286102295, 2.0, 1.75, 1.6666667461395264, 2.3333334922790527, 2.625, 2.75
        ],
        "bu": [
            0.0, 50.0, 89.99999237060547, 49.99999237060547, 110.0, 180.0, 32.000003814697266, 50.0,
            70.0, 78.0, 106.0, 132.0, 80.0, 50.0, 40.00000762939453, 120.00001525878906, 100.0,
            60.0, 128.00001525878906, 104.00001525878906, 96.0000228881836, 160.00003051757812,
            166.00001525878906, 156.00003051757812, 160.0, 140.0, 133.33334350585938,
            186.66668701171875, 210.0, 220.0
        ],
        "gb": [
            8.59999942779541, 12.06666374206543, 15.533334732055664, 19.0, 36.0, 39.89999008178711,
            43.80000305175781, 47.69999313354492, 55.40000534057617, 58.866661071777344,
            62.33334732055664, 65.80000305175781
        ],
        "gn": [
            8, 22, 14, 34, 13, 29, 16, 35, 44, 94, 50, 106
        ],
        "n": [
            0, 5, 5, 2, 9, 9, 0, 5, 5, 2, 9, 9, 4, 1, 1, 7, 3, 3, 8, 6, 6, 10, 11, 11, 8, 6, 6, 10,
            11, 11
        ],
    },
    (False, True, (2, 3)): {
        "b": [
            0.375, 0.90625, 1.697916865348816, 1.65625, 1.75, 2.2604167461395264
        ],
        "bu": [
            30.0, 72.5, 135.83334350585938, 132.5, 140.0, 180.8333282470703
        ],
        "gb": [
            0.625, 0.875, 1.1249996423721313, 1.8750003576278687, 1.0416666269302368,
            1.0833333730697632, 1.2499996423721313, 1.8750003576278687, 2.5, 2.375,
            2.6249992847442627, 3.7500007152557373
        ],
        "gn": [
            1, 0, 2, 3, 0, 0, 0, 0, 4, 0, 5, 6
        ],
        "n": [
            0, 2, 9, 8, 10, 11
        ],
    },
}


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


@pytest.mark.parametrize("key", list(EXPECTED), ids=lambda k: f"ac{int(k[0])}hp{int(k[1])}{k[2]}")
def test_resize_values_and_gradients_equal_tensorflow(key):
    align_corners, half_pixel, size = key
    want = EXPECTED[key]
    flags = {"align_corners": align_corners, "half_pixel_centers": half_pixel}
    shape = (1, *size, 1)
    x = tf.constant(X)
    weights = np.arange(1, size[0] * size[1] + 1, dtype=np.float32).reshape(shape)
    bilinear = tf.image.resize_bilinear(x, size, **flags)
    nearest = tf.image.resize_nearest_neighbor(x, size, **flags)
    bilinear_u8 = tf.image.resize_bilinear(XU, size, **flags)
    nearest_u8 = tf.image.resize_nearest_neighbor(XU, size, **flags)
    (grad_b,) = tf.gradients(tf.reduce_sum(bilinear * weights), [x])
    (grad_n,) = tf.gradients(tf.reduce_sum(nearest * weights), [x])
    assert bilinear.shape.as_list() == list(shape) and bilinear_u8.dtype == tf.float32
    assert nearest_u8.dtype == tf.uint8 and nearest_u8.shape.as_list() == list(shape)
    b, n, bu, nu, gb, gn = run([bilinear, nearest, bilinear_u8, nearest_u8, grad_b, grad_n])
    assert bu.dtype == np.float32 and nu.dtype == np.uint8 and gb.dtype == np.float32
    np.testing.assert_array_equal(b.ravel(), np.array(want["b"], np.float32))
    np.testing.assert_array_equal(bu.ravel(), np.array(want["bu"], np.float32))
    np.testing.assert_array_equal(n.ravel() * 4, want["n"])
    np.testing.assert_array_equal(nu.ravel(), np.array(want["n"]) * 20)
    np.testing.assert_array_equal(gb.ravel(), np.array(want["gb"], np.float32))
    np.testing.assert_array_equal(gn.ravel(), want["gn"])


def test_resize_ops_other_dtypes_and_batches():
    rng = np.random.RandomState(1)
    batch = rng.rand(2, 3, 4, 2)
    got = run(tf.image.resize_bilinear(batch, [6, 8], align_corners=True))
    # Corners map onto corners; each image and channel is resized independently.
    np.testing.assert_allclose(got[:, ::5, ::7], batch[:, ::2, ::3], rtol=1e-6)
    single = run(tf.image.resize_bilinear(batch[1:, :, :, 1:], [6, 8], align_corners=True))
    np.testing.assert_array_equal(got[1:, :, :, 1:], single)
    ints = np.arange(24, dtype=np.int64).reshape(2, 3, 4, 1)
    nn = run(tf.image.resize_nearest_neighbor(ints, [6, 8]))
    assert nn.dtype == np.int64
    np.testing.assert_array_equal(nn, ints.repeat(2, 1).repeat(2, 2))
    x = tf.constant(batch)
    up = tf.image.resize_bilinear(x, [6, 8], half_pixel_centers=True)
    (grad,) = tf.gradients(tf.reduce_sum(up), [x])
    assert grad.dtype == tf.float64
    # Upscaling 2x with half-pixel centres spreads total weight 2 x 2 onto every pixel.
    np.testing.assert_allclose(run(grad), np.full(batch.shape, 4.0))


def test_resize_shape_inference_and_errors():
    p = tf.placeholder(tf.float32, [None, 5, 5, 3])
    size = tf.placeholder(tf.int32, [2])
    assert tf.image.resize_bilinear(p, [2, 7]).shape.as_list() == [None, 2, 7, 3]
    assert tf.image.resize_nearest_neighbor(p, size).shape.as_list() == [None, None, None, 3]
    with pytest.raises(ValueError, match="must be rank 4"):
        tf.image.resize_bilinear(tf.zeros([5, 5, 3]), [2, 2])
    with pytest.raises(ValueError, match="size must have 2 elements"):
        tf.image.resize_nearest_neighbor(p, [2, 2, 2])
    with pytest.raises(TypeError):
        tf.image.resize_bilinear(tf.zeros([1, 2, 2, 1], tf.bool), [2, 2])
    both = tf.image.resize_bilinear(p, [3, 3], align_corners=True, half_pixel_centers=True)
    feed = {p: np.zeros([1, 5, 5, 3], np.float32)}
    with pytest.raises(tf.errors.InvalidArgumentError, match="align_corners must be False"):
        run(both, feed)
    with pytest.raises(tf.errors.InvalidArgumentError, match="output dimensions must be pos"):
        run(tf.image.resize_nearest_neighbor(p, size), {**feed, size: [0, 3]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-zero size"):
        run(tf.image.resize_bilinear(np.zeros([1, 0, 5, 3], np.float32), [2, 2]))


def test_resize_images_3d_4d_methods_and_skip():
    image = X[0]
    up = tf.image.resize_images(image, [5, 6])
    assert up.shape.as_list() == [5, 6, 1] and up.dtype == tf.float32
    np.testing.assert_array_equal(run(up).ravel(),
                                  np.array(EXPECTED[False, False, (5, 6)]["b"], np.float32))
    corners = tf.image.resize(XU, [2, 3], tf.image.ResizeMethod.NEAREST_NEIGHBOR,
                              align_corners=True)
    assert corners.dtype == tf.uint8 and corners.shape.as_list() == [1, 2, 3, 1]
    np.testing.assert_array_equal(run(corners).ravel(),
                                  np.array(EXPECTED[True, False, (2, 3)]["n"]) * 20)
    # An unchanged static size returns the input itself (no resize, no float conversion).
    same = tf.image.resize_images(tf.constant(XU), [3, 4])
    assert same.dtype == tf.uint8 and same.op.type == "Const"
    p = tf.placeholder(tf.uint8, [None, None, 1])
    dynamic = tf.image.resize_images(p, [3, 4])
    assert dynamic.shape.as_list() == [3, 4, 1] and dynamic.dtype == tf.float32
    np.testing.assert_array_equal(run(dynamic, {p: XU[0]}), XU[0])
    assert (tf.image.ResizeMethod.BILINEAR, tf.image.ResizeMethod.NEAREST_NEIGHBOR,
            tf.image.ResizeMethod.BICUBIC, tf.image.ResizeMethod.AREA) == (0, 1, 2, 3)


def test_resize_images_preserve_aspect_ratio():
    # TF 2.21: [3, 4] into [6, 6] -> [4, 6]; [2, 3, 4] into [5, 20] -> [5, 7].
    image = np.arange(24, dtype=np.float32).reshape(2, 3, 4, 1)
    got = tf.image.resize_images(image[0], [6, 6], preserve_aspect_ratio=True)
    assert got.shape.as_list() == [4, 6, 1]
    np.testing.assert_allclose(run(got)[..., 0], [
        [0, 2 / 3, 4 / 3, 2, 8 / 3, 3], [3, 11 / 3, 13 / 3, 5, 17 / 3, 6],
        [6, 20 / 3, 22 / 3, 8, 26 / 3, 9], [8, 26 / 3, 28 / 3, 10, 32 / 3, 11]], rtol=1e-6)
    nn = tf.image.resize_images(image, [5, 20], tf.image.ResizeMethod.NEAREST_NEIGHBOR,
                                preserve_aspect_ratio=True)
    assert nn.shape.as_list() == [2, 5, 7, 1]
    np.testing.assert_array_equal(run(nn)[1, :, :, 0], [
        [12, 12, 13, 13, 14, 14, 15], [12, 12, 13, 13, 14, 14, 15],
        [16, 16, 17, 17, 18, 18, 19], [16, 16, 17, 17, 18, 18, 19],
        [20, 20, 21, 21, 22, 22, 23]])
    p = tf.placeholder(tf.float32, [None, None, 1])
    dynamic = tf.image.resize_images(p, [6, 6], preserve_aspect_ratio=True)
    assert dynamic.shape.as_list() == [None, None, 1]
    np.testing.assert_array_equal(run(dynamic, {p: image[0]}), run(got))


def test_resize_images_errors():
    with pytest.raises(ValueError, match="'images' contains no shape"):
        tf.image.resize_images(tf.placeholder(tf.float32), [2, 2])
    with pytest.raises(ValueError, match="either 3 or 4 dimensions"):
        tf.image.resize_images(tf.zeros([4, 4]), [2, 2])
    with pytest.raises(ValueError, match="1-D int32 Tensor"):
        tf.image.resize_images(X, [2.5, 2.0])
    with pytest.raises(ValueError, match="1-D Tensor of 2 elements"):
        tf.image.resize_images(X, [2, 2, 2])
    with pytest.raises(ValueError, match="BICUBIC and AREA are not implemented"):
        tf.image.resize_images(X, [2, 2], tf.image.ResizeMethod.AREA)
    with pytest.raises(ValueError, match="Resize method is not implemented"):
        tf.image.resize_images(X, [2, 2], method=7)


def test_flips_3d_4d_and_unknown_rank():
    image = np.arange(12, dtype=np.int32).reshape(2, 3, 2)
    lr, ud = tf.image.flip_left_right(image), tf.image.flip_up_down(image)
    assert lr.shape.as_list() == [2, 3, 2] and lr.dtype == tf.int32
    np.testing.assert_array_equal(run(lr), image[:, ::-1])
    np.testing.assert_array_equal(run(ud), image[::-1])
    batch = np.stack([image, image + 12])
    np.testing.assert_array_equal(run(tf.image.flip_left_right(batch)), batch[:, :, ::-1])
    np.testing.assert_array_equal(run(tf.image.flip_up_down(batch)), batch[:, ::-1])
    p = tf.placeholder(tf.int32)
    for value in (image, batch):
        np.testing.assert_array_equal(run(tf.image.flip_left_right(p), {p: value}),
                                      value[..., ::-1, :])
    with pytest.raises(ValueError, match=r"must be at least three-dimensional"):
        tf.image.flip_left_right(tf.zeros([2, 2]))
    with pytest.raises(ValueError, match="either 3 or 4 dimensions"):
        tf.image.random_flip_up_down(tf.zeros([1, 2, 2, 2, 1]))
    with pytest.raises(ValueError, match="must be > 0"):
        tf.image.flip_up_down(tf.zeros([0, 2, 1]))


def test_random_flips_are_seeded_and_flip_about_half():
    image = np.arange(6, dtype=np.float32).reshape(1, 6, 1)
    seen = set()
    for seed in range(20):
        with tf.Graph().as_default():
            tf.set_random_seed(1)
            flipped = tf.image.random_flip_left_right(image, seed=seed)
            assert flipped.shape.as_list() == [1, 6, 1]
            with tf.Session() as sess:
                first = sess.run(flipped)
            with tf.Session() as sess:  # the same seeds give the same draws
                np.testing.assert_array_equal(sess.run(flipped), first)
        assert (first == image).all() or (first == image[:, ::-1]).all()
        seen.add(bool(first[0, 0, 0]))
    assert seen == {False, True}
    # 4-D: every image of the batch is flipped (or not) on its own, about half of them.
    batch = np.arange(400 * 2, dtype=np.float32).reshape(400, 2, 1, 1)
    got = run(tf.image.random_flip_up_down(batch, seed=3))
    flipped = (got == batch[:, ::-1]).all(axis=(1, 2, 3))
    kept = (got == batch).all(axis=(1, 2, 3))
    assert (flipped ^ kept).all() and 150 < flipped.sum() < 250


def test_half_bilinear_gradient_rounds_once_like_tensorflow():
    x = tf.constant(X.astype(np.float16))
    weights = np.arange(1, 73, dtype=np.float32).reshape(1, 8, 9, 1) / 7
    up = tf.image.resize_bilinear(x, [8, 9], half_pixel_centers=True)
    (grad,) = tf.gradients(tf.reduce_sum(up * weights), [x])
    got = run(grad)
    assert got.dtype == np.float16
    # TF 2.21; summing in float16 step by step gives e.g. 11.0625 for the second entry.
    np.testing.assert_array_equal(got.ravel(), np.array([
        8.96875, 11.0546875, 13.0625, 14.5625, 27.6875, 30.203125, 32.15625, 33.15625,
        47.71875, 50.78125, 52.78125, 53.3125], np.float16))
