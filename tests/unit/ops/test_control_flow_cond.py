"""`tf.cond` and `tf.case` (cases from TensorFlow's control_flow_ops_py_test.py, graph mode)."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import tensorweave as tf


def _run(fetches, feed=None, init=False):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default() as g:
        yield g


def test_cond_takes_the_right_branch():
    x = tf.placeholder(tf.float32, [])
    r = tf.cond(x > 0, lambda: x * 2.0, lambda: x - 10.0)
    with tf.Session() as sess:
        assert sess.run(r, {x: 3.0}) == 6.0
        assert sess.run(r, {x: -3.0}) == -13.0


def test_cond_only_the_taken_branch_has_side_effects():
    x = tf.placeholder(tf.bool, [])
    v = tf.Variable(0.0)
    r = tf.cond(x, lambda: tf.assign_add(v, 1.0), lambda: tf.assign_add(v, 100.0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(r, {x: True}) == 1.0
        assert sess.run(v) == 1.0
        assert sess.run(r, {x: False}) == 101.0
        assert sess.run(v) == 101.0


def test_cond_branch_constants_are_pinned_to_the_pivot():
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p, lambda: tf.constant(1), lambda: tf.constant(2))
    ops = {op.name: op for op in tf.get_default_graph().get_operations()}
    assert [c.name for c in ops["cond/Const"].control_inputs] == ["cond/switch_t"]
    assert [c.name for c in ops["cond/Const_1"].control_inputs] == ["cond/switch_f"]
    with tf.Session() as sess:
        assert sess.run(r, {p: True}) == 1
        assert sess.run(r, {p: False}) == 2


def test_cond_nested_structures_and_lambda_identity():
    p = tf.placeholder(tf.bool, [])
    a, b = tf.constant([1.0, 2.0]), tf.constant(5)
    Pair = collections.namedtuple("Pair", "x y")
    r = tf.cond(p, lambda: Pair(a, {"k": b}), lambda: Pair(a * 3.0, {"k": b + 1}))
    assert isinstance(r, Pair)
    with tf.Session() as sess:
        t = sess.run(r, {p: True})
        np.testing.assert_array_equal(t.x, [1.0, 2.0])
        assert t.y["k"] == 5
        f = sess.run(r, {p: False})
        np.testing.assert_array_equal(f.x, [3.0, 6.0])
        assert f.y["k"] == 6


def test_cond_singleton_unpacked_unless_strict():
    p = tf.constant(True)
    assert isinstance(tf.cond(p, lambda: [tf.constant(1)], lambda: [tf.constant(2)]), tf.Tensor)
    strict = tf.cond(p, lambda: [tf.constant(1)], lambda: [tf.constant(2)], strict=True)
    assert isinstance(strict, list) and len(strict) == 1


def test_cond_returning_ops():
    p = tf.placeholder(tf.bool, [])
    v = tf.Variable(0)
    op = tf.cond(p, lambda: tf.group(tf.assign(v, 7)), lambda: tf.group(tf.assign(v, 9)))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(op, {p: False})
        assert sess.run(v) == 9


def test_nested_cond():
    x = tf.placeholder(tf.int32, [])
    r = tf.cond(x > 0, lambda: tf.cond(x > 10, lambda: x * 100, lambda: x * 10),
                lambda: -x)
    with tf.Session() as sess:
        assert [sess.run(r, {x: v}) for v in (20, 5, -4)] == [2000, 50, 4]


def test_cond_mismatched_structures_name_both():
    p = tf.constant(True)
    with pytest.raises(ValueError, match="true_fn and false_fn") as e:
        tf.cond(p, lambda: (tf.constant(1), tf.constant(2)), lambda: tf.constant(3))
    assert "First structure" in str(e.value) and "Second structure" in str(e.value)
    with pytest.raises(TypeError, match="Incompatible return types"):
        tf.cond(p, lambda: [tf.constant(1), tf.constant(2)],
                lambda: (tf.constant(1), tf.constant(2)))
    with pytest.raises(ValueError, match="same type: int32, float32"):
        tf.cond(p, lambda: tf.constant(1), lambda: tf.constant(1.0))


def test_cond_bad_arguments():
    with pytest.raises(TypeError, match="Python bool"):
        tf.cond(True, lambda: tf.constant(1), lambda: tf.constant(2))
    with pytest.raises(TypeError, match="callable"):
        tf.cond(tf.constant(True), 1, lambda: tf.constant(2))
    with pytest.raises(ValueError, match="true_fn must have a return value"):
        tf.cond(tf.constant(True), lambda: None, lambda: tf.constant(2))


def test_fetching_an_untaken_branch_value_fails_at_run_time():
    p = tf.placeholder(tf.bool, [])
    inner = []

    def true_fn():
        inner.append(tf.constant(1) + 1)
        return inner[0]

    tf.cond(p, true_fn, lambda: tf.constant(0))
    with tf.Session() as sess:
        assert sess.run(inner[0], {p: True}) == 2
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not have value"):
            sess.run(inner[0], {p: False})


def test_case_picks_the_first_true_predicate_and_default():
    x = tf.placeholder(tf.int32, [])
    r = tf.case([(x < 0, lambda: tf.constant(-1)), (x < 10, lambda: tf.constant(1))],
                default=lambda: tf.constant(99))
    with tf.Session() as sess:
        assert [sess.run(r, {x: v}) for v in (-5, 5, 50)] == [-1, 1, 99]


def test_case_exclusive_asserts_at_most_one_true():
    x = tf.placeholder(tf.int32, [])
    r = tf.case({x < 10: lambda: tf.constant(1), x < 5: lambda: tf.constant(2)},
                default=lambda: tf.constant(0), exclusive=True)
    with tf.Session() as sess:
        assert sess.run(r, {x: 7}) == 1
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(r, {x: 1})


def test_case_bad_pairs():
    with pytest.raises(TypeError, match="bool"):
        tf.case([(tf.constant(1), lambda: tf.constant(1))])
    with pytest.raises(TypeError, match="callable"):
        tf.case([(tf.constant(True), 3)])
