"""String ops: exact values from TensorFlow 2.21 (formatting, joins, splits, base64,
regexes, numbers, and the three hash buckets and fingerprints)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors

_STRINGS = [b"", b"a", b"abc", b"hello", b"hello world!", b"x" * 20, b"y" * 40, b"z" * 64,
            bytes(range(100)), bytes(range(200))]


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_hash_buckets_match_tensorflow():
    out = _run([tf.string_to_hash_bucket_fast(_STRINGS, 1000003),
                tf.string_to_hash_bucket(_STRINGS, 1000003),
                tf.string_to_hash_bucket_strong(_STRINGS, 1000003, [1, 2])])
    # Computed with TensorFlow 2.21 (tf.strings.to_hash_bucket*), covering every length
    # branch of FarmHash (0-16, 17-32, 33-64, > 64 bytes).
    assert out[0].tolist() == [377723, 291400, 152962, 497363, 602656, 268677, 641401,
                               375874, 881666, 568369]
    assert out[1].tolist() == [598820, 789371, 979194, 546981, 607885, 56437, 307402,
                               128061, 217435, 444932]
    assert out[2].tolist() == [383377, 332029, 800593, 430577, 397164, 103526, 79607,
                               791968, 2030, 322968]
    assert out[0].dtype == np.int64


def test_fingerprint_matches_tensorflow():
    out = _run([tf.fingerprint(["hello", "x"]),
                tf.fingerprint(np.array([[1, 2], [3, 4]], np.int32)),
                tf.fingerprint([["a", "b"]])])
    assert out[0].tolist() == [[232, 12, 56, 49, 169, 229, 139, 180],
                               [2, 104, 255, 236, 186, 253, 126, 193]]
    assert out[1].tolist() == [[76, 18, 253, 133, 168, 204, 240, 10],
                               [254, 162, 60, 240, 103, 244, 53, 255]]
    assert out[2].tolist() == [[122, 64, 59, 169, 136, 60, 55, 83]]


def test_formatting_joining_splitting_match_tensorflow():
    out = _run([tf.as_string([3.5, -1.25]), tf.as_string([7, -3], width=4, fill="0"),
                tf.as_string([3.14159], precision=2), tf.as_string([1234.5], scientific=True),
                tf.as_string([0.5], shortest=True), tf.as_string([True, False]),
                tf.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator="-"),
                tf.reduce_join([["a", "b"], ["c", "d"]]),
                tf.string_join([["a", "b"], "c"], separator="+")])
    assert out[0].tolist() == [b"3.500000", b"-1.250000"]
    assert out[1].tolist() == [b"0007", b"-003"]
    assert out[2].tolist() == [b"3.14"] and out[3].tolist() == [b"1.234500e+03"]
    assert out[4].tolist() == [b"0.5"] and out[5].tolist() == [b"true", b"false"]
    assert out[6].tolist() == [b"a-b", b"c-d"] and out[7] == b"abcd"
    assert out[8].tolist() == [b"a+c", b"b+c"]
    split = _run([tf.string_split(["a b  c", "de"]),
                  tf.string_split(["a,b;c"], delimiter=",;"),
                  tf.string_split(["ab"], delimiter="")])
    assert split[0].indices.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0]]
    assert split[0].values.tolist() == [b"a", b"b", b"c", b"de"]
    assert split[0].dense_shape.tolist() == [2, 3]
    assert split[1].values.tolist() == [b"a", b"b", b"c"]
    assert split[2].values.tolist() == [b"a", b"b"]


def test_substr_base64_regex_strip_numbers_match_tensorflow():
    out = _run([tf.substr(["hello", "world"], 1, 3), tf.substr("hello", -3, 2),
                tf.encode_base64(["hello?>"]), tf.encode_base64(["hi"], pad=True),
                tf.decode_base64(["aGVsbG8_Pg"]), tf.decode_base64(["aGk="]),
                tf.regex_replace(["aaa bbb"], "a+", "x"),
                tf.regex_replace(["aaa aa"], "a", "x", replace_global=False),
                tf.regex_replace(["ab12"], r"(\d)", r"<\1>"),
                tf.string_strip(["  a b \n"]), tf.string_to_number(["1.5", "-2"]),
                tf.string_to_number(["7"], out_type=tf.int64),
                tf.substr(["héllo"], 1, 2, unit="UTF8_CHAR")])
    assert out[0].tolist() == [b"ell", b"orl"] and out[1] == b"ll"
    assert out[2].tolist() == [b"aGVsbG8_Pg"] and out[3].tolist() == [b"aGk="]
    assert out[4].tolist() == [b"hello?>"] and out[5].tolist() == [b"hi"]
    assert out[6].tolist() == [b"x bbb"] and out[7].tolist() == [b"xaa aa"]
    assert out[8].tolist() == [b"ab<1><2>"]
    assert out[9].tolist() == [b"a b"]
    assert out[10].tolist() == [1.5, -2.0] and out[10].dtype == np.float32
    assert out[11].tolist() == [7] and out[11].dtype == np.int64
    assert out[12].tolist() == ["él".encode()]
    with pytest.raises(errors.InvalidArgumentError, match="could not correctly convert"):
        _run(tf.string_to_number(["1.x"]))
    with pytest.raises(errors.InvalidArgumentError, match="out of range"):
        _run(tf.substr("abc", 5, 1))
