"""Op definitions of the queue-based readers (TensorFlow's `core/ops/io_ops.cc`):
`TFRecordReaderV2`, `TextLineReaderV2`, `FixedLengthRecordReaderV2`, `WholeFileReaderV2`,
`IdentityReaderV2` (resource handles) and `ReaderReadV2`, `ReaderReadUpToV2`,
`ReaderNumRecordsProducedV2`, `ReaderNumWorkUnitsCompletedV2`, `ReaderResetV2`."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape

_CONTAINER = ["container: string = ''", "shared_name: string = ''"]


def _scalar(op: Any) -> list[TensorShape]:
    return [TensorShape([])] * len(op.outputs)


def _vectors(op: Any) -> list[TensorShape]:
    return [TensorShape([None]), TensorShape([None])]


for _name, _attrs in (
    ("TFRecordReaderV2", ["compression_type: string = ''"]),
    ("TextLineReaderV2", ["skip_header_lines: int = 0"]),
    ("FixedLengthRecordReaderV2", ["header_bytes: int = 0", "record_bytes: int",
                                   "footer_bytes: int = 0", "hop_bytes: int = 0",
                                   "encoding: string = ''"]),
    ("WholeFileReaderV2", []),
    ("IdentityReaderV2", []),
):
    register_op(_name, outputs=["reader_handle: resource"], attrs=_attrs + _CONTAINER,
                is_stateful=True, shape_fn=_scalar)

register_op("ReaderReadV2", inputs=["reader_handle: resource", "queue_handle: resource"],
            outputs=["key: string", "value: string"], is_stateful=True, shape_fn=_scalar)
register_op("ReaderReadUpToV2",
            inputs=["reader_handle: resource", "queue_handle: resource", "num_records: int64"],
            outputs=["keys: string", "values: string"], is_stateful=True, shape_fn=_vectors)
register_op("ReaderNumRecordsProducedV2", inputs=["reader_handle: resource"],
            outputs=["records_produced: int64"], is_stateful=True, shape_fn=_scalar)
register_op("ReaderNumWorkUnitsCompletedV2", inputs=["reader_handle: resource"],
            outputs=["units_completed: int64"], is_stateful=True, shape_fn=_scalar)
register_op("ReaderResetV2", inputs=["reader_handle: resource"], is_stateful=True,
            shape_fn=lambda op: [])
