"""Python values as tensors, as TF 1.x converts them: static shapes (`TensorShape` and
`Dimension` conversion functions, known `Dimension`s inside integer lists as TF's
`_FilterInt` allows) and None (ValueError "None values not supported.", with TF's
"Tried to convert 'x'" prefix for op inputs)."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.tensor_shape import Dimension

NONE = "None values not supported."


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_reshape_to_a_product_of_static_dimensions():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    t = tf.constant(x)
    feature_dim = t.shape[1] * t.shape[2] * t.shape[3]
    assert isinstance(feature_dim, Dimension)
    flat = tf.reshape(t, [-1, feature_dim])
    assert flat.shape.as_list() == [2, 60]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(flat), x.reshape(-1, 60))


def test_integer_lists_with_dimensions():
    with tf.Session() as sess:
        c32 = tf.constant([-1, Dimension(4), np.int64(7)], dtype=tf.int32)
        c64 = tf.constant([[Dimension(2)], [3]], dtype=tf.int64)
        assert c32.dtype == tf.int32 and c64.dtype == tf.int64
        np.testing.assert_array_equal(sess.run(c32), np.array([-1, 4, 7], np.int32))
        np.testing.assert_array_equal(sess.run(c64), np.array([[2], [3]], np.int64))
    with pytest.raises(TypeError, match="Expected int32"):
        tf.constant([-1, Dimension(None)], dtype=tf.int32)
    with pytest.raises(TypeError, match="Expected float32"):
        tf.constant([1.0, Dimension(2)], dtype=tf.float32)


def test_tensor_shape_as_tensor():
    x = tf.zeros([2, 3])
    y = np.arange(6, dtype=np.float32)
    shape_t = tf.convert_to_tensor(x.shape)
    assert shape_t.op.type == "Const" and shape_t.op.name == "shape_as_tensor"
    assert shape_t.dtype == tf.int32 and shape_t.shape.as_list() == [2]
    s64 = tf.convert_to_tensor(x.shape, dtype=tf.int64)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(shape_t), np.array([2, 3], np.int32))
        assert sess.run(s64).dtype == np.int64
        np.testing.assert_array_equal(sess.run(tf.reshape(y, x.shape)), y.reshape(2, 3))
        np.testing.assert_array_equal(sess.run(tf.fill(x.shape, 1.5)), np.full((2, 3), 1.5))
    with pytest.raises(TypeError, match="Cannot convert a TensorShape to dtype: float32"):
        tf.convert_to_tensor(x.shape, dtype=tf.float32)
    with pytest.raises(ValueError, match=r"partially known TensorShape.*\(\?, 3\)"):
        tf.convert_to_tensor(tf.placeholder(tf.float32, [None, 3]).shape)


def test_dimension_as_tensor():
    d = tf.zeros([2, 7]).shape[1]
    t = tf.convert_to_tensor(d)
    t64 = tf.convert_to_tensor(d, dtype=tf.int64)
    assert t.dtype == tf.int32 and t.shape.ndims == 0 and t64.dtype == tf.int64
    with tf.Session() as sess:
        assert sess.run(t) == 7 and sess.run(t64) == 7
    with pytest.raises(ValueError, match="unknown Dimension"):
        tf.convert_to_tensor(Dimension(None))
    with pytest.raises(TypeError, match="Cannot convert a Dimension to dtype: float32"):
        tf.convert_to_tensor(d, dtype=tf.float32)


def test_sizes_beyond_int32_need_int64():
    big = tf.TensorShape([2**31, 2])
    t = tf.convert_to_tensor(big)
    assert t.dtype == tf.int64
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(t), np.array([2**31, 2], np.int64))
    with pytest.raises(ValueError, match=r"too large \(2147483648\)"):
        tf.convert_to_tensor(big, dtype=tf.int32)


def test_convert_to_tensor_and_constant():
    with pytest.raises(ValueError, match=f"^{NONE}$"):
        tf.convert_to_tensor(None)
    with pytest.raises(ValueError, match=f"^{NONE}$"):
        tf.convert_to_tensor(None, dtype=tf.float32)
    with pytest.raises(ValueError, match=f"^{NONE}$"):
        tf.convert_to_tensor(None, preferred_dtype=tf.int32)
    with pytest.raises(ValueError, match=f"^{NONE}$"):
        tf.constant(None)
    with pytest.raises(ValueError, match=f"^{NONE}$"):
        tf.constant(None, dtype=tf.int64)


def test_op_inputs_name_the_argument():
    with pytest.raises(ValueError, match=f"^Tried to convert 'tensor' to a tensor and failed. "
                                         f"Error: {NONE}$"):
        tf.reshape(None, [1])
    with pytest.raises(ValueError, match=f"Tried to convert 'shape'.*{NONE}"):
        tf.reshape(tf.constant([1.0]), None)
    with pytest.raises(ValueError, match=NONE):
        tf.constant(1.0) + None


def test_cond_branch_returning_none_values():
    # e.g. ExponentialMovingAverage.average(v) read before ema.apply() returns None.
    with pytest.raises(ValueError, match=f"^{NONE}$"):
        tf.cond(tf.constant(True), lambda: (tf.constant(1.0), tf.constant(2.0)),
                lambda: (None, None))
    assert tf.train.ExponentialMovingAverage(0.9).average(tf.Variable(1.0)) is None


def test_range_of_static_dimensions():
    x = tf.zeros([2, 5])
    r = tf.range(x.shape[1])
    assert r.dtype == tf.int32 and r.shape.as_list() == [5]
    rf = tf.range(x.shape[0], x.shape[1], 1.5)
    assert rf.dtype == tf.float32
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(r), np.arange(5, dtype=np.int32))
        np.testing.assert_array_equal(sess.run(rf), np.arange(2, 5, 1.5, dtype=np.float32))
    with pytest.raises(ValueError, match="unknown Dimension"):
        tf.range(tf.placeholder(tf.float32, [None]).shape[0])
