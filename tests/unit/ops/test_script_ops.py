"""tf.py_func / tf.numpy_function / tf.py_function: values, multiple outputs, dtype checks,
error mapping (ValueError -> InvalidArgumentError, ...), ops without outputs."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_py_func_values_and_lists():
    x = tf.constant([1.0, 2.0])
    y = tf.py_func(lambda a: a * 2, [x], tf.float32)
    pair = tf.py_func(lambda a, b: (a + b, np.int64(3)), [x, x], [tf.float32, tf.int64])
    eager = tf.py_function(lambda a: a.numpy().sum(), [x], tf.float32)
    pure = tf.numpy_function(lambda a: a - 1, [x], tf.float32, stateful=False)
    strings = tf.py_func(lambda: np.array(["ab", b"c"], dtype=object), [], tf.string)
    calls = []
    noop = tf.py_func(lambda: calls.append(1), [], [])
    out = tf.Session().run([y, pair, eager, pure, strings, noop])
    assert out[0].tolist() == [2.0, 4.0] and out[0].dtype == np.float32
    assert out[1][0].tolist() == [2.0, 4.0] and int(out[1][1]) == 3
    assert out[2] == 3.0 and out[3].tolist() == [0.0, 1.0]
    assert out[4].tolist() == [b"ab", b"c"] and calls == [1]
    assert noop.type == "PyFunc" and pure.op.type == "PyFuncStateless"
    assert eager.op.type == "EagerPyFunc" and isinstance(pair, list)


def test_py_func_errors():
    def bad_value(a):
        raise ValueError("no good")

    def exhausted(a):
        raise StopIteration

    cases = [(bad_value, errors.InvalidArgumentError, "no good"),
             (exhausted, errors.OutOfRangeError, "StopIteration"),
             (lambda a: 1 / 0, errors.UnknownError, "division by zero"),
             (lambda a: (a, a), errors.InvalidArgumentError, "returns 2 values"),
             (lambda a: a + 0.5, errors.InvalidArgumentError, "Tout\\[0\\] = int32")]
    for fn, cls, message in cases:
        with tf.Graph().as_default():
            node = tf.py_func(fn, [tf.constant([1])], tf.int32)
            with pytest.raises(cls, match=message):
                tf.Session().run(node)
    with pytest.raises(TypeError, match="callable"):
        tf.py_func(3, [], tf.int32)
