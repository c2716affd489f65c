"""Python ints that do not fit the requested integer dtype are refused instead of wrapping
(NumPy's cast gives `2**33 -> 0`), and shapes given as large Python ints keep their value."""

import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("value, dtype", [
    (1 << 33, tf.int32), ([1, 1 << 40], tf.int32), (-1, tf.uint8), (1 << 63, tf.int64),
    (300, tf.int8),
])
def test_out_of_range_python_int_is_a_value_error(value, dtype):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="out of range"):
            tf.constant(value, dtype=dtype)


def test_in_range_values_convert_exactly():
    with tf.Graph().as_default():
        c = tf.constant([-(1 << 31), (1 << 31) - 1], dtype=tf.int32)
        u = tf.constant(255, dtype=tf.uint8)
        with tf.Session() as sess:
            got_c, got_u = sess.run([c, u])
    np.testing.assert_array_equal(got_c, np.array([-(1 << 31), (1 << 31) - 1], np.int32))
    assert got_u == 255


def test_numpy_arrays_keep_their_explicit_cast():
    with tf.Graph().as_default():
        c = tf.constant(np.array([1 << 33], np.int64).astype(np.int32), dtype=tf.int32)
        with tf.Session() as sess:
            assert sess.run(c).tolist() == [0]


def test_fill_with_a_large_python_dim_keeps_the_shape():
    with tf.Graph().as_default():
        t = tf.fill([1 << 36], 1.0)
        assert t.shape.as_list() == [1 << 36]
        assert t.op.inputs[0].dtype == tf.int64
