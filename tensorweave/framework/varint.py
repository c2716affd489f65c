"""Little-endian base-128 varints, as protobuf, LevelDB tables and TF's string lists write them.

One home for the codec: the checkpoint table (`kernels/sstable`), tensor bundles and string
`tensor_content` (`framework/tensor_util`) all read and write lengths this way.
"""

from __future__ import annotations


def put_varint(out: bytearray, value: int) -> None:
    """Appends `value` (>= 0) to `out` as a little-endian base-128 varint."""
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def get_varint(buf: bytes | memoryview, pos: int, max_bits: int = 64) -> tuple[int, int]:
    """Reads a varint at `pos`; returns (value, next position).

    Args:
      buf: the bytes to read.
      pos: where the varint starts.
      max_bits: 64 for a varint64, 32 for a varint32 (at most 5 bytes).

    Raises:
      ValueError: for a truncated varint or one longer than `max_bits` allows.
    """
    result = shift = 0
    while True:
        if pos >= len(buf) or shift >= max_bits:
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
