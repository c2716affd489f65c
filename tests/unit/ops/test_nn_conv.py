"""Convolution and pooling: kernels against loop-based NumPy references, the backprop ops
as adjoints of the forward op, static shapes, dtypes and errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.kernels.nn_conv_kernels  # noqa: F401  (until kernels/__init__ imports it)
import tensorweave.kernels.nn_kernels  # noqa: F401
from tensorweave import errors, nn
from tensorweave.framework.op_def_library import apply_op


def _run(fetches, feed_dict=None):
    with tf.Session(graph=tf.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _geometry(size, k, s, d, padding):
    k_eff = (k - 1) * d + 1
    if padding == "SAME":
        out = -(-size // s)
        pad = max(0, (out - 1) * s + k_eff - size)
        return out, pad // 2, pad - pad // 2
    return (size - k_eff) // s + 1, 0, 0


def _pad(x, padding, kh, kw, s, d, value=0.0):
    oh, pt, pb = _geometry(x.shape[1], kh, s[0], d[0], padding)
    ow, pl, pr = _geometry(x.shape[2], kw, s[1], d[1], padding)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=value)
    return xp, oh, ow


def _conv_ref(x, f, s, padding, d=(1, 1)):
    kh, kw, _, o = f.shape
    xp, oh, ow = _pad(x, padding, kh, kw, s, d)
    out = np.zeros((x.shape[0], oh, ow, o))
    for i, j in itertools.product(range(oh), range(ow)):
        r, c = i * s[0], j * s[1]
        patch = xp[:, r : r + (kh - 1) * d[0] + 1 : d[0], c : c + (kw - 1) * d[1] + 1 : d[1]]
        out[:, i, j] = np.tensordot(patch, f, axes=([1, 2, 3], [0, 1, 2]))
    return out


def _pool_ref(x, k, s, padding, reduce):
    value = -np.inf if reduce is np.max else np.nan
    xp, oh, ow = _pad(x, padding, k[0], k[1], s, (1, 1), value)
    out = np.zeros((x.shape[0], oh, ow, x.shape[3]))
    for i, j in itertools.product(range(oh), range(ow)):
        window = xp[:, i * s[0] : i * s[0] + k[0], j * s[1] : j * s[1] + k[1]]
        out[:, i, j] = reduce(window, axis=(1, 2))
    return out


CONV_CONFIGS = [
    # input shape, filter shape, strides, padding, dilations
    ((2, 5, 5, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1)),
    ((2, 5, 5, 3), (3, 3, 3, 4), (1, 1), "VALID", (1, 1)),
    ((1, 7, 6, 2), (3, 2, 2, 3), (2, 2), "SAME", (1, 1)),
    ((1, 7, 6, 2), (3, 2, 2, 3), (2, 2), "VALID", (1, 1)),
    ((3, 6, 8, 1), (2, 4, 1, 2), (1, 3), "SAME", (1, 1)),
    ((1, 4, 4, 2), (1, 1, 2, 5), (1, 1), "VALID", (1, 1)),
    ((1, 8, 8, 1), (3, 3, 1, 2), (1, 1), "SAME", (2, 2)),
    ((1, 8, 7, 2), (2, 3, 2, 2), (1, 1), "VALID", (2, 1)),
    ((2, 3, 3, 2), (3, 3, 2, 2), (2, 2), "SAME", (1, 1)),
]


@pytest.mark.parametrize("x_shape,f_shape,strides,padding,dilations", CONV_CONFIGS)
def test_conv2d_matches_reference(x_shape, f_shape, strides, padding, dilations):
    rng = np.random.default_rng(0)
    x, f = rng.normal(size=x_shape), rng.normal(size=f_shape)
    y = nn.conv2d(x, f, [1, *strides, 1], padding, dilations=[1, *dilations, 1])
    expected = _conv_ref(x, f, strides, padding, dilations)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(_run(y), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("x_shape,f_shape,strides,padding,dilations", CONV_CONFIGS)
def test_conv2d_backprops_are_adjoints(x_shape, f_shape, strides, padding, dilations):
    """<conv(x, f), dy> = <x, backprop_input(dy)> = <f, backprop_filter(x, dy)>."""
    rng = np.random.default_rng(1)
    x, f = rng.normal(size=x_shape), rng.normal(size=f_shape)
    dy = rng.normal(size=_conv_ref(x, f, strides, padding, dilations).shape)
    kw = {"strides": [1, *strides, 1], "padding": padding, "dilations": [1, *dilations, 1]}
    y = nn.conv2d(x, f, **kw)
    dx = nn.conv2d_backprop_input(list(x_shape), f, dy, **kw)
    df = nn.conv2d_backprop_filter(x, list(f_shape), dy, **kw)
    assert dx.shape.as_list() == list(x_shape) and df.shape.as_list() == list(f_shape)
    y_v, dx_v, df_v = _run([y, dx, df])
    inner = float((y_v * dy).sum())
    np.testing.assert_allclose(float((x * dx_v).sum()), inner, rtol=1e-10)
    np.testing.assert_allclose(float((f * df_v).sum()), inner, rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_conv2d_dtypes(dtype):
    x = np.ones((1, 3, 3, 1), dtype)
    f = np.ones((2, 2, 1, 1), dtype)
    y, dx, df = _run(
        [
            nn.conv2d(x, f, 1, "VALID"),
            nn.conv2d_backprop_input([1, 3, 3, 1], f, np.ones((1, 2, 2, 1), dtype), 1, "VALID"),
            nn.conv2d_backprop_filter(x, [2, 2, 1, 1], np.ones((1, 2, 2, 1), dtype), 1, "VALID"),
        ]
    )
    assert y.dtype == dx.dtype == df.dtype == dtype
    np.testing.assert_array_equal(y, np.full((1, 2, 2, 1), 4))
    np.testing.assert_array_equal(dx[0, :, :, 0], [[1, 2, 1], [2, 4, 2], [1, 2, 1]])


def test_conv2d_strides_forms():
    x, f = np.ones((1, 5, 5, 1)), np.ones((1, 1, 1, 1))
    for strides in (2, [2], [2, 2], [1, 2, 2, 1]):
        assert nn.conv2d(x, f, strides, "VALID").shape.as_list() == [1, 3, 3, 1]
    with pytest.raises(ValueError, match="strides should be of length 1, 2 or 4 but was 3"):
        nn.conv2d(x, f, [1, 2, 2], "VALID")


def test_conv2d_static_errors():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        nn.conv2d(np.ones((1, 4, 4, 3)), np.ones((2, 2, 2, 1)), 1, "SAME")
    with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 5 from 4"):
        nn.conv2d(np.ones((1, 4, 4, 1)), np.ones((5, 1, 1, 1)), 1, "VALID")
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        nn.conv2d(np.ones((4, 4, 1)), np.ones((1, 1, 1, 1)), 1, "VALID")
    with pytest.raises(ValueError, match="padding"):
        nn.conv2d(np.ones((1, 4, 4, 1)), np.ones((1, 1, 1, 1)), 1, "FULL")
    y = nn.conv2d(tf.placeholder(tf.float32, [None, 2, None, 3]), np.ones((3, 3, 3, 4)), 1, "SAME")
    assert y.shape.as_list() == [None, 2, None, 4]


def test_conv2d_runtime_errors():
    x = tf.placeholder(tf.float32)
    y = nn.conv2d(x, np.ones((2, 2, 3, 1), np.float32), 1, "VALID")
    with pytest.raises(errors.InvalidArgumentError, match="evenly divisible by filter depth"):
        _run(y, {x: np.ones((1, 3, 3, 2), np.float32)})
    with pytest.raises(errors.InvalidArgumentError, match="Computed output size would be negative"):
        _run(y, {x: np.ones((1, 0, 3, 3), np.float32)})
    nchw = nn.conv2d(np.ones((1, 1, 3, 3), np.float32), np.ones((1, 1, 1, 1), np.float32), 1,
                     "VALID", data_format="NCHW")  # fmt: skip
    assert nchw.shape.as_list() == [1, 1, 3, 3]
    with pytest.raises(errors.InvalidArgumentError, match="only supports NHWC"):
        _run(nchw)
    batch_stride = nn.conv2d(np.ones((2, 3, 3, 1)), np.ones((1, 1, 1, 1)), [2, 1, 1, 1], "VALID")
    with pytest.raises(errors.InvalidArgumentError, match="batch and depth dimensions"):
        _run(batch_stride)


def test_conv2d_backprop_input_checks_out_backprop():
    dy = tf.placeholder(tf.float64)
    dx = nn.conv2d_backprop_input([1, 4, 4, 1], np.ones((2, 2, 1, 1)), dy, 1, "VALID")
    assert dx.shape.as_list() == [1, 4, 4, 1]
    with pytest.raises(errors.InvalidArgumentError, match="Size of out_backprop doesn't match"):
        _run(dx, {dy: np.ones((1, 4, 4, 1))})


# ---------------------------------------------------------------------- pooling
POOL_CONFIGS = [
    ((2, 4, 4, 3), (2, 2), (2, 2), "VALID"),
    ((2, 5, 5, 3), (2, 2), (2, 2), "SAME"),
    ((1, 5, 6, 2), (3, 3), (1, 1), "SAME"),
    ((1, 5, 6, 2), (3, 2), (2, 1), "VALID"),
    ((1, 7, 7, 1), (3, 3), (2, 2), "SAME"),
    ((3, 3, 3, 1), (1, 1), (1, 1), "VALID"),
]


@pytest.mark.parametrize("shape,ksize,strides,padding", POOL_CONFIGS)
def test_pools_match_reference(shape, ksize, strides, padding):
    x = np.random.default_rng(2).normal(size=shape)
    mx = nn.max_pool(x, [1, *ksize, 1], [1, *strides, 1], padding)
    av = nn.avg_pool(x, ksize, strides, padding)
    expected_max = _pool_ref(x, ksize, strides, padding, np.max)
    expected_avg = _pool_ref(x, ksize, strides, padding, np.nanmean)
    assert mx.shape.as_list() == av.shape.as_list() == list(expected_max.shape)
    got_max, got_avg = _run([mx, av])
    np.testing.assert_allclose(got_max, expected_max)
    np.testing.assert_allclose(got_avg, expected_avg, rtol=1e-12)


def _max_pool_grad_ref(x, grad, k, s, padding):
    xp, oh, ow = _pad(x, padding, k[0], k[1], s, (1, 1), -np.inf)
    dxp = np.zeros_like(xp)
    for b, i, j, c in itertools.product(*(range(n) for n in (x.shape[0], oh, ow, x.shape[3]))):
        window = xp[b, i * s[0] : i * s[0] + k[0], j * s[1] : j * s[1] + k[1], c]
        r, q = np.unravel_index(np.argmax(window), window.shape)
        dxp[b, i * s[0] + r, j * s[1] + q, c] += grad[b, i, j, c]
    _, pt, _ = _geometry(x.shape[1], k[0], s[0], 1, padding)
    _, pl, _ = _geometry(x.shape[2], k[1], s[1], 1, padding)
    return dxp[:, pt : pt + x.shape[1], pl : pl + x.shape[2]]


@pytest.mark.parametrize("shape,ksize,strides,padding", POOL_CONFIGS)
def test_max_pool_grad_and_grad_grad(shape, ksize, strides, padding):
    rng = np.random.default_rng(3)
    x = tf.constant(rng.normal(size=shape))
    y = nn.max_pool(x, ksize, strides, padding)
    grad = rng.normal(size=y.shape.as_list())
    attrs = {"ksize": [1, *ksize, 1], "strides": [1, *strides, 1], "padding": padding}
    dx = apply_op("MaxPoolGrad", orig_input=x, orig_output=y, grad=grad, **attrs)
    ggx = rng.normal(size=shape)
    gg = apply_op("MaxPoolGradGrad", orig_input=x, orig_output=y, grad=ggx, **attrs)
    assert dx.shape.as_list() == list(shape) and gg.shape.as_list() == y.shape.as_list()
    dx_v, gg_v = _run([dx, gg])
    x_v = _run(x)
    np.testing.assert_allclose(dx_v, _max_pool_grad_ref(x_v, grad, ksize, strides, padding))
    # MaxPoolGradGrad is the adjoint of MaxPoolGrad in its gradient argument.
    np.testing.assert_allclose((dx_v * ggx).sum(), (gg_v * grad).sum(), rtol=1e-10)


def test_max_pool_grad_routes_ties_to_the_first_maximum():
    x = tf.constant(np.ones((1, 2, 2, 1)))
    y = nn.max_pool(x, 2, 2, "VALID")
    dx = apply_op("MaxPoolGrad", orig_input=x, orig_output=y, grad=np.full((1, 1, 1, 1), 3.0),
                  ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")  # fmt: skip
    np.testing.assert_array_equal(_run(dx)[0, :, :, 0], [[3, 0], [0, 0]])


@pytest.mark.parametrize("shape,ksize,strides,padding", POOL_CONFIGS)
def test_avg_pool_grad_is_the_adjoint(shape, ksize, strides, padding):
    rng = np.random.default_rng(4)
    x = rng.normal(size=shape)
    y = nn.avg_pool(x, ksize, strides, padding)
    dy = rng.normal(size=y.shape.as_list())
    dx = apply_op("AvgPoolGrad", orig_input_shape=list(shape), grad=dy, ksize=[1, *ksize, 1],
                  strides=[1, *strides, 1], padding=padding)  # fmt: skip
    y_v, dx_v = _run([y, dx])
    np.testing.assert_allclose((x * dx_v).sum(), (y_v * dy).sum(), rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.uint8])
def test_max_pool_dtypes(dtype):
    x = np.arange(16).reshape(1, 4, 4, 1).astype(dtype)
    out = _run(nn.max_pool(x, 2, 2, "SAME"))
    assert out.dtype == dtype
    np.testing.assert_array_equal(out[0, :, :, 0], [[5, 7], [13, 15]])


def test_avg_pool_same_counts_only_real_entries():
    x = np.ones((1, 3, 3, 1), np.float32)
    out = _run(nn.avg_pool(x, 2, 2, "SAME"))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.ones((1, 2, 2, 1)))


def test_pool_errors():
    with pytest.raises(ValueError, match="ksize should be of length 1, 2 or 4 but was 3"):
        nn.max_pool(np.ones((1, 2, 2, 1)), [1, 2, 2], 1, "VALID")
    with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 3 from 2"):
        nn.avg_pool(np.ones((1, 2, 2, 1)), 3, 1, "VALID")
    batch = nn.max_pool(np.ones((2, 2, 2, 1)), [2, 1, 1, 1], 1, "VALID")
    with pytest.raises(errors.InvalidArgumentError, match="not yet supported on the batch"):
        _run(batch)
    nchw = nn.max_pool(np.ones((1, 1, 4, 4)), 2, 2, "VALID", data_format="NCHW")
    assert nchw.shape.as_list() == [1, 1, 2, 2]
    with pytest.raises(errors.InvalidArgumentError, match="only supports NHWC on device type CPU"):
        _run(nchw)


def test_pool_names():
    x = np.ones((1, 2, 2, 1))
    assert nn.max_pool(x, 2, 2, "VALID").op.name == "MaxPool"
    assert nn.avg_pool(x, 2, 2, "VALID", name="pool").op.name == "pool"
