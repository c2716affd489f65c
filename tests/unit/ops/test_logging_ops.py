"""`tf.Print`, `tf.Assert` and the `tf.assert_*` checks (mirrors TF's logging_ops_test.py and
check_ops_test.py), and the `SummarizeValue` text format."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.kernels.logging_kernels import summarize_value
from tensorweave.ops.gradients_impl import gradient_registry


# ----------------------------------------------------------------- SummarizeValue format
@pytest.mark.parametrize(
    ("value", "n", "expected"),
    [
        (np.int32(5), 3, "5"),
        (np.array([1, 2, 3], np.int32), 3, "1 2 3"),
        (np.array([1, 2, 3, 4, 5], np.int64), 3, "1 2 3..."),
        (np.array([1, 2, 3, 4, 5], np.int64), -1, "1 2 3 4 5"),
        (np.array([[1, 2], [3, 4]], np.int32), 3, "[1 2][3...]..."),
        (np.array([[1, 2], [3, 4]], np.int32), 10, "[1 2][3 4]"),
        (np.arange(8).reshape(2, 2, 2), 8, "[[0 1][2 3]][[4 5][6 7]]"),
        (np.zeros((0,), np.float32), 3, ""),
        (np.array([True, False]), 3, "1 0"),
        (np.array([0.1, 1.0, 2.5], np.float32), 3, "0.1 1 2.5"),
        (np.array([1.0 / 3], np.float64), 3, "0.33333333333333331"),
        (np.array([np.inf, -np.inf, np.nan], np.float32), 3, "inf -inf nan"),
        (np.array([b"a\nb", b"q\"'"], dtype=object), 3, "a\\nb q\\\"\\'"),
        (np.float32(2.0), 0, "..."),
    ],
)
def test_summarize_value(value, n, expected):
    assert summarize_value(value, n) == expected


# ---------------------------------------------------------------------------- Print
def test_print_passes_input_through_and_prints(capfd):
    g = tf.Graph()
    with g.as_default():
        x = tf.constant([1.5, 2.0, 3.0, 4.0])
        y = tf.Print(x, [x, "label", tf.constant([[1, 2], [3, 4]])], message="values: ")
    assert y.op.type == "Print"
    assert y.dtype == tf.float32
    assert y.shape.as_list() == [4]
    assert y.op.get_attr("message") == b"values: "
    with tf.Session(graph=g) as sess:
        out = sess.run(y)
    np.testing.assert_array_equal(out, [1.5, 2.0, 3.0, 4.0])
    assert out.dtype == np.float32
    err = capfd.readouterr().err
    assert "values: [1.5 2 3...][label][[1 2][3...]...]\n" in err


def test_print_defaults_summarize_and_first_n(capfd):
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(np.arange(6, dtype=np.int64))
        every = tf.Print(x, [x])
        full = tf.Print(x, [x], summarize=-1, message="all")
        twice = tf.Print(x, [x], first_n=2, message="twice")
    assert every.op.get_attr("summarize") == 3
    assert every.op.get_attr("first_n") == -1
    with tf.Session(graph=g) as sess:
        for _ in range(3):
            sess.run([every, full, twice])
    err = capfd.readouterr().err.splitlines()
    assert err.count("[0 1 2...]") == 3
    assert err.count("all[0 1 2 3 4 5]") == 3
    assert err.count("twice[0 1 2...]") == 2


def test_print_only_runs_when_its_output_is_needed(capfd):
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(1)
        tf.Print(x, [x], message="unused")
        z = tf.identity(x)
    assert _run(z, g) == 1
    assert "unused" not in capfd.readouterr().err


def test_print_gradient_registration():
    fn = gradient_registry.lookup("Print")
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(1.0)
        y = tf.Print(x, [x, x])
    assert fn(y.op, "grad") == ["grad", None, None]


def test_gradient_flows_through_print(capfd):
    from tensorweave.ops.gradients_impl import gradients

    g = tf.Graph()
    with g.as_default():
        x = tf.constant([1.0, 2.0])
        y = tf.Print(x, [x], message="fwd ") * 3.0
        (dx,) = gradients([y], [x])
    np.testing.assert_allclose(_run(dx, g), [3.0, 3.0])


# --------------------------------------------------------------------------- Assert
def _run(fetches, graph, feed_dict=None):
    with tf.Session(graph=graph) as sess:
        return sess.run(fetches, feed_dict)


def test_assert_passes_and_fails_with_data():
    g = tf.Graph()
    with g.as_default():
        cond = tf.placeholder(tf.bool, [])
        data = tf.constant([1, 2, 3, 4, 5])
        check = tf.Assert(cond, ["x is bad:", data, tf.constant(0.25)])
        with tf.control_dependencies([check]):
            out = tf.identity(data)
    assert check.type == "Assert"
    assert check.name == "Assert/Assert"
    assert check.outputs == []
    with tf.Session(graph=g) as sess:
        np.testing.assert_array_equal(sess.run(out, {cond: True}), [1, 2, 3, 4, 5])
        assert sess.run(check, {cond: True}) is None
        with pytest.raises(errors.InvalidArgumentError) as e:
            sess.run(out, {cond: False})
    assert "assertion failed: [x is bad:] [1 2 3...] [0.25]" in str(e.value)
    assert "Assert/Assert" in str(e.value)


def test_assert_summarize_and_scalar_condition():
    g = tf.Graph()
    with g.as_default():
        cond = tf.placeholder(tf.bool)
        check = tf.Assert(cond, [tf.constant([1, 2, 3, 4])], summarize=10, name="mine")
    assert check.name == "mine/Assert"
    with tf.Session(graph=g) as sess:
        sess.run(check, {cond: [True]})  # a one-element vector counts as a scalar
        with pytest.raises(errors.InvalidArgumentError, match=r"assertion failed: \[1 2 3 4\]"):
            sess.run(check, {cond: False})
        with pytest.raises(errors.InvalidArgumentError, match=r"In\[0\] should be a scalar"):
            sess.run(check, {cond: [True, True]})


# ------------------------------------------------------------------------- check ops
def test_assert_equal_static_failure_raises_while_building():
    with tf.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="Condition x == y did not hold"):
            tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]), message="custom")
        with pytest.raises(errors.InvalidArgumentError, match="custom"):
            tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]), message="custom")


def test_assert_equal_same_tensor_is_a_no_op():
    with tf.Graph().as_default():
        x = tf.constant([1, 2])
        assert tf.assert_equal(x, x).type == "NoOp"


@pytest.mark.parametrize(
    ("fn", "good", "bad", "sym"),
    [
        (tf.assert_equal, ([1, 2], [1, 2]), ([1, 2], [1, 3]), "=="),
        (tf.assert_less, ([1, 2], [2, 3]), ([1, 2], [2, 2]), "<"),
        (tf.assert_greater, ([3, 4], [2, 3]), ([3, 2], [2, 3]), ">"),
        (tf.assert_less_equal, ([1, 2], [1, 3]), ([1, 4], [1, 3]), "<="),
        (tf.assert_greater_equal, ([1, 3], [1, 3]), ([0, 3], [1, 3]), ">="),
        (tf.assert_none_equal, ([1, 2], [2, 1]), ([1, 2], [1, 3]), "!="),
    ],
)
def test_binary_asserts_at_run_time(fn, good, bad, sym):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.int32, [2], name="x")
        y = tf.placeholder(tf.int32, [2], name="y")
        check = fn(x, y)
    with tf.Session(graph=g) as sess:
        sess.run(check, {x: good[0], y: good[1]})
        with pytest.raises(errors.InvalidArgumentError) as e:
            sess.run(check, {x: bad[0], y: bad[1]})
    msg = str(e.value)
    assert f"Condition x {sym} y did not hold element-wise:" in msg
    assert "x (x:0) = " in msg and "y (y:0) = " in msg


def test_binary_assert_broadcasts_and_accepts_data():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3])
        check = tf.assert_less(x, 10.0, data=["too big:", x], summarize=5)
    with tf.Session(graph=g) as sess:
        sess.run(check, {x: [1.0, 2.0, 9.5]})
        with pytest.raises(errors.InvalidArgumentError, match=r"\[too big:\] \[1 2 11\]"):
            sess.run(check, {x: [1.0, 2.0, 11.0]})


@pytest.mark.parametrize(
    ("fn", "good", "bad", "text"),
    [
        (tf.assert_positive, [1, 2], [1, 0], "x > 0"),
        (tf.assert_non_negative, [0, 2], [0, -1], "x >= 0"),
        (tf.assert_negative, [-1, -2], [-1, 0], "x < 0"),
        (tf.assert_non_positive, [0, -2], [1, -1], "x <= 0"),
    ],
)
def test_sign_asserts(fn, good, bad, text):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.int64, [2])
        check = fn(x, message="msg")
    with tf.Session(graph=g) as sess:
        sess.run(check, {x: good})
        with pytest.raises(errors.InvalidArgumentError, match=f"Condition {text} did not hold"):
            sess.run(check, {x: bad})
    with tf.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match=f"Condition {text}"):
            fn(tf.constant(bad, dtype=tf.int64))
        fn(tf.constant(good, dtype=tf.int64))


def test_assert_rank_static():
    with tf.Graph().as_default():
        x = tf.constant([[1, 2]])
        ok = tf.assert_rank(x, 2)
        assert ok.type == "NoOp"
        assert ok.name == "assert_rank/static_checks_determined_all_ok"
        with pytest.raises(ValueError, match="must have rank 1.  Received rank 2"):
            tf.assert_rank(x, 1, message="oops")
        with pytest.raises(ValueError, match="must have rank at least 3"):
            tf.assert_rank_at_least(x, 3)
        assert tf.assert_rank_at_least(x, 1).type == "NoOp"
        with pytest.raises(TypeError, match="must be of type"):
            tf.assert_rank(x, tf.constant(2, dtype=tf.int64))


def test_assert_rank_dynamic():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32)
        check = tf.assert_rank(x, 2)
    assert check.type == "Assert"
    with tf.Session(graph=g) as sess:
        sess.run(check, {x: np.zeros((2, 3))})
        with pytest.raises(errors.InvalidArgumentError, match="must have rank"):
            sess.run(check, {x: np.zeros(3)})


def test_assert_type():
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        assert tf.assert_type(x, tf.float32).type == "NoOp"
        with pytest.raises(TypeError, match="must be of type"):
            tf.assert_type(x, tf.int32)
