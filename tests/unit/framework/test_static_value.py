"""shape_inference.static_value: which array ops fold while building the graph."""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave.framework.shape_inference import static_value


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_folds_array_ops_of_static_inputs():
    c = tf.constant([[1, 2, 3], [4, 5, 6]])
    assert static_value(tf.stack([c, c], axis=1)).tolist() == [[[1, 2, 3], [1, 2, 3]],
                                                               [[4, 5, 6], [4, 5, 6]]]
    assert static_value(tf.concat([c, c], 0)).shape == (4, 3)
    assert static_value(tf.slice(c, [0, 1], [-1, 2])).tolist() == [[2, 3], [5, 6]]
    assert static_value(tf.gather(c, [1, 0], axis=1)).tolist() == [[2, 1], [5, 4]]
    assert static_value(tf.range(1, 10, 3)).tolist() == [1, 4, 7]
    assert static_value(tf.range(0.0, 2.0, 0.5)).dtype == "float32"
    assert static_value(tf.transpose(c)).tolist() == [[1, 4], [2, 5], [3, 6]]
    assert static_value(tf.reshape(c, [3, 2])).tolist() == [[1, 2], [3, 4], [5, 6]]
    assert static_value(c[1:, ::-1]).tolist() == [[6, 5, 4]]


def test_unknown_inputs_do_not_fold():
    p = tf.placeholder(tf.int32, [None, 3])
    assert static_value(tf.stack([tf.constant([1, 2, 3]), p[0]])) is None
    assert static_value(tf.concat([tf.shape(p), [3]], 0)) is None
    assert static_value(tf.shape(p)[1:]).tolist() == [3]
    assert static_value(tf.transpose(p)) is None
