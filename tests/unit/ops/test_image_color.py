"""tf.image colour ops: `RGBToHSV` / `HSVToRGB` (kernels and the `RGBToHSV` gradient),
`adjust_hue`, `adjust_saturation`, `random_hue`, `random_saturation`. Expected values were
computed with TensorFlow 2.21 (`compat.v1`) and pasted here (`grad_x` is the gradient check's
input)."""

import numpy as np
import pytest

import tensorweave as tf

# RGB: float32 [2, 4, 3] in [0, 1] with a tie and a grey pixel; U: its uint8 version.
RGB = (np.arange(24, dtype=np.float32).reshape(2, 4, 3) * 7 % 24) / 23
RGB[0, 0] = [0.5, 0.5, 0.2]
RGB[0, 1] = [0.3, 0.3, 0.3]
U = (RGB * 250).astype(np.uint8)
# HSV inputs: hue 1, negative hue, hue above 1, saturation 0 and 2.
HSV = np.array([[0, 1, 1], [1.0, 1, 1], [0.999, 0.5, 0.5], [-0.2, 0.5, 0.5], [1.3, 0.5, 0.7],
                [0.5, 0, 0.3], [1 / 6, 1, 1], [0.5, 2.0, 0.5]], np.float32)
W = np.arange(24, dtype=np.float32).reshape(2, 4, 3) % 4 - 1.5

EXPECTED = {'grad_hsv': [[[0.34712091088294983, 0.2989521324634552, 0.5479483604431152],
               [-2.323826789855957, 1.1905102729797363, 4.079419136047363],
               [-3.6842551231384277, -0.3958691954612732, 0.574330747127533],
               [-0.3132537603378296, -0.5572987794876099, 2.087261438369751]],
              [[0.2938653230667114, 0.42107802629470825, 0.336697518825531],
               [-1.3409826755523682, 2.6732540130615234, -0.9875072836875916],
               [-1.7580915689468384, -0.12619423866271973, -1.1605504751205444],
               [1.5935207605361938, -0.5700140595436096, 0.1272580623626709]]],
 'grad_x': [[[0.4170219898223877, 0.7203245162963867, 0.00011437481589382514],
             [0.3023325800895691, 0.1467558890581131, 0.09233859181404114],
             [0.18626020848751068, 0.3455607295036316, 0.3967674672603607],
             [0.5388167500495911, 0.4191945195198059, 0.6852195262908936]],
            [[0.204452246427536, 0.8781174421310425, 0.0273875929415226],
             [0.6704674959182739, 0.4173048138618469, 0.5586898326873779],
             [0.1403869390487671, 0.1981014907360077, 0.8007445931434631],
             [0.9682615995407104, 0.31342417001724243, 0.6923226118087769]]],
 'hsv': [[[0.1666666865348816, 0.6000000238418579, 0.5], [0.0, 0.0, 0.30000001192092896],
          [0.9313725233078003, 0.944444477558136, 0.782608687877655],
          [0.2352941334247589, 0.7727272510528564, 0.95652174949646]],
         [[0.2352941334247589, 0.8947368860244751, 0.8260869383811951],
          [0.5833333730697632, 0.6086956262588501, 1.0],
          [0.5833333730697632, 0.699999988079071, 0.8695651888847351],
          [0.5833333730697632, 0.8235293626785278, 0.739130437374115]]],
 'hue': [[[0.20000000298023224, 0.5, 0.440000057220459],
          [0.30000001192092896, 0.30000001192092896, 0.30000001192092896],
          [0.4956519603729248, 0.782608687877655, 0.043478261679410934],
          [0.21739129722118378, 0.7999999523162842, 0.95652174949646]],
         [[0.08695652335882187, 0.6695651412010193, 0.8260869383811951],
          [1.0, 0.3913043439388275, 0.8173911571502686],
          [0.8695651888847351, 0.260869562625885, 0.6869564056396484],
          [0.739130437374115, 0.1304347813129425, 0.5565215945243835]]],
 'hue_u': [[[[50, 125, 110], [75, 75, 75], [123, 195, 10], [54, 200, 239]],
            [[21, 167, 206], [250, 97, 203], [217, 65, 171], [184, 32, 138]]],
           [[[21, 167, 206], [250, 97, 203], [217, 65, 171], [184, 32, 138]],
            [[50, 125, 110], [75, 75, 75], [123, 195, 10], [54, 200, 239]]]],
 'rgb': [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 0.25, 0.2515000104904175], [0.5, 0.25, 0.25],
         [0.699999988079071, 0.3499999940395355, 0.3499999940395355],
         [0.30000001192092896, 0.30000001192092896, 0.30000001192092896], [1.0, 1.0, 0.0],
         [-0.5, 0.5, 0.5]],
 'sat': [[[0.5, 0.4999999701976776, 0.0],
          [0.30000001192092896, 0.30000001192092896, 0.30000001192092896],
          [0.782608687877655, 0.0, 0.32225093245506287],
          [0.5626598000526428, 0.95652174949646, 0.0]],
         [[0.48593345284461975, 0.8260869383811951, 0.0], [0.0, 0.5, 1.0],
          [0.0, 0.43478259444236755, 0.8695651888847351],
          [0.0, 0.3695652186870575, 0.739130437374115]]],
 'sat_u': [[[125, 125, 95], [75, 75, 75], [195, 121, 151], [209, 239, 165]],
           [[175, 206, 132], [189, 219, 250], [156, 186, 217], [123, 153, 184]]]}


def run(t):
    with tf.Session() as sess:
        return sess.run(t)


def test_rgb_to_hsv_and_back_equal_tensorflow():
    hsv = tf.image.rgb_to_hsv(RGB)
    assert hsv.dtype == tf.float32 and hsv.shape.as_list() == [2, 4, 3]
    np.testing.assert_allclose(run(hsv), EXPECTED["hsv"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(run(tf.image.hsv_to_rgb(HSV)), EXPECTED["rgb"], atol=1e-7)
    np.testing.assert_allclose(run(tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(RGB))), RGB,
                               atol=3e-7)


@pytest.mark.parametrize("dtype, atol", [(np.float64, 1e-7), (np.float16, 1e-3)])
def test_other_float_dtypes(dtype, atol):
    hsv = tf.image.rgb_to_hsv(RGB.astype(dtype))
    assert hsv.dtype == tf.as_dtype(dtype)
    np.testing.assert_allclose(run(hsv), EXPECTED["hsv"], atol=atol)


@pytest.mark.parametrize("key, fn, image", [
    ("hue", lambda x: tf.image.adjust_hue(x, 0.3), RGB),
    ("hue_u", lambda x: tf.image.adjust_hue(x, -0.7), np.stack([U, U[::-1]])),
    ("sat", lambda x: tf.image.adjust_saturation(x, 1.8), RGB),
    ("sat_u", lambda x: tf.image.adjust_saturation(x, 0.4), U),
])
def test_adjustments_equal_tensorflow(key, fn, image):
    out = fn(tf.constant(image))
    assert out.dtype == tf.as_dtype(image.dtype) and out.shape.as_list() == list(image.shape)
    if image.dtype == np.uint8:
        np.testing.assert_array_equal(run(out), EXPECTED[key])
    else:
        # TF runs fused AdjustHue/AdjustSaturation kernels; the composition rounds apart.
        np.testing.assert_allclose(run(out), EXPECTED[key], atol=5e-7)


def test_rgb_to_hsv_gradient_equals_tensorflow():
    x = tf.constant(np.array(EXPECTED["grad_x"], np.float32))
    (g,) = tf.gradients(tf.reduce_sum(tf.image.rgb_to_hsv(x) * W), [x])
    np.testing.assert_allclose(run(g), EXPECTED["grad_hsv"], rtol=1e-5, atol=1e-6)


def test_rgb_to_hsv_gradient_at_ties_and_zero_channels_equals_tensorflow():
    x = tf.constant(np.array([[0.0, 0.5, 0.2], [0.5, 0.5, 0.2], [0.3, 0.3, 0.3],
                              [0.0, 0.0, 0.4], [0.6, 0.0, 0.3], [0.2, 0.7, 0.7]], np.float32))
    (g,) = tf.gradients(tf.reduce_sum(tf.image.rgb_to_hsv(x) * [1.0, 2.0, 3.0]), [x])
    np.testing.assert_allclose(run(g), [
        [-0.20000000298023224, 2.866666555404663, 0.3333333432674408],
        [4.0444440841674805, 0.5555555820465088, -4.0],
        [9.666666030883789, 0.0, -6.666666507720947],
        [0.4166666567325592, -0.4166666269302368, 3.0],
        [3.1388888359069824, 0.1388888955116272, -0.2777777910232544],
        [-2.857142925262451, 3.4829933643341064, 0.3333333432674408]], rtol=1e-6, atol=1e-6)


def test_hsv_to_rgb_is_not_differentiable():
    x = tf.constant(HSV)
    assert tf.gradients(tf.reduce_sum(tf.image.hsv_to_rgb(x)), [x]) == [None]


@pytest.mark.parametrize("fn, error, message", [
    (lambda: tf.image.rgb_to_hsv(tf.zeros([2, 4])), ValueError, "Dimension must be 3 but is 4"),
    (lambda: tf.image.rgb_to_hsv(tf.zeros([])), ValueError,
     "Shape must be at least rank 1 but is rank 0"),
    (lambda: tf.image.hsv_to_rgb(tf.zeros([2, 4])), ValueError, "Dimension must be 3 but is 4"),
    (lambda: tf.image.rgb_to_hsv(tf.zeros([2, 3], tf.int32)), TypeError,
     "int32 not in list of allowed values: float16, float32, float64"),
    (lambda: tf.image.adjust_hue(tf.zeros([2, 3]), 0.1), ValueError,
     "Shape must be at least rank 3 but is rank 2"),
    (lambda: tf.image.adjust_saturation(tf.zeros([2, 3]), 0.1), ValueError,
     "Shape must be at least rank 3 but is rank 2"),
    (lambda: tf.image.random_hue(tf.zeros([2, 2, 3]), 0.6), ValueError,
     "max_delta must be <= 0.5."),
    (lambda: tf.image.random_hue(tf.zeros([2, 2, 3]), -0.1), ValueError,
     "max_delta must be non-negative."),
    (lambda: tf.image.random_saturation(tf.zeros([2, 2, 3]), 1.0, 1.0), ValueError,
     "upper must be > lower."),
    (lambda: tf.image.random_saturation(tf.zeros([2, 2, 3]), -1.0, 1.0), ValueError,
     "lower must be non-negative."),
])
def test_bad_arguments_raise_while_building(fn, error, message):
    with pytest.raises(error, match=message):
        fn()


def test_wrong_channel_count_fails_at_run_time():
    p = tf.placeholder(tf.float32, [None, None])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="3 channels"):
        sess.run(tf.image.rgb_to_hsv(p), {p: np.zeros([2, 4], np.float32)})


def _draws(build, n=15):
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        out = build()
        with tf.Session() as sess:
            return out, np.array([sess.run(out) for _ in range(n)])


def test_random_hue_is_seeded_and_within_delta():
    def build():
        return tf.image.random_hue(tf.constant(RGB), 0.2, seed=4)
    out, first = _draws(build)
    assert out.shape.as_list() == [2, 4, 3] and out.dtype == tf.float32
    np.testing.assert_array_equal(first, _draws(build)[1])
    hsv0 = run(tf.image.rgb_to_hsv(RGB))
    with tf.Graph().as_default():
        hues = run(tf.image.rgb_to_hsv(first))
    # Saturation and value stay; the hue of every coloured pixel moves by one delta.
    np.testing.assert_allclose(hues[..., 1:], np.broadcast_to(hsv0[..., 1:], hues[..., 1:].shape),
                               atol=1e-5)
    shift = (hues[:, 1, 0, 0] - hsv0[1, 0, 0] + 0.5) % 1 - 0.5
    assert np.all(np.abs(shift) <= 0.2 + 1e-5) and len(np.unique(np.round(shift, 5))) > 5


def test_random_saturation_is_seeded_and_within_range():
    def build():
        return tf.image.random_saturation(tf.constant(RGB), 0.5, 1.5, seed=4)
    out, first = _draws(build)
    assert out.shape.as_list() == [2, 4, 3]
    np.testing.assert_array_equal(first, _draws(build)[1])
    hsv0 = run(tf.image.rgb_to_hsv(RGB))
    with tf.Graph().as_default():
        sats = run(tf.image.rgb_to_hsv(first))[..., 1]
    ratio = sats[:, 1, 0] / hsv0[1, 0, 1]
    assert np.all((ratio >= 0.5 - 1e-5) & (ratio <= 1.5 + 1e-5))
    assert len(np.unique(np.round(ratio, 5))) > 5
