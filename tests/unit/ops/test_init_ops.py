"""Initializers (mirrors TF's init_ops_test.py): values, dtypes, shapes, statistics with fixed
seeds, Glorot/variance-scaling limits, configs, and use through `tf.Variable`."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import initializers
from tensorweave.ops import init_ops
from tensorweave.ops.variable_scope import _PartitionInfo


def _value(init, shape, dtype=None, partition_info=None):
    g = tf.Graph()
    with g.as_default():
        t = init(shape, dtype=dtype, partition_info=partition_info)
    with tf.Session(graph=g) as sess:
        return t, sess.run(t)


# ------------------------------------------------------------------------- constants
@pytest.mark.parametrize(
    ("dtype", "zero", "one"),
    [
        (tf.float32, 0.0, 1.0),
        (tf.float64, 0.0, 1.0),
        (tf.int32, 0, 1),
        (tf.int64, 0, 1),
        (tf.uint8, 0, 1),
        (tf.bool, False, True),
        (tf.float16, 0.0, 1.0),
    ],
)
def test_zeros_and_ones(dtype, zero, one):
    t, v = _value(tf.zeros_initializer(), [2, 3], dtype)
    assert t.dtype == dtype and t.shape.as_list() == [2, 3]
    assert v.dtype == dtype.as_numpy_dtype
    np.testing.assert_array_equal(v, np.full((2, 3), zero))
    _, v = _value(tf.ones_initializer(dtype=dtype), [4])
    np.testing.assert_array_equal(v, np.full(4, one))


def test_zeros_string_and_empty_shapes():
    _, v = _value(tf.zeros_initializer(dtype=tf.string), [2])
    assert v.tolist() == [b"", b""]
    _, v = _value(tf.zeros_initializer(), [0, 3])
    assert v.shape == (0, 3)
    _, v = _value(tf.ones_initializer(), tf.TensorShape([]))
    assert v == 1.0 and v.shape == ()
    with tf.Graph().as_default(), pytest.raises(TypeError):
        tf.ones_initializer()([2], dtype=tf.string)


def test_large_zeros():
    t, v = _value(tf.zeros_initializer(), [100, 50])
    assert v.shape == (100, 50) and not v.any()
    assert t.shape.as_list() == [100, 50]


def test_constant_initializer_fill_pad_and_errors():
    _, v = _value(tf.constant_initializer(0.5), [2, 2])
    np.testing.assert_array_equal(v, np.full((2, 2), 0.5, np.float32))
    _, v = _value(tf.constant_initializer([0, 1, 2, 3, 4, 5, 6, 7]), [3, 4])
    np.testing.assert_array_equal(v, [[0, 1, 2, 3], [4, 5, 6, 7], [7, 7, 7, 7]])
    _, v = _value(tf.constant_initializer(np.arange(6).reshape(2, 3)), [3, 2], tf.int32)
    np.testing.assert_array_equal(v, [[0, 1], [2, 3], [4, 5]])
    assert v.dtype == np.int32
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Too many elements provided. Needed at most 6"):
            tf.constant_initializer(list(range(8)))([2, 3])
        with pytest.raises(TypeError, match="Expected Tensor's shape"):
            tf.constant_initializer([1, 2, 3], verify_shape=True)([3, 1])
        tf.constant_initializer([1, 2, 3], verify_shape=True)([3])
    with pytest.raises(TypeError, match="Invalid type for initial value"):
        tf.constant_initializer({"a": 1})


# ------------------------------------------------------------------------ random ones
def test_random_uniform_initializer():
    t, v = _value(tf.random_uniform_initializer(-0.5, 0.25, seed=1), [100, 100])
    assert t.dtype == tf.float32
    assert v.min() >= -0.5 and v.max() < 0.25
    assert abs(v.mean() + 0.125) < 0.01
    _, v = _value(tf.random_uniform_initializer(0, 5, dtype=tf.int64, seed=1), [1000])
    assert v.dtype == np.int64 and set(np.unique(v)) == {0, 1, 2, 3, 4}


def test_random_normal_and_truncated_normal_initializers():
    _, v = _value(tf.random_normal_initializer(1.0, 0.5, seed=2), [100, 200], tf.float64)
    assert v.dtype == np.float64
    assert abs(v.mean() - 1.0) < 0.01 and abs(v.std() - 0.5) < 0.01
    _, v = _value(tf.truncated_normal_initializer(0.0, 0.5, seed=2), [100, 200])
    assert np.abs(v).max() < 1.0
    assert abs(v.std() - 0.5 * 0.87962566103423978) < 0.01
    with pytest.raises(ValueError, match="Expected floating point type"):
        tf.random_normal_initializer(dtype=tf.int32)
    with pytest.raises(ValueError, match="Expected floating point type"):
        tf.truncated_normal_initializer(dtype=tf.int64)


def test_seeded_initializers_repeat_across_graphs():
    _, a = _value(tf.glorot_uniform_initializer(seed=7), [10, 10])
    _, b = _value(tf.glorot_uniform_initializer(seed=7), [10, 10])
    _, c = _value(tf.glorot_uniform_initializer(seed=8), [10, 10])
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


# --------------------------------------------------------------------- variance scaling
@pytest.mark.parametrize(
    ("shape", "fans"),
    [([], (1, 1)), ([7], (7, 7)), ([30, 50], (30, 50)), ([3, 3, 8, 16], (72, 144))],
)
def test_compute_fans(shape, fans):
    assert init_ops._compute_fans(shape) == fans


def test_glorot_uniform_limit():
    shape = [200, 100]
    limit = math.sqrt(6.0 / (200 + 100))
    t, v = _value(tf.glorot_uniform_initializer(seed=3), shape)
    assert t.dtype == tf.float32 and v.shape == (200, 100)
    assert np.abs(v).max() <= limit
    assert np.abs(v).max() > 0.98 * limit
    assert abs(v.var() - limit**2 / 3) < 0.05 * limit**2 / 3


def test_glorot_normal_and_conv_fans():
    shape = [3, 3, 16, 32]
    fan_in, fan_out = 3 * 3 * 16, 3 * 3 * 32
    _, v = _value(tf.glorot_normal_initializer(seed=4), shape)
    assert abs(v.std() - math.sqrt(2.0 / (fan_in + fan_out))) < 0.003
    stddev = math.sqrt(2.0 / (fan_in + fan_out)) / 0.87962566103423978
    assert np.abs(v).max() < 2 * stddev


@pytest.mark.parametrize(("mode", "n"), [("fan_in", 400), ("fan_out", 100), ("fan_avg", 250)])
def test_variance_scaling_modes(mode, n):
    shape = [400, 100]
    for distribution, expected_std in (
        ("truncated_normal", math.sqrt(2.0 / n)),
        ("normal", math.sqrt(2.0 / n)),
        ("untruncated_normal", math.sqrt(2.0 / n)),
        ("uniform", math.sqrt(2.0 / n)),
    ):
        init = tf.variance_scaling_initializer(2.0, mode, distribution, seed=5)
        _, v = _value(init, shape, tf.float64)
        assert abs(v.std() - expected_std) < 0.03 * expected_std, distribution
    _, v = _value(tf.variance_scaling_initializer(2.0, mode, "uniform", seed=1), shape)
    assert np.abs(v).max() <= math.sqrt(3 * 2.0 / n)


def test_variance_scaling_partition_uses_full_shape():
    info = _PartitionInfo(full_shape=[100, 10], var_offset=[50, 0])
    _, v = _value(
        tf.variance_scaling_initializer(1.0, "fan_in", "uniform", seed=2),
        [50, 10],
        partition_info=info,
    )
    assert v.shape == (50, 10)
    assert np.abs(v).max() <= math.sqrt(3.0 / 100)
    assert np.abs(v).max() > math.sqrt(3.0 / 50) * 0.5


def test_variance_scaling_errors():
    with pytest.raises(ValueError, match="`scale` must be positive"):
        tf.variance_scaling_initializer(0.0)
    with pytest.raises(ValueError, match="Invalid `mode`"):
        tf.variance_scaling_initializer(mode="fan")
    with pytest.raises(ValueError, match="Invalid `distribution`"):
        tf.variance_scaling_initializer(distribution="cauchy")
    with pytest.raises(ValueError, match="Expected floating point type"):
        tf.variance_scaling_initializer(dtype=tf.int32)


def test_uniform_unit_scaling():
    _, v = _value(tf.uniform_unit_scaling_initializer(factor=2.0, seed=1), [300, 20])
    limit = math.sqrt(3.0 / 300) * 2.0
    assert np.abs(v).max() <= limit and np.abs(v).max() > 0.95 * limit


def test_he_and_lecun_shortcuts():
    for fn, scale, dist in (
        (initializers.he_normal, 2.0, "truncated_normal"),
        (initializers.he_uniform, 2.0, "uniform"),
        (initializers.lecun_normal, 1.0, "truncated_normal"),
        (initializers.lecun_uniform, 1.0, "uniform"),
    ):
        init = fn(seed=3)
        assert isinstance(init, init_ops.VarianceScaling)
        assert (init.scale, init.mode, init.distribution, init.seed) == (scale, "fan_in", dist, 3)


# ------------------------------------------------------------------ identity, orthogonal
def test_identity_initializer():
    _, v = _value(initializers.identity(gain=2.0), [3, 4])
    np.testing.assert_array_equal(v, 2.0 * np.eye(3, 4))
    info = _PartitionInfo(full_shape=[4, 4], var_offset=[2, 0])
    _, v = _value(initializers.identity(), [2, 4], partition_info=info)
    np.testing.assert_array_equal(v, np.eye(4)[2:])
    with tf.Graph().as_default(), pytest.raises(ValueError, match="only be used for 2D"):
        initializers.identity()([2, 2, 2])


def test_orthogonal_initializer():
    for shape in ([10, 4], [4, 10], [3, 2, 5]):
        _, v = _value(tf.orthogonal_initializer(gain=1.5, seed=1), shape)
        flat = v.reshape(-1, shape[-1])
        small = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
        np.testing.assert_allclose(small, 1.5**2 * np.eye(small.shape[0]), atol=1e-4)


def test_orthogonal_rejects_vectors():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="at least two-dimensional"):
        tf.orthogonal_initializer()([3])


# ------------------------------------------------------------------------------ config
@pytest.mark.parametrize(
    "init",
    [
        init_ops.Zeros(tf.int32),
        init_ops.Ones(),
        init_ops.Constant([1, 2], tf.float64),
        init_ops.RandomUniform(-1, 2, seed=3),
        init_ops.RandomNormal(0.5, 2.0, seed=1),
        init_ops.TruncatedNormal(0.0, 0.1),
        init_ops.UniformUnitScaling(1.5, seed=2),
        init_ops.VarianceScaling(2.0, "fan_out", "uniform", seed=9),
        init_ops.GlorotUniform(4),
        init_ops.GlorotNormal(seed=5, dtype=tf.float64),
        init_ops.Orthogonal(2.0, seed=1),
        init_ops.Identity(3.0),
    ],
)
def test_config_round_trip(init):
    config = init.get_config()
    assert config["dtype"] == init.dtype.name
    clone = type(init).from_config(config)
    assert type(clone) is type(init)
    assert clone.get_config() == config


def test_glorot_config_is_seed_and_dtype_only():
    assert tf.glorot_uniform_initializer(seed=1).get_config() == {"seed": 1, "dtype": "float32"}
    assert init_ops.Constant(2.0).get_config() == {"value": 2.0, "dtype": "float32"}


def test_public_names():
    assert tf.zeros_initializer is init_ops.Zeros
    assert tf.glorot_uniform_initializer is init_ops.GlorotUniform
    assert initializers.zeros is init_ops.Zeros
    assert initializers.variance_scaling is init_ops.VarianceScaling
    assert initializers.global_variables is tf.global_variables_initializer
    for name in init_ops.__all__:
        assert getattr(tf, name) is getattr(init_ops, name)


# ------------------------------------------------------------------- with tf.Variable
def test_initializer_through_variable_is_colocated():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(lambda: tf.glorot_uniform_initializer(seed=1)([5, 6]), name="w")
    init_ops_in_graph = [op for op in g.get_operations() if op.name.startswith("w/Initializer")]
    assert init_ops_in_graph
    for op in init_ops_in_graph:
        assert op.get_attr("_class") == [b"loc:@w"]
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        value = sess.run(v)
    assert value.shape == (5, 6) and value.dtype == np.float32
    assert np.abs(value).max() <= math.sqrt(6.0 / 11)
