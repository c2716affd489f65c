"""Kernels of the file datasets: `TextLineDataset`, `TFRecordDataset` and
`FixedLengthRecordDatasetV2` (TensorFlow's `core/kernels/data/*_dataset_op.cc`).

Each file is read whole (decompressed when asked) when the iterator reaches it; records
are produced in file order. Corruption raises `DataLossError` naming the file and offset.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import (
    op_defs,  # noqa: F401  (op definitions)
    record_io,
)
from tensorweave.kernels import dataset_values as dv
from tensorweave.kernels.dataset_chunks import CHUNK
from tensorweave.kernels.registry import KernelNode, register_kernel

_STRING = [np.dtype(object)]


def _filenames(x: Any, ctx: Any, node: KernelNode) -> list[str]:
    """The file names, each checked against the step's file sandbox (security)."""
    arr = np.asarray(x, np.object_)
    if arr.ndim > 1:
        raise errors.InvalidArgumentError(
            None, None, "`filenames` must be a scalar or a vector.")
    what = f"{node.op} (node {node.name})"
    return [ctx.checked_path(what, bytes(f).decode() if not isinstance(f, str) else f)
            for f in arr.reshape(-1)]


def _compression(x: Any) -> str:
    value = np.asarray(x, np.object_).item()
    value = value.decode() if isinstance(value, bytes) else str(value)
    try:
        return record_io.compression_type_name(value)
    except ValueError as e:
        raise errors.InvalidArgumentError(None, None, str(e)) from None


def _scalar(value: bytes) -> np.ndarray:
    out = np.empty((), np.object_)
    out[()] = value
    return out


def _string_chunks(records: Iterator[bytes]) -> Iterator[tuple[np.ndarray]]:
    """Records as object arrays of up to `dataset_chunks.CHUNK` (chunked iteration)."""
    buf: list[bytes] = []
    for r in records:
        buf.append(r)
        if len(buf) == CHUNK:
            yield (_vector(buf),)
            buf = []
    if buf:
        yield (_vector(buf),)


def _vector(values: list[bytes]) -> np.ndarray:
    out = np.empty(len(values), np.object_)
    out[:] = values
    return out


def _lines(data: bytes) -> Iterator[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for line in lines:
        yield line[:-1] if line.endswith(b"\r") else line


@register_kernel("TextLineDataset")
def _text_line_dataset(node: KernelNode) -> Any:
    def compute(ctx: Any, filenames: Any, compression: Any, buffer_size: Any) -> Any:
        files, kind = _filenames(filenames, ctx, node), _compression(compression)

        def lines() -> Iterator[bytes]:
            for path in files:
                yield from _lines(record_io.read_file_bytes(path, kind))

        def run(ctx: Any) -> Iterator[dv.Element]:
            return ((_scalar(line),) for line in lines())

        return dv.Generated(node.name, node.op, _STRING, run,
                            lambda ctx: _string_chunks(lines()))

    return compute


@register_kernel("TFRecordDataset")
def _tf_record_dataset(node: KernelNode) -> Any:
    def compute(ctx: Any, filenames: Any, compression: Any, buffer_size: Any) -> Any:
        files, kind = _filenames(filenames, ctx, node), _compression(compression)

        def records() -> Iterator[bytes]:
            for path in files:
                yield from record_io.iter_records(record_io.read_file_bytes(path, kind), path)

        def run(ctx: Any) -> Iterator[dv.Element]:
            return ((_scalar(r),) for r in records())

        def chunks(ctx: Any) -> Iterator[tuple[np.ndarray]]:
            for path in files:
                data = record_io.read_file_bytes(path, kind)
                try:
                    whole = record_io.split_records(data, path)
                except errors.DataLossError:
                    yield from _string_chunks(record_io.iter_records(data, path))
                    return
                for s in range(0, len(whole), CHUNK):
                    yield (_vector(whole[s:s + CHUNK]),)

        return dv.Generated(node.name, node.op, _STRING, run, chunks)

    return compute


@register_kernel("FixedLengthRecordDatasetV2")
def _fixed_length_dataset(node: KernelNode) -> Any:
    def compute(ctx: Any, filenames: Any, header: Any, record: Any, footer: Any,
                buffer_size: Any, compression: Any) -> Any:
        files, kind = _filenames(filenames, ctx, node), _compression(compression)
        h, r, f = (int(np.asarray(v)) for v in (header, record, footer))
        if r <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"`record_bytes` must be greater than zero, got {r}")

        def run(ctx: Any) -> Iterator[dv.Element]:
            for path in files:
                data = record_io.read_file_bytes(path, kind)
                body = len(data) - h - f
                if body < 0 or body % r:
                    raise errors.DataLossError(
                        None, None, f"Excluding the header ({h} bytes) and footer ({f} bytes), "
                        f"input file \"{path}\" has body length {max(body, 0)} bytes, which is "
                        f"not an exact multiple of the record length ({r} bytes).")
                for start in range(h, h + body, r):
                    yield (_scalar(data[start:start + r]),)

        return dv.Generated(node.name, node.op, _STRING, run)

    return compute
