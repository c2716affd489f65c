"""The TFRecord file format: records framed by a length and masked CRC32C checksums.

Each record is ``uint64 length | uint32 masked_crc32c(length) | data | uint32
masked_crc32c(data)``, little-endian, exactly as TensorFlow's
``core/lib/io/record_writer.cc``; a whole file may be compressed as one GZIP or ZLIB
stream. Files written here read in TensorFlow and the reverse.

Used by `tf.io.TFRecordWriter`, `tf.io.tf_record_iterator`, the `TFRecordDataset` kernel
and the `TFRecordReaderV2` kernel.
"""

from __future__ import annotations

import enum
import io
import struct
import zlib
from collections.abc import Iterator
from typing import Any

import google_crc32c

from tensorweave import errors

_MASK_DELTA = 0xA282EAD8
_HEADER = struct.Struct("<QI")
_FOOTER = struct.Struct("<I")


def masked_crc32c(data: bytes) -> int:
    """TensorFlow's masked CRC32C of `data` (rotate right by 15, add a constant)."""
    return mask(google_crc32c.value(data))


def mask(crc: int) -> int:
    """Masks a CRC32C as TensorFlow stores it (`crc32c::Mask`)."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    """Inverse of `mask` (`crc32c::Unmask`)."""
    rot = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


class TFRecordCompressionType(enum.IntEnum):
    """The compression of a TFRecord file (`tf.io.TFRecordCompressionType`)."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_TYPE_NAMES = {
    TFRecordCompressionType.NONE: "",
    TFRecordCompressionType.ZLIB: "ZLIB",
    TFRecordCompressionType.GZIP: "GZIP",
}


class TFRecordOptions:
    """Options of a TFRecord file (`tf.io.TFRecordOptions`).

    Only `compression_type` and `compression_level` change what is written; the other
    arguments are accepted for compatibility.
    """

    compression_type_map = {
        TFRecordCompressionType.ZLIB: "ZLIB",
        TFRecordCompressionType.GZIP: "GZIP",
        TFRecordCompressionType.NONE: "",
    }

    def __init__(
        self,
        compression_type: Any = None,
        flush_mode: Any = None,
        input_buffer_size: Any = None,
        output_buffer_size: Any = None,
        window_bits: Any = None,
        compression_level: Any = None,
        compression_method: Any = None,
        mem_level: Any = None,
        compression_strategy: Any = None,
    ):
        self.compression_type = compression_type_name(compression_type)
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options: Any) -> str:
        """The compression ("", "ZLIB" or "GZIP") of options, a type or a string."""
        if isinstance(options, TFRecordOptions):
            return options.compression_type
        return compression_type_name(options)


def compression_type_name(value: Any) -> str:
    """Normalises None, a `TFRecordCompressionType`, a `TFRecordOptions` or a string.

    Raises:
      ValueError: for an unknown compression type.
    """
    if value is None:
        return ""
    if isinstance(value, TFRecordOptions):
        return value.compression_type
    if isinstance(value, TFRecordCompressionType):
        return _TYPE_NAMES[value]
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, str) and value.upper() in ("", "ZLIB", "GZIP", "NONE"):
        return "" if value.upper() == "NONE" else value.upper()
    raise ValueError(f"Unknown compression type: {value!r}")


def encode_record(data: bytes) -> bytes:
    """One framed record."""
    header = struct.pack("<Q", len(data))
    return b"".join(
        (header, _FOOTER.pack(masked_crc32c(header)), data, _FOOTER.pack(masked_crc32c(data)))
    )


class TFRecordWriter:
    """Writes records to a TFRecord file (`tf.io.TFRecordWriter`, `tf.python_io`).

    Args:
      path: the file to (over)write.
      options: a `TFRecordOptions`, a `TFRecordCompressionType` or "", "ZLIB", "GZIP".

    Raises:
      NotFoundError: if the file cannot be created.
    """

    def __init__(self, path: Any, options: Any = None):
        path = path.decode() if isinstance(path, bytes) else str(path)
        compression = compression_type_name(options)
        level = getattr(options, "compression_level", None)
        level = 6 if level is None or level < 0 else int(level)
        self._path = path
        try:
            self._raw = open(path, "wb")  # noqa: SIM115  (closed by close())
        except OSError as e:
            raise errors.NotFoundError(None, None, f"{path}; {e.strerror}") from None
        if compression == "GZIP":
            import gzip  # NOTE: not at the top: few processes write gzip (start-up)

            self._out: Any = gzip.GzipFile(fileobj=self._raw, mode="wb", compresslevel=level)
        elif compression == "ZLIB":
            self._out = _ZlibWriter(self._raw, level)
        else:
            self._out = self._raw

    def write(self, record: bytes) -> None:
        """Appends one record."""
        self._out.write(encode_record(bytes(record)))

    def flush(self) -> None:
        """Flushes buffered records to the file."""
        self._out.flush()
        if self._out is not self._raw:
            self._raw.flush()

    def close(self) -> None:
        """Finishes the compression stream and closes the file."""
        if self._raw.closed:
            return
        self._out.close()
        if self._out is not self._raw:
            self._raw.close()

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _ZlibWriter:
    def __init__(self, raw: Any, level: int):
        self._raw = raw
        self._z = zlib.compressobj(level)

    def write(self, data: bytes) -> None:
        self._raw.write(self._z.compress(data))

    def flush(self) -> None:
        self._raw.write(self._z.flush(zlib.Z_SYNC_FLUSH))

    def close(self) -> None:
        self._raw.write(self._z.flush())


def read_file_bytes(path: str, compression: Any = None) -> bytes:
    """The (decompressed) contents of a record file.

    Raises:
      NotFoundError: if the file does not exist.
      DataLossError: if the compressed stream is corrupt.
    """
    compression = compression_type_name(compression)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise errors.NotFoundError(None, None, f"{path}; {e.strerror}") from None
    try:
        if compression == "GZIP":
            import gzip  # NOTE: not at the top: few processes read gzip (start-up)

            return gzip.GzipFile(fileobj=io.BytesIO(raw)).read()
        if compression == "ZLIB":
            return zlib.decompress(raw)
    except (OSError, EOFError, zlib.error) as e:
        message = f"corrupted {compression} stream in {path}: {e}"
        raise errors.DataLossError(None, None, message) from None
    return raw


def iter_records(data: bytes, path: str = "", offset: int = 0) -> Iterator[bytes]:
    """Yields the records of a whole (decompressed) file from byte `offset`.

    Raises:
      DataLossError: on a truncated record, a corrupted length or data checksum, naming
        `path` and the offset of the bad record.
    """
    for _, record in iter_records_at(data, path, offset):
        yield record


def iter_records_at(data: bytes, path: str = "", offset: int = 0) -> Iterator[tuple[int, bytes]]:
    """Yields (offset, record) pairs of a whole (decompressed) file; as `iter_records`."""
    end = len(data)
    unpack, crc = _HEADER.unpack_from, google_crc32c.value
    while offset < end:
        if offset + 12 > end:
            raise _loss(path, offset, "truncated record header")
        length, length_crc = unpack(data, offset)
        if mask(crc(data[offset : offset + 8])) != length_crc:
            raise _loss(path, offset, "corrupted record length (checksum mismatch)")
        start = offset + 12
        stop = start + length
        if stop + 4 > end:
            raise _loss(path, offset, f"truncated record of {length} bytes")
        record = data[start:stop]
        if mask(crc(record)) != _FOOTER.unpack_from(data, stop)[0]:
            raise _loss(path, offset, "corrupted record data (checksum mismatch)")
        yield offset, record
        offset = stop + 4


def split_records(data: bytes, path: str = "") -> list[bytes]:
    """All records of a whole (decompressed) file, as `iter_records` yields them (one
    tight loop, for bulk readers).

    Raises:
      DataLossError: as `iter_records`.
    """
    out: list[bytes] = []
    append, end, offset = out.append, len(data), 0
    unpack, footer, crc = _HEADER.unpack_from, _FOOTER.unpack_from, google_crc32c.value
    while offset < end:
        if offset + 12 > end:
            raise _loss(path, offset, "truncated record header")
        length, length_crc = unpack(data, offset)
        start = offset + 12
        stop = start + length
        if mask(crc(data[offset:offset + 8])) != length_crc:
            raise _loss(path, offset, "corrupted record length (checksum mismatch)")
        if stop + 4 > end:
            raise _loss(path, offset, f"truncated record of {length} bytes")
        record = data[start:stop]
        if mask(crc(record)) != footer(data, stop)[0]:
            raise _loss(path, offset, "corrupted record data (checksum mismatch)")
        append(record)
        offset = stop + 4
    return out


def _loss(path: str, offset: int, what: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, f"{what} at offset {offset} in {path}")


def tf_record_iterator(path: Any, options: Any = None) -> Iterator[bytes]:
    """Yields the records of a TFRecord file (`tf.io.tf_record_iterator`).

    Raises:
      NotFoundError: if the file does not exist.
      DataLossError: for a corrupted file, naming it and the record's offset.
    """
    path = path.decode() if isinstance(path, bytes) else str(path)
    data = read_file_bytes(path, options)
    # NOTE: records before a corruption are still yielded, then DataLossError is raised.
    try:
        records = split_records(data, path)
    except errors.DataLossError:
        yield from iter_records(data, path)
        return
    yield from records
