"""`tf.TensorArray` (cases from TensorFlow's tensor_array_ops_test.py, graph mode)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.gradient_checker import compute_gradient_error


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_write_read_and_stack():
    ta = tf.TensorArray(tf.float32, size=3)
    w0 = ta.write(0, [[4.0, 5.0]]).write(1, [[1.0, 1.0]]).write(2, [[7.0, 8.0]])
    r0, r1 = w0.read(0), w0.read(1)
    ta2 = tf.TensorArray(tf.float32, size=3, clear_after_read=False)
    ta2 = ta2.write(0, [[4.0, 5.0]]).write(1, [[1.0, 1.0]]).write(2, [[7.0, 8.0]])
    stacked = ta2.stack()
    a, b, s = _run([r0, r1, stacked])
    np.testing.assert_array_equal(a, [[4.0, 5.0]])
    np.testing.assert_array_equal(b, [[1.0, 1.0]])
    np.testing.assert_array_equal(s, [[[4.0, 5.0]], [[1.0, 1.0]], [[7.0, 8.0]]])
    assert r0.shape.as_list() == [1, 2]


def test_unstack_gather_scatter_concat_split():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    ta = tf.TensorArray(tf.float32, size=4, clear_after_read=False).unstack(x)
    g = ta.gather([3, 0])
    sc = tf.TensorArray(tf.float32, size=4, clear_after_read=False).scatter(
        [2, 0, 3, 1], x).stack()
    cat = tf.TensorArray(tf.float32, size=2, infer_shape=False).write(0, [1.0, 2.0]).write(
        1, [3.0]).concat()
    sp = tf.TensorArray(tf.float32, size=3, clear_after_read=False).split(
        tf.constant([1.0, 2.0, 3.0, 4.0, 5.0]), [2, 0, 3])
    sp_vals = [sp.read(0), sp.read(1), sp.read(2)]
    gv, scv, catv, spv = _run([g, sc, cat, sp_vals])
    np.testing.assert_array_equal(gv, x[[3, 0]])
    np.testing.assert_array_equal(scv, x[[1, 3, 0, 2]])
    np.testing.assert_array_equal(catv, [1.0, 2.0, 3.0])
    assert [v.tolist() for v in spv] == [[1.0, 2.0], [], [3.0, 4.0, 5.0]]


def test_size_and_dynamic_size_growth():
    ta = tf.TensorArray(tf.int32, size=1, dynamic_size=True)
    ta = ta.write(0, 1).write(4, 5)
    size = ta.size()
    assert _run(size) == 5
    fixed = tf.TensorArray(tf.int32, size=2).write(2, 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not resizeable"):
        _run(fixed.flow)


def test_clear_after_read_and_double_write_errors():
    ta = tf.TensorArray(tf.float32, size=2).write(0, 1.0)
    twice = [ta.read(0), ta.read(0)]
    with pytest.raises(tf.errors.InvalidArgumentError, match="twice because it was cleared"):
        _run(twice)
    again = tf.TensorArray(tf.float32, size=2).write(0, 1.0).write(0, 2.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="already been written"):
        _run(again.flow)
    bad = tf.TensorArray(tf.float32, size=2).write(0, 1.0).read(3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="index 3"):
        _run(bad)


def test_unwritten_elements_read_as_zeros_with_a_known_shape():
    ta = tf.TensorArray(tf.float32, size=3, element_shape=tf.TensorShape([2]))
    np.testing.assert_array_equal(_run(ta.write(1, [1.0, 2.0]).stack()),
                                  [[0, 0], [1, 2], [0, 0]])
    unknown = tf.TensorArray(tf.float32, size=2, infer_shape=False).read(0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not fully defined"):
        _run(unknown)


def test_static_shape_checks():
    ta = tf.TensorArray(tf.float32, size=2).write(0, [1.0, 2.0])
    with pytest.raises(ValueError, match="Inconsistent shapes"):
        ta.write(1, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="dtype"):
        tf.TensorArray(tf.float32, size=2).write(0, tf.constant(1))
    with pytest.raises(ValueError, match="Size must be provided"):
        tf.TensorArray(tf.float32)


def test_tensor_array_in_while_loop_with_gradient():
    x = tf.placeholder(tf.float64, [4, 3])
    inputs = tf.TensorArray(tf.float64, size=4).unstack(x)

    def body(i, acc, out):
        acc = acc + tf.sin(inputs.read(i)) * acc
        return i + 1, acc, out.write(i, acc)

    _, _, out = tf.while_loop(lambda i, a, o: i < 4, body,
                              [tf.constant(0), tf.ones([3], tf.float64),
                               tf.TensorArray(tf.float64, size=4)])
    y = out.stack()
    xv = np.random.default_rng(1).uniform(-1, 1, (4, 3))
    with tf.Session():
        err = compute_gradient_error(x, [4, 3], y, [4, 3], x_init_value=xv)
    assert err < 1e-6


@pytest.mark.parametrize("kind", ["gather_scatter", "concat_split", "stack_unstack"])
def test_gradients_outside_loops(kind):
    x = tf.placeholder(tf.float64, [4, 2])
    if kind == "gather_scatter":
        ta = tf.TensorArray(tf.float64, size=4).scatter([1, 0, 3, 2], x * x)
        y = ta.gather([2, 3, 0, 1])
    elif kind == "concat_split":
        ta = tf.TensorArray(tf.float64, size=2).split(x * 3.0, [1, 3])
        y = ta.concat() * x
    else:
        ta = tf.TensorArray(tf.float64, size=4).unstack(tf.sin(x))
        y = ta.stack()
    xv = np.random.default_rng(2).uniform(-1, 1, (4, 2))
    with tf.Session():
        err = compute_gradient_error(x, [4, 2], y, [4, 2], x_init_value=xv)
    assert err < 1e-6


def test_gradient_of_a_value_read_twice_sums():
    x = tf.placeholder(tf.float64, [2])
    ta = tf.TensorArray(tf.float64, size=1, clear_after_read=False).write(0, x)
    y = ta.read(0) * 2.0 + ta.read(0) * 3.0
    g = tf.gradients(y, x)[0]
    np.testing.assert_allclose(_run(g, {x: [1.0, 2.0]}), [5.0, 5.0])


def test_map_fn_scan_foldl_foldr():
    elems = tf.constant([1.0, 2.0, 3.0, 4.0])
    m = tf.map_fn(lambda v: v * v, elems)
    pair = tf.map_fn(lambda p: (p[0] + p[1], p[0] * p[1]), (elems, elems * 2.0),
                     dtype=(tf.float32, tf.float32))
    s = tf.scan(lambda a, v: a + v, elems)
    s_init = tf.scan(lambda a, v: a * v, elems, initializer=tf.constant(1.0))
    s_rev = tf.scan(lambda a, v: a + v, elems, reverse=True)
    fl = tf.foldl(lambda a, v: a - v, elems)
    fr = tf.foldr(lambda a, v: a - v, elems, initializer=tf.constant(0.0))
    cast = tf.map_fn(lambda v: tf.cast(v, tf.int32), elems, dtype=tf.int32)
    mv, pv, sv, siv, srv, flv, frv, cv = _run([m, pair, s, s_init, s_rev, fl, fr, cast])
    np.testing.assert_array_equal(mv, [1, 4, 9, 16])
    np.testing.assert_array_equal(pv[0], [3, 6, 9, 12])
    np.testing.assert_array_equal(pv[1], [2, 8, 18, 32])
    np.testing.assert_array_equal(sv, [1, 3, 6, 10])
    np.testing.assert_array_equal(siv, [1, 2, 6, 24])
    np.testing.assert_array_equal(srv, [10, 9, 7, 4])
    assert flv == 1 - 2 - 3 - 4
    assert frv == 0 - 4 - 3 - 2 - 1
    np.testing.assert_array_equal(cv, [1, 2, 3, 4])
    assert m.shape.as_list() == [4]


def test_map_fn_gradient_and_errors():
    x = tf.placeholder(tf.float64, [3, 2])
    y = tf.map_fn(lambda r: tf.reduce_sum(tf.sin(r) * r), x)
    xv = np.random.default_rng(3).uniform(-1, 1, (3, 2))
    with tf.Session():
        assert compute_gradient_error(x, [3, 2], y, [3], x_init_value=xv) < 1e-6
    with pytest.raises(TypeError, match="callable"):
        tf.map_fn(3, x)
    with pytest.raises(ValueError, match="1\\+ dimensional"):
        tf.map_fn(lambda v: v, tf.constant(1.0))
