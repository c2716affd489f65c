"""Kernels of the queue-based readers (TensorFlow's `ReaderBase`, `core/framework/
reader_base.cc`): a reader is a device resource that takes work units (file names) from a
queue of strings and produces (key, value) records.

`ReaderReadV2` / `ReaderReadUpToV2` are `AsyncKernel`s: when the current file is done they
dequeue the next name through the queue's own asynchronous dequeue, so a step waiting for
a file name can be cancelled. Once the queue is closed and empty a read raises
`OutOfRangeError` (a `read_up_to` returns what it has first). Keys are TensorFlow's:
`file:offset` (TFRecord), `file:line` (text, 1-based), `file:index` (fixed length), the
file name (whole file) and the work unit (identity).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import (
    op_defs,  # noqa: F401  (op definitions)
    record_io,
)
from tensorweave.kernels.queue_resources import QueueResource
from tensorweave.kernels.registry import AsyncKernel, KernelNode, register_compute, register_kernel

Records = Iterator[tuple[bytes, bytes]]


class ReaderResource:
    """One reader: the record source of its current work unit and its counters."""

    def __init__(self, name: str, open_work: Callable[[str], Records],
                 reads_files: bool = True):
        self.name = name
        self._open = open_work
        self.reads_files = reads_files  # its work units are file names (not IdentityReader)
        self.lock = threading.Lock()
        self._records: Records | None = None
        self.records_produced = 0
        self.work_units_completed = 0

    def reset(self) -> None:
        """Forgets the current work unit and the counters."""
        with self.lock:
            self._records = None
            self.records_produced = self.work_units_completed = 0

    def read(self, queue: QueueResource, n: int, up_to: bool, cm: Any, done: Any,
             check: Callable[[str], str] | None = None) -> None:
        """Reads up to `n` records (exactly one when not `up_to`), completing `done` with
        (keys, values) lists or an error; `check(path)` vets each file it opens (the
        step's file sandbox)."""
        keys: list[bytes] = []
        values: list[bytes] = []

        def step() -> None:
            while len(keys) < n:
                records = self._records
                item = next(records, None) if records is not None else None
                if item is not None:
                    keys.append(item[0])
                    values.append(item[1])
                    self.records_produced += 1
                    continue
                if records is not None:
                    self._records = None
                    self.work_units_completed += 1
                queue.dequeue(got_work, cm)
                return
            done((keys, values))

        def got_work(result: Any = None, error: Any = None) -> None:
            if error is not None:
                if up_to and keys and isinstance(error, errors.OutOfRangeError):
                    done((keys, values))
                else:
                    done(error=error)
                return
            work = np.asarray(result[0], np.object_).item()
            work = work.decode() if isinstance(work, bytes) else str(work)
            try:
                if check is not None and self.reads_files:
                    work = check(work)  # security: file sandbox
                self._records = self._open(work)
                step()
            except Exception as e:  # noqa: BLE001  (handed to the step)
                done(error=e)

        try:
            step()
        except Exception as e:  # noqa: BLE001  (handed to the step)
            done(error=e)


def _key(path: str, n: int) -> bytes:
    return f"{path}:{n}".encode()


def _tf_records(compression: str) -> Callable[[str], Records]:
    def open_work(path: str) -> Records:
        data = record_io.read_file_bytes(path, compression)
        for offset, record in record_io.iter_records_at(data, path):
            yield _key(path, offset), record

    return open_work


def _text_lines(skip: int) -> Callable[[str], Records]:
    def open_work(path: str) -> Records:
        data = record_io.read_file_bytes(path)
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for i, line in enumerate(lines[skip:], skip + 1):
            yield _key(path, i), line[:-1] if line.endswith(b"\r") else line

    return open_work


def _fixed_length(node: KernelNode) -> Callable[[str], Records]:
    header, record = int(node.attrs.get("header_bytes", 0)), int(node.attrs["record_bytes"])
    footer, hop = int(node.attrs.get("footer_bytes", 0)), int(node.attrs.get("hop_bytes", 0))
    encoding = node.attrs.get("encoding", "") or ""

    def open_work(path: str) -> Records:
        data = record_io.read_file_bytes(path, encoding)
        end = len(data) - footer
        step = hop if hop > 0 else record
        for i, start in enumerate(range(header, end - record + 1, step)):
            yield _key(path, i), data[start:start + record]

    return open_work


def _whole_file(path: str) -> Records:
    data = record_io.read_file_bytes(path)
    yield path.encode(), data


def _identity(work: str) -> Records:
    yield work.encode(), work.encode()


def _reader_kernel(make: Callable[[KernelNode], Callable[[str], Records]],
                   reads_files: bool = True) -> Any:
    def builder(node: KernelNode) -> Any:
        container = node.attrs.get("container", "") or ""
        name = node.attrs.get("shared_name") or node.name
        open_work = make(node)

        def compute(ctx: Any) -> ReaderResource:
            res = ctx.resource_mgr.lookup_or_create(
                container, name, lambda: ReaderResource(name, open_work, reads_files))
            if not isinstance(res, ReaderResource):
                raise errors.InvalidArgumentError(
                    None, None, f"Resource {name} exists and is not a reader")
            return res

        return compute

    return builder


register_kernel("TFRecordReaderV2")(_reader_kernel(
    lambda node: _tf_records(record_io.compression_type_name(
        node.attrs.get("compression_type", "")))))
register_kernel("TextLineReaderV2")(_reader_kernel(
    lambda node: _text_lines(int(node.attrs.get("skip_header_lines", 0)))))
register_kernel("FixedLengthRecordReaderV2")(_reader_kernel(_fixed_length))
register_kernel("WholeFileReaderV2")(_reader_kernel(lambda node: _whole_file))
register_kernel("IdentityReaderV2")(_reader_kernel(lambda node: _identity, reads_files=False))


def _reader(x: Any) -> ReaderResource:
    if not isinstance(x, ReaderResource):
        raise errors.InvalidArgumentError(None, None, f"Expected a reader handle, got {x!r}")
    return x


def _strings(values: list[bytes], scalar: bool) -> np.ndarray:
    out = np.empty(() if scalar else (len(values),), np.object_)
    if scalar:
        out[()] = values[0]
    else:
        out[:] = values
    return out


class _ReadKernel(AsyncKernel):
    def __init__(self, node: KernelNode):
        self.up_to = node.op == "ReaderReadUpToV2"
        self.what = f"{node.op} (node {node.name})"

    def start(self, ctx: Any, inputs: list[Any], done: Callable[..., None]) -> None:
        """Reads from the reader of `inputs[0]`, taking work from the queue `inputs[1]`."""
        try:
            reader, queue = _reader(inputs[0]), inputs[1]
            if not isinstance(queue, QueueResource):
                raise errors.InvalidArgumentError(None, None, "Expected a queue handle")
            n = int(np.asarray(inputs[2])) if self.up_to else 1
            if n <= 0:
                raise errors.InvalidArgumentError(
                    None, None, f"num_records must be greater than zero, got {n}")
        except Exception as e:  # noqa: BLE001  (the executor converts it to an OpError)
            done(error=e)
            return
        reader.lock.acquire()

        def finish(result: Any = None, error: Any = None) -> None:
            reader.lock.release()
            if error is not None:
                done(error=error)
                return
            keys, values = result
            scalar = not self.up_to
            done((_strings(keys, scalar), _strings(values, scalar)))

        reader.read(queue, n, self.up_to, ctx.cancellation, finish,
                    lambda path: ctx.checked_path(self.what, path))


register_kernel("ReaderReadV2")(_ReadKernel)
register_kernel("ReaderReadUpToV2")(_ReadKernel)


@register_compute("ReaderNumRecordsProducedV2")
def _records_produced(ctx: Any, reader: Any) -> np.ndarray:
    return np.int64(_reader(reader).records_produced)


@register_compute("ReaderNumWorkUnitsCompletedV2")
def _work_units_completed(ctx: Any, reader: Any) -> np.ndarray:
    return np.int64(_reader(reader).work_units_completed)


@register_compute("ReaderResetV2")
def _reset(ctx: Any, reader: Any) -> None:
    _reader(reader).reset()
