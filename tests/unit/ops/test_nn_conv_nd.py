"""3-D/1-D/transposed/depthwise/separable/atrous convolutions and 1-D/3-D pooling and
max_pool_with_argmax against naive NumPy references (loops over output positions), with
TensorFlow's SAME padding; plus static shapes and bad input."""

import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors

RNG = np.random.RandomState(7)


def _pads(size, k, s, d, padding):
    k_eff = (k - 1) * d + 1
    if padding == "VALID":
        return (size - k_eff) // s + 1, 0
    out = -(-size // s)
    return out, max(0, (out - 1) * s + k_eff - size) // 2


def _windows(x, ks, strides, dilations, padding):
    """Yields (out_index, {tap: value index or None}) over a channels-last input."""
    sizes = x.shape[1:-1]
    geo = [_pads(n, k, s, d, padding) for n, k, s, d in zip(sizes, ks, strides, dilations)]
    for out in itertools.product(*(range(o) for o, _ in geo)):
        taps = {}
        for tap in itertools.product(*(range(k) for k in ks)):
            pos = [
                o * s - p + t * d for o, (_, p), t, s, d in zip(out, geo, tap, strides, dilations)
            ]
            ok = all(0 <= q < n for q, n in zip(pos, sizes))
            taps[tap] = tuple(pos) if ok else None
        yield out, taps, [o for o, _ in geo]


def _ref_conv(x, f, strides, padding, dilations=None):
    d = x.ndim - 2
    dilations = dilations or [1] * d
    out = None
    for o, taps, outs in _windows(x, f.shape[:d], strides, dilations, padding):
        if out is None:
            out = np.zeros((x.shape[0], *outs, f.shape[-1]))
        for tap, pos in taps.items():
            if pos is not None:
                out[(slice(None), *o)] += x[(slice(None), *pos)] @ f[tap]
    return out


def _ref_depthwise(x, f, strides, padding, dilations=(1, 1)):
    out = None
    for o, taps, outs in _windows(x, f.shape[:2], strides, dilations, padding):
        if out is None:
            out = np.zeros((x.shape[0], *outs, x.shape[-1], f.shape[-1]))
        for tap, pos in taps.items():
            if pos is not None:
                out[(slice(None), *o)] += x[(slice(None), *pos)][..., None] * f[tap]
    return out.reshape(*out.shape[:-2], -1)


def _ref_pool(x, ks, strides, padding, kind):
    out = None
    for o, taps, outs in _windows(x, ks, strides, [1] * len(ks), padding):
        if out is None:
            out = np.zeros((x.shape[0], *outs, x.shape[-1]))
        vals = np.stack([x[(slice(None), *p)] for p in taps.values() if p is not None])
        out[(slice(None), *o)] = vals.max(0) if kind == "max" else vals.mean(0)
    return out


def _run(t):
    with tf.Session() as s:
        return s.run(t)


@pytest.mark.parametrize(
    "strides,padding,dilations",
    [
        ([1, 1, 1], "SAME", None),
        ([2, 1, 2], "VALID", None),
        ([1, 2, 1], "SAME", None),
        ([1, 1, 1], "SAME", [2, 1, 2]),
    ],
)
def test_conv3d(strides, padding, dilations):
    x, f = RNG.randn(2, 5, 4, 6, 3), RNG.randn(2, 3, 2, 3, 4)
    with tf.Graph().as_default():
        y = tf.nn.conv3d(
            x, f, [1, *strides, 1], padding, dilations=[1, *(dilations or [1, 1, 1]), 1]
        )
        want = _ref_conv(x, f, strides, padding, dilations)
        assert y.shape.as_list() == list(want.shape)
        np.testing.assert_allclose(_run(y), want, rtol=1e-10, atol=1e-10)


def test_conv3d_transpose_is_the_input_gradient():
    x, f = RNG.randn(1, 4, 3, 5, 2), RNG.randn(2, 2, 3, 2, 3)
    dy = RNG.randn(1, 4, 2, 5, 3)
    with tf.Graph().as_default():
        xt = tf.constant(x)
        y = tf.nn.conv3d(xt, f, [1, 1, 2, 1, 1], "SAME")
        grad = tf.gradients(y, xt, grad_ys=dy)[0]
        t = tf.nn.conv3d_transpose(dy, f, [1, 4, 3, 5, 2], [1, 1, 2, 1, 1], "SAME")
        assert t.shape.as_list() == [1, 4, 3, 5, 2]
        g, tv = _run([grad, t])
    np.testing.assert_allclose(tv, g, rtol=1e-12)
    # <conv(x), dy> == <x, conv_transpose(dy)>
    with tf.Graph().as_default():
        yv = _run(tf.nn.conv3d(x, f, [1, 1, 2, 1, 1], "SAME"))
    np.testing.assert_allclose(np.sum(yv * dy), np.sum(x * tv), rtol=1e-10)


def test_conv2d_transpose_adjoint_and_shape():
    x, f = RNG.randn(2, 5, 4, 3), RNG.randn(3, 3, 2, 3)  # filter [h, w, out, in]
    with tf.Graph().as_default():
        t = tf.nn.conv2d_transpose(x, f, [2, 10, 8, 2], [1, 2, 2, 1], "SAME")
        assert t.shape.as_list() == [2, 10, 8, 2]
        tv = _run(t)
    z = RNG.randn(2, 10, 8, 2)
    zc = _ref_conv(z, f, [2, 2], "SAME")
    np.testing.assert_allclose(np.sum(zc * x), np.sum(z * tv), rtol=1e-10)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="input channels does not match"):
            tf.nn.conv2d_transpose(x, RNG.randn(3, 3, 2, 5), [2, 10, 8, 2], 2)


def test_conv1d_and_transpose():
    x, f = RNG.randn(2, 9, 3), RNG.randn(3, 3, 4)
    with tf.Graph().as_default():
        y = tf.nn.conv1d(x, f, 2, "SAME")
        yd = tf.nn.conv1d(x, f, 1, "VALID", dilations=2)
        assert y.op.type == "Squeeze" and y.shape.as_list() == [2, 5, 4]
        got, got_d = _run([y, yd])
    np.testing.assert_allclose(got, _ref_conv(x, f, [2], "SAME"), rtol=1e-10)
    np.testing.assert_allclose(got_d, _ref_conv(x, f, [1], "VALID", [2]), rtol=1e-10)
    ft = RNG.randn(3, 2, 3)
    with tf.Graph().as_default():
        t = _run(tf.nn.conv1d_transpose(x, ft, [2, 18, 2], 2, "SAME"))
    z = RNG.randn(2, 18, 2)
    np.testing.assert_allclose(np.sum(_ref_conv(z, ft, [2], "SAME") * x), np.sum(z * t), rtol=1e-10)


@pytest.mark.parametrize(
    "strides,padding,rate", [(1, "SAME", None), (2, "VALID", None), (1, "SAME", [2, 2])]
)
def test_depthwise_and_separable(strides, padding, rate):
    x, f, pw = RNG.randn(2, 7, 6, 3), RNG.randn(3, 2, 3, 2), RNG.randn(1, 1, 6, 4)
    with tf.Graph().as_default():
        y = tf.nn.depthwise_conv2d(x, f, [1, strides, strides, 1], padding, rate=rate)
        s = tf.nn.separable_conv2d(x, f, pw, [1, strides, strides, 1], padding, rate=rate)
        assert y.op.type == "DepthwiseConv2dNative"
        got, sep = _run([y, s])
    want = _ref_depthwise(x, f, [strides] * 2, padding, rate or [1, 1])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sep, want @ pw[0, 0], rtol=1e-10, atol=1e-12)


def test_depthwise_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="strides > 1 not supported"):
            tf.nn.depthwise_conv2d(
                np.zeros((1, 4, 4, 1)), np.zeros((2, 2, 1, 1)), [1, 2, 2, 1], "SAME", rate=[2, 2]
            )
        with pytest.raises(ValueError, match="Pointwise filter must be 1x1"):
            tf.nn.separable_conv2d(
                np.zeros((1, 4, 4, 1)),
                np.zeros((2, 2, 1, 1)),
                np.zeros((2, 1, 1, 1)),
                [1, 1, 1, 1],
                "SAME",
            )
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            tf.nn.depthwise_conv2d_native(
                np.zeros((1, 4, 4, 2)), np.zeros((2, 2, 3, 1)), [1, 1, 1, 1], "SAME"
            )


def test_atrous_and_convolution():
    x, f, ft = RNG.randn(2, 7, 6, 3), RNG.randn(3, 3, 3, 2), RNG.randn(3, 3, 4, 3)
    with tf.Graph().as_default():
        a = tf.nn.atrous_conv2d(x, f, 2, "SAME")
        c = tf.nn.convolution(x, f, "VALID", strides=[1, 2], dilation_rate=[1, 1])
        at = tf.nn.atrous_conv2d_transpose(x, ft, [2, 7, 6, 4], 2, "SAME")
        got_a, got_c, got_t = _run([a, c, at])
        with pytest.raises(ValueError, match="rate 0 cannot be less than one"):
            tf.nn.atrous_conv2d(x, f, 0, "SAME")
    np.testing.assert_allclose(got_a, _ref_conv(x, f, [1, 1], "SAME", [2, 2]), rtol=1e-10)
    np.testing.assert_allclose(got_c, _ref_conv(x, f, [1, 2], "VALID"), rtol=1e-10)
    z = RNG.randn(2, 7, 6, 4)
    np.testing.assert_allclose(
        np.sum(_ref_conv(z, ft, [1, 1], "SAME", [2, 2]) * x), np.sum(z * got_t), rtol=1e-10
    )


@pytest.mark.parametrize(
    "ks,strides,padding", [([2, 2, 2], [2, 2, 2], "VALID"), ([3, 2, 1], [1, 2, 1], "SAME")]
)
def test_pool3d(ks, strides, padding):
    x = RNG.randn(2, 5, 4, 3, 2)
    with tf.Graph().as_default():
        mx = tf.nn.max_pool3d(x.astype(np.float32), [1, *ks, 1], [1, *strides, 1], padding)
        av = tf.nn.avg_pool3d(x, [1, *ks, 1], [1, *strides, 1], padding)
        got_m, got_a = _run([mx, av])
    np.testing.assert_allclose(got_m, _ref_pool(x, ks, strides, padding, "max"), rtol=1e-6)
    np.testing.assert_allclose(got_a, _ref_pool(x, ks, strides, padding, "avg"), rtol=1e-12)


def test_pool1d_and_rank_dispatch():
    x = RNG.randn(2, 9, 3)
    with tf.Graph().as_default():
        got = _run(
            [
                tf.nn.max_pool1d(x, 3, 2, "SAME"),
                tf.nn.avg_pool1d(x, 2, 1, "VALID"),
                tf.nn.max_pool_v2(x, 2, 2, "VALID"),
                tf.nn.avg_pool_v2(x, 2, 2, "VALID"),
                tf.nn.pool(x, [2], "MAX", "SAME", strides=[2]),
            ]
        )
        with pytest.raises(ValueError, match="Invalid pooling_type"):
            tf.nn.pool(x, [2], "MIN", "SAME")
    np.testing.assert_allclose(got[0], _ref_pool(x, [3], [2], "SAME", "max"))
    np.testing.assert_allclose(got[1], _ref_pool(x, [2], [1], "VALID", "avg"))
    np.testing.assert_allclose(got[2], _ref_pool(x, [2], [2], "VALID", "max"))
    np.testing.assert_allclose(got[3], _ref_pool(x, [2], [2], "VALID", "avg"))
    np.testing.assert_allclose(got[4], _ref_pool(x, [2], [2], "SAME", "max"))
    x4 = RNG.randn(1, 4, 4, 2)
    with tf.Graph().as_default():
        a, b = _run([tf.nn.max_pool2d(x4, 2, 2, "VALID"), tf.nn.avg_pool2d(x4, 2, 2, "VALID")])
    np.testing.assert_allclose(a, _ref_pool(x4, [2, 2], [2, 2], "VALID", "max"))
    np.testing.assert_allclose(b, _ref_pool(x4, [2, 2], [2, 2], "VALID", "avg"))


@pytest.mark.parametrize("include_batch", [False, True])
def test_max_pool_with_argmax(include_batch):
    x = RNG.randn(2, 5, 4, 3)
    with tf.Graph().as_default():
        y, arg = tf.nn.max_pool_with_argmax(
            x, [1, 3, 2, 1], [1, 2, 2, 1], "SAME", include_batch_in_index=include_batch
        )
        assert arg.dtype == tf.int64
        yv, av = _run([y, arg])
    np.testing.assert_allclose(yv, _ref_pool(x, [3, 2], [2, 2], "SAME", "max"))
    flat = x.reshape(-1) if include_batch else x.reshape(2, -1)
    for b in range(2):
        picked = flat[av[b]] if include_batch else flat[b][av[b]]
        np.testing.assert_array_equal(picked, yv[b])


def test_kernel_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, 3, 3, 3, None])
        y = tf.nn.conv3d(x, np.ones((2, 2, 2, 2, 1)), [1, 1, 1, 1, 1], "VALID")
        with tf.Session() as s, pytest.raises(errors.InvalidArgumentError, match="depth"):
            s.run(y, {x: np.ones((1, 3, 3, 3, 3))})
        with pytest.raises(ValueError, match="Negative dimension size"):
            tf.nn.avg_pool3d(np.ones((1, 2, 2, 2, 1)), 3, 1, "VALID")


def test_backprop_names_equal_the_gradients():
    x, f = RNG.randn(1, 5, 4, 3), RNG.randn(2, 3, 3, 2)
    x5, f5 = RNG.randn(1, 3, 4, 3, 2), RNG.randn(2, 2, 2, 2, 3)
    with tf.Graph().as_default():
        xt, ft = tf.constant(x), tf.constant(f)
        y = tf.nn.depthwise_conv2d_native(xt, ft, [1, 1, 1, 1], "SAME")
        dy = tf.constant(RNG.randn(1, 5, 4, 6))
        gx, gf = tf.gradients(y, [xt, ft], grad_ys=dy)
        x5t, f5t = tf.constant(x5), tf.constant(f5)
        y5 = tf.nn.conv3d(x5t, f5t, [1, 1, 2, 1, 1], "SAME")
        dy5 = tf.constant(RNG.randn(1, 3, 2, 3, 3))
        (gf5,) = tf.gradients(y5, [f5t], grad_ys=dy5)
        names = [
            tf.nn.depthwise_conv2d_native_backprop_input(
                [1, 5, 4, 3], ft, dy, [1, 1, 1, 1], "SAME"
            ),
            tf.nn.depthwise_conv2d_backprop_input([1, 5, 4, 3], ft, dy, [1, 1, 1, 1], "SAME"),
            tf.nn.depthwise_conv2d_native_backprop_filter(
                xt, [2, 3, 3, 2], dy, [1, 1, 1, 1], "SAME"
            ),
            tf.nn.depthwise_conv2d_backprop_filter(xt, [2, 3, 3, 2], dy, [1, 1, 1, 1], "SAME"),
            tf.nn.conv3d_backprop_filter_v2(x5t, [2, 2, 2, 2, 3], dy5, [1, 1, 2, 1, 1], "SAME"),
            tf.nn.conv3d_backprop_filter(x5t, [2, 2, 2, 2, 3], dy5, [1, 1, 2, 1, 1], "SAME"),
        ]
        t1 = tf.nn.conv_transpose(
            tf.constant(RNG.randn(2, 5, 3)), RNG.randn(3, 2, 3), [2, 10, 2], 2
        )
        t2 = tf.nn.conv_transpose(tf.constant(x), RNG.randn(3, 3, 2, 3), [1, 10, 8, 2], 2)
        assert t1.shape.as_list() == [2, 10, 2] and t2.shape.as_list() == [1, 10, 8, 2]
        with pytest.raises(ValueError, match="length 3, 4 or 5"):
            tf.nn.conv_transpose(tf.constant(x), f, [1, 2], 1)
        got = _run([gx, gf, gf5, *names])
    gx_, gf_, gf5_, *named = got
    for value, want in zip(named, [gx_, gx_, gf_, gf_, gf5_, gf5_]):
        np.testing.assert_allclose(value, want, rtol=1e-12)
