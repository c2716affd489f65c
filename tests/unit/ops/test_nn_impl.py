"""Composite nn functions: cross-entropy wrappers, dropout, moments, normalisation,
`xw_plus_b`/`relu_layer`, `zero_fraction`, and `embedding_lookup` with sharded params."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.kernels.nn_conv_kernels  # noqa: F401  (until kernels/__init__ imports it)
import tensorweave.kernels.nn_kernels  # noqa: F401
from tensorweave import nn


def _run(fetches, feed_dict=None):
    with tf.Session(graph=tf.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


# ---------------------------------------------------------------- cross-entropy
def test_sigmoid_cross_entropy_matches_formula_and_is_stable():
    x = np.array([[-100.0, -1.0, 0.0], [1.0, 5.0, 100.0]])
    z = np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 1.0]])
    y = nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    assert y.op.name == "logistic_loss"
    expected = np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))
    np.testing.assert_allclose(_run(y), expected)
    assert np.isfinite(_run(y)).all()


def test_sigmoid_cross_entropy_errors():
    with pytest.raises(ValueError, match="Only call `sigmoid_cross_entropy_with_logits` with"):
        nn.sigmoid_cross_entropy_with_logits(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="logits and labels must have the same shape"):
        nn.sigmoid_cross_entropy_with_logits(labels=np.ones(2), logits=np.ones(3))
    with pytest.raises(ValueError, match="Both labels and logits must be provided"):
        nn.sigmoid_cross_entropy_with_logits(labels=np.ones(2))


def test_weighted_cross_entropy():
    x = np.array([-2.0, 0.5, 3.0])
    z = np.array([1.0, 0.0, 1.0])
    q = 3.0
    expected = (1 - z) * x + (1 + (q - 1) * z) * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))
    got = _run(nn.weighted_cross_entropy_with_logits(labels=z, logits=x, pos_weight=q))
    np.testing.assert_allclose(got, expected)
    legacy = nn.weighted_cross_entropy_with_logits(targets=z, logits=x, pos_weight=q)
    np.testing.assert_allclose(_run(legacy), expected)


def test_softmax_cross_entropy_v1_stops_label_gradients_v2_does_not():
    logits = tf.constant(np.random.default_rng(0).normal(size=(2, 3)))
    labels = tf.constant([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]], tf.float64)
    v1 = nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    v2 = nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    assert tf.gradients(v1, labels) == [None]
    g_labels, g_logits = tf.gradients(v2, [labels, logits])
    lv, out1, out2, gl, gx = _run([logits, v1, v2, g_labels, g_logits])
    expected = -(np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]]) * _log_softmax(lv)).sum(-1)
    np.testing.assert_allclose(out1, expected)
    np.testing.assert_allclose(out2, expected)
    np.testing.assert_allclose(gl, -_log_softmax(lv))
    np.testing.assert_allclose(gx, np.exp(_log_softmax(lv)) - [[0.2, 0.3, 0.5], [1, 0, 0]])


def test_softmax_cross_entropy_axis_and_rank3():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(2, 3, 4))
    labels = np.exp(_log_softmax(rng.normal(size=(2, 3, 4)), axis=1))
    y = nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=1)
    assert y.shape.as_list() == [2, 4]
    np.testing.assert_allclose(_run(y), -(labels * _log_softmax(logits, 1)).sum(1))
    labels_last = np.exp(_log_softmax(rng.normal(size=(2, 3, 4))))
    y3 = nn.softmax_cross_entropy_with_logits_v2(labels=labels_last, logits=logits)
    assert y3.shape.as_list() == [2, 3]
    np.testing.assert_allclose(_run(y3), -(labels_last * _log_softmax(logits)).sum(-1))


def test_softmax_cross_entropy_flattens_labels_of_another_rank():
    # TF flattens labels and logits each to [-1, classes]: [1, batch, classes] labels
    # (a list wrapped around a one-hot tensor) pair with [batch, classes] logits.
    logits_v = np.random.default_rng(2).normal(size=(3, 4)).astype(np.float32)
    labels_v = np.eye(4, dtype=np.float32)[[2, 0, 3]]
    logits = tf.placeholder(tf.float32, [None, 4])
    one_hot = tf.placeholder(tf.float32, [None, 4])
    v1 = nn.softmax_cross_entropy_with_logits(labels=[one_hot], logits=logits)
    v2 = nn.softmax_cross_entropy_with_logits_v2(labels=tf.stop_gradient([one_hot]), logits=logits)
    assert v1.shape.as_list() == [None] and v2.shape.as_list() == [None]
    (g_logits,) = tf.gradients(tf.reduce_sum(v2), [logits])
    out1, out2, g = _run([v1, v2, g_logits], {logits: logits_v, one_hot: labels_v})
    expected = -(labels_v * _log_softmax(logits_v)).sum(-1)
    np.testing.assert_allclose(out1, expected, rtol=1e-6)
    np.testing.assert_allclose(out2, expected, rtol=1e-6)
    np.testing.assert_allclose(g, np.exp(_log_softmax(logits_v)) - labels_v, rtol=1e-5, atol=1e-7)
    rank3 = nn.softmax_cross_entropy_with_logits_v2(labels=labels_v.reshape(1, 3, 4),
                                                    logits=logits_v.reshape(3, 1, 4))
    assert rank3.shape.as_list() == [3, 1]
    np.testing.assert_allclose(_run(rank3), expected.reshape(3, 1), rtol=1e-6)


def test_softmax_cross_entropy_half_is_computed_in_float32():
    logits = np.array([[1.0, 2.0]], np.float16)
    y = nn.softmax_cross_entropy_with_logits_v2(labels=[[0.0, 1.0]], logits=logits)
    assert y.dtype == tf.float16
    np.testing.assert_allclose(_run(y), -_log_softmax(np.array([[1.0, 2.0]]))[:, 1], rtol=1e-3)


def test_sparse_softmax_cross_entropy_wrapper():
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(2, 3, 4))
    labels = np.array([[0, 3, 1], [2, 2, 0]])
    y = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert y.shape.as_list() == [2, 3]
    expected = -np.take_along_axis(_log_softmax(logits), labels[..., None], -1)[..., 0]
    np.testing.assert_allclose(_run(y), expected)
    flat = nn.sparse_softmax_cross_entropy_with_logits(labels=[1], logits=[[1.0, 2.0]], name="x")
    assert flat.op.type == "SparseSoftmaxCrossEntropyWithLogits" and flat.op.name == "x"


def test_sparse_softmax_cross_entropy_wrapper_errors():
    with pytest.raises(ValueError, match="Only call `sparse_softmax_cross_entropy_with_logits`"):
        nn.sparse_softmax_cross_entropy_with_logits([0], [[1.0]])
    with pytest.raises(ValueError, match="Logits cannot be scalars"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=0, logits=1.0)
    with pytest.raises(ValueError, match=r"Rank mismatch: Rank of labels \(received 2\)"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[[0]], logits=[[1.0]])
    with pytest.raises(ValueError, match="Shape mismatch"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1], logits=[[1.0, 2.0]])


# ---------------------------------------------------------------------- dropout
def test_dropout_keep_prob_and_rate():
    x = np.ones((200, 50), np.float32)
    for y in (nn.dropout(x, keep_prob=0.25, seed=1), nn.dropout(x, rate=0.75, seed=1)):
        out = _run(y)
        assert out.dtype == np.float32 and y.shape.as_list() == [200, 50]
        assert set(np.unique(out)) <= {0.0, 4.0}
        assert 0.2 < (out != 0).mean() < 0.3


def test_dropout_identity_cases():
    x = tf.constant([1.0, 2.0])
    assert nn.dropout(x, keep_prob=1.0) is x
    assert nn.dropout(x, rate=0.0) is x
    assert nn.dropout(x, keep_prob=tf.constant(1.0)) is x


def test_dropout_tensor_keep_prob_and_noise_shape():
    keep = tf.placeholder(tf.float32, [])
    x = np.ones((4, 100), np.float32)
    y = nn.dropout(x, keep_prob=keep, noise_shape=[1, 100], seed=3)
    out = _run(y, {keep: 0.5})
    assert (out == out[0]).all()  # one mask row broadcast over the batch
    assert set(np.unique(out)) <= {0.0, 2.0}
    np.testing.assert_array_equal(_run(y, {keep: 1.0}), x)
    rate = tf.placeholder(tf.float32, [])
    np.testing.assert_array_equal(_run(nn.dropout(x, rate=rate), {rate: 0.0}), x)


def test_dropout_gradient_is_the_scaled_mask():
    x = tf.constant(np.ones((10, 10)))
    y = nn.dropout(x, keep_prob=0.5, seed=4)
    (g,) = tf.gradients(y, x)
    with tf.Session() as sess:
        out, grad = sess.run([y, g])
    np.testing.assert_array_equal(grad, out)  # both are mask / keep_prob for ones


def test_dropout_errors():
    x = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="Cannot specify both 'rate' and 'keep_prob'"):
        nn.dropout(x, keep_prob=0.5, rate=0.5)
    with pytest.raises(ValueError, match="You must provide a rate to dropout"):
        nn.dropout(x)
    with pytest.raises(ValueError, match=r"keep_prob must be a scalar tensor or a float in the"):
        nn.dropout(x, keep_prob=0.0)
    with pytest.raises(ValueError, match=r"rate must be a scalar tensor or a float in the range"):
        nn.dropout(x, rate=1.0)
    with pytest.raises(ValueError, match="x has to be a floating point tensor"):
        nn.dropout(np.ones(3, np.int32), rate=0.5)


# ---------------------------------------------------------- statistics, layers
def test_moments():
    x = np.random.default_rng(5).normal(size=(4, 3, 2))
    mean, var = nn.moments(x, [0, 1])
    assert mean.shape.as_list() == [2] and var.shape.as_list() == [2]
    m, v = _run([mean, var])
    np.testing.assert_allclose(m, x.mean((0, 1)))
    np.testing.assert_allclose(v, x.var((0, 1)))
    mk, vk = nn.moments(x, [2], keep_dims=True)
    assert mk.shape.as_list() == [4, 3, 1]
    np.testing.assert_allclose(_run(vk), x.var(2, keepdims=True))
    half_mean, _ = nn.moments(x.astype(np.float16), [0])
    assert half_mean.dtype == tf.float16


def test_l2_normalize():
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(_run(nn.l2_normalize(x, axis=1)), [[0.6, 0.8], [0.0, 0.0]])
    np.testing.assert_allclose(_run(nn.l2_normalize(x, dim=0)), [[1.0, 1.0], [0.0, 0.0]])
    whole = _run(nn.l2_normalize(np.array([3.0, 4.0], np.float32)))
    assert whole.dtype == np.float32


def test_xw_plus_b_and_relu_layer():
    x = np.array([[1.0, -2.0]])
    w = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = np.array([0.5, 0.0, 20.0])
    y = nn.xw_plus_b(x, w, b, name="logits")
    r = nn.relu_layer(x, w, b)
    assert y.op.name == "logits" and y.op.type == "BiasAdd"
    assert r.op.type == "Relu"
    y_v, r_v = _run([y, r])
    np.testing.assert_allclose(y_v, x @ w + b)
    np.testing.assert_allclose(r_v, np.maximum(x @ w + b, 0))


def test_zero_fraction():
    y = nn.zero_fraction(np.array([[0, 1], [0, 0]], np.int32))
    assert y.dtype == tf.float32
    assert _run(y) == pytest.approx(0.75)


# ------------------------------------------------------------------- embeddings
class _Shards:
    """An iterable of shards, like a `PartitionedVariable`."""

    def __init__(self, parts):
        self._parts = parts

    def __iter__(self):
        return iter(self._parts)


def _mod_shards(table, n):
    return [table[p::n] for p in range(n)]


def _div_shards(table, n):
    sizes = [len(table) // n + (1 if p < len(table) % n else 0) for p in range(n)]
    return np.split(table, np.cumsum(sizes)[:-1])


@pytest.mark.parametrize("strategy,split", [("mod", _mod_shards), ("div", _div_shards)])
@pytest.mark.parametrize("num_shards", [1, 2, 3, 5])
def test_embedding_lookup_strategies(strategy, split, num_shards):
    table = np.arange(13 * 2, dtype=np.float32).reshape(13, 2)
    ids = np.array([[12, 0, 5], [7, 7, 3]])
    shards = [tf.constant(s) for s in split(table, num_shards)]
    y = nn.embedding_lookup(shards, ids, partition_strategy=strategy)
    assert y.shape.as_list() == [2, 3, 2]
    np.testing.assert_array_equal(_run(y), table[ids])


def test_embedding_lookup_accepts_iterables_and_variables():
    table = np.arange(12, dtype=np.float64).reshape(6, 2)
    parts = [tf.Variable(s) for s in _mod_shards(table, 3)]
    y = nn.embedding_lookup(_Shards(parts), [5, 1, 0])
    single = nn.embedding_lookup(tf.Variable(table), tf.constant([[4], [2]], tf.int64))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(y), table[[5, 1, 0]])
        np.testing.assert_array_equal(sess.run(single), table[[[4], [2]]])


def test_embedding_lookup_gradients_are_sparse_and_per_shard():
    table = np.arange(12, dtype=np.float64).reshape(6, 2)
    parts = [tf.Variable(s, name=f"part_{i}") for i, s in enumerate(_mod_shards(table, 3))]
    ids = tf.constant([4, 1, 4])  # shard 1 rows 1 and 0 (mod 3); shard 2 untouched
    y = nn.embedding_lookup(parts, ids)
    grads = tf.gradients(tf.reduce_sum(y * 2.0), parts)
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run([(g.indices, g.values) for g in grads])
    assert values[0][0].size == 0
    np.testing.assert_array_equal(values[1][0], [1, 0, 1])
    np.testing.assert_array_equal(values[1][1], np.full((3, 2), 2.0))
    assert values[2][0].size == 0


def test_embedding_lookup_colocates_each_gather_with_its_shard():
    with tf.device("/job:ps/task:0"):
        a = tf.Variable(np.zeros((2, 3)), name="a")
    with tf.device("/job:ps/task:1"):
        b = tf.Variable(np.zeros((2, 3)), name="b")
    with tf.device("/job:worker/task:0"):
        y = nn.embedding_lookup([a, b], [0, 3])
    gathers = [op for op in tf.get_default_graph().get_operations() if op.type == "GatherV2"]
    shard_gathers = [op for op in gathers if op.inputs[0].op.name in ("a/read", "b/read")]
    assert len(shard_gathers) == 2
    for op in shard_gathers:
        owner = op.inputs[0].op.name.split("/")[0]
        assert op.colocation_groups() == [f"loc:@{owner}".encode()]
    assert y.op.type == "Reshape"


def test_embedding_lookup_max_norm():
    table = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    y = nn.embedding_lookup(table, [0, 1, 2], max_norm=1.0)
    np.testing.assert_allclose(_run(y), [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])
    sharded = nn.embedding_lookup([table[:2], table[2:]], [0, 2], "div", max_norm=1.0)
    np.testing.assert_allclose(_run(sharded), [[0.6, 0.8], [0.0, 0.0]])


def test_embedding_lookup_errors():
    with pytest.raises(ValueError, match="Need at least one param"):
        nn.embedding_lookup([], [0])
    with pytest.raises(ValueError, match="params must be specified"):
        nn.embedding_lookup(None, [0])
    with pytest.raises(ValueError, match="Unrecognized partition strategy: foo"):
        nn.embedding_lookup([np.ones((2, 2)), np.ones((2, 2))], [0], partition_strategy="foo")


def test_embedding_lookup_on_a_partitioned_variable():
    table = np.arange(20, dtype=np.float32).reshape(10, 2)
    emb = tf.get_variable(
        "emb", initializer=tf.constant(table), partitioner=tf.fixed_size_partitioner(3)
    )
    ids = [9, 0, 4, 4]
    y = nn.embedding_lookup(emb, ids, partition_strategy="div")
    grads = tf.gradients(tf.reduce_sum(y), list(emb))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(y), table[ids])
        rows = sess.run([g.indices for g in grads])
    # parts hold rows 0-3, 4-6 and 7-9 ("div", the first part one row longer)
    assert [sorted(r.tolist()) for r in rows] == [[0], [0, 0], [2]]
