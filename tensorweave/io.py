"""The `tf.io` namespace (explicit re-exports of TF 1.x `tf.io` names): TFRecord files,
`tf.train.Example` parsing, decoding and file ops.

The logic lives in `tensorweave.framework.record_io` (the TFRecord format),
`tensorweave.ops.parsing_ops` and `tensorweave.ops.string_io_ops`.
"""

from tensorweave.framework.graph_io import write_graph
from tensorweave.framework.record_io import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
from tensorweave.ops.data_flow_ops import QueueBase, RandomShuffleQueue
from tensorweave.ops.image_io_ops import (
    decode_bmp,
    decode_image,
    decode_json_example,
    decode_png,
    encode_png,
)
from tensorweave.ops.parsing_ops import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    SparseFeature,
    VarLenFeature,
    decode_csv,
    decode_raw,
    parse_example,
    parse_sequence_example,
    parse_single_example,
    parse_single_sequence_example,
)
from tensorweave.ops.string_io_ops import (
    decode_base64,
    decode_compressed,
    encode_base64,
    match_filenames_once,
    matching_files,
    parse_tensor,
    read_file,
    serialize_tensor,
    write_file,
)

__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "QueueBase",
    "RaggedFeature",
    "RandomShuffleQueue",
    "SparseFeature",
    "TFRecordCompressionType",
    "TFRecordOptions",
    "TFRecordWriter",
    "VarLenFeature",
    "decode_base64",
    "decode_bmp",
    "decode_image",
    "decode_json_example",
    "decode_png",
    "decode_compressed",
    "decode_csv",
    "decode_raw",
    "encode_base64",
    "encode_png",
    "match_filenames_once",
    "matching_files",
    "parse_example",
    "parse_sequence_example",
    "parse_single_example",
    "parse_single_sequence_example",
    "parse_tensor",
    "read_file",
    "serialize_tensor",
    "tf_record_iterator",
    "write_file",
    "write_graph",
]
