"""framework/varint: the one varint codec (checkpoint tables, bundles, string tensor_content)."""

from __future__ import annotations

import pytest

from tensorweave.framework.tensor_util import decode_string_list
from tensorweave.framework.varint import get_varint, put_varint


@pytest.mark.parametrize(
    "value,encoded",
    [(0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02"),
     (2**32 - 1, b"\xff\xff\xff\xff\x0f"), (2**64 - 1, b"\xff" * 9 + b"\x01")],
)
def test_round_trip_matches_protobuf_encoding(value, encoded):
    out = bytearray()
    put_varint(out, value)
    assert bytes(out) == encoded
    assert get_varint(b"\x07" + encoded + b"\x09", 1) == (value, 1 + len(encoded))


def test_truncated_raises():
    with pytest.raises(ValueError, match="truncated varint"):
        get_varint(b"\x80\x80", 0)


def test_max_bits_limits_length():
    six_bytes = b"\x80\x80\x80\x80\x80\x01"
    assert get_varint(six_bytes, 0)[0] == 1 << 35
    with pytest.raises(ValueError):
        get_varint(six_bytes, 0, max_bits=32)
    assert get_varint(b"\xff\xff\xff\xff\x0f", 0, max_bits=32) == (2**32 - 1, 5)


def test_decode_string_list_uses_varint32_lengths():
    content = bytearray()
    for s in (b"a", b"", b"x" * 200):
        put_varint(content, len(s))
    content += b"a" + b"x" * 200
    assert list(decode_string_list(bytes(content), 3)) == [b"a", b"", b"x" * 200]
    with pytest.raises(ValueError, match="too short for 2 lengths"):
        decode_string_list(b"\x01", 2)
    with pytest.raises(ValueError, match="too short"):
        decode_string_list(b"\x80\x80\x80\x80\x80\x01", 1)
