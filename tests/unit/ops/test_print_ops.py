"""`tf.print` (StringFormat + PrintV2): output as TF 2.21 prints the same inputs."""

from __future__ import annotations

import logging
import sys

import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("make, kwargs, expected", [
    (lambda: ["x:", tf.range(10)], {}, "x: [0 1 2 ... 7 8 9]\n"),
    (lambda: [tf.range(10)], {"summarize": -1}, "[0 1 2 3 4 5 6 7 8 9]\n"),
    (lambda: [tf.constant([[1.5, 2.25], [3.0, 4.0]])], {}, "[[1.5 2.25]\n [3 4]]\n"),
    (lambda: [tf.constant(5), "a", 7, tf.constant("str"), tf.constant(["s1", "s2"])],
     {"sep": "|", "end": "<\n"}, '5|a|7|"str"|["s1" "s2"]<\n'),
    (lambda: [tf.reshape(tf.range(24), [2, 3, 4])], {"summarize": 2},
     "[[[0 1 2 3]\n  [4 5 6 7]\n  [8 9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n"
     "  [20 21 22 23]]]\n"),
    (lambda: [tf.constant([True, False]), tf.constant(1e-7), tf.constant(123456789.0)], {},
     "[1 0] 1e-07 123456792\n"),
    (lambda: [{"a": tf.constant(1)}], {}, "{'a': 1}\n"),
    (lambda: [tf.reshape(tf.range(64), [8, 8])], {},
     "[[0 1 2 ... 5 6 7]\n [8 9 10 ... 13 14 15]\n [16 17 18 ... 21 22 23]\n ...\n"
     " [40 41 42 ... 45 46 47]\n [48 49 50 ... 53 54 55]\n [56 57 58 ... 61 62 63]]\n"),
    (lambda: [tf.constant([0.1, -2.5e10, np.nan, np.inf], tf.float64)], {},
     "[0.1 -25000000000 nan inf]\n"),
    (lambda: ["braces {} here", tf.constant(1)], {}, "braces {} here 1\n"),
    (lambda: [[tf.constant(1), "x", 2]], {}, "[1, 'x', 2]\n"),
    (lambda: [tf.constant([], tf.float32)], {}, "[]\n"),
])
def test_prints_as_tensorflow(capsys, make, kwargs, expected):
    with tf.Graph().as_default():
        inputs = make()
        op = tf.print(*inputs, output_stream=sys.stdout, **kwargs)
        with tf.Session() as sess:
            capsys.readouterr()
            sess.run(op)
    assert capsys.readouterr().out == expected


def test_stderr_logging_and_file(capsys, caplog, tmp_path):
    path = tmp_path / "out.txt"
    with tf.Graph().as_default():
        x = tf.constant([1, 2])
        to_err = tf.print("e", x)
        to_log = tf.print("l", x, output_stream=tf.logging.warning)
        to_file = tf.print("f", x, output_stream=f"file://{path}")
        with tf.Session() as sess, caplog.at_level(logging.WARNING, logger="tensorweave"):
            capsys.readouterr()
            sess.run([to_err, to_log, to_file])
            sess.run(to_file)
    assert capsys.readouterr().err == "e [1 2]\n"
    assert [r.getMessage() for r in caplog.records] == ["l [1 2]"]
    assert path.read_text() == "f [1 2]\nf [1 2]\n"
    with pytest.raises(ValueError, match="Unsupported output stream"):
        tf.print("x", output_stream=42)


def test_control_dependency_runs_the_print(capsys):
    with tf.Graph().as_default():
        x = tf.constant(3)
        with tf.control_dependencies([tf.print("value", x, output_stream=sys.stdout)]):
            y = x + 1
        with tf.Session() as sess:
            capsys.readouterr()
            assert sess.run(y) == 4
    assert capsys.readouterr().out == "value 3\n"


def test_placeholder_and_input_count_must_match():
    with tf.Graph().as_default():
        from tensorweave.framework.op_def_library import apply_op

        bad = apply_op("StringFormat", inputs=[tf.constant(1)], template="{} {}",
                       placeholder="{}", summarize=3)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="2 vs. 1"):
            sess.run(bad)
