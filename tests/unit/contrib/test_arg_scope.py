"""`tf.contrib.framework.arg_scope` / `add_arg_scope` (TF 1.15 contrib semantics)."""

from __future__ import annotations

import threading

import pytest

import tensorweave as tf
from tensorweave.contrib.framework import (
    add_arg_scope,
    arg_scope,
    arg_scoped_arguments,
    current_arg_scope,
    has_arg_scope,
)


@add_arg_scope
def _f(a, b=1, c=2):
    return (a, b, c)


@add_arg_scope
def _g(x, b=10):
    return (x, b)


def _plain(a, b=1):
    return (a, b)


def test_defaults_apply_inside_the_scope_only_and_calls_override():
    assert _f(0) == (0, 1, 2)
    with arg_scope([_f, _g], b=5):
        assert _f(0) == (0, 5, 2)
        assert _g(0) == (0, 5)
        assert _f(0, b=7) == (0, 7, 2)
    assert _f(0) == (0, 1, 2)
    assert current_arg_scope() == {}


def test_nested_scopes_update_the_outer_one():
    with arg_scope([_f], b=5, c=6):
        with arg_scope([_f], c=7) as inner:
            assert _f(0) == (0, 5, 7)
        assert _f(0) == (0, 5, 6)
    with arg_scope(inner):
        assert _f(0) == (0, 5, 7)
    assert _f(0) == (0, 1, 2)


def test_scope_is_popped_on_error_and_per_thread():
    with pytest.raises(RuntimeError):
        with arg_scope([_f], b=3):
            raise RuntimeError("boom")
    assert _f(0) == (0, 1, 2)
    seen = []
    with arg_scope([_f], b=3):
        t = threading.Thread(target=lambda: seen.append(_f(0)))
        t.start()
        t.join()
        assert _f(0) == (0, 3, 2)
    assert seen == [(0, 1, 2)]


def test_introspection():
    assert has_arg_scope(_f) and not has_arg_scope(_plain)
    assert arg_scoped_arguments(_f) == ["b", "c"]
    assert has_arg_scope(tf.contrib.layers.fully_connected)
    assert has_arg_scope(tf.contrib.layers.batch_norm)
    assert has_arg_scope(tf.contrib.layers.dropout)
    assert has_arg_scope(tf.contrib.layers.flatten)
    assert tf.contrib.framework.arg_scope is arg_scope
    with pytest.raises(ValueError, match="is not decorated with @add_arg_scope"):
        arg_scoped_arguments(_plain)


def test_errors():
    with pytest.raises(ValueError, match="is not decorated with @add_arg_scope"):
        with arg_scope([_plain], b=2):
            pass
    with pytest.raises(TypeError, match="must either be a list/tuple or reused scope"):
        with arg_scope(_f, b=2):
            pass
    with pytest.raises(ValueError, match="kwargs must be empty"):
        with arg_scope({}, b=2):
            pass
    assert current_arg_scope() == {}


def test_fully_connected_takes_scoped_defaults():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        with arg_scope([tf.contrib.layers.fully_connected], activation_fn=None,
                       biases_initializer=None):
            y = tf.contrib.layers.fully_connected(x, 2, scope="fc")
        assert y.op.type == "MatMul"
        assert [v.op.name for v in tf.global_variables()] == ["fc/weights"]
