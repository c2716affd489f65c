"""RNN cells, `dynamic_rnn`, `static_rnn`, `bidirectional_dynamic_rnn`, `raw_rnn` (cases
from TensorFlow's rnn_test.py / rnn_cell_test.py, graph mode) against NumPy reference
cells."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.gradient_checker import compute_gradient_error

B, T, D, H = 3, 5, 4, 6
RNG = np.random.default_rng(0)
XV = RNG.standard_normal((B, T, D)).astype(np.float32)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default() as g:
        yield g


def _sig(z):
    return 1.0 / (1.0 + np.exp(-z))


def _lstm_ref(x, k, b, lens=None, forget_bias=1.0):
    batch, steps, _ = x.shape
    n = b.shape[0] // 4
    c, h = np.zeros((batch, n)), np.zeros((batch, n))
    outs = np.zeros((batch, steps, n))
    lens = np.full(batch, steps) if lens is None else np.asarray(lens)
    for t in range(steps):
        i, j, f, o = np.split(np.concatenate([x[:, t], h], 1) @ k + b, 4, 1)
        nc = c * _sig(f + forget_bias) + _sig(i) * np.tanh(j)
        nh = np.tanh(nc) * _sig(o)
        live = (t < lens)[:, None]
        c, h = np.where(live, nc, c), np.where(live, nh, h)
        outs[:, t] = np.where(live, nh, 0.0)
    return outs, c, h


def _values(sess):
    return {v.op.name: sess.run(v) for v in tf.global_variables()}


def test_dynamic_rnn_basic_lstm_matches_numpy_with_sequence_length():
    x = tf.placeholder(tf.float32, [B, T, D])
    out, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(H), x,
                                   sequence_length=[5, 3, 0], dtype=tf.float32)
    assert [v.op.name for v in tf.global_variables()] == [
        "rnn/basic_lstm_cell/kernel", "rnn/basic_lstm_cell/bias"]
    assert tf.global_variables()[0].shape.as_list() == [D + H, 4 * H]
    assert out.shape.as_list() == [B, T, H]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        v = _values(sess)
        o, s = sess.run([out, state], {x: XV})
    ro, rc, rh = _lstm_ref(XV, v["rnn/basic_lstm_cell/kernel"], v["rnn/basic_lstm_cell/bias"],
                           [5, 3, 0])
    np.testing.assert_allclose(o, ro, atol=1e-5)
    np.testing.assert_allclose(s.c, rc, atol=1e-5)
    np.testing.assert_allclose(s.h, rh, atol=1e-5)


def test_dynamic_rnn_time_major_and_initial_state():
    x = tf.placeholder(tf.float32, [T, B, D])
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    h0 = tf.constant(RNG.standard_normal((B, H)).astype(np.float32))
    out, state = tf.nn.dynamic_rnn(cell, x, initial_state=h0, time_major=True)
    xt = XV.transpose(1, 0, 2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        v = _values(sess)
        o, s, h = sess.run([out, state, h0], {x: xt})
    k, b = v["rnn/basic_rnn_cell/kernel"], v["rnn/basic_rnn_cell/bias"]
    ref = []
    for t in range(T):
        h = np.tanh(np.concatenate([xt[t], h], 1) @ k + b)
        ref.append(h)
    np.testing.assert_allclose(o, np.stack(ref), atol=1e-5)
    np.testing.assert_allclose(s, ref[-1], atol=1e-5)


def test_gru_cell_names_and_values():
    x = tf.placeholder(tf.float32, [B, T, D])
    out, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(H), x, dtype=tf.float32)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["rnn/gru_cell/candidate/bias", "rnn/gru_cell/candidate/kernel",
                     "rnn/gru_cell/gates/bias", "rnn/gru_cell/gates/kernel"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        v = _values(sess)
        o, s = sess.run([out, state], {x: XV})
    gk, gb = v["rnn/gru_cell/gates/kernel"], v["rnn/gru_cell/gates/bias"]
    ck, cb = v["rnn/gru_cell/candidate/kernel"], v["rnn/gru_cell/candidate/bias"]
    np.testing.assert_array_equal(gb, np.ones(2 * H))
    h = np.zeros((B, H))
    for t in range(T):
        r, u = np.split(_sig(np.concatenate([XV[:, t], h], 1) @ gk + gb), 2, 1)
        c = np.tanh(np.concatenate([XV[:, t], r * h], 1) @ ck + cb)
        h = u * h + (1 - u) * c
        np.testing.assert_allclose(o[:, t], h, atol=1e-5)
    np.testing.assert_allclose(s, h, atol=1e-5)


def test_lstm_cell_peepholes_projection_and_clipping():
    x = tf.placeholder(tf.float32, [B, T, D])
    cell = tf.nn.rnn_cell.LSTMCell(H, use_peepholes=True, num_proj=2, cell_clip=0.5,
                                   proj_clip=0.3)
    out, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["rnn/lstm_cell/bias", "rnn/lstm_cell/kernel",
                     "rnn/lstm_cell/projection/kernel", "rnn/lstm_cell/w_f_diag",
                     "rnn/lstm_cell/w_i_diag", "rnn/lstm_cell/w_o_diag"]
    assert out.shape.as_list() == [B, T, 2]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        v = _values(sess)
        o, s = sess.run([out, state], {x: XV})
    p = "rnn/lstm_cell/"
    k, b, wf, wi, wo, pk = (v[p + n] for n in ("kernel", "bias", "w_f_diag", "w_i_diag",
                                               "w_o_diag", "projection/kernel"))
    c, m = np.zeros((B, H)), np.zeros((B, 2))
    for t in range(T):
        i, j, f, o_ = np.split(np.concatenate([XV[:, t], m], 1) @ k + b, 4, 1)
        c = _sig(f + 1.0 + wf * c) * c + _sig(i + wi * c) * np.tanh(j)
        c = np.clip(c, -0.5, 0.5)
        m = np.clip((_sig(o_ + wo * c) * np.tanh(c)) @ pk, -0.3, 0.3)
        np.testing.assert_allclose(o[:, t], m, atol=1e-5)
    np.testing.assert_allclose(s.c, c, atol=1e-5)


def test_multi_rnn_cell_names_and_stacking():
    x = tf.placeholder(tf.float32, [B, T, D])
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(H) for _ in range(2)])
    out, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    assert sorted(v.op.name for v in tf.global_variables()) == [
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias",
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel",
        "rnn/multi_rnn_cell/cell_1/basic_lstm_cell/bias",
        "rnn/multi_rnn_cell/cell_1/basic_lstm_cell/kernel"]
    assert len(state) == 2 and isinstance(state[0], tf.nn.rnn_cell.LSTMStateTuple)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        v = _values(sess)
        o, s = sess.run([out, state], {x: XV})
    p = "rnn/multi_rnn_cell/cell_%d/basic_lstm_cell/"
    o0, c0, h0 = _lstm_ref(XV, v[p % 0 + "kernel"], v[p % 0 + "bias"])
    o1, c1, h1 = _lstm_ref(o0, v[p % 1 + "kernel"], v[p % 1 + "bias"])
    np.testing.assert_allclose(o, o1, atol=1e-5)
    np.testing.assert_allclose(s[0].c, c0, atol=1e-5)
    np.testing.assert_allclose(s[1].h, h1, atol=1e-5)


def test_static_rnn_with_sequence_length_equals_dynamic():
    x = tf.placeholder(tf.float32, [B, T, D])
    cell = tf.nn.rnn_cell.BasicLSTMCell(H)
    outs, state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32,
                                   sequence_length=[2, 5, 4])
    assert [v.op.name for v in tf.global_variables()] == [
        "rnn/basic_lstm_cell/kernel", "rnn/basic_lstm_cell/bias"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        v = _values(sess)
        o, s = sess.run([outs, state], {x: XV})
    ro, rc, rh = _lstm_ref(XV, v["rnn/basic_lstm_cell/kernel"], v["rnn/basic_lstm_cell/bias"],
                           [2, 5, 4])
    np.testing.assert_allclose(np.stack(o, 1), ro, atol=1e-5)
    np.testing.assert_allclose(s.h, rh, atol=1e-5)


def test_bidirectional_dynamic_rnn():
    x = tf.placeholder(tf.float32, [B, T, D])
    lens = [5, 2, 3]
    (of, ob), (sf, sb) = tf.nn.bidirectional_dynamic_rnn(
        tf.nn.rnn_cell.BasicLSTMCell(H), tf.nn.rnn_cell.BasicLSTMCell(H), x,
        sequence_length=lens, dtype=tf.float32)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["bidirectional_rnn/bw/basic_lstm_cell/bias",
                     "bidirectional_rnn/bw/basic_lstm_cell/kernel",
                     "bidirectional_rnn/fw/basic_lstm_cell/bias",
                     "bidirectional_rnn/fw/basic_lstm_cell/kernel"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        v = _values(sess)
        fo, bo, bs = sess.run([of, ob, sb], {x: XV})
    p = "bidirectional_rnn/%s/basic_lstm_cell/"
    rf, _, _ = _lstm_ref(XV, v[p % "fw" + "kernel"], v[p % "fw" + "bias"], lens)
    rev = XV.copy()
    for i, n in enumerate(lens):
        rev[i, :n] = XV[i, :n][::-1]
    rb, _, rbh = _lstm_ref(rev, v[p % "bw" + "kernel"], v[p % "bw" + "bias"], lens)
    for i, n in enumerate(lens):
        rb[i, :n] = rb[i, :n][::-1].copy()
    np.testing.assert_allclose(fo, rf, atol=1e-5)
    np.testing.assert_allclose(bo, rb, atol=1e-5)
    np.testing.assert_allclose(bs.h, rbh, atol=1e-5)


def test_raw_rnn_equals_dynamic_rnn():
    x = tf.placeholder(tf.float32, [T, B, D])
    lens = tf.constant([5, 3, 4])
    inputs_ta = tf.TensorArray(tf.float32, size=T).unstack(x)
    cell = tf.nn.rnn_cell.BasicLSTMCell(H)

    def loop_fn(time, cell_output, cell_state, loop_state):
        emit = cell_output
        state = cell.zero_state(B, tf.float32) if cell_output is None else cell_state
        finished = time >= lens
        all_done = tf.reduce_all(finished)
        nxt = tf.cond(all_done, lambda: tf.zeros([B, D]), lambda: inputs_ta.read(time))
        return finished, nxt, state, emit, None

    emit_ta, final_state, _ = tf.nn.raw_rnn(cell, loop_fn)
    out = emit_ta.stack()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        v = _values(sess)
        o, s = sess.run([out, final_state], {x: XV.transpose(1, 0, 2)})
    ro, _, rh = _lstm_ref(XV, v["rnn/basic_lstm_cell/kernel"], v["rnn/basic_lstm_cell/bias"],
                          [5, 3, 4])
    np.testing.assert_allclose(o, ro.transpose(1, 0, 2), atol=1e-5)
    np.testing.assert_allclose(s.h, rh, atol=1e-5)


def test_wrappers():
    x = tf.placeholder(tf.float32, [B, T, H])
    base = tf.nn.rnn_cell.BasicRNNCell(H)
    cell = tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.ResidualWrapper(
        tf.nn.rnn_cell.DropoutWrapper(base, input_keep_prob=1.0, output_keep_prob=1.0)),
        "/cpu:0")
    out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    assert [v.op.name for v in tf.global_variables()] == [
        "rnn/basic_rnn_cell/kernel", "rnn/basic_rnn_cell/bias"]
    drop = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(H, name="d"),
                                         output_keep_prob=0.5, seed=3)
    dout, _ = tf.nn.dynamic_rnn(drop, x, dtype=tf.float32, scope="drop")
    xv = RNG.standard_normal((B, T, H)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        v = _values(sess)
        o, d = sess.run([out, dout], {x: xv})
    h = np.zeros((B, H))
    for t in range(T):
        h = np.tanh(np.concatenate([xv[:, t], h], 1) @ v["rnn/basic_rnn_cell/kernel"]
                    + v["rnn/basic_rnn_cell/bias"])
        np.testing.assert_allclose(o[:, t], h + xv[:, t], atol=1e-5)
    assert ((d == 0) | (np.abs(d) > 0)).all() and (d == 0).any()
    with pytest.raises(ValueError, match="between 0 and 1"):
        tf.nn.rnn_cell.DropoutWrapper(base, output_keep_prob=1.5)


def test_contrib_rnn_names():
    assert tf.contrib.rnn.BasicLSTMCell is tf.nn.rnn_cell.BasicLSTMCell
    assert tf.contrib.rnn.static_rnn is tf.nn.static_rnn
    assert tf.contrib.rnn.LSTMStateTuple(1, 2).h == 2


def test_dynamic_rnn_errors():
    x = tf.placeholder(tf.float32, [B, T, None])
    with pytest.raises(ValueError, match="depth of inputs"):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicRNNCell(H), x, dtype=tf.float32)
    with pytest.raises(ValueError, match="must give a dtype"):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicRNNCell(H), tf.zeros([B, T, D]))
    with pytest.raises(ValueError, match="sequence_length must be a vector"):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicRNNCell(H), tf.zeros([B, T, D]),
                          sequence_length=[[1]], dtype=tf.float32)


@pytest.mark.parametrize("cell_fn", [
    lambda: tf.nn.rnn_cell.BasicLSTMCell(3),
    lambda: tf.nn.rnn_cell.GRUCell(3),
    lambda: tf.nn.rnn_cell.LSTMCell(3, use_peepholes=True, num_proj=2),
], ids=["basic_lstm", "gru", "lstm_peephole_proj"])
def test_dynamic_rnn_gradients_by_central_differences(cell_fn):
    x = tf.placeholder(tf.float64, [2, 4, 3])
    out, state = tf.nn.dynamic_rnn(cell_fn(), x, sequence_length=[4, 2], dtype=tf.float64)
    y = tf.reduce_sum(out * out) + tf.reduce_sum(state[1] if isinstance(state, tuple)
                                                 else state)
    xv = np.random.default_rng(5).uniform(-1, 1, (2, 4, 3))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        err = compute_gradient_error(x, [2, 4, 3], y, [], x_init_value=xv)
        var = tf.trainable_variables()[0]
        err_w = compute_gradient_error(var, var.shape.as_list(), y, [],
                                       x_init_value=sess.run(var),
                                       extra_feed_dict={x: xv})
    assert err < 1e-6
    assert err_w < 1e-6
