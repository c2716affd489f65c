"""A fed op used as a control input counts as run, as in TensorFlow (metrics' `mean` relies
on it): the feed satisfies the control edge instead of running the placeholder."""

from __future__ import annotations

import pytest

import tensorweave as tf


def test_control_dependency_on_a_fed_placeholder():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [], name="p")
        with tf.control_dependencies([p]):
            y = tf.identity(1.0)
        with tf.Session() as sess:
            assert sess.run([y, p * 2], {p: 3.0}) == [1.0, 6.0]
            with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
                sess.run(y)  # not fed: the placeholder runs, as in TensorFlow
