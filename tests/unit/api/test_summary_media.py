"""`tf.summary.image` / `audio` (ImageSummary, AudioSummaryV2) and the other `tf.summary`
helpers. Expected pixels and samples are TensorFlow 2.21's for the same inputs (decoded
from its PNG/WAV output), and NumPy references."""

from __future__ import annotations

import io
import struct
import wave
import zlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels.summary_media_kernels import encode_png


def _decode_png(data: bytes) -> np.ndarray:
    """Pixels of an 8-bit PNG whose rows use filter 0 (None) or 1 (Sub) or 2 (Up)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        assert struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0] == zlib.crc32(kind + body)
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[color]
    assert depth == 8
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, -1)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:].reshape(height, width, channels)


def _run(summary):
    with tf.Session() as sess:
        return tf.summary.Summary.FromString(sess.run(summary))


def test_float_images_scaled_as_tensorflow():
    img = np.array([[[[0.1], [0.5]], [[0.77], [np.nan]]],
                    [[[-1.0], [0.3]], [[2.0], [-0.26]]]], np.float32)
    with tf.Graph().as_default():
        summary = _run(tf.summary.image("im", img, max_outputs=2))
    assert [v.tag for v in summary.value] == ["im/image/0", "im/image/1"]
    first, second = summary.value
    assert (first.image.height, first.image.width, first.image.colorspace) == (2, 2, 1)
    np.testing.assert_array_equal(_decode_png(first.image.encoded_image_string)[..., 0],
                                  [[33, 165], [255, 255]])
    np.testing.assert_array_equal(_decode_png(second.image.encoded_image_string)[..., 0],
                                  [[64, 147], [255, 111]])


def test_uint8_rgb_images_and_max_outputs_one():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, size=(3, 4, 5, 3), dtype=np.uint8)
    with tf.Graph().as_default(), tf.name_scope("s"):
        op = tf.summary.image("pic", tf.constant(img), max_outputs=1)
        assert op in tf.get_collection(tf.GraphKeys.SUMMARIES)
        summary = _run(op)
    (value,) = summary.value
    assert value.tag == "s/pic/image"
    assert (value.image.height, value.image.width, value.image.colorspace) == (4, 5, 3)
    np.testing.assert_array_equal(_decode_png(value.image.encoded_image_string), img[0])


def test_rgba_bad_color_and_all_nonnegative_zero_image():
    img = np.zeros((1, 1, 2, 4), np.float64)
    img[0, 0, 1, 2] = np.inf
    with tf.Graph().as_default():
        (value,) = _run(tf.summary.image("z", img, max_outputs=1, family="fam")).value
    assert value.tag == "fam/fam/z/image"
    np.testing.assert_array_equal(_decode_png(value.image.encoded_image_string)[0],
                                  [[0, 0, 0, 0], [255, 0, 0, 255]])


def test_image_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="must be rank 4"):
            tf.summary.image("bad", tf.zeros([2, 3, 1]))
        op = tf.summary.image("two", tf.zeros([1, 2, 2, 2]))
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="last dim 1, 3, or 4"):
            sess.run(op)


def test_encode_png_gray_alpha():
    img = np.arange(12, dtype=np.uint8).reshape(2, 3, 2)
    np.testing.assert_array_equal(_decode_png(encode_png(img)), img)


def _wav(value):
    with wave.open(io.BytesIO(value.audio.encoded_audio_string)) as w:
        assert w.getsampwidth() == 2
        frames = np.frombuffer(w.readframes(w.getnframes()), "<i2")
        return w.getframerate(), w.getnchannels(), frames.reshape(-1, w.getnchannels())


def test_audio_as_tensorflow():
    clip = np.array([[0.5, -0.30001, 1.5, -1.2, 0.000016]], np.float32)
    with tf.Graph().as_default():
        (value,) = _run(tf.summary.audio("au", clip, 8000, max_outputs=1)).value
    assert value.tag == "au/audio"
    assert (value.audio.sample_rate, value.audio.num_channels,
            value.audio.length_frames, value.audio.content_type) == (8000, 1, 5, "audio/wav")
    rate, channels, frames = _wav(value)
    assert (rate, channels) == (8000, 1)
    np.testing.assert_array_equal(frames[:, 0], [16384, -9831, 32767, -32768, 1])


def test_stereo_audio_clips():
    rng = np.random.default_rng(1)
    clips = rng.uniform(-1, 1, size=(4, 6, 2)).astype(np.float32)
    with tf.Graph().as_default():
        rate = tf.placeholder(tf.float32, [])
        op = tf.summary.audio("st", clips, rate, max_outputs=2)
        with tf.Session() as sess:
            summary = tf.summary.Summary.FromString(sess.run(op, {rate: 16000.0}))
    assert [v.tag for v in summary.value] == ["st/audio/0", "st/audio/1"]
    for i, value in enumerate(summary.value):
        got_rate, channels, frames = _wav(value)
        assert (got_rate, channels, value.audio.length_frames) == (16000, 2, 6)
        expected = np.clip(np.round(clips[i].astype(np.float64) * 32768), -32768, 32767)
        np.testing.assert_array_equal(frames, expected)


def test_audio_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="rank 2 or 3"):
            tf.summary.audio("bad", tf.zeros([2]), 100)
        op = tf.summary.audio("neg", tf.zeros([1, 2]), -5.0)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="sample_rate"):
            sess.run(op)


def test_get_summary_description():
    node = tf.NodeDef(name="t", op="TensorSummary")
    node.attr["description"].s = b'{"type_hint": "scalar"}'
    assert tf.summary.get_summary_description(node).type_hint == "scalar"
    with pytest.raises(ValueError, match="Can't get_summary_description on Const"):
        tf.summary.get_summary_description(tf.NodeDef(name="c", op="Const"))


def test_all_v2_summary_ops_and_initialize():
    with tf.Graph().as_default():
        tf.summary.scalar("x", 1.0)
        assert tf.summary.all_v2_summary_ops() == []
        with pytest.raises(ValueError, match="session must be passed"):
            tf.summary.initialize()
        with tf.Session() as sess:
            tf.summary.initialize()
            tf.summary.initialize(graph=sess.graph, session=sess)
