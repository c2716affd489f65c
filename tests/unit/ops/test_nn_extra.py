"""tf.nn normalization, activations, losses, candidate samplers, nce_loss and
sampled_softmax_loss: NumPy references, and values recorded from TensorFlow 2.21 where the
construction is involved (nce/sampled softmax with fixed sampled values)."""

import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors

RNG = np.random.RandomState(5)
X = RNG.randn(2, 3, 4, 5).astype(np.float32)
SCALE = (RNG.rand(5) + 0.5).astype(np.float32)
OFFSET = RNG.randn(5).astype(np.float32)
MEAN = RNG.randn(5).astype(np.float32)
VAR = (RNG.rand(5) + 0.1).astype(np.float32)


def _run(fetches, feed=None):
    with tf.Session() as s:
        return s.run(fetches, feed)


def test_fused_batch_norm_training_inference_and_average():
    with tf.Graph().as_default():
        y, m, v = tf.nn.fused_batch_norm(X, SCALE, OFFSET)
        yi, mi, vi = tf.nn.fused_batch_norm(X, SCALE, OFFSET, MEAN, VAR, is_training=False)
        _, me, ve = tf.nn.fused_batch_norm(X, SCALE, OFFSET, MEAN, VAR, exponential_avg_factor=0.3)
        ync, _, _ = tf.nn.fused_batch_norm(
            np.transpose(X, [0, 3, 1, 2]), SCALE, OFFSET, data_format="NCHW"
        )
        assert y.op.type == "FusedBatchNormV3" and y.shape.as_list() == [2, 3, 4, 5]
        got = _run([y, m, v, yi, mi, vi, me, ve, ync])
    x = X.astype(np.float64)
    bm, bv = x.mean((0, 1, 2)), x.var((0, 1, 2))
    n = 24
    np.testing.assert_allclose(got[0], (x - bm) / np.sqrt(bv + 1e-3) * SCALE + OFFSET, atol=2e-5)
    np.testing.assert_allclose(got[1], bm, atol=1e-6)
    np.testing.assert_allclose(got[2], bv * n / (n - 1), rtol=1e-5)
    np.testing.assert_allclose(got[3], (x - MEAN) / np.sqrt(VAR + 1e-3) * SCALE + OFFSET, atol=2e-5)
    np.testing.assert_array_equal(got[4], MEAN)
    np.testing.assert_allclose(got[6], 0.7 * MEAN + 0.3 * bm, atol=1e-6)
    np.testing.assert_allclose(got[7], 0.7 * VAR + 0.3 * bv * n / (n - 1), rtol=1e-5)
    np.testing.assert_allclose(np.transpose(got[8], [0, 2, 3, 1]), got[0], atol=1e-6)


def test_fused_batch_norm_needs_statistics_for_inference():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Both `mean` and `variance` must be a 1D tensor"):
            tf.nn.fused_batch_norm(X, SCALE, OFFSET, is_training=False)


def test_batch_normalization_and_moments():
    x = X.astype(np.float64)
    w = RNG.rand(2, 3, 4, 1)
    mean64, var64, off64, scale64 = (a.astype(np.float64) for a in (MEAN, VAR, OFFSET, SCALE))
    with tf.Graph().as_default():
        bn = tf.nn.batch_normalization(x, mean64, var64, off64, scale64, 0.01)
        bare = tf.nn.batch_normalization(x, mean64, var64, None, None, 0.01)
        gn = tf.nn.batch_norm_with_global_normalization(
            x, mean64, var64, off64, scale64, 0.01, False
        )
        counts, m_ss, v_ss, shift = tf.nn.sufficient_statistics(x, [0, 1, 2], shift=0.5)
        mean, var = tf.nn.normalize_moments(counts, m_ss, v_ss, shift)
        wm, wv = tf.nn.weighted_moments(x, [1, 2], w)
        wk, _ = tf.nn.weighted_moments(x, [0], 2.0, keepdims=True)
        got = _run([bn, bare, gn, counts, m_ss, mean, var, wm, wv, wk])
    inv = 1 / np.sqrt(VAR.astype(np.float64) + 0.01)
    np.testing.assert_allclose(got[0], (x - MEAN) * inv * SCALE + OFFSET, rtol=1e-6)
    np.testing.assert_allclose(got[1], (x - MEAN) * inv, rtol=1e-6)
    np.testing.assert_allclose(got[2], (x - MEAN) * inv + OFFSET, rtol=1e-6)
    assert got[3] == 24.0
    np.testing.assert_allclose(got[4], (x - 0.5).sum((0, 1, 2)), rtol=1e-12)
    np.testing.assert_allclose(got[5], x.mean((0, 1, 2)), rtol=1e-12)
    np.testing.assert_allclose(got[6], x.var((0, 1, 2)), rtol=1e-10)
    wb = np.broadcast_to(w, x.shape)
    ref_m = (wb * x).sum((1, 2)) / wb.sum((1, 2))
    ref_v = (wb * (x - ref_m[:, None, None]) ** 2).sum((1, 2)) / wb.sum((1, 2))
    np.testing.assert_allclose(got[7], ref_m, rtol=1e-10)
    np.testing.assert_allclose(got[8], ref_v, rtol=1e-10)
    np.testing.assert_allclose(got[9], x.mean(0, keepdims=True), rtol=1e-12)


def _lrn_ref(x, r, bias, alpha, beta):
    c = x.shape[-1]
    out = np.empty_like(x, dtype=np.float64)
    for d in range(c):
        s = np.sum(x[..., max(0, d - r) : d + r + 1].astype(np.float64) ** 2, -1)
        out[..., d] = x[..., d] / (bias + alpha * s) ** beta
    return out


def test_activations_and_lrn():
    x = X.astype(np.float64)
    with tf.Graph().as_default():
        got = _run(
            [
                tf.nn.lrn(X, depth_radius=2, bias=1.5, alpha=0.3, beta=0.75),
                tf.nn.local_response_normalization(X),
                tf.nn.selu(x),
                tf.nn.crelu(x),
                tf.nn.swish(x),
                tf.nn.silu(x, beta=2.0),
            ]
        )
    np.testing.assert_allclose(got[0], _lrn_ref(X, 2, 1.5, 0.3, 0.75), rtol=1e-5)
    np.testing.assert_allclose(got[1], _lrn_ref(X, 5, 1.0, 1.0, 0.5), rtol=1e-5)
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    np.testing.assert_allclose(got[2], np.where(x > 0, scale * x, scale * alpha * np.expm1(x)))
    np.testing.assert_allclose(got[3], np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], -1))
    np.testing.assert_allclose(got[4], x / (1 + np.exp(-x)))
    np.testing.assert_allclose(got[5], x / (1 + np.exp(-2 * x)))


def test_log_poisson_loss_and_average_losses():
    t = np.array([0.0, 0.5, 1.0, 2.0, 5.0])
    li = np.array([0.1, -0.3, 0.5, 1.2, 1.7])
    with tf.Graph().as_default():
        got = _run(
            [
                tf.nn.log_poisson_loss(t, li),
                tf.nn.log_poisson_loss(t, li, compute_full_loss=True),
                tf.nn.compute_average_loss([1.0, 2.0, 4.0], sample_weight=[1.0, 0.5, 2.0]),
                tf.nn.compute_average_loss([1.0, 2.0, 4.0], global_batch_size=8),
                tf.nn.scale_regularization_loss([1.0, 2.0]),
            ]
        )
        with pytest.raises(ValueError, match="same shape"):
            tf.nn.log_poisson_loss([1.0, 2.0], [1.0, 2.0, 3.0])
        with pytest.raises(ValueError, match="at least rank 1"):
            tf.nn.compute_average_loss(1.0)
    base = np.exp(li) - li * t
    np.testing.assert_allclose(got[0], base)
    tt = np.maximum(t, 1)
    stirling = np.where(t > 1, tt * np.log(tt) - tt + 0.5 * np.log(2 * math.pi * tt), 0)
    np.testing.assert_allclose(got[1], base + stirling)
    np.testing.assert_allclose([got[2], got[3], got[4]], [10 / 3, 0.875, 3.0], rtol=1e-6)


def test_approx_max_and_min_k_are_exact():
    with tf.Graph().as_default():
        v, i = tf.nn.approx_max_k(X, 2)
        v1, i1 = tf.nn.approx_min_k(X, 2, reduction_dimension=1)
        got = _run([v, i, v1, i1])
    np.testing.assert_array_equal(got[0], -np.sort(-X, -1)[..., :2])
    np.testing.assert_array_equal(np.take_along_axis(X, got[1], -1), got[0])
    np.testing.assert_array_equal(got[2], np.sort(X, 1)[:, :2])
    np.testing.assert_array_equal(np.take_along_axis(X, got[3], 1), got[2])


# ------------------------------------------------------------------ sampled losses
W = RNG.randn(10, 4).astype(np.float32)
B = RNG.randn(10).astype(np.float32)
INPUTS = RNG.randn(3, 4).astype(np.float32)
LABELS = np.array([[1, 7], [3, 2], [9, 0]], np.int64)
SAMPLED = (
    np.array([2, 5, 7, 4], np.int64),
    (RNG.rand(3, 2) + 0.1).astype(np.float32),
    (RNG.rand(4) + 0.1).astype(np.float32),
)


def test_nce_and_sampled_softmax_match_tensorflow():
    with tf.Graph().as_default():
        got = _run(
            [
                tf.nn.nce_loss(W, B, LABELS, INPUTS, 4, 10, num_true=2, sampled_values=SAMPLED),
                tf.nn.nce_loss(
                    W,
                    B,
                    LABELS,
                    INPUTS,
                    4,
                    10,
                    num_true=2,
                    sampled_values=SAMPLED,
                    remove_accidental_hits=True,
                ),
                tf.nn.sampled_softmax_loss(
                    W,
                    B,
                    LABELS[:, :1],
                    INPUTS,
                    4,
                    10,
                    sampled_values=(SAMPLED[0], SAMPLED[1][:, :1], SAMPLED[2]),
                ),
                tf.nn.sampled_softmax_loss(
                    [W[:5], W[5:]],
                    B,
                    LABELS,
                    INPUTS,
                    4,
                    10,
                    num_true=2,
                    sampled_values=SAMPLED,
                    partition_strategy="div",
                ),
            ]
        )
    # Recorded from TensorFlow 2.21 on the same inputs.
    np.testing.assert_allclose(got[0], [7.712924, 7.514924, 9.883481], rtol=1e-5)
    np.testing.assert_allclose(got[1], [6.978152, 4.778301, 9.883482], rtol=1e-5)
    np.testing.assert_allclose(got[2], [6.095052, 3.059137, 5.931524], rtol=1e-5)
    np.testing.assert_allclose(got[3], [4.629491, 1.671012, 5.699824], rtol=1e-5)


def test_nce_loss_trains_with_the_default_sampler():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        w = tf.Variable(W)
        loss = tf.reduce_mean(tf.nn.nce_loss(w, B, LABELS[:, :1], INPUTS, 3, 10))
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            before = s.run(w)
            s.run(step)
            assert not np.allclose(s.run(w), before)


def test_accidental_hits_and_all_sampler():
    with tf.Graph().as_default():
        hits = tf.nn.compute_accidental_hits(LABELS, [2, 5, 7, 2, 9], 2)
        every = tf.nn.all_candidate_sampler(LABELS, 2, 10, True)
        got = _run([hits, every])
    np.testing.assert_array_equal(got[0][0], [0, 1, 2])
    np.testing.assert_array_equal(got[0][1], [2, 3, 4])  # the last position of 2
    assert np.all(got[0][2] == -np.finfo(np.float32).max)
    np.testing.assert_array_equal(got[1][0], np.arange(10))
    np.testing.assert_array_equal(got[1][1], np.ones((3, 2)))


def test_sampler_expected_counts_and_draws():
    with tf.Graph().as_default():
        uni = tf.nn.uniform_candidate_sampler(LABELS, 2, 4, False, 10, seed=3)
        log = tf.nn.log_uniform_candidate_sampler(LABELS, 2, 6, True, 10, seed=3)
        fix = tf.nn.fixed_unigram_candidate_sampler(
            LABELS, 2, 4, False, 10, unigrams=list(range(1, 9)), num_reserved_ids=2, seed=3
        )
        shard = tf.nn.fixed_unigram_candidate_sampler(
            LABELS, 2, 20, False, 10, unigrams=[1.0] * 10, num_shards=2, shard=1, seed=3
        )
        got = _run([uni, log, fix, shard])
    np.testing.assert_allclose(got[0][1], np.full((3, 2), 0.4))
    sampled, true_exp, sampled_exp = got[1]
    assert len(set(sampled.tolist())) == 6 and sampled.min() >= 0 and sampled.max() < 10
    p = lambda k: np.log((k + 2.0) / (k + 1.0)) / np.log(11.0)  # noqa: E731
    tries = np.log1p(-sampled_exp) / np.log1p(-p(sampled))  # the same for every id
    np.testing.assert_allclose(tries, tries[0], rtol=1e-4)
    np.testing.assert_allclose(true_exp, -np.expm1(tries[0] * np.log1p(-p(LABELS))), rtol=1e-4)
    # Recorded from TensorFlow: reserved ids have probability 0.
    np.testing.assert_allclose(
        got[2][1], [[0, 0.6666667], [0.2222222, 0.1111111], [0.8888889, 0]], rtol=1e-6
    )
    assert set(got[3][0].tolist()) <= {1, 3, 5, 7, 9}


def test_learned_unigram_sampler_learns():
    with tf.Graph().as_default():
        labels = tf.placeholder(tf.int64, [4, 1])
        _, true_exp, _ = tf.nn.learned_unigram_candidate_sampler(labels, 1, 2, False, 4, seed=1)
        with tf.Session() as s:
            first = s.run(true_exp, {labels: [[0], [0], [0], [1]]})
            second = s.run(true_exp, {labels: [[0], [1], [2], [3]]})
    np.testing.assert_allclose(first[:, 0], [0.5] * 4)  # uniform: 2 * 1/4
    np.testing.assert_allclose(second[:, 0], 2 * np.array([4, 2, 1, 1]) / 8.0)


def test_sampler_errors():
    with tf.Graph().as_default():
        s = tf.nn.uniform_candidate_sampler(LABELS, 2, 4, True, 5)
        with pytest.raises(errors.InvalidArgumentError, match="out of range"):
            _run(s)
        with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError, match="range"):
            sess.run(tf.nn.uniform_candidate_sampler([[1]], 1, 4, True, 3))
