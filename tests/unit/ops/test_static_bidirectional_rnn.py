"""`tf.nn.static_bidirectional_rnn` / `tf.contrib.rnn.static_bidirectional_rnn` against a
NumPy reference LSTM (TF 1.x rnn.py semantics: the backward cell reads each entry's first
`sequence_length` steps reversed; outputs are [fw, bw] concatenated on axis 1)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

B, T, D, H = 3, 4, 2, 5
RNG = np.random.default_rng(7)
XV = RNG.standard_normal((B, T, D)).astype(np.float32)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default() as g:
        yield g


def _sig(z):
    return 1.0 / (1.0 + np.exp(-z))


def _lstm(x, k, b, lens):
    """Outputs [batch, steps, n] (zeros past each length) and the final (c, h)."""
    batch, steps, _ = x.shape
    n = b.shape[0] // 4
    c, h = np.zeros((batch, n)), np.zeros((batch, n))
    outs = np.zeros((batch, steps, n))
    for t in range(steps):
        i, j, f, o = np.split(np.concatenate([x[:, t], h], 1) @ k + b, 4, 1)
        nc = c * _sig(f + 1.0) + _sig(i) * np.tanh(j)
        nh = np.tanh(nc) * _sig(o)
        live = (t < lens)[:, None]
        c, h = np.where(live, nc, c), np.where(live, nh, h)
        outs[:, t] = np.where(live, nh, 0.0)
    return outs, c, h


def _reverse_within(x, lens):
    out = x.copy()
    for i, n in enumerate(lens):
        out[i, :n] = x[i, :n][::-1]
    return out


@pytest.mark.parametrize("lens", [None, [4, 2, 0]])
def test_matches_numpy_lstm(lens):
    xs = [tf.placeholder(tf.float32, [B, D]) for _ in range(T)]
    outputs, state_fw, state_bw = tf.contrib.rnn.static_bidirectional_rnn(
        tf.contrib.rnn.BasicLSTMCell(H), tf.contrib.rnn.BasicLSTMCell(H), xs,
        dtype=tf.float32, sequence_length=lens)
    assert [v.op.name for v in tf.global_variables()] == [
        "bidirectional_rnn/fw/basic_lstm_cell/kernel",
        "bidirectional_rnn/fw/basic_lstm_cell/bias",
        "bidirectional_rnn/bw/basic_lstm_cell/kernel",
        "bidirectional_rnn/bw/basic_lstm_cell/bias"]
    assert len(outputs) == T
    assert all(o.shape.as_list() == [B, 2 * H] for o in outputs)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kf, bf, kb, bb = sess.run(tf.global_variables())
        feed = {x: XV[:, t] for t, x in enumerate(xs)}
        out, sf, sb = sess.run([outputs, state_fw, state_bw], feed)
    n = np.full(B, T) if lens is None else np.asarray(lens)
    fw, cf, hf = _lstm(XV, kf, bf, n)
    bw_rev, cb, hb = _lstm(_reverse_within(XV, n), kb, bb, n)
    bw = _reverse_within(bw_rev, n)
    np.testing.assert_allclose(np.stack(out, 1), np.concatenate([fw, bw], 2), atol=1e-5)
    np.testing.assert_allclose(sf.c, cf, atol=1e-5)
    np.testing.assert_allclose(sf.h, hf, atol=1e-5)
    np.testing.assert_allclose(sb.c, cb, atol=1e-5)
    np.testing.assert_allclose(sb.h, hb, atol=1e-5)


def test_nn_name_and_bad_arguments():
    assert tf.nn.static_bidirectional_rnn is tf.contrib.rnn.static_bidirectional_rnn
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    x = tf.zeros([B, D])
    with pytest.raises(TypeError, match="cell_fw must be an instance of RNNCell"):
        tf.nn.static_bidirectional_rnn(object(), cell, [x], dtype=tf.float32)
    with pytest.raises(TypeError, match="inputs must be a list"):
        tf.nn.static_bidirectional_rnn(cell, cell, x, dtype=tf.float32)
    with pytest.raises(ValueError, match="inputs must not be empty"):
        tf.nn.static_bidirectional_rnn(cell, cell, [], dtype=tf.float32)
