"""`tf.while_loop` (cases from TensorFlow's control_flow_ops_py_test.py, graph mode)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(fetches, feed=None, init=False):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_while_counts():
    r = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [tf.constant(0)])
    assert _run(r) == 10


def test_while_two_vars_and_placeholder():
    x = tf.placeholder(tf.float32, [])
    i, s = tf.while_loop(lambda i, s: i < 10,
                         lambda i, s: (i + 1, s + tf.cast(i, tf.float32) * x),
                         [tf.constant(0), tf.constant(0.0)])
    assert _run([i, s], {x: 2.0}) == [10, 90.0]


def test_while_frame_names_and_ops_are_tensorflows():
    tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])
    ops = {op.name: op for op in tf.get_default_graph().get_operations()}
    assert ops["while/Enter"].get_attr("frame_name") == b"while/while_context"
    assert ops["while/Enter"].get_attr("parallel_iterations") == 10
    assert [t.name for t in ops["while/Merge"].inputs] == ["while/Enter:0",
                                                           "while/NextIteration:0"]
    assert ops["while/LoopCond"].type == "LoopCond"
    assert [c.name for c in ops["while/add/y"].control_inputs] == ["while/Identity"]


def test_while_zero_iterations():
    r = tf.while_loop(lambda i: i < 0, lambda i: i + 1, [tf.constant(5)])
    assert _run(r) == 5


def test_while_matrix_power_with_loop_invariant():
    m = tf.constant([[1.0, 1.0], [0.0, 1.0]])
    r = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, tf.matmul(a, m)),
                      [tf.constant(0), tf.constant(np.eye(2, dtype=np.float32))])
    np.testing.assert_array_equal(_run(r)[1], [[1.0, 5.0], [0.0, 1.0]])


def test_nested_while():
    def outer_body(i, acc):
        _, inner = tf.while_loop(lambda j, a: j < i, lambda j, a: (j + 1, a + 1.0),
                                 [tf.constant(0), acc])
        return i + 1, inner

    r = tf.while_loop(lambda i, a: i < 5, outer_body, [tf.constant(0), tf.constant(0.0)])
    assert _run(r) == (5, 10.0)


def test_cond_inside_while_and_while_inside_cond():
    r = tf.while_loop(
        lambda i, a: i < 6,
        lambda i, a: (i + 1, tf.cond(tf.equal(i % 2, 0), lambda: a + 1.0, lambda: a * 2.0)),
        [tf.constant(0), tf.constant(0.0)])
    assert _run(r) == (6, 14.0)
    x = tf.placeholder(tf.float32, [])
    lc = tf.cond(x > 0, lambda: tf.while_loop(lambda v: v < 10.0, lambda v: v + x, [x]),
                 lambda: tf.constant(-1.0))
    with tf.Session() as sess:
        assert sess.run(lc, {x: 3.0}) == 12.0
        assert sess.run(lc, {x: -3.0}) == -1.0


def test_maximum_iterations_ends_the_loop():
    r = tf.while_loop(lambda i: i < 100, lambda i: i + 1, [tf.constant(0)],
                      maximum_iterations=7)
    r2 = tf.while_loop(lambda i, j: i < 100, lambda i, j: (i + 1, j + 2),
                       [tf.constant(0), tf.constant(0)], maximum_iterations=3)
    assert _run([r, r2]) == [7, (3, 6)]


def test_shape_invariants():
    def body(i, x):
        return i + 1, tf.concat([x, x], 0)

    x0 = tf.constant([1.0])
    with pytest.raises(ValueError, match="Const:0' enters the loop with shape"):
        tf.while_loop(lambda i, x: i < 3, body, [tf.constant(0), x0])
    r = tf.while_loop(lambda i, x: i < 3, body, [tf.constant(0), x0],
                      shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])])
    assert r[1].shape.as_list() == [None]
    assert _run(r[1]).shape == (8,)
    with pytest.raises(ValueError, match="not compatible with the initial shape"):
        tf.while_loop(lambda i, x: i < 3, body, [tf.constant(0), x0],
                      shape_invariants=[tf.TensorShape([]), tf.TensorShape([2])])


def test_body_structure_and_dtype_errors():
    with pytest.raises(ValueError, match="same nested structure|same number"):
        tf.while_loop(lambda i, j: i < 3, lambda i, j: i + 1, [tf.constant(0), tf.constant(1)])
    with pytest.raises(TypeError, match="float32"):
        tf.while_loop(lambda i: i < 3, lambda i: tf.cast(i, tf.float32), [tf.constant(0)])
    with pytest.raises(TypeError, match="callable"):
        tf.while_loop(3, lambda i: i, [tf.constant(0)])
    with pytest.raises(ValueError, match="No loop variables"):
        tf.while_loop(lambda: True, lambda: 1, [])
    with pytest.raises(TypeError, match="parallel_iterations"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)], parallel_iterations=0)


@pytest.mark.parametrize("parallel_iterations", [1, 2, 10])
def test_parallel_iterations_same_result(parallel_iterations):
    def body(i, acc):
        return i + 1, acc + tf.reduce_sum(tf.ones([3]) * tf.cast(i, tf.float32))

    r = tf.while_loop(lambda i, a: i < 50, body, [tf.constant(0), tf.constant(0.0)],
                      parallel_iterations=parallel_iterations)
    assert _run(r) == (50, 3.0 * sum(range(50)))


def test_variable_updated_in_loop_with_control_dependencies():
    v = tf.Variable(0.0)

    def body(i):
        with tf.control_dependencies([tf.assign_add(v, 1.0)]):
            return i + 1

    r = tf.while_loop(lambda i: i < 4, body, [tf.constant(0)], parallel_iterations=1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(r) == 4
        assert sess.run(v) == 4.0


def test_variable_read_in_loop_and_external_control_dependency():
    v = tf.Variable(3.0)
    first = tf.assign(v, 5.0)
    with tf.control_dependencies([first]):
        r = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + v.read_value()),
                          [tf.constant(0), tf.constant(0.0)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(r)[1] == 15.0


def test_loop_inside_untaken_branch_is_dead_and_the_step_ends():
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p, lambda: tf.while_loop(lambda i: i < 1000, lambda i: i + 1, [tf.constant(0)]),
                lambda: tf.constant(-1))
    with tf.Session() as sess:
        assert sess.run(r, {p: False}) == -1
        assert sess.run(r, {p: True}) == 1000


def test_loop_tensors_are_not_fetchable():
    inner = []

    def body(i):
        inner.append(i * 2)
        return i + 1

    tf.while_loop(lambda i: i < 3, body, [tf.constant(0)])
    assert not tf.get_default_graph().is_fetchable(inner[0])


def test_group_and_tuple_inside_branches_and_loops():
    v = tf.Variable(0)
    w = tf.Variable(0)
    p = tf.placeholder(tf.bool, [])

    def t():
        return tf.group(tf.assign_add(v, 1), tf.assign_add(w, 10))

    op = tf.cond(p, t, lambda: tf.group(tf.assign_add(v, 100)))

    def body(i):
        a, b = tf.tuple([i + 1, i * 2])
        return a + b - i * 2

    r = tf.while_loop(lambda i: i < 5, body, [tf.constant(0)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(op, {p: True})
        sess.run(op, {p: False})
        assert sess.run([v, w]) == [101, 10]
        assert sess.run(r) == 5
