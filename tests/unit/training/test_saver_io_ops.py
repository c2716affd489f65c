"""The checkpoint ops and their kernels directly: SaveV2/RestoreV2 of every storage kind,
slices, shape functions, ShardedFilename/Filespec, StringJoin, and the on-disk format."""

from __future__ import annotations

import base64
import json
import zlib

import google_crc32c
import numpy as np
import pytest
from safetensors.numpy import save_file

import tensorweave as tf
from tensorweave.kernels import (
    checkpoint_format,
    io_kernels,  # noqa: F401  (registers the checkpoint kernels)
    sstable,
)
from tensorweave.ops import io_ops
from tensorweave.protos import tensor_bundle_pb2

ARRAYS = {
    "f32": np.arange(12, dtype=np.float32).reshape(3, 4),
    "f64": np.float64(-0.5),
    "i16": np.array([-3, 4], np.int16),
    "u64": np.array([2**63 + 1], np.uint64),
    "b": np.array([[True], [False]]),
    "c64": np.array([1 + 2j, -1j], np.complex64),
    "c128": np.array(3 - 4j, np.complex128),
    "s": np.array([[b"ab", b"\x00\xff"]], dtype=object),
    "s0": np.array(b"scalar", dtype=object),
    "empty_s": np.zeros((0,), dtype=object),
    "empty_f": np.zeros((2, 0), np.float32),
}


def _run(fetch):
    with tf.Session() as sess:
        return sess.run(fetch)


def _save(prefix, arrays):
    with tf.Graph().as_default():
        tensors = [
            tf.constant(v, dtype=tf.string if v.dtype == object else None) for v in arrays.values()
        ]
        _run(io_ops.save_v2(prefix, list(arrays), [""] * len(arrays), tensors))


def _restore(prefix, names, dtypes, specs=None):
    with tf.Graph().as_default():
        out = io_ops.restore_v2(prefix, names, specs or [""] * len(names), dtypes)
        return _run(out)


def test_save_restore_every_storage_kind(tmp_path):
    prefix = str(tmp_path / "ck")
    _save(prefix, ARRAYS)
    dtypes = [tf.as_dtype(v.dtype) if v.dtype != object else tf.string for v in ARRAYS.values()]
    values = _restore(prefix, list(ARRAYS), dtypes)
    for (name, want), got in zip(ARRAYS.items(), values):
        got = np.asarray(got, dtype=object if want.dtype == object else None)
        assert got.shape == want.shape and got.dtype == want.dtype, name
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_on_disk_format_is_tensorflow_v2(tmp_path):
    prefix = str(tmp_path / "ck")
    _save(prefix, ARRAYS)
    raw = open(prefix + ".index", "rb").read()
    rows = dict(sstable.read_table(raw, "ck.index"))
    header = tensor_bundle_pb2.BundleHeaderProto.FromString(rows.pop(b""))
    assert header.num_shards == 1 and header.version.producer == 1
    assert sorted(rows) == sorted(k.encode() for k in ARRAYS)
    entry = tensor_bundle_pb2.BundleEntryProto.FromString(rows[b"f32"])
    assert entry.dtype == tf.float32.as_datatype_enum
    assert [d.size for d in entry.shape.dim] == [3, 4] and entry.size == 48
    data = open(prefix + ".data-00000-of-00001", "rb").read()
    np.testing.assert_array_equal(
        np.frombuffer(data[entry.offset : entry.offset + 48], "<f4").reshape(3, 4), ARRAYS["f32"]
    )
    assert entry.crc32c == sstable.mask(google_crc32c.value(ARRAYS["f32"].tobytes()))
    # Strings: varint lengths, their masked checksum, then the bytes (TF's WriteStringTensor).
    s = tensor_bundle_pb2.BundleEntryProto.FromString(rows[b"s"])
    assert s.dtype == tf.string.as_datatype_enum
    body = data[s.offset : s.offset + s.size]
    items = list(ARRAYS["s"].reshape(-1))
    lengths = bytes(len(x) for x in items)
    assert body[: len(items)] == lengths and body[len(items) + 4 :] == b"".join(items)


def test_reads_tensorweave_0_1_checkpoints(tmp_path):
    """Checkpoints written before the V2 format (JSON index, safetensors shard) still restore."""
    prefix = str(tmp_path / "old")
    f32 = ARRAYS["f32"]
    save_file({"f32": f32}, prefix + ".data-00000-of-00001", metadata={
        "tensorweave.strings": json.dumps({"s": [base64.b64encode(b"hi").decode()]})})
    crc_s = zlib.crc32(b"hi", zlib.crc32((2).to_bytes(8, "little")))
    index = {
        "format": "tensorweave-checkpoint", "version": 1, "num_shards": 1,
        "shards": [{"file": "old.data-00000-of-00001",
                    "bytes": (tmp_path / "old.data-00000-of-00001").stat().st_size}],
        "tensors": {
            "f32": {"shard": 0, "dtype": "float32", "shape": [3, 4], "storage": "safetensors",
                    "crc32": zlib.crc32(f32.tobytes())},
            "s": {"shard": 0, "dtype": "string", "shape": [1], "storage": "metadata",
                  "crc32": crc_s},
        },
    }
    (tmp_path / "old.index").write_text(json.dumps(index))
    got_f, got_s = _restore(prefix, ["f32", "s"], [tf.float32, tf.string])
    np.testing.assert_array_equal(got_f, f32)
    assert list(got_s) == [b"hi"]


def test_restore_slices(tmp_path):
    prefix = str(tmp_path / "ck")
    _save(prefix, {"m": ARRAYS["f32"]})
    whole, part = _restore(prefix, ["m", "m"], [tf.float32, tf.float32], ["3 4 -:-", "3 4 1,2:-"])
    np.testing.assert_array_equal(whole, ARRAYS["f32"])
    np.testing.assert_array_equal(part, ARRAYS["f32"][1:3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not match the shape stored"):
        _restore(prefix, ["m"], [tf.float32], ["4 3 -:-"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape_and_slice"):
        _restore(prefix, ["m"], [tf.float32], ["3 4 2,5:-"])


def test_restore_shape_function():
    with tf.Graph().as_default():
        a, b, c = io_ops.restore_v2(
            "p", ["a", "b", "c"], ["", "5 -", "4 6 1,2:-"], [tf.float32] * 3
        )
        assert a.shape.ndims is None
        assert b.shape.as_list() == [5]
        assert c.shape.as_list() == [2, 6]
        with pytest.raises(ValueError, match="rank 0"):
            io_ops.restore_v2(["p", "q"], ["a"], [""], [tf.float32])
        with pytest.raises(ValueError, match="must be 2"):
            io_ops.save_v2("p", ["a"], [""], [tf.constant(1.0), tf.constant(2.0)])
        fed = tf.placeholder(tf.string, [None])
        (d,) = io_ops.restore_v2("p", ["d"], fed, [tf.int32])
        assert d.shape.ndims is None and d.dtype == tf.int32


def test_save_runtime_errors(tmp_path):
    with tf.Graph().as_default():
        names = tf.placeholder(tf.string, [None])
        op = io_ops.save_v2(
            str(tmp_path / "x"), names, ["", ""], [tf.constant(1.0), tf.constant(2.0)]
        )
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="2 elements"):
                sess.run(op, {names: ["a"]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tensor name"):
                sess.run(op, {names: ["a", "a"]})
        # Slices are supported (tests/unit/ops/test_partitioned_variables.py); a value
        # whose shape differs from its slice spec is an error.
        sliced = io_ops.save_v2(str(tmp_path / "y"), ["a"], ["2 0,2"], [tf.constant([1.0])])
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="spec"):
            sess.run(sliced)
    assert not (tmp_path / "x.index").exists()


def test_reader_api(tmp_path):
    prefix = str(tmp_path / "ck")
    _save(prefix, {"a": np.array([1, 2], np.int32), "s": np.array(b"x", dtype=object)})
    reader = checkpoint_format.CheckpointReader(prefix)
    assert reader.has_tensor("a") and not reader.has_tensor("zzz")
    assert reader.get_variable_to_shape_map() == {"a": [2], "s": []}
    assert reader.get_variable_to_dtype_map() == {"a": tf.int32, "s": tf.string}
    with pytest.raises(tf.errors.NotFoundError, match="Key zzz not found in checkpoint"):
        reader.get_tensor("zzz")
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        checkpoint_format.CheckpointReader(str(tmp_path / "none"))


def test_sharded_filename_filespec_string_join():
    with tf.Graph().as_default():
        base = tf.placeholder(tf.string, [])
        name = io_ops.sharded_filename(base, 3, 12)
        spec = io_ops.sharded_filespec(base, 12)
        joined = io_ops.string_join([base, ["-a", "-b"]], separator="+")
        assert name.shape.as_list() == [] and joined.shape.as_list() == [2]
        with tf.Session() as sess:
            n, s, j = sess.run([name, spec, joined], {base: "/d/m"})
        assert n == b"/d/m-00003-of-00012"
        assert s == b"/d/m-?????-of-00012"
        assert list(j) == [b"/d/m+-a", b"/d/m+-b"]
        with pytest.raises(ValueError, match="rank 0"):
            io_ops.sharded_filename(["a", "b"], 0, 1)


def test_index_is_written_after_data(tmp_path, monkeypatch):
    order = []
    real = checkpoint_format.atomic_write

    def spy(path, writer):
        order.append(path.rsplit(".", 1)[-1])
        return real(path, writer)

    monkeypatch.setattr(checkpoint_format, "atomic_write", spy)
    _save(str(tmp_path / "ck"), {"a": np.float32(1.0)})
    assert order == ["data-00000-of-00001", "index"]
