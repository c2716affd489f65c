"""`tf.py_func`, `tf.numpy_function`, `tf.py_function` (cases follow TensorFlow's
py_func_test.py; error classes as TF 2.21 raises them)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.py_funcs import py_funcs


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_single_and_multiple_outputs():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        one = tf.py_func(lambda a: a * 2, [x], tf.float32)
        two = tf.py_func(lambda a, b: (a + b, np.int64(3)), [x, 1.0], [tf.float32, tf.int64])
        assert isinstance(one, tf.Tensor) and one.op.type == "PyFunc"
        assert one.shape.ndims is None
        assert [t.dtype for t in two] == [tf.float32, tf.int64]
        got_one, got_two = _run([one, two])
    np.testing.assert_array_equal(got_one, [2.0, 4.0])
    np.testing.assert_array_equal(got_two[0], [2.0, 3.0])
    assert got_two[1] == 3 and got_two[1].dtype == np.int64


def test_python_values_are_converted_and_strings_pass():
    with tf.Graph().as_default():
        num = tf.py_func(lambda: [[1, 2, 3]], [], tf.int32)
        text = tf.py_func(lambda s: s + b"!", [tf.constant(b"hi")], tf.string)
        assert _run(num).tolist() == [1, 2, 3]
        assert _run(text) == b"hi!"


def test_no_outputs_returns_the_op_and_runs_the_function():
    calls = []
    with tf.Graph().as_default():
        op = tf.py_func(lambda v: calls.append(int(v)), [tf.constant(7)], [])
        assert isinstance(op, tf.Operation)
        assert _run(op) is None
    assert calls == [7]


def test_stateless_and_aliases():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None])
        stateless = tf.py_func(np.sqrt, [x], tf.float64, stateful=False)
        numpy_fn = tf.numpy_function(lambda v: v + 1, [x], tf.float64)
        eager_fn = tf.py_function(lambda v: v.numpy() * 3, [x], tf.float64)
        assert (stateless.op.type, numpy_fn.op.type, eager_fn.op.type) == (
            "PyFuncStateless", "PyFunc", "EagerPyFunc")
        got = _run([stateless, numpy_fn, eager_fn], {x: [4.0, 9.0]})
    np.testing.assert_array_equal(got[0], [2.0, 3.0])
    np.testing.assert_array_equal(got[1], [5.0, 10.0])
    np.testing.assert_array_equal(got[2], [12.0, 27.0])


def test_wrong_dtype_and_count():
    with tf.Graph().as_default():
        wrong = tf.py_func(lambda a: a.astype(np.float64), [tf.constant([1.0])], tf.float32)
        count = tf.py_func(lambda a: (a, a), [tf.constant(1.0)], [tf.float32])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="0-th value returned by pyfunc_\\d+ is float64, "
                                     "but expects float32"):
                sess.run(wrong)
            with pytest.raises(tf.errors.InvalidArgumentError, match="expects to see 1"):
                sess.run(count)


@pytest.mark.parametrize("exc, cls", [
    (ValueError("bad v"), tf.errors.InvalidArgumentError),
    (TypeError("bad t"), tf.errors.InvalidArgumentError),
    (StopIteration(), tf.errors.OutOfRangeError),
    (NotImplementedError("n"), tf.errors.UnimplementedError),
    (KeyError("k"), tf.errors.UnknownError),
])
def test_exceptions_map_to_tensorflow_errors(exc, cls):
    def raise_it(x):
        raise exc

    with tf.Graph().as_default():
        op = tf.py_func(raise_it, [tf.constant(1.0)], tf.float32)
        with pytest.raises(cls, match=type(exc).__name__):
            _run(op)


def test_not_callable_and_not_differentiable():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="callable"):
            tf.py_func(3, [], tf.float32)
        x = tf.constant(1.0)
        y = tf.py_func(lambda a: a * 2, [x], tf.float32)
        assert tf.gradients(y, x) == [None]


def test_graph_keeps_its_functions_alive():
    g = tf.Graph()
    with g.as_default():
        y = tf.py_func(lambda a: a + 1, [tf.constant(1)], tf.int32)
    gc.collect()
    token = y.op.get_attr("token")
    assert py_funcs.get(token) is not None
    with tf.Session(graph=g) as sess:
        assert sess.run(y) == 2
    del g, y, sess
    gc.collect()
    assert py_funcs.get(token) is None


def test_from_generator_callables_belong_to_their_graph():
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.from_generator(lambda: iter([1, 2]), tf.int64)
        value = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
    token = ds._variant_tensor.op.get_attr("token")
    assert py_funcs.get(token) is not None
    with tf.Session(graph=g) as sess:
        assert sess.run(value) == 1
    del g, ds, value, sess
    gc.collect()
    assert py_funcs.get(token) is None


def test_py_func_in_a_dataset_map_lives_with_the_outer_graph():
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.range(3).map(lambda x: tf.py_func(lambda v: v * 10, [x],
                                                                tf.int64))
        nxt = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
    gc.collect()  # NOTE: the map function's graph is gone once its body is serialized
    with tf.Session(graph=g) as sess:
        assert [sess.run(nxt) for _ in range(3)] == [0, 10, 20]
