"""Raw tensor frames of the same-host step streams (`transport.tensor_frames`)."""

from __future__ import annotations

import numpy as np
import pytest

from tensorweave import errors
from tensorweave.distributed.transport import tensor_frames
from tensorweave.framework.rendezvous import DEAD


def _roundtrip(items):
    bufs, size = tensor_frames.encode(items)
    body = bytearray(b"".join(bytes(b) for b in bufs))
    assert len(body) == size
    return tensor_frames.decode(body)


def test_values_keep_dtype_shape_and_content():
    items = [
        ("scalar", np.float32(2.5)),
        ("zero_d", np.array(7, dtype=np.int64)),
        ("matrix", np.arange(12, dtype=np.float32).reshape(3, 4)),
        ("empty", np.zeros((0, 5), dtype=np.float64)),
        ("bools", np.array([True, False, True])),
        ("transposed", np.arange(6, dtype=np.int32).reshape(2, 3).T),
        ("strings", np.array([b"a", b"bc"], dtype=object)),
    ]
    out = _roundtrip(items)
    assert [k for k, _ in out] == [k for k, _ in items]
    for (_, want), (_, got) in zip(items, out):
        want = np.asarray(want)
        assert got.shape == want.shape
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_numeric_values_are_aligned_read_only_views():
    out = _roundtrip([("a", np.ones(3, np.float32)), ("b", np.arange(5, dtype=np.float64))])
    for _, v in out:
        assert not v.flags.writeable
        assert v.ctypes.data % 16 == 0


def test_empty_frame():
    assert _roundtrip([]) == []


@pytest.mark.parametrize("cut", [3, 10, 40])
def test_truncated_frame_is_data_loss(cut):
    bufs, _ = tensor_frames.encode([("k", np.arange(100, dtype=np.float32))])
    body = bytearray(b"".join(bytes(b) for b in bufs))
    with pytest.raises(errors.DataLossError, match="Malformed tensor frame"):
        tensor_frames.decode(body[:cut])


def test_size_that_does_not_match_shape_is_data_loss():
    bufs, _ = tensor_frames.encode([("k", np.arange(4, dtype=np.float32))])
    body = bytearray(b"".join(bytes(b) for b in bufs))
    body[8 + 24] = 5  # the one dim (after the head and the entry header): 5, not 4
    with pytest.raises(errors.DataLossError, match="for shape"):
        tensor_frames.decode(body)


def test_trailing_bytes_are_data_loss():
    bufs, _ = tensor_frames.encode([("k", np.arange(4, dtype=np.float32))])
    body = bytearray(b"".join(bytes(b) for b in bufs)) + b"junk"
    with pytest.raises(errors.DataLossError, match="table announces"):
        tensor_frames.decode(body)


def test_layouts_are_cached_but_every_frame_carries_its_own_values():
    a = _roundtrip([("k", np.arange(3, dtype=np.float32))])
    b = _roundtrip([("k", np.arange(3, dtype=np.float32) + 10)])
    np.testing.assert_array_equal(a[0][1], [0, 1, 2])
    np.testing.assert_array_equal(b[0][1], [10, 11, 12])
    c = _roundtrip([("k", np.arange(4, dtype=np.float32))])  # same key, new shape
    assert c[0][1].shape == (4,)


def test_dead_values_travel_as_a_flag():
    items = [("live", np.float32(1.5)), ("dead", DEAD), ("s", np.array([], dtype=object))]
    for _ in range(2):  # NOTE: the second frame reuses the cached layout
        out = _roundtrip(items)
        assert out[0][1] == np.float32(1.5)
        assert out[1][1] is DEAD
        assert out[2][1].shape == (0,) and out[2][1].dtype == object
    # A key once dead, then live (its layout is not taken for the dead one's).
    out = _roundtrip([("live", np.float32(2.0)), ("dead", np.array([], dtype=object))])
    assert out[1][1].shape == (0,)


def test_dead_entry_with_data_is_data_loss():
    bufs, _ = tensor_frames.encode([("k", np.arange(4, dtype=np.float32))])
    body = bytearray(b"".join(bytes(b) for b in bufs))
    body[8 + 12] = 1  # the entry's flags: dead, yet 16 bytes of data
    with pytest.raises(errors.DataLossError, match="dead with"):
        tensor_frames.decode(body)


def test_a_layout_cache_reuses_tables_and_keeps_values_apart():
    cache = tensor_frames.LayoutCache()
    first = [("a", np.arange(6, dtype=np.float32).reshape(2, 3)), ("s", np.int64(4))]
    second = [("a", np.ones((2, 3), np.float32)), ("s", np.int64(9))]
    bufs1, _ = tensor_frames.encode(first, cache)
    bufs2, _ = tensor_frames.encode(second, cache)
    assert bufs2[0] is bufs1[0]  # NOTE: the same table object, built once
    assert len(cache.encoded) == 1
    for items, bufs in ((first, bufs1), (second, bufs2)):
        body = bytearray(b"".join(bytes(b) for b in bufs))
        out = tensor_frames.decode(body, cache)
        for (_, want), (_, got) in zip(items, out):
            np.testing.assert_array_equal(got, want)
    assert len(cache.decoded) == 1
    other = tensor_frames.LayoutCache()
    assert tensor_frames.encode(first, other)[0][0] is not bufs1[0]


def test_strings_are_never_cached():
    cache = tensor_frames.LayoutCache()
    tensor_frames.encode([("s", np.array([b"abc"], dtype=object))], cache)
    assert cache.encoded == {}
