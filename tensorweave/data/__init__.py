"""The `tf.data` namespace (TF 1.x `tf.compat.v1.data`): datasets and iterators in graph
mode. The logic lives in `tensorweave.ops.dataset_ops`, `dataset_sources`,
`iterator_ops`; the kernels in `tensorweave.kernels.dataset_*` and `iterator_kernels`."""

from tensorweave.data import experimental
from tensorweave.ops.dataset_ops import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Options,
    TensorSpec,
    ThreadingOptions,
)
from tensorweave.ops.dataset_sources import DatasetV1 as Dataset
from tensorweave.ops.dataset_sources import (
    FixedLengthRecordDataset,
    TextLineDataset,
    TFRecordDataset,
)
from tensorweave.ops.iterator_ops import (
    Iterator,
    get_output_classes,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)

DatasetSpec = TensorSpec

__all__ = [
    "AUTOTUNE",
    "Dataset",
    "DatasetSpec",
    "FixedLengthRecordDataset",
    "INFINITE_CARDINALITY",
    "Iterator",
    "Options",
    "TFRecordDataset",
    "TextLineDataset",
    "ThreadingOptions",
    "UNKNOWN_CARDINALITY",
    "experimental",
    "get_output_classes",
    "get_output_shapes",
    "get_output_types",
    "make_initializable_iterator",
    "make_one_shot_iterator",
]
