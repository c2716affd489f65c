"""NN ops: activations, softmax, bias, cross-entropy, L2 loss and top-k kernels against
NumPy references, their dtypes, static shapes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.kernels.nn_conv_kernels  # noqa: F401  (until kernels/__init__ imports it)
import tensorweave.kernels.nn_kernels  # noqa: F401
from tensorweave import errors, nn
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import nn_ops

FLOATS = [np.float16, np.float32, np.float64]


def _run(fetches, feed_dict=None):
    with tf.Session(graph=tf.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _softmax_ref(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


ACTIVATIONS = [
    (nn.relu, lambda x: np.maximum(x, 0)),
    (nn.relu6, lambda x: np.clip(x, 0, 6)),
    (nn.elu, lambda x: np.where(x < 0, np.expm1(x), x)),
    (nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x)),
    (lambda x: nn.leaky_relu(x, alpha=0.5), lambda x: np.where(x > 0, x, 0.5 * x)),
    (nn.softplus, lambda x: np.log1p(np.exp(x))),
    (nn.softsign, lambda x: x / (1 + np.abs(x))),
    (nn.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    (nn.tanh, np.tanh),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(), (5,), (2, 3, 4), (0, 3)])
@pytest.mark.parametrize("fn,ref", ACTIVATIONS)
def test_activations_match_numpy(fn, ref, shape, dtype):
    x = np.random.default_rng(0).uniform(-8, 8, shape).astype(dtype)
    y = fn(tf.constant(x))
    out = _run(y)
    assert out.dtype == dtype
    assert y.shape.as_list() == list(shape)
    tol = 2e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(out, ref(x.astype(np.float64)), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.uint8])
def test_relu_and_relu6_on_integers(dtype):
    x = np.array([0, 3, 7, 100] if dtype == np.uint8 else [-3, 0, 3, 7], dtype=dtype)
    r, r6 = _run([nn.relu(x), nn.relu6(x)])
    assert r.dtype == dtype and r6.dtype == dtype
    np.testing.assert_array_equal(r, np.maximum(x, 0))
    np.testing.assert_array_equal(r6, np.clip(x, 0, 6))


def test_softplus_is_stable_for_large_inputs():
    x = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0])
    out = _run(nn.softplus(x))
    np.testing.assert_allclose(out, [0.0, np.log1p(np.exp(-30.0)), np.log(2), 30.0, 1000.0])


def test_leaky_relu_casts_integers_to_float32():
    y = nn.leaky_relu(tf.constant([-2, 3]))
    assert y.dtype == tf.float32
    np.testing.assert_allclose(_run(y), [-0.4, 3.0])


@pytest.mark.parametrize(
    "op_type,second,ref",
    [
        ("ReluGrad", "features", lambda g, x: g * (x > 0)),
        ("Relu6Grad", "features", lambda g, x: g * ((x > 0) & (x < 6))),
        ("EluGrad", "outputs", lambda g, y: np.where(y < 0, g * (y + 1), g)),
        ("LeakyReluGrad", "features", lambda g, x: np.where(x > 0, g, 0.2 * g)),
        ("SoftplusGrad", "features", lambda g, x: g / (1 + np.exp(-x))),
        ("SoftsignGrad", "features", lambda g, x: g / (1 + np.abs(x)) ** 2),
    ],
)
def test_activation_grad_kernels(op_type, second, ref):
    rng = np.random.default_rng(1)
    g = rng.normal(size=(3, 4)).astype(np.float32)
    x = rng.uniform(-8, 8, (3, 4)).astype(np.float32)
    out = _run(apply_op(op_type, gradients=g, **{second: x}))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ref(g, x), rtol=1e-5, atol=1e-6)


def test_activation_grad_shape_mismatch():
    with pytest.raises(ValueError, match="Dimension 1 in both shapes must be equal"):
        apply_op("ReluGrad", gradients=np.ones((2, 3)), features=np.ones((2, 4)))
    g = tf.placeholder(tf.float32)
    y = apply_op("ReluGrad", gradients=g, features=np.ones((2, 4), np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="must have the same shape"):
        _run(y, {g: np.ones((2, 3), np.float32)})


# --------------------------------------------------------------------- softmax
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (2, 0)])
def test_softmax_and_log_softmax(shape, dtype):
    x = np.random.default_rng(2).normal(size=shape).astype(dtype) * 5
    s, ls = _run([nn.softmax(x), nn.log_softmax(x)])
    assert s.dtype == dtype and ls.dtype == dtype
    if not x.size:
        assert s.shape == ls.shape == shape
        return
    tol = 3e-3 if dtype == np.float16 else 1e-6
    ref = _softmax_ref(x.astype(np.float64))
    np.testing.assert_allclose(s, ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(ls, np.log(ref), rtol=tol, atol=tol)


def test_softmax_is_stable_for_huge_logits():
    out = _run(nn.softmax(np.array([[1000.0, 1000.0, -1000.0]], np.float32)))
    np.testing.assert_allclose(out, [[0.5, 0.5, 0.0]])


@pytest.mark.parametrize("axis", [0, 1, -3, 2])
def test_softmax_axis(axis):
    x = np.random.default_rng(3).normal(size=(2, 3, 4))
    y = nn.softmax(x, axis=axis)
    assert y.shape.as_list() == [2, 3, 4]
    np.testing.assert_allclose(_run(y), _softmax_ref(x, axis), rtol=1e-12)
    np.testing.assert_allclose(_run(nn.log_softmax(x, dim=axis)), np.log(_softmax_ref(x, axis)))


def test_softmax_errors():
    with pytest.raises(ValueError, match=r"Dimension \(3\) must be in the range \[-3, 3\)"):
        nn.softmax(np.ones((2, 3, 4)), axis=3)
    with pytest.raises(ValueError, match="Cannot specify both 'axis' and 'dim'"):
        nn.softmax(np.ones((2, 3)), axis=1, dim=1)
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        nn.softmax(1.0)


def test_softmax_op_names():
    assert nn.softmax(np.ones((2, 3)), name="probs").op.name == "probs"
    assert nn.log_softmax(np.ones((2, 3))).op.type == "LogSoftmax"


# ------------------------------------------------------------------------ bias
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64])
def test_bias_add_nhwc(dtype):
    v = np.arange(24).reshape(2, 3, 4).astype(dtype)
    b = np.array([1, 2, 3, 4], dtype=dtype)
    y = nn.bias_add(v, b)
    out = _run(y)
    assert out.dtype == dtype and y.shape.as_list() == [2, 3, 4]
    np.testing.assert_array_equal(out, v + b)


def test_bias_add_nchw():
    v = np.arange(48, dtype=np.float32).reshape(2, 3, 2, 4)
    b = np.array([10, 20, 30], np.float32)
    y = nn.bias_add(v, b, data_format="NCHW")
    assert y.shape.as_list() == [2, 3, 2, 4]
    np.testing.assert_array_equal(_run(y), v + b.reshape(1, 3, 1, 1))
    # Rank 2 NCHW: the channel is the last dimension.
    np.testing.assert_array_equal(_run(nn.bias_add(v[:, :, 0, 0], b, "NCHW")), v[:, :, 0, 0] + b)


def test_bias_add_grad_kernel():
    g = np.random.default_rng(4).normal(size=(2, 3, 4, 5))
    nhwc, nchw = _run([nn_ops.bias_add_grad(g), nn_ops.bias_add_grad(g, "NCHW")])
    np.testing.assert_allclose(nhwc, g.sum(axis=(0, 1, 2)))
    np.testing.assert_allclose(nchw, g.sum(axis=(0, 2, 3)))
    ints = _run(nn_ops.bias_add_grad(np.ones((3, 2), np.int32)))
    assert ints.dtype == np.int32
    np.testing.assert_array_equal(ints, [3, 3])


def test_bias_add_errors():
    with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
        nn.bias_add(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        nn.bias_add(np.ones((2, 3)), np.ones((1, 3)))
    with pytest.raises(
        ValueError, match="Dimension 0 in both shapes must be equal, but are 3 and 4"
    ):
        nn.bias_add(np.ones((2, 3)), np.ones(4))
    v = tf.placeholder(tf.float64)
    y = nn.bias_add(v, np.ones(4))
    with pytest.raises(errors.InvalidArgumentError, match=r"Must provide as many biases"):
        _run(y, {v: np.ones((2, 3))})
    with pytest.raises(
        errors.InvalidArgumentError, match=r"Input tensor must be at least 2D: \[4\]"
    ):
        _run(y, {v: np.ones(4)})


# ---------------------------------------------------------------- cross-entropy
def _xent_ref(logits, labels):
    log_p = np.log(_softmax_ref(logits))
    return -(labels * log_p).sum(-1), _softmax_ref(logits) - labels


@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_cross_entropy_op(dtype):
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(4, 5)).astype(dtype)
    labels = _softmax_ref(rng.normal(size=(4, 5))).astype(dtype)
    loss, backprop = apply_op("SoftmaxCrossEntropyWithLogits", features=logits, labels=labels)
    assert loss.shape.as_list() == [4] and backprop.shape.as_list() == [4, 5]
    out_loss, out_bp = _run([loss, backprop])
    assert out_loss.dtype == dtype and out_bp.dtype == dtype
    ref_loss, ref_bp = _xent_ref(logits.astype(np.float64), labels.astype(np.float64))
    tol = 5e-3 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(out_loss, ref_loss, rtol=tol, atol=tol)
    np.testing.assert_allclose(out_bp, ref_bp, rtol=tol, atol=tol)


def test_softmax_cross_entropy_op_broadcasts_labels():
    logits = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    labels = np.array([[0.0, 0.0, 1.0]])
    loss = _run(apply_op("SoftmaxCrossEntropyWithLogits", features=logits, labels=labels)[0])
    np.testing.assert_allclose(loss, _xent_ref(logits, np.repeat(labels, 2, 0))[0])


def test_softmax_cross_entropy_op_errors():
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        apply_op("SoftmaxCrossEntropyWithLogits", features=np.ones(3), labels=np.ones(3))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        apply_op("SoftmaxCrossEntropyWithLogits", features=np.ones((2, 3)), labels=np.ones((2, 4)))
    f = tf.placeholder(tf.float64, [None, None])
    loss = apply_op("SoftmaxCrossEntropyWithLogits", features=f, labels=np.ones((2, 4)))[0]
    with pytest.raises(errors.InvalidArgumentError, match="must be broadcastable"):
        _run(loss, {f: np.ones((2, 3))})


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", FLOATS)
def test_sparse_softmax_cross_entropy_op(dtype, label_dtype):
    rng = np.random.default_rng(6)
    logits = rng.normal(size=(5, 4)).astype(dtype)
    labels = np.array([0, 3, 1, 1, 2], label_dtype)
    loss, backprop = _run(
        apply_op("SparseSoftmaxCrossEntropyWithLogits", features=logits, labels=labels)
    )
    ref_loss, ref_bp = _xent_ref(logits.astype(np.float64), np.eye(4)[labels])
    tol = 5e-3 if dtype == np.float16 else 1e-5
    assert loss.dtype == dtype and backprop.dtype == dtype
    np.testing.assert_allclose(loss, ref_loss, rtol=tol, atol=tol)
    np.testing.assert_allclose(backprop, ref_bp, rtol=tol, atol=tol)


def test_sparse_softmax_cross_entropy_label_out_of_range():
    labels = tf.placeholder(tf.int32, [3])
    loss = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=np.ones((3, 3)))
    with pytest.raises(errors.InvalidArgumentError) as info:
        _run(loss, {labels: [0, 5, 1]})
    message = str(info.value)
    assert "Received a label value of 5 which is outside the valid range of [0, 3)" in message
    assert "Label values: 0 5 1" in message
    with pytest.raises(errors.InvalidArgumentError, match="label value of -1"):
        _run(loss, {labels: [0, -1, 1]})


def test_sparse_softmax_cross_entropy_op_errors():
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        apply_op("SparseSoftmaxCrossEntropyWithLogits", features=np.ones((2, 3)), labels=[[0], [1]])
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        apply_op("SparseSoftmaxCrossEntropyWithLogits", features=np.ones((2, 3)), labels=[0, 1, 2])
    features = tf.placeholder(tf.float64, [None, 3])
    labels = tf.placeholder(tf.int64, [None])
    loss = apply_op("SparseSoftmaxCrossEntropyWithLogits", features=features, labels=labels)[0]
    with pytest.raises(errors.InvalidArgumentError, match="same first dimension"):
        _run(loss, {features: np.ones((2, 3)), labels: [0]})
    empty = _run(loss, {features: np.ones((0, 3)), labels: np.zeros(0, np.int64)})
    assert empty.shape == (0,)


# ---------------------------------------------------------------------- others
@pytest.mark.parametrize("dtype", FLOATS)
def test_l2_loss(dtype):
    x = np.random.default_rng(7).normal(size=(3, 4)).astype(dtype)
    y = nn.l2_loss(x)
    assert y.shape.as_list() == []
    out = _run(y)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, (x.astype(np.float64) ** 2).sum() / 2, rtol=2e-3)


def test_top_k():
    x = np.array([[1, 5, 3, 5, 0], [2, 2, 2, 9, 1]], np.int32)
    values, indices = nn.top_k(x, 3)
    assert values.shape.as_list() == [2, 3] and indices.dtype == tf.int32
    v, i = _run([values, indices])
    np.testing.assert_array_equal(v, [[5, 5, 3], [9, 2, 2]])
    np.testing.assert_array_equal(i, [[1, 3, 2], [3, 0, 1]])  # ties: lower index first
    u = np.array([3, 200, 7], np.uint8)
    vu, iu = _run(list(nn.top_k(u, 2)))
    np.testing.assert_array_equal(vu, [200, 7])
    np.testing.assert_array_equal(iu, [1, 2])


def test_top_k_errors():
    with pytest.raises(ValueError, match="input must have last dimension >= k = 4 but is 3"):
        nn.top_k(np.ones((2, 3)), 4)
    k = tf.placeholder(tf.int32, [])
    values = nn.top_k(np.ones((2, 3)), k)[0]
    assert values.shape.as_list() == [2, None]
    with pytest.raises(errors.InvalidArgumentError, match="Had 3, needed 5"):
        _run(values, {k: 5})


def test_in_top_k():
    predictions = np.array(
        [[0.1, 0.9, 0.0, 0.5], [0.3, 0.3, 0.3, 0.1], [np.nan, 1.0, 0.0, 0.0]], np.float32
    )
    targets = np.array([3, 2, 0])
    y1 = nn.in_top_k(predictions, targets, 1)
    assert y1.shape.as_list() == [3] and y1.dtype == tf.bool
    y2 = nn.in_top_k(predictions, targets, 2)
    out_of_range = nn.in_top_k(predictions, np.array([4, -1, 1]), 4)
    r1, r2, r3 = _run([y1, y2, out_of_range])
    np.testing.assert_array_equal(r1, [False, True, False])  # ties count as in the top k
    np.testing.assert_array_equal(r2, [True, True, False])
    np.testing.assert_array_equal(r3, [False, False, True])


def test_nn_namespace_exports():
    for name in nn.__all__:
        assert callable(getattr(nn, name)), name
