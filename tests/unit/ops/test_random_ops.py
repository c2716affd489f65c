"""Random ops: TF 1.x seed rules (random_seed_test.py), kernel statistics with fixed seeds
(random_ops_test.py), dtypes, shapes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import random_ops
from tensorweave.ops.gradients_impl import gradient_registry

MAXINT32 = 2**31 - 1


def _run(fetches, graph, feed_dict=None):
    with tf.Session(graph=graph) as sess:
        return sess.run(fetches, feed_dict)


# ------------------------------------------------------------------------------ seeds
@pytest.mark.parametrize(
    ("graph_seed", "op_seed", "expected"),
    [
        (None, None, (None, None)),
        (None, 1, (random_ops.DEFAULT_GRAPH_SEED, 1)),
        (1, 1, (1, 1)),
        (0, 0, (0, MAXINT32)),
        (MAXINT32, 0, (0, MAXINT32)),
        (2**31 + 5, 2**33, (6, 2**33 % MAXINT32)),
        (None, -1, (random_ops.DEFAULT_GRAPH_SEED, MAXINT32 - 1)),
    ],
)
def test_get_seed_rules(graph_seed, op_seed, expected):
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(graph_seed)
        assert tf.get_seed(op_seed) == expected


def test_get_seed_graph_seed_only_uses_last_op_id():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(7)
        assert tf.get_seed(None) == (7, 0)
        tf.constant(1.0)
        tf.constant(2.0)
        assert tf.get_seed(None) == (7, 2)


def test_seed_attrs_on_ops():
    g = tf.Graph()
    with g.as_default():
        a = tf.random_uniform([2], maxval=5, dtype=tf.int32)
        b = tf.random_uniform([2], maxval=5, dtype=tf.int32, seed=3)
        tf.set_random_seed(11)
        c = tf.random_uniform([2], maxval=5, dtype=tf.int32)
    assert (a.op.get_attr("seed"), a.op.get_attr("seed2")) == (0, 0)
    assert (b.op.get_attr("seed"), b.op.get_attr("seed2")) == (87654321, 3)
    assert c.op.get_attr("seed") == 11
    assert c.op.get_attr("seed2") > 0


def _seeded_graph(graph_seed, op_seed=None):
    g = tf.Graph()
    with g.as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        a = tf.random_uniform([4], dtype=tf.float32, seed=op_seed)
        b = tf.random_normal([4], seed=op_seed)
    return g, a, b


def test_graph_seed_repeatable_across_graphs_and_sessions():
    g1, a1, b1 = _seeded_graph(1234)
    g2, a2, b2 = _seeded_graph(1234)
    with tf.Session(graph=g1) as s1:
        first = [s1.run([a1, b1]) for _ in range(2)]
    with tf.Session(graph=g2) as s2:
        second = [s2.run([a2, b2]) for _ in range(2)]
    for (x1, y1), (x2, y2) in zip(first, second):
        np.testing.assert_array_equal(x1, x2)
        np.testing.assert_array_equal(y1, y2)
    # Each run draws fresh numbers; different ops get different sequences.
    assert not np.array_equal(first[0][0], first[1][0])
    assert not np.array_equal(first[0][0], first[0][1])


def test_new_session_restarts_sequence_with_op_seed():
    g, a, _ = _seeded_graph(None, op_seed=5)
    with tf.Session(graph=g) as s:
        seq1 = [s.run(a) for _ in range(3)]
    with tf.Session(graph=g) as s:
        seq2 = [s.run(a) for _ in range(3)]
    for x, y in zip(seq1, seq2):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(seq1[0], seq1[1])


def test_same_op_seed_same_values_within_graph():
    g = tf.Graph()
    with g.as_default():
        a = tf.random_uniform([5], seed=9)
        b = tf.random_uniform([5], seed=9)
    x, y = _run([a, b], g)
    np.testing.assert_array_equal(x, y)


def test_different_graph_seeds_differ():
    g1, a1, _ = _seeded_graph(1)
    g2, a2, _ = _seeded_graph(2)
    assert not np.array_equal(_run(a1, g1), _run(a2, g2))


def test_unseeded_sessions_differ():
    g, a, _ = _seeded_graph(None)
    assert not np.array_equal(_run(a, g), _run(a, g))


# ---------------------------------------------------------------- uniform distribution
@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_random_uniform_float_range_and_moments(dtype):
    g = tf.Graph()
    with g.as_default():
        x = tf.random_uniform([20000], minval=-2.0, maxval=3.0, dtype=dtype, seed=1)
    assert x.dtype == dtype
    assert x.shape.as_list() == [20000]
    v = _run(x, g)
    assert v.dtype == dtype.as_numpy_dtype
    assert v.min() >= -2.0 and v.max() < 3.0
    assert abs(v.astype(np.float64).mean() - 0.5) < 0.05
    assert abs(v.astype(np.float64).var() - 25.0 / 12) < 0.1


def test_random_uniform_unit_op_in_range():
    g = tf.Graph()
    with g.as_default():
        x = apply_op("RandomUniform", shape=[100000], dtype=tf.float16, seed=2, seed2=3)
    v = _run(x, g)
    assert v.dtype == np.float16
    assert v.min() >= 0.0 and v.max() < 1.0


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_random_uniform_int(dtype):
    g = tf.Graph()
    with g.as_default():
        x = tf.random_uniform([10000], minval=-3, maxval=4, dtype=dtype, seed=1)
    assert x.op.type == "RandomUniformInt"
    assert x.op.name == "random_uniform"
    v = _run(x, g)
    assert v.dtype == dtype.as_numpy_dtype
    assert set(np.unique(v)) == set(range(-3, 4))
    assert abs(v.mean()) < 0.1


def test_random_uniform_int_requires_maxval_and_valid_dtype():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
            tf.random_uniform([2], dtype=tf.int32)
        with pytest.raises(ValueError, match="Invalid dtype"):
            tf.random_uniform([2], dtype=tf.uint8, maxval=3)


def test_random_uniform_int_empty_range_fails_at_run_time():
    g = tf.Graph()
    with g.as_default():
        hi = tf.placeholder(tf.int32, [])
        x = tf.random_uniform([3], minval=5, maxval=hi, dtype=tf.int32)
        empty = tf.random_uniform([0], minval=5, maxval=hi, dtype=tf.int32)
    with tf.Session(graph=g) as sess:
        with pytest.raises(errors.InvalidArgumentError, match="Need minval < maxval: 5 >= 5"):
            sess.run(x, {hi: 5})
        assert sess.run(empty, {hi: 5}).shape == (0,)


# ----------------------------------------------------------------- normal distributions
@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_random_normal_moments(dtype):
    g = tf.Graph()
    with g.as_default():
        x = tf.random_normal([200, 100], mean=1.5, stddev=2.0, dtype=dtype, seed=4)
    assert x.shape.as_list() == [200, 100]
    v = _run(x, g)
    assert v.dtype == dtype.as_numpy_dtype
    assert abs(v.astype(np.float64).mean() - 1.5) < 0.05
    assert abs(v.astype(np.float64).std() - 2.0) < 0.05


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_truncated_normal_bounds_and_moments(dtype):
    g = tf.Graph()
    with g.as_default():
        x = tf.truncated_normal([50000], mean=-1.0, stddev=3.0, dtype=dtype, seed=6)
    v = _run(x, g).astype(np.float64)
    assert v.min() > -1.0 - 6.0 - 1e-2 and v.max() < -1.0 + 6.0 + 1e-2
    assert abs(v.mean() + 1.0) < 0.05
    # The standard deviation of a unit normal truncated at +-2.
    assert abs(v.std() - 3.0 * 0.87962566103423978) < 0.05


def test_truncated_normal_unit_op_strictly_within_two():
    g = tf.Graph()
    with g.as_default():
        x = apply_op("TruncatedNormal", shape=[200000], dtype=tf.float16, seed=1, seed2=1)
    v = _run(x, g)
    assert v.dtype == np.float16
    assert np.abs(v).max() < 2.0


def test_normal_ops_reject_integer_dtype():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
            tf.random_normal([2], dtype=tf.int32)


def test_op_names_follow_tensorflow():
    g = tf.Graph()
    with g.as_default():
        x = tf.random_normal([2, 3], seed=1)
        y = tf.truncated_normal([2], seed=1, name="init")
    names = [op.name for op in g.get_operations()]
    assert x.op.name == "random_normal"
    assert "random_normal/RandomStandardNormal" in names
    assert "random_normal/shape" in names
    assert y.op.name == "init"
    assert "init/TruncatedNormal" in names


# ------------------------------------------------------------------------------ shapes
def test_shape_from_tensor_and_unknown_shapes():
    g = tf.Graph()
    with g.as_default():
        dims = tf.placeholder(tf.int32, [2])
        x = apply_op("RandomStandardNormal", shape=dims, dtype=tf.float32)
        y = tf.random_uniform(tf.TensorShape([3, 2]), maxval=2, dtype=tf.int64)
        s = tf.random_uniform([], maxval=2, dtype=tf.int32)
    assert x.shape.as_list() == [None, None]
    assert y.shape.as_list() == [3, 2]
    assert s.shape.as_list() == []
    with tf.Session(graph=g) as sess:
        assert sess.run(x, {dims: [4, 5]}).shape == (4, 5)
        assert sess.run(s).shape == ()
        with pytest.raises(errors.InvalidArgumentError, match="Dimension -1 must be >= 0"):
            sess.run(x, {dims: [-1, 2]})


def test_shape_input_must_be_a_vector():
    g = tf.Graph()
    with g.as_default():
        dims = tf.placeholder(tf.int32)
        x = apply_op("RandomStandardNormal", shape=dims, dtype=tf.float32)
        with pytest.raises(ValueError):
            apply_op("RandomStandardNormal", shape=[[1, 2]], dtype=tf.float32)
    with tf.Session(graph=g) as sess:
        with pytest.raises(errors.InvalidArgumentError, match="shape must be a vector"):
            sess.run(x, {dims: [[1, 2]]})


# ---------------------------------------------------------------------------- shuffle
@pytest.mark.parametrize(
    "value",
    [
        np.arange(10, dtype=np.int32),
        np.arange(24, dtype=np.float32).reshape(6, 4),
        np.array([b"a", b"b", b"c"], dtype=object),
    ],
)
def test_random_shuffle_is_a_permutation_of_rows(value):
    g = tf.Graph()
    with g.as_default():
        x = tf.random_shuffle(tf.constant(value), seed=3)
    assert x.dtype == tf.as_dtype(value.dtype)
    assert x.shape.as_list() == list(value.shape)
    with tf.Session(graph=g) as sess:
        results = [sess.run(x) for _ in range(5)]
    for r in results:
        assert r.shape == value.shape
        assert sorted(map(repr, r.tolist())) == sorted(map(repr, value.tolist()))
    assert any(not np.array_equal(r, value) for r in results)


def test_random_shuffle_scalar_and_single_row():
    g = tf.Graph()
    with g.as_default():
        a = tf.random_shuffle(tf.constant(3.0))
        b = tf.random_shuffle(tf.constant([[1, 2]]))
    va, vb = _run([a, b], g)
    assert va == 3.0
    np.testing.assert_array_equal(vb, [[1, 2]])


# ------------------------------------------------------------------------ multinomial
def test_multinomial_frequencies_and_shape():
    g = tf.Graph()
    with g.as_default():
        probs = np.log([[0.1, 0.2, 0.7], [0.5, 0.5, 1.0]])
        probs[1, 2] = -np.inf
        logits = tf.constant(probs, dtype=tf.float32)
        x = tf.multinomial(logits, 20000, seed=5)
        y = tf.multinomial(logits, 3, output_dtype=tf.int32, seed=5)
    assert x.shape.as_list() == [2, 20000]
    assert x.dtype == tf.int64 and y.dtype == tf.int32
    vx, vy = _run([x, y], g)
    assert vx.dtype == np.int64 and vy.dtype == np.int32
    freq0 = np.bincount(vx[0], minlength=3) / 20000
    np.testing.assert_allclose(freq0, [0.1, 0.2, 0.7], atol=0.02)
    assert not np.any(vx[1] == 2)  # probability 0 (-inf logit)


def test_multinomial_errors():
    g = tf.Graph()
    with g.as_default():
        logits = tf.placeholder(tf.float32)
        n = tf.placeholder(tf.int32, [])
        x = tf.multinomial(logits, n)
    with tf.Session(graph=g) as sess:
        with pytest.raises(errors.InvalidArgumentError, match="logits should be a matrix"):
            sess.run(x, {logits: [1.0, 2.0], n: 1})
        with pytest.raises(errors.InvalidArgumentError, match="num_samples should be nonneg"):
            sess.run(x, {logits: [[1.0, 2.0]], n: -1})
        with pytest.raises(errors.InvalidArgumentError, match="num_classes should be positive"):
            sess.run(x, {logits: np.zeros((1, 0)), n: 1})
        assert sess.run(x, {logits: [[1.0, 2.0]], n: 0}).shape == (1, 0)


def test_random_ops_are_stateful_and_not_differentiable():
    g = tf.Graph()
    with g.as_default():
        x = tf.random_uniform([2], maxval=3, dtype=tf.int32)
    assert x.op._is_stateful
    for op_type in (
        "RandomUniform",
        "RandomStandardNormal",
        "TruncatedNormal",
        "RandomUniformInt",
        "RandomShuffle",
        "Multinomial",
    ):
        assert op_type in gradient_registry
        assert gradient_registry.lookup(op_type) is None
