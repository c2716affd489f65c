"""The immutable sorted key/value table of a V2 checkpoint's `.index` file.

TensorFlow writes checkpoint indexes with `tensorflow/core/lib/io/table_builder.cc`, which is
LevelDB's table format without compression:

* data blocks of prefix-compressed entries (`varint32 shared, varint32 unshared,
  varint32 value_length, key suffix, value`), a restart point every 16 entries, then the
  restart offsets (`fixed32` each) and their count (`fixed32`);
* after each block a 5-byte trailer: the compression type (0: none) and the masked CRC32C
  of the block and that type byte (`fixed32`);
* an empty meta-index block, an index block (one entry per data block: a key >= every key of
  the block and < every key of the next, and the block's handle `varint64 offset, varint64
  size`; a restart point per entry);
* a 48-byte footer: the two handles padded to 40 bytes and the magic `0xdb4775248b80fb57`
  (`fixed64`).

Keys are compared as unsigned bytes. Blocks are cut at 4 KiB (TF's default block size).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

from tensorweave import errors
from tensorweave.framework.record_io import mask, masked_crc32c, unmask  # noqa: F401  (also for tensor_bundle)
from tensorweave.framework.varint import get_varint, put_varint

MAGIC = 0xDB4775248B80FB57
FOOTER_BYTES = 48
BLOCK_BYTES = 4096
RESTART_INTERVAL = 16


def _block(entries: Sequence[tuple[bytes, bytes]], interval: int) -> bytes:
    out = bytearray()
    restarts: list[int] = []
    last = b""
    for i, (key, value) in enumerate(entries):
        shared = 0
        if i % interval == 0:
            restarts.append(len(out))
        else:
            limit = min(len(last), len(key))
            while shared < limit and last[shared] == key[shared]:
                shared += 1
        put_varint(out, shared)
        put_varint(out, len(key) - shared)
        put_varint(out, len(value))
        out += key[shared:]
        out += value
        last = key
    restarts = restarts or [0]
    out += struct.pack(f"<{len(restarts)}I", *restarts)
    out += struct.pack("<I", len(restarts))
    return bytes(out)


def _handle(offset: int, size: int) -> bytes:
    out = bytearray()
    put_varint(out, offset)
    put_varint(out, size)
    return bytes(out)


def build_table(items: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The bytes of a table holding `items` (keys strictly increasing as unsigned bytes).

    Raises:
      ValueError: if the keys are not strictly increasing.
    """
    out = bytearray()
    index: list[tuple[bytes, bytes]] = []
    block: list[tuple[bytes, bytes]] = []
    size = 0
    previous: bytes | None = None

    def flush() -> None:
        nonlocal block, size
        data = _block(block, RESTART_INTERVAL)
        index.append((block[-1][0], _handle(len(out), len(data))))
        out.extend(data + b"\x00" + struct.pack("<I", masked_crc32c(data + b"\x00")))
        block, size = [], 0

    for key, value in items:
        if previous is not None and key <= previous:
            raise ValueError(f"table keys must increase: {key!r} after {previous!r}")
        previous = key
        block.append((key, value))
        size += len(key) + len(value) + 8
        if size >= BLOCK_BYTES:
            flush()
    if block:
        flush()
    handles = []
    for data in (_block([], 1), _block(index, 1)):
        handles.append(_handle(len(out), len(data)))
        out.extend(data + b"\x00" + struct.pack("<I", masked_crc32c(data + b"\x00")))
    footer = (handles[0] + handles[1]).ljust(FOOTER_BYTES - 8, b"\x00")
    out.extend(footer + struct.pack("<Q", MAGIC))
    return bytes(out)


def _read_block(buf: bytes, handle: bytes, what: str) -> bytes:
    offset, pos = get_varint(handle, 0)
    size, _ = get_varint(handle, pos)
    end = offset + size
    if end + 5 > len(buf):
        raise ValueError(f"{what} block [{offset}, {end}) runs past the end of the file")
    data = buf[offset:end]
    kind = buf[end]
    (stored,) = struct.unpack_from("<I", buf, end + 1)
    if kind != 0:
        raise ValueError(f"{what} block is compressed (type {kind}); only uncompressed tables")
    if masked_crc32c(buf[offset : end + 1]) != stored:
        raise ValueError(f"{what} block at offset {offset} fails its checksum")
    return data


def _entries(block: bytes) -> list[tuple[bytes, bytes]]:
    if len(block) < 4:
        raise ValueError("block shorter than its restart count")
    (num_restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    limit = len(block) - 4 - 4 * num_restarts
    if limit < 0:
        raise ValueError("bad restart count")
    out: list[tuple[bytes, bytes]] = []
    pos, last = 0, b""
    while pos < limit:
        shared, pos = get_varint(block, pos)
        unshared, pos = get_varint(block, pos)
        vlen, pos = get_varint(block, pos)
        if shared > len(last) or pos + unshared + vlen > limit:
            raise ValueError("corrupt block entry")
        key = last[:shared] + block[pos : pos + unshared]
        pos += unshared
        out.append((key, block[pos : pos + vlen]))
        pos += vlen
        last = key
    return out


def read_table(buf: bytes, path: str) -> list[tuple[bytes, bytes]]:
    """All (key, value) pairs of a table, in key order.

    Raises:
      DataLossError: naming `path`, for a file that is not an intact table.
    """
    try:
        if len(buf) < FOOTER_BYTES:
            raise ValueError("file shorter than a table footer")
        (magic,) = struct.unpack_from("<Q", buf, len(buf) - 8)
        if magic != MAGIC:
            raise ValueError("bad magic number")
        footer = buf[len(buf) - FOOTER_BYTES :]
        _, pos = get_varint(footer, 0)
        _, pos = get_varint(footer, pos)
        meta_len = pos
        _, pos = get_varint(footer, pos)
        _, pos = get_varint(footer, pos)
        index = _read_block(buf, footer[meta_len:pos], "index")
        out: list[tuple[bytes, bytes]] = []
        for _, handle in _entries(index):
            out.extend(_entries(_read_block(buf, handle, "data")))
        return out
    except (ValueError, struct.error) as e:
        raise errors.DataLossError(
            None, None, f"Unable to read table {path}: {e} (truncated or corrupt file?)"
        ) from None
