"""tf.train.cosine_decay_restarts, linear_cosine_decay, noisy_linear_cosine_decay and
piecewise_constant_decay: the schedule over steps against values recorded from TensorFlow
2.21 (same calls, tf.compat.v1)."""

import numpy as np
import pytest

import tensorweave as tf

STEPS = [0, 1, 4, 5, 9, 10, 11, 16, 20, 29, 35, 47, 80]
EXPECTED = {
    "lin": [
        0.1001,
        0.096501894,
        0.083020307,
        0.077851065,
        0.055672485,
        0.050099999,
        0.044646662,
        0.020994334,
        0.0084333336,
        0.00010913015,
        0.0001,
        0.0001,
        0.0001,
    ],
    "lin2": [
        0.12100001,
        0.11262349,
        0.048758477,
        0.026833331,
        0.0095942458,
        0.022666672,
        0.038311321,
        0.06478484,
        0.01433333,
        0.023324704,
        0.021000002,
        0.021000002,
        0.021000002,
    ],
    "pwc": [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.1, 0.1, 0.1, 0.1],
    "sgdr": [
        0.5,
        0.48776412,
        0.32725424,
        0.24999999,
        0.01223585,
        0.5,
        0.49692208,
        0.39694631,
        0.24999999,
        0.0030779094,
        0.48096988,
        0.30836126,
        0.48096988,
    ],
    "sgdr_t1": [
        0.5,
        0.47771797,
        0.22493275,
        0.13471475,
        0.23264256,
        0.18753357,
        0.13746636,
        0.14132129,
        0.055570491,
        0.076732367,
        0.064062499,
        0.051323667,
        0.050134312,
    ],
    "sgdr_t3": [
        1.0,
        0.90450847,
        0.095491469,
        0.89999998,
        0.75110871,
        0.67499995,
        0.58905762,
        0.1488912,
        0.80999994,
        0.73265183,
        0.60749996,
        0.27984798,
        0.7070179,
    ],
}


def _schedules(step):
    return {
        "sgdr": tf.train.cosine_decay_restarts(0.5, step, 10),
        "sgdr_t1": tf.train.cosine_decay_restarts(0.5, step, 7, t_mul=1.0, m_mul=0.5, alpha=0.1),
        "sgdr_t3": tf.train.cosine_decay_restarts(1.0, step, 5, t_mul=3.0, m_mul=0.9),
        "lin": tf.train.linear_cosine_decay(0.1, step, 30),
        "lin2": tf.train.linear_cosine_decay(0.1, step, 30, num_periods=2.0, alpha=0.2, beta=0.01),
        "pwc": tf.train.piecewise_constant_decay(step, [5, 20], [1.0, 0.5, 0.1]),
    }


def test_schedules_match_tensorflow():
    g = tf.Graph()
    with g.as_default():
        step = tf.placeholder(tf.int64, [])
        out = _schedules(step)
        assert out["sgdr"].op.name == "SGDRDecay"
        assert out["lin"].op.name == "LinearCosineDecay"
        with tf.Session() as s:
            got = [s.run(out, {step: st}) for st in STEPS]
    for key, want in EXPECTED.items():
        np.testing.assert_allclose([r[key] for r in got], want, rtol=1e-5, atol=1e-7)


def test_noisy_linear_cosine_decay():
    g = tf.Graph()
    with g.as_default():
        step = tf.placeholder(tf.int64, [])
        quiet = tf.train.noisy_linear_cosine_decay(0.1, step, 30, initial_variance=0.0)
        noisy = tf.train.noisy_linear_cosine_decay(0.1, step, 30, initial_variance=1.0)
        assert noisy.op.name == "NoisyLinearCosineDecay_1"
        plain = tf.train.linear_cosine_decay(0.1, step, 30)
        with tf.Session() as s:
            for st in (0, 7, 29, 40):
                q, p = s.run([quiet, plain], {step: st})
                np.testing.assert_allclose(q, p, rtol=1e-6)
            draws = {float(s.run(noisy, {step: 3})) for _ in range(5)}
            assert len(draws) == 5


def test_schedules_need_a_global_step():
    with tf.Graph().as_default():
        for fn in (
            tf.train.cosine_decay_restarts,
            tf.train.linear_cosine_decay,
            tf.train.noisy_linear_cosine_decay,
        ):
            with pytest.raises(ValueError, match="requires global_step"):
                fn(0.1, None, 10)
