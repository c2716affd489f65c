"""TFRecord format: framing, masked CRC32C, compression, corruption errors."""

import gzip
import struct
import zlib

import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.framework import record_io


def _write(path, records, options=None):
    with tf.io.TFRecordWriter(str(path), options) as w:
        for r in records:
            w.write(r)


def test_record_framing():
    framed = record_io.encode_record(b"abc")
    assert framed[:8] == struct.pack("<Q", 3)
    assert len(framed) == 8 + 4 + 3 + 4


def test_known_bytes_of_one_record(tmp_path):
    # Bytes of a file written by TensorFlow 2.21 with tf.io.TFRecordWriter: one record b"hi".
    path = tmp_path / "one.tfr"
    _write(path, [b"hi"])
    assert path.read_bytes().hex() == "020000000000000078270b34686913d60856"


@pytest.mark.parametrize("options", [None, "", "ZLIB", "GZIP",
                                     tf.io.TFRecordOptions(tf.io.TFRecordCompressionType.GZIP),
                                     tf.python_io.TFRecordCompressionType.ZLIB])
def test_roundtrip(tmp_path, options):
    records = [b"", b"a", bytes(range(256)) * 9, b"last"]
    path = tmp_path / "r.tfr"
    _write(path, records, options)
    assert list(tf.python_io.tf_record_iterator(str(path), options)) == records


def test_compressed_files_are_standard_streams(tmp_path):
    _write(tmp_path / "g", [b"x"], "GZIP")
    _write(tmp_path / "z", [b"x"], "ZLIB")
    plain = record_io.encode_record(b"x")
    assert gzip.decompress((tmp_path / "g").read_bytes()) == plain
    assert zlib.decompress((tmp_path / "z").read_bytes()) == plain


def test_options_compression_type_string():
    get = tf.io.TFRecordOptions.get_compression_type_string
    assert get(tf.io.TFRecordOptions("GZIP")) == "GZIP"
    assert get(None) == ""
    assert get(tf.io.TFRecordCompressionType.ZLIB) == "ZLIB"
    with pytest.raises(ValueError):
        tf.io.TFRecordOptions("LZ4")


def test_corrupted_data_crc_names_file_and_offset(tmp_path):
    path = tmp_path / "bad.tfr"
    _write(path, [b"first", b"second"])
    data = bytearray(path.read_bytes())
    second = 8 + 4 + 5 + 4
    data[second + 12] ^= 0xFF
    path.write_bytes(bytes(data))
    it = tf.python_io.tf_record_iterator(str(path))
    assert next(it) == b"first"
    with pytest.raises(errors.DataLossError, match=rf"offset {second} in .*bad.tfr"):
        next(it)


def test_corrupted_length_and_truncation(tmp_path):
    path = tmp_path / "len.tfr"
    _write(path, [b"payload"])
    data = bytearray(path.read_bytes())
    data[0] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(errors.DataLossError, match="corrupted record length.*offset 0"):
        list(tf.python_io.tf_record_iterator(str(path)))
    _write(path, [b"payload"])
    path.write_bytes(path.read_bytes()[:-2])
    with pytest.raises(errors.DataLossError, match="truncated record"):
        list(tf.python_io.tf_record_iterator(str(path)))


def test_missing_file_is_not_found(tmp_path):
    with pytest.raises(errors.NotFoundError):
        list(tf.python_io.tf_record_iterator(str(tmp_path / "nope")))
