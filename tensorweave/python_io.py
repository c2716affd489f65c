"""The `tf.python_io` namespace (TF 1.x): TFRecord writing and reading."""

from tensorweave.framework.record_io import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]
