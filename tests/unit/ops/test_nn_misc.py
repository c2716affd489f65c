"""tf.nn depth_to_space / space_to_depth / space_to_batch / with_space_to_batch,
dilation2d / erosion2d, collapse_repeated and CTC losses: NumPy references and values
recorded from TensorFlow 2.21 (CTC)."""

import itertools
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors

RNG = np.random.RandomState(2)
X = RNG.randn(2, 4, 6, 8)
XS = RNG.randn(2, 5, 4, 3)
F = RNG.randn(3, 2, 3)
LOGITS = RNG.randn(6, 3, 5).astype(np.float32)  # drawn in the order of the TF recording


def _run(t):
    with tf.Session() as s:
        return s.run(t)


def test_depth_space_round_trip_and_layout():
    with tf.Graph().as_default():
        d2s = tf.nn.depth_to_space(X, 2)
        s2d = tf.nn.space_to_depth(X, 2)
        back = tf.nn.space_to_depth(d2s, 2)
        nchw = tf.nn.depth_to_space(np.transpose(X, [0, 3, 1, 2]), 2, data_format="NCHW")
        assert d2s.shape.as_list() == [2, 8, 12, 2] and s2d.shape.as_list() == [2, 2, 3, 32]
        got = _run([d2s, s2d, back, nchw])
        with pytest.raises(ValueError, match="divisible"):
            tf.nn.depth_to_space(np.zeros((1, 2, 2, 3)), 2)
    # out[b, 2h + i, 2w + j, c] = in[b, h, w, (i * 2 + j) * 2 + c]
    for h, w, i, j, c in itertools.product(range(4), range(6), range(2), range(2), range(2)):
        assert got[0][0, 2 * h + i, 2 * w + j, c] == X[0, h, w, (i * 2 + j) * 2 + c]
        assert got[1][1, h // 2, w // 2, ((h % 2) * 2 + w % 2) * 8 + c] == X[1, h, w, c]
    np.testing.assert_array_equal(got[2], X)
    np.testing.assert_array_equal(np.transpose(got[3], [0, 2, 3, 1]), got[0])


def test_space_to_batch_and_with_space_to_batch():
    kernel = RNG.randn(3, 3, 3, 2)
    with tf.Graph().as_default():
        s2b = tf.nn.space_to_batch(XS, [[1, 0], [0, 2]], block_size=2)
        assert s2b.shape.as_list() == [8, 3, 3, 3]
        conv = tf.nn.with_space_to_batch(
            XS,
            [2, 2],
            "SAME",
            lambda x, n, pad: tf.nn.conv2d(x, kernel, 1, pad),
            filter_shape=[3, 3],
        )
        direct = tf.nn.conv2d(XS, kernel, 1, "SAME", dilations=2)
        same = tf.nn.with_space_to_batch(XS, [1, 1], "VALID", lambda x, n, p: x * 2.0)
        got = _run([s2b, conv, direct, same])
    padded = np.pad(XS, [(0, 0), (1, 0), (0, 2), (0, 0)])
    for i, j in itertools.product(range(2), range(2)):
        np.testing.assert_array_equal(
            got[0][(i * 2 + j) * 2 : (i * 2 + j) * 2 + 2], padded[:, i::2, j::2]
        )
    np.testing.assert_allclose(got[1], got[2], rtol=1e-10)
    np.testing.assert_array_equal(got[3], XS * 2)


def _dilate_ref(x, f, strides, rates, padding):
    n, h, w, c = x.shape
    kh, kw, _ = f.shape
    eh, ew = (kh - 1) * rates[0] + 1, (kw - 1) * rates[1] + 1
    if padding == "SAME":
        oh, ow = -(-h // strides[0]), -(-w // strides[1])
        ph = max(0, (oh - 1) * strides[0] + eh - h) // 2
        pw = max(0, (ow - 1) * strides[1] + ew - w) // 2
    else:
        oh, ow, ph, pw = (h - eh) // strides[0] + 1, (w - ew) // strides[1] + 1, 0, 0
    out = np.full((n, oh, ow, c), -np.inf)
    for y, x_, i, j in itertools.product(range(oh), range(ow), range(kh), range(kw)):
        yy, xx = y * strides[0] - ph + i * rates[0], x_ * strides[1] - pw + j * rates[1]
        if 0 <= yy < h and 0 <= xx < w:
            out[:, y, x_] = np.maximum(out[:, y, x_], x[:, yy, xx] + f[i, j])
    return out


def test_dilation_and_erosion():
    with tf.Graph().as_default():
        got = _run(
            [
                tf.nn.dilation2d(XS, F, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
                tf.nn.dilation2d(XS, F, [1, 2, 1, 1], [1, 1, 2, 1], "VALID"),
                tf.nn.erosion2d(XS, F, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
            ]
        )
    np.testing.assert_allclose(got[0], _dilate_ref(XS, F, [1, 1], [1, 1], "SAME"))
    np.testing.assert_allclose(got[1], _dilate_ref(XS, F, [2, 1], [1, 2], "VALID"))
    np.testing.assert_allclose(got[2], -_dilate_ref(-XS, F[::-1, ::-1], [1, 1], [1, 1], "SAME"))


def test_collapse_repeated():
    with tf.Graph().as_default():
        labels, lengths = tf.nn.collapse_repeated(
            [[1, 1, 2, 2, 3], [4, 4, 4, 0, 0], [5, 6, 6, 7, 7]], [5, 3, 4]
        )
        got = _run([labels, lengths])
    np.testing.assert_array_equal(got[0], [[1, 2, 3], [4, 0, 0], [5, 6, 7]])
    np.testing.assert_array_equal(got[1], [3, 1, 3])


LABELS = np.array([[1, 2, 2], [3, 0, 0], [4, 1, 3]], np.int32)


class _Sparse:
    def __init__(self, indices, values, dense_shape):
        self.indices, self.values, self.dense_shape = indices, values, dense_shape


def _ctc_brute(logits, labels, blank):
    """-log p by summing over every path (tiny problems only)."""
    t_len, classes = logits.shape
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    total = 0.0
    for path in itertools.product(range(classes), repeat=t_len):
        merged = [k for i, k in enumerate(path) if i == 0 or k != path[i - 1]]
        if [k for k in merged if k != blank] == list(labels):
            total += math.prod(p[t, k] for t, k in enumerate(path))
    return -math.log(total)


def test_ctc_losses_match_tensorflow_and_brute_force():
    with tf.Graph().as_default():
        sparse = _Sparse(
            np.array([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1]], np.int64),
            np.array([1, 2, 3, 0, 3], np.int32),
            [3, 2],
        )
        got = _run(
            [
                tf.nn.ctc_loss_v2(LABELS, LOGITS, [3, 1, 2], [6, 4, 5]),
                tf.nn.ctc_loss_v2(
                    np.minimum(LABELS, 3), LOGITS, [3, 1, 2], [6, 4, 5], blank_index=-1
                ),
                tf.nn.ctc_loss_v2(LABELS, LOGITS, [3, 1, 2], [6, 4, 5], blank_index=2),
                tf.nn.ctc_loss(sparse, LOGITS, [6, 4, 5]),
                tf.nn.ctc_loss(
                    sparse, np.transpose(LOGITS, [1, 0, 2]), [6, 4, 5], time_major=False
                ),
            ]
        )
    # Recorded from TensorFlow 2.21 on the same inputs.
    np.testing.assert_allclose(got[0], [9.676614, 4.084970, 4.713826], rtol=1e-5)
    np.testing.assert_allclose(got[1], [7.535308, 3.562338, 3.981487], rtol=1e-5)
    np.testing.assert_allclose(got[2], [9.696386, 3.173861, 4.936159], rtol=1e-5)
    np.testing.assert_allclose(got[3], [4.999269, 3.562337, 3.669980], rtol=1e-5)
    np.testing.assert_allclose(got[4], got[3], rtol=1e-6)
    small = LOGITS[:4, 1].astype(np.float64)
    with tf.Graph().as_default():
        loss = _run(tf.nn.ctc_loss(_Sparse([[0, 0], [0, 1]], [1, 1], [1, 2]), small[:, None], [4]))
    np.testing.assert_allclose(loss[0], _ctc_brute(small, [1, 1], 4), rtol=1e-10)


def test_ctc_errors():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="SparseTensor"):
            tf.nn.ctc_loss(LABELS, LOGITS, [6, 4, 5])
        with pytest.raises(ValueError, match="blank_index"):
            tf.nn.ctc_loss_v2(_Sparse([[0, 0]], [1], [1, 1]), LOGITS, None, [6, 4, 5])
        too_long = tf.nn.ctc_loss(
            _Sparse([[0, 0], [0, 1], [0, 2]], [1, 1, 1], [1, 3]), LOGITS[:, :1], [4]
        )
        ignored = tf.nn.ctc_loss(
            _Sparse([[0, 0], [0, 1], [0, 2]], [1, 1, 1], [1, 3]),
            LOGITS[:, :1],
            [4],
            ignore_longer_outputs_than_inputs=True,
        )
        with tf.Session() as s:
            with pytest.raises(errors.InvalidArgumentError, match="Not enough time"):
                s.run(too_long)
            assert s.run(ignored)[0] == 0.0


@pytest.mark.parametrize("pseudo,overlapping", [(False, False), (True, True), (True, False)])
def test_fractional_pools_pool_their_sequences(pseudo, overlapping):
    x = RNG.randn(2, 7, 9, 2)
    with tf.Graph().as_default():
        mx, rows, cols = tf.nn.fractional_max_pool(
            x, [1.0, 1.5, 2.0, 1.0], pseudo, overlapping, deterministic=True, seed=1, seed2=2
        )
        av, rows2, cols2 = tf.nn.fractional_avg_pool(x, [1.0, 1.5, 2.0, 1.0], pseudo, overlapping)
        assert mx.shape.as_list() == [2, 4, 4, 2] and rows.shape.as_list() == [5]
        with tf.Session() as s:
            m, r, c, a, r2, c2 = s.run([mx, rows, cols, av, rows2, cols2])
            again = s.run(rows)
    np.testing.assert_array_equal(again, r)  # deterministic regions
    extra = 1 if overlapping else 0
    for seq, n in ((r, 7), (c, 9), (r2, 7), (c2, 9)):
        assert seq[0] == 0 and seq[-1] == n and np.all(np.diff(seq) >= 1)
    for i, j in itertools.product(range(4), range(4)):
        cell = x[:, r[i] : r[i + 1] + extra, c[j] : c[j + 1] + extra]
        np.testing.assert_array_equal(m[:, i, j], cell.max((1, 2)))
        cell = x[:, r2[i] : r2[i + 1] + extra, c2[j] : c2[j + 1] + extra]
        np.testing.assert_allclose(a[:, i, j], cell.mean((1, 2)), rtol=1e-12)
    with tf.Graph().as_default():
        bad = tf.nn.fractional_max_pool(x, [1.0, 1.5, 2.0, 1.0], seed=3)[0]
        with tf.Session() as s, pytest.raises(errors.InvalidArgumentError, match="seed"):
            s.run(bad)


def test_ctc_unique_labels_matches_tensorflow():
    with tf.Graph().as_default():
        unique, idx = tf.nn.ctc_unique_labels([[3, 4, 4, 3, 0], [1, 1, 1, 2, 0]])
        assert unique.dtype == tf.int64 and idx.dtype == tf.int32
        got = _run([unique, idx])
        with pytest.raises(ValueError, match="static batch size"):
            tf.nn.ctc_unique_labels(tf.placeholder(tf.int32, [None, 3]))
    # Recorded from TensorFlow 2.21.
    np.testing.assert_array_equal(got[0], [[3, 4, 0, 0, 0], [1, 2, 0, 0, 0]])
    np.testing.assert_array_equal(got[1], [[0, 1, 1, 0, 2], [0, 0, 0, 1, 2]])
