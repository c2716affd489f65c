"""tf.image pixel adjustments: `per_image_standardization`, `adjust_brightness`,
`adjust_contrast`, `adjust_gamma` (values and gradients equal to TensorFlow 2.21's, pasted
here), `random_brightness` / `random_contrast` / `random_crop` (seeded repeatability and
ranges), and a CIFAR-10-style distorted input pipeline built from them."""

import numpy as np
import pytest

import tensorweave as tf

# F: float32 [2, 4, 3] in [0, 1]; U: its uint8 version; F4: a batch of two.
F = (np.arange(24, dtype=np.float32).reshape(2, 4, 3) * 7 % 24) / 23
U = (F * 250).astype(np.uint8)
F4 = np.stack([F, F[::-1] ** 2])
# W: the weights of the gradient checks, d sum(W * f(F4)) / dF4.
W = np.arange(F4.size, dtype=np.float32).reshape(F4.shape) % 5

EXPECTED = {'bri_f': [[[0.30000001192092896, 0.604347825050354, 0.908695638179779],
            [1.213043451309204, 0.4739130735397339, 0.7782608866691589],
            [1.082608699798584, 0.343478262424469, 0.647826075553894],
            [0.9521739482879639, 1.2565217018127441, 0.5173913240432739]],
           [[0.821739137172699, 1.126086950302124, 0.3869565427303314],
            [0.6913043260574341, 0.9956521987915039, 1.2999999523162842],
            [0.560869574546814, 0.865217387676239, 1.169565200805664],
            [0.43043479323387146, 0.7347825765609741, 1.039130449295044]]],
 'bri_u': [[[0, 25, 101], [177, 0, 68], [144, 0, 35], [112, 188, 3]],
           [[79, 155, 0], [46, 122, 199], [14, 90, 166], [0, 57, 133]]],
 'con_f4': [[[[-0.3195652365684509, 0.16739127039909363, 0.6543477773666382],
              [1.2326087951660156, -0.05434781312942505, 0.4326087236404419],
              [1.0108695030212402, -0.2760869860649109, 0.21086958050727844],
              [0.789130449295044, 1.2760870456695557, -0.01086956262588501]],
             [[0.5673912763595581, 1.0543477535247803, -0.23260867595672607],
              [0.34565216302871704, 0.832608699798584, 1.3195652961730957],
              [0.12391301989555359, 0.6108695268630981, 1.0978260040283203],
              [-0.09782612323760986, 0.3891304135322571, 0.876086950302124]]],
            [[[0.2543478012084961, 0.9225897789001465, -0.25642722845077515],
              [0.05189034342765808, 0.5851607322692871, 1.4307184219360352],
              [-0.09272214770317078, 0.30557650327682495, 1.0161625146865845],
              [-0.1794896423816681, 0.08383741974830627, 0.6594518423080444]],
             [[-0.20841211080551147, -0.08005675673484802, 0.3605859875679016],
              [1.2087903022766113, -0.1861058473587036, 0.1195652186870575],
              [0.8327977061271667, -0.23431003093719482, -0.06361055374145508],
              [0.5146503448486328, 1.317863941192627, -0.18894141912460327]]]],
 'con_u': [[[79, 110, 140], [148, 100, 130], [138, 90, 120], [128, 159, 111]],
           [[118, 149, 101], [108, 139, 170], [99, 129, 160], [89, 119, 150]]],
 'gam_f': [[[0.0, 0.6620127558708191, 0.9362273812294006],
            [1.1466398239135742, 0.5004345774650574, 0.8298769593238831],
            [1.0615822076797485, 0.2502172887325287, 0.7077214121818542],
            [0.9690874218940735, 1.1736232042312622, 0.559502899646759]],
           [[0.8667781949043274, 1.0906718969345093, 0.3538607060909271],
            [0.7506518959999084, 1.0008691549301147, 1.2000000476837158],
            [0.6129047274589539, 0.90217125415802, 1.119005799293518],
            [0.4333890974521637, 0.7912566065788269, 1.0316723585128784]]],
 'gam_u': [[[0, 22, 90], [204, 7, 55], [149, 0, 29], [104, 224, 11]],
           [[66, 166, 1], [36, 117, 245], [16, 78, 185], [4, 45, 133]]],
 'grad_gam': [[[[0.0, 0.9435691237449646, 1.425447940826416],
                [1.788374423980713, 4.585691928863525, 0.0],
                [0.6386562585830688, 3.168022394180298, 2.689786672592163],
                [2.7672736644744873, 0.0, 1.0650101900100708]],
               [[1.5218687057495117, 1.8704525232315063, 5.550612926483154],
                [0.0, 0.6726507544517517, 1.1441551446914673],
                [2.9963836669921875, 2.9425878524780273, 0.0],
                [1.2499057054519653, 1.6409398317337036, 1.9649784564971924]]],
              [[[3.933835983276367, 0.0, 1.8294601440429688],
                [2.385167121887207, 2.3555450439453125, 2.2883102893829346],
                [0.0, 0.9264041185379028, 1.2969043254852295],
                [5.262050628662109, 4.464114665985107, 0.0]],
               [[1.8973666429519653, 2.734147787094116, 2.6241455078125],
                [2.4838168621063232, 0.0, 1.0464760065078735],
                [1.4216609001159668, 5.639050483703613, 5.105423927307129],
                [0.0, 0.5955694317817688, 3.1270899772644043]]]],
 'grad_std': [[[[-6.733902454376221, -3.1887805461883545, 0.3563418388366699],
                [3.9014639854431152, 6.683823585510254, -6.384303092956543],
                [-2.8391807079315186, -0.056821346282958984, 3.4883008003234863],
                [7.033422946929932, -6.034703254699707, -3.2523438930511475]],
               [[0.29277849197387695, 3.837900161743164, 6.620259761810303],
                [-6.447866439819336, -2.9027440547943115, 0.6423778533935547],
                [3.424736976623535, 6.969859600067139, -6.0982666015625],
                [-3.3159077167510986, 0.22921466827392578, 3.774336814880371]]],
              [[[6.6524577140808105, -6.788034915924072, -2.5845491886138916],
                [0.4099545478820801, 3.131462574005127, 5.579973220825195],
                [-5.882690906524658, -3.044184923171997, -0.47867536544799805],
                [3.819523811340332, 6.775027275085449, -6.587466239929199]],
               [[-2.573406457901001, 0.4990959167480469, 3.298603057861328],
                [5.825112819671631, -5.826977252960205, -2.9104726314544678],
                [-0.2669639587402344, 3.8418092727661133, 6.875311851501465],
                [-6.409183025360107, -3.9216721057891846, 0.5659523010253906]]]],
 'std_f': [[[-1.6613247394561768, -0.6500835418701172, 0.3611575961112976],
            [1.3723989725112915, -1.0834726095199585, -0.07223139703273773],
            [0.9390097260475159, -1.5168616771697998, -0.5056204795837402],
            [0.5056207776069641, 1.516861915588379, -0.9390096664428711]],
           [[0.07223159819841385, 1.083472728729248, -1.3723986148834229],
            [-0.36115747690200806, 0.6500837802886963, 1.6613248586654663],
            [-0.7945465445518494, 0.21669459342956543, 1.227935791015625],
            [-1.2279356718063354, -0.21669448912143707, 0.7945467829704285]]],
 'std_f4': [[[[-1.6613247394561768, -0.6500835418701172, 0.3611575961112976],
              [1.3723989725112915, -1.0834726095199585, -0.07223139703273773],
              [0.9390097260475159, -1.5168616771697998, -0.5056204795837402],
              [0.5056207776069641, 1.516861915588379, -0.9390096664428711]],
             [[0.07223159819841385, 1.083472728729248, -1.3723986148834229],
              [-0.36115747690200806, 0.6500837802886963, 1.6613248586654663],
              [-0.7945465445518494, 0.21669459342956543, 1.227935791015625],
              [-1.2279356718063354, -0.21669448912143707, 0.7945467829704285]]],
            [[[-0.21939308941364288, 1.0969644784927368, -1.0686558485031128],
              [-0.6015613675117493, 0.4600173234939575, 2.116079807281494],
              [-0.8745387196540833, -0.06773903220891953, 1.3335447311401367],
              [-1.0383251905441284, -0.48630425333976746, 0.6602007150650024]],
             [[-1.0929205417633057, -0.7956786155700684, 0.09604737907648087],
              [1.582257628440857, -0.9958619475364685, -0.3589147627353668],
              [0.8725163340568542, -1.0868544578552246, -0.7046861052513123],
              [0.2719663083553314, 1.8431025743484497, -0.9412664771080017]]]],
 'std_u': [[[-1.6538316011428833, -0.6446014642715454, 0.36462870240211487],
            [1.3738588094711304, -1.0828198194503784, -0.07358966767787933],
            [0.9356405138969421, -1.5210381746292114, -0.5118080377578735],
            [0.5107014775276184, 1.519931674003601, -0.9367470145225525]],
           [[0.0724831223487854, 1.081713318824768, -1.3749654293060303],
            [-0.3657352328300476, 0.6434949040412903, 1.6660044193267822],
            [-0.7906742691993713, 0.21855591237545013, 1.2277860641479492],
            [-1.2288925647735596, -0.21966244280338287, 0.7895677089691162]]]}


def run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


@pytest.mark.parametrize("key, fn, image", [
    ("std_f", tf.image.per_image_standardization, F),
    ("std_u", tf.image.per_image_standardization, U),
    ("std_f4", tf.image.per_image_standardization, F4),
    ("bri_f", lambda x: tf.image.adjust_brightness(x, 0.3), F),
    ("bri_u", lambda x: tf.image.adjust_brightness(x, -0.2), U),
    ("con_f4", lambda x: tf.image.adjust_contrast(x, 1.7), F4),
    ("con_u", lambda x: tf.image.adjust_contrast(x, 0.3), U),
    ("gam_f", lambda x: tf.image.adjust_gamma(x, 0.5, 1.2), F),
    ("gam_u", lambda x: tf.image.adjust_gamma(x, 2.0), U),
])
def test_values_equal_tensorflow(key, fn, image):
    out = fn(tf.constant(image))
    expected = np.array(EXPECTED[key])
    assert out.shape.as_list() == list(image.shape)
    if image.dtype == np.uint8 and not key.startswith("std"):
        assert out.dtype == tf.uint8
        np.testing.assert_array_equal(run(out), expected)
    else:
        assert out.dtype == tf.float32
        np.testing.assert_allclose(run(out), expected, rtol=1e-6, atol=3e-7)


def test_gradients_equal_tensorflow():
    x = tf.constant(F4)
    std = tf.image.per_image_standardization(x)
    gam = tf.image.adjust_gamma(x + 0.1, 0.5, 1.2)
    grads = tf.gradients(tf.reduce_sum(std * W), [x]) + tf.gradients(tf.reduce_sum(gam * W), [x])
    g_std, g_gam = run(grads)
    np.testing.assert_allclose(g_std, EXPECTED["grad_std"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_gam, EXPECTED["grad_gam"], rtol=1e-6, atol=1e-6)


def test_adjust_contrast_differentiates_its_definition():
    # TF registers no gradient for AdjustContrastv2; ours is that of the composition:
    # d/dx [(x - mean) * f + mean] summed = 1 per pixel, for any f.
    x = tf.constant(F4)
    (g,) = tf.gradients(tf.reduce_sum(tf.image.adjust_contrast(x, 1.7)), [x])
    np.testing.assert_allclose(run(g), np.ones_like(F4), rtol=1e-6)


def test_float16_stays_float16():
    h = tf.constant(F.astype(np.float16))
    out = tf.image.adjust_brightness(h, 0.25)
    assert out.dtype == tf.float16
    np.testing.assert_array_equal(run(out), F.astype(np.float16) + np.float16(0.25))


def test_constant_image_standardizes_to_zero():
    np.testing.assert_array_equal(run(tf.image.per_image_standardization(tf.ones([2, 2, 1]))),
                                  np.zeros([2, 2, 1], np.float32))


@pytest.mark.parametrize("fn, error, message", [
    (lambda: tf.image.per_image_standardization(tf.zeros([3, 3])), ValueError,
     r"'image' \(shape \(3, 3\)\) must be at least three-dimensional."),
    (lambda: tf.image.per_image_standardization(tf.zeros([0, 3, 3])), ValueError,
     r"inner 3 dims of 'image.shape' must be > 0: \(0, 3, 3\)"),
    (lambda: tf.image.adjust_contrast(tf.zeros([3, 3]), 1.0), ValueError,
     "Shape must be at least rank 3 but is rank 2"),
    (lambda: tf.image.adjust_contrast(tf.zeros([3, 3, 3]), [1.0, 2.0]), ValueError,
     "Shape must be rank 0 but is rank 1"),
    (lambda: tf.image.adjust_gamma(tf.zeros([3, 3, 3]), -1.0), ValueError,
     "Gamma should be a non-negative real number."),
    (lambda: tf.image.random_brightness(tf.zeros([3, 3, 3]), -0.1), ValueError,
     "max_delta must be non-negative."),
    (lambda: tf.image.random_contrast(tf.zeros([3, 3, 3]), 0.5, 0.5), ValueError,
     "upper must be > lower."),
    (lambda: tf.image.random_contrast(tf.zeros([3, 3, 3]), -0.5, 0.5), ValueError,
     "lower must be non-negative."),
    (lambda: tf.image.adjust_brightness(tf.constant(["a"]), 0.1), AttributeError,
     "image dtype must be either floating point or integer"),
])
def test_bad_arguments_raise_while_building(fn, error, message):
    with pytest.raises(error, match=message):
        fn()


def test_bad_dynamic_arguments_fail_at_run_time():
    p = tf.placeholder(tf.float32, [None, None, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="inner 3 dims"):
        run(tf.image.per_image_standardization(p), {p: np.zeros([0, 4, 3])})
    gamma = tf.placeholder(tf.float32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Gamma should be"):
        run(tf.image.adjust_gamma(tf.zeros([2, 2, 3]), gamma), {gamma: -1.0})


def _draws(build, n=20):
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        out = build()
        with tf.Session() as sess:
            return out, [sess.run(out) for _ in range(n)]


def test_random_brightness_is_seeded_and_within_delta():
    out, first = _draws(lambda: tf.image.random_brightness(tf.constant(F), 0.2, seed=3))
    assert out.shape.as_list() == [2, 4, 3] and out.dtype == tf.float32
    _, second = _draws(lambda: tf.image.random_brightness(tf.constant(F), 0.2, seed=3))
    np.testing.assert_array_equal(first, second)
    deltas = np.array([d - F for d in first])
    # One delta per image, uniform in [-0.2, 0.2), and not the same each step.
    np.testing.assert_allclose(deltas, deltas[:, :1, :1, :1] + 0 * deltas, atol=1e-6)
    assert np.all(np.abs(deltas) <= 0.2 + 1e-6)
    assert len(np.unique(np.round(deltas[:, 0, 0, 0], 6))) > 10


def test_random_contrast_is_seeded_and_within_range():
    def build():
        return tf.image.random_contrast(tf.constant(U), 0.2, 1.8, seed=5)
    out, first = _draws(build)
    assert out.shape.as_list() == [2, 4, 3] and out.dtype == tf.uint8
    np.testing.assert_array_equal(first, _draws(build)[1])
    mean = U.astype(np.float64).mean(axis=(0, 1))
    spread = np.abs(np.array(first, np.float64) - mean)
    # |x' - mean| = factor * |x - mean| (up to rounding) with the factor in [0.2, 1.8).
    assert np.all(spread <= 1.8 * np.abs(U - mean) + 1)
    assert np.all(spread >= 0.2 * np.abs(U - mean) - 1)


def test_random_crop_is_seeded_and_a_window_of_the_image():
    image = np.arange(32 * 32 * 3).reshape(32, 32, 3)
    out, crops = _draws(lambda: tf.image.random_crop(tf.constant(image), [24, 24, 3], seed=1))
    assert out.shape.as_list() == [24, 24, 3] and tf.image.random_crop is tf.random_crop
    np.testing.assert_array_equal(crops, _draws(
        lambda: tf.random_crop(tf.constant(image), [24, 24, 3], seed=1))[1])
    corners = set()
    for c in crops:
        y, x = divmod(int(c[0, 0, 0]) // 3, 32)
        np.testing.assert_array_equal(c, image[y:y + 24, x:x + 24])
        corners.add((y, x))
    assert len(corners) > 5


def test_cifar10_distorted_inputs_pipeline():
    """The CIFAR-10 tutorial's `distorted_inputs` on synthetic uint8 images."""
    images = np.random.RandomState(0).randint(0, 256, [16, 32, 32, 3]).astype(np.uint8)
    labels = np.arange(16, dtype=np.int32) % 10
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        image, label = tf.train.slice_input_producer([images, labels], shuffle=False)
        reshaped = tf.cast(image, tf.float32)
        distorted = tf.random_crop(reshaped, [24, 24, 3])
        distorted = tf.image.random_flip_left_right(distorted)
        distorted = tf.image.random_brightness(distorted, max_delta=63)
        distorted = tf.image.random_contrast(distorted, lower=0.2, upper=1.8)
        standardized = tf.image.per_image_standardization(distorted)
        standardized.set_shape([24, 24, 3])
        batch, batch_labels = tf.train.batch([standardized, label], batch_size=4,
                                             num_threads=1, capacity=20)
        assert batch.shape.as_list() == [4, 24, 24, 3] and batch.dtype == tf.float32
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord=coord)
            try:
                for _ in range(3):
                    x, y = sess.run([batch, batch_labels])
                    assert x.shape == (4, 24, 24, 3) and y.shape == (4,)
                    np.testing.assert_allclose(x.mean(axis=(1, 2, 3)), 0, atol=1e-4)
                    np.testing.assert_allclose(x.std(axis=(1, 2, 3)), 1, atol=1e-3)
            finally:
                coord.request_stop()
                coord.join(threads)
