"""tf.print, timestamp, patch extraction, sparse (de)serialization, random_index_shuffle,
batch_scatter_update, approx_top_k and the NotImplementedError names; printed text and
patches checked against TensorFlow 2.21's output."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_print_formats_like_tensorflow(capsys, tmp_path):
    _run(tf.print("x:", tf.constant([1.0, 2.5]), tf.constant([[1, 2], [3, 4]]), tf.range(10),
                  tf.constant(["a", "b"]), tf.constant(3), tf.constant(True),
                  output_stream=sys.stdout))
    _run(tf.print(tf.reshape(tf.range(24), [2, 3, 4]), summarize=2, output_stream=sys.stdout,
                  sep="|", end="<END>\n"))
    _run(tf.print(tf.constant([1e-7, 123456789.0, 0.1]), output_stream=sys.stdout))
    out = capsys.readouterr().out
    assert out == (
        'x: [1 2.5] [[1 2]\n [3 4]] [0 1 2 ... 7 8 9] ["a" "b"] 3 1\n'
        "[[[0 1 2 3]\n  [4 5 6 7]\n  [8 9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n"
        "  [20 21 22 23]]]<END>\n"
        "[1e-07 123456792 0.1]\n")
    path = tmp_path / "log.txt"
    _run(tf.print("to file", tf.constant(np.float64(0.1)), output_stream=f"file://{path}"))
    _run(tf.print("err"))
    assert path.read_text() == "to file 0.1\n" and capsys.readouterr().err == "err\n"
    with pytest.raises(ValueError, match="output stream"):
        tf.print("x", output_stream=object())


def test_timestamp_and_patches_match_tensorflow():
    before = time.time()
    out = _run([tf.timestamp(),
                tf.extract_image_patches(np.arange(16.0).reshape(1, 4, 4, 1), [1, 2, 2, 1],
                                         [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
                tf.extract_image_patches(np.arange(9.0).reshape(1, 3, 3, 1), [1, 2, 2, 1],
                                         [1, 1, 1, 1], [1, 2, 2, 1], "SAME"),
                tf.extract_image_patches(np.arange(9.0).reshape(1, 3, 3, 1), [1, 2, 2, 1],
                                         [1, 2, 2, 1], [1, 1, 1, 1], "SAME"),
                tf.extract_volume_patches(np.arange(8.0).reshape(1, 2, 2, 2, 1),
                                          [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID")])
    assert before <= out[0] <= time.time()
    assert out[1].tolist() == [[[[0.0, 1.0, 4.0, 5.0], [2.0, 3.0, 6.0, 7.0]],
                                [[8.0, 9.0, 12.0, 13.0], [10.0, 11.0, 14.0, 15.0]]]]
    assert out[2].shape == (1, 3, 3, 4)
    assert out[3].tolist() == [[[[0.0, 1.0, 3.0, 4.0], [2.0, 0.0, 5.0, 0.0]],
                                [[6.0, 7.0, 0.0, 0.0], [8.0, 0.0, 0.0, 0.0]]]]
    assert out[4].reshape(-1).tolist() == list(range(8))


def test_sparse_serialization_round_trip():
    sp = tf.SparseTensor([[0, 1], [1, 0], [1, 2]], [5, 6, 7], [2, 3])
    single = tf.serialize_sparse(sp)
    many = tf.serialize_many_sparse(sp)
    back = tf.deserialize_many_sparse(many, tf.int32)
    stacked = tf.deserialize_many_sparse(tf.stack([single, single]), tf.int32)
    out = _run([single, many, back, stacked])
    assert out[0].shape == (3,) and out[1].shape == (2, 3)
    assert out[2].indices.tolist() == [[0, 1], [1, 0], [1, 2]]
    assert out[2].values.tolist() == [5, 6, 7] and out[2].dense_shape.tolist() == [2, 3]
    assert out[3].dense_shape.tolist() == [2, 2, 3]
    assert out[3].indices.tolist()[:3] == [[0, 0, 1], [0, 1, 0], [0, 1, 2]]


def test_index_shuffle_batch_scatter_approx_top_k():
    shuffle = tf.random_index_shuffle(tf.range(10), [1, 2, 3], 9)
    again = tf.random_index_shuffle(tf.range(10), [1, 2, 3], 9)
    ref = tf.Variable([[1, 2, 3], [4, 5, 6]])
    upd = tf.batch_scatter_update(ref, [[0], [2]], [[10], [20]])
    top = tf.approx_top_k([[1.0, 5.0, 3.0]], 2)
    low = tf.approx_top_k([[1.0, 5.0, 3.0]], 1, is_max_k=False)
    with tf.Session() as sess:
        sess.run(ref.initializer)
        out = sess.run([shuffle, again, upd, top, low])
    assert sorted(out[0].tolist()) == list(range(10)) and out[0].tolist() == out[1].tolist()
    assert out[2].tolist() == [[10, 2, 3], [4, 5, 20]]
    assert out[3][0].tolist() == [[5.0, 3.0]] and out[4][1].tolist() == [[0]]
    assert tf.is_symbolic_tensor(tf.constant(1)) and not tf.is_symbolic_tensor(1)
    with pytest.raises(errors.InvalidArgumentError, match="index must be"):
        _run(tf.random_index_shuffle([11], [1, 2, 3], 9))


@pytest.mark.parametrize("name", ["load_library", "load_op_library", "load_file_system_library",
                                  "quantize", "quantize_v2", "dequantize", "quantized_concat",
                                  "to_bfloat16"])
def test_unsupported_names_raise(name):
    with pytest.raises(NotImplementedError, match=rf"tf\.{name}\b"):
        getattr(tf, name)("x")
