"""Queue-based readers (TF 1.x `tf.ReaderBase`, `python/ops/io_ops.py`): `TFRecordReader`,
`TextLineReader`, `FixedLengthRecordReader`, `WholeFileReader`, `IdentityReader`.

A reader takes file names from a queue (`tf.train.string_input_producer`) and returns
(key, value) string tensors per `read`. Reads raise `OutOfRangeError` once the queue is
closed and empty.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import graph as graph_mod
from tensorweave.framework import op_defs  # noqa: F401  (registers the reader ops)
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.record_io import compression_type_name
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.gradients_impl import no_gradient

for _op in ("TFRecordReaderV2", "TextLineReaderV2", "FixedLengthRecordReaderV2",
            "WholeFileReaderV2", "IdentityReaderV2", "ReaderReadV2", "ReaderReadUpToV2",
            "ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2"):
    no_gradient(_op)


def _queue_ref(queue: Any) -> Any:
    return queue.queue_ref if hasattr(queue, "queue_ref") else queue


class ReaderBase:
    """A reader resource and the ops that use it (`tf.ReaderBase`)."""

    def __init__(self, reader_ref: Any, supports_serialize: bool = False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self) -> Any:
        """The reader's `resource` handle."""
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        """False: reader state cannot be serialized here."""
        return False

    def _op(self, op_type: str, name: str | None, **inputs: Any) -> Any:
        with graph_mod.colocate_with(self._reader_ref.op):
            return apply_op(op_type, reader_handle=self._reader_ref, name=name, **inputs)

    def read(self, queue: Any, name: str | None = None) -> tuple[Any, Any]:
        """(key, value) string [] of the next record, taking files from `queue`."""
        key, value = self._op("ReaderReadV2", name, queue_handle=_queue_ref(queue))
        return key, value

    def read_up_to(self, queue: Any, num_records: Any, name: str | None = None) -> Any:
        """(keys, values) string [n] with 1 <= n <= num_records (fewer at the end)."""
        keys, values = self._op("ReaderReadUpToV2", name, queue_handle=_queue_ref(queue),
                                num_records=convert_to_tensor(num_records, dtypes_lib.int64))
        return keys, values

    def num_records_produced(self, name: str | None = None) -> Any:
        """int64 []: records read so far."""
        return self._op("ReaderNumRecordsProducedV2", name)

    def num_work_units_completed(self, name: str | None = None) -> Any:
        """int64 []: files finished so far."""
        return self._op("ReaderNumWorkUnitsCompletedV2", name)

    def reset(self, name: str | None = None) -> Any:
        """An op forgetting the current file and the counters."""
        return self._op("ReaderResetV2", name)


class TFRecordReader(ReaderBase):
    """Reads the records of TFRecord files (`tf.TFRecordReader`)."""

    def __init__(self, name: str | None = None, options: Any = None):
        super().__init__(apply_op("TFRecordReaderV2", name=name,
                                  compression_type=compression_type_name(options)))


class TextLineReader(ReaderBase):
    """Reads the lines of text files (`tf.TextLineReader`)."""

    def __init__(self, skip_header_lines: int | None = None, name: str | None = None):
        super().__init__(apply_op("TextLineReaderV2", name=name,
                                  skip_header_lines=int(skip_header_lines or 0)))


class FixedLengthRecordReader(ReaderBase):
    """Reads fixed-size records of binary files (`tf.FixedLengthRecordReader`)."""

    def __init__(self, record_bytes: int, header_bytes: int | None = None,
                 footer_bytes: int | None = None, hop_bytes: int | None = None,
                 name: str | None = None, encoding: str | None = None):
        super().__init__(apply_op(
            "FixedLengthRecordReaderV2", name=name, record_bytes=int(record_bytes),
            header_bytes=int(header_bytes or 0), footer_bytes=int(footer_bytes or 0),
            hop_bytes=int(hop_bytes or 0), encoding=compression_type_name(encoding)))


class WholeFileReader(ReaderBase):
    """Reads each file whole: key = file name, value = contents (`tf.WholeFileReader`)."""

    def __init__(self, name: str | None = None):
        super().__init__(apply_op("WholeFileReaderV2", name=name))


class IdentityReader(ReaderBase):
    """Returns each work unit as both key and value (`tf.IdentityReader`)."""

    def __init__(self, name: str | None = None):
        super().__init__(apply_op("IdentityReaderV2", name=name))


__all__ = [
    "FixedLengthRecordReader",
    "IdentityReader",
    "ReaderBase",
    "TFRecordReader",
    "TextLineReader",
    "WholeFileReader",
]
