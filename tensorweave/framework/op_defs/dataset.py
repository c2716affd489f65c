"""Op definitions of `tf.data`: dataset sources and transformations (`variant` outputs)
and iterators (`resource` handles), with TensorFlow's op types, inputs and attrs
(`core/ops/dataset_ops.cc`, `experimental_dataset_ops.cc`).

NOTE: functions (`f` of `MapDataset`, `predicate` of `FilterDataset`, ...) differ from
TensorFlow in where their body lives. TensorFlow names a function of the graph's
`FunctionDefLibrary` in the `func` attr; tensorweave keeps that name in the `func` attr and
the body inline, as a text-format `GraphDef`, in an extra string attr `<attr>_body` of the
same node (`f_body`, `predicate_body`, `dataset_factory_body`). Each node, and so each
partition graph a master sends to a worker, is then self-contained. In a body, arguments
are `Placeholder`s `args_<i>` (then `captured_<j>` for captured outer tensors, fed from
`other_arguments`) and results are `Identity` nodes `output_<k>`.
`PyGeneratorDataset` (for `Dataset.from_generator`) is tensorweave's own: it names a
Python callable registered in the process, as TensorFlow's `PyFunc` does.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape

_OUT = ["output_types: list(type) >= 1", "output_shapes: list(shape) >= 1"]
_META = ["metadata: string = ''"]


def _scalar(op: Any) -> list[TensorShape]:
    return [TensorShape([])]


def _dataset(name: str, inputs: list[str], attrs: list[str], out: bool = True) -> None:
    register_op(
        name, inputs=inputs, outputs=["handle: variant"],
        attrs=attrs + (_OUT if out else []), shape_fn=_scalar,
    )


def _fn_attrs(attr: str) -> list[str]:
    return [f"{attr}: func", f"{attr}_body: string", "Targuments: list(type) >= 0"]


_dataset("TensorDataset", ["components: Toutput_types"],
         ["Toutput_types: list(type) >= 1", "output_shapes: list(shape) >= 1"] + _META,
         out=False)
_dataset("TensorSliceDataset", ["components: Toutput_types"],
         ["Toutput_types: list(type) >= 1", "output_shapes: list(shape) >= 1",
          "is_files: bool = false", "replicate_on_split: bool = false"] + _META, out=False)
_dataset("RangeDataset", ["start: int64", "stop: int64", "step: int64"],
         _META + ["replicate_on_split: bool = false"])
_dataset("ZipDataset", ["input_datasets: N * variant"], ["N: int >= 1"] + _META)
_dataset("ConcatenateDataset", ["input_dataset: variant", "another_dataset: variant"], _META)
_dataset("MapDataset", ["input_dataset: variant", "other_arguments: Targuments"],
         _fn_attrs("f") + ["use_inter_op_parallelism: bool = true",
                           "preserve_cardinality: bool = false", "force_synchronous: bool = false"]
         + _META)
_dataset("ParallelMapDatasetV2",
         ["input_dataset: variant", "other_arguments: Targuments", "num_parallel_calls: int64"],
         _fn_attrs("f") + ["use_inter_op_parallelism: bool = true",
                           "deterministic: string = 'default'",
                           "preserve_cardinality: bool = false"] + _META)
_dataset("FlatMapDataset", ["input_dataset: variant", "other_arguments: Targuments"],
         _fn_attrs("f") + _META)
_dataset("InterleaveDataset",
         ["input_dataset: variant", "other_arguments: Targuments", "cycle_length: int64",
          "block_length: int64"], _fn_attrs("f") + _META)
_dataset("ParallelInterleaveDatasetV4",
         ["input_dataset: variant", "other_arguments: Targuments", "cycle_length: int64",
          "block_length: int64", "buffer_output_elements: int64",
          "prefetch_input_elements: int64", "num_parallel_calls: int64"],
         _fn_attrs("f") + ["deterministic: string = 'default'"] + _META)
_dataset("FilterDataset", ["input_dataset: variant", "other_arguments: Targuments"],
         _fn_attrs("predicate") + _META)
_dataset("BatchDatasetV2",
         ["input_dataset: variant", "batch_size: int64", "drop_remainder: bool"],
         ["parallel_copy: bool = false"] + _META)
_dataset("PaddedBatchDatasetV2",
         ["input_dataset: variant", "batch_size: int64", "padded_shapes: N * int64",
          "padding_values: Toutput_types", "drop_remainder: bool"],
         ["parallel_copy: bool = false", "Toutput_types: list(type) >= 1",
          "output_shapes: list(shape) >= 1", "N: int >= 1"] + _META, out=False)
_dataset("ShuffleDataset",
         ["input_dataset: variant", "buffer_size: int64", "seed: int64", "seed2: int64"],
         ["reshuffle_each_iteration: bool = true"] + _META)
_dataset("RepeatDataset", ["input_dataset: variant", "count: int64"], _META)
_dataset("TakeDataset", ["input_dataset: variant", "count: int64"], _META)
_dataset("SkipDataset", ["input_dataset: variant", "count: int64"], _META)
_dataset("PrefetchDataset", ["input_dataset: variant", "buffer_size: int64"],
         ["slack_period: int = 0", "legacy_autotune: bool = true", "buffer_size_min: int = 0"]
         + _META)
_dataset("CacheDataset", ["input_dataset: variant", "filename: string"], _META)
_dataset("ShardDataset", ["input_dataset: variant", "num_shards: int64", "index: int64"],
         ["require_non_empty: bool = false"] + _META)
_dataset("TextLineDataset",
         ["filenames: string", "compression_type: string", "buffer_size: int64"], _META,
         out=False)
_dataset("TFRecordDataset",
         ["filenames: string", "compression_type: string", "buffer_size: int64"], _META,
         out=False)
_dataset("FixedLengthRecordDatasetV2",
         ["filenames: string", "header_bytes: int64", "record_bytes: int64",
          "footer_bytes: int64", "buffer_size: int64", "compression_type: string"], _META,
         out=False)
register_op("PyGeneratorDataset", outputs=["handle: variant"],
            attrs=["token: string"] + _OUT, is_stateful=True, shape_fn=_scalar)

# ------------------------------------------------------------------ iterators
_CONTAINER = ["container: string = ''", "shared_name: string = ''"]
register_op("IteratorV2", outputs=["handle: resource"],
            attrs=["shared_name: string", "container: string"] + _OUT, is_stateful=True,
            shape_fn=_scalar)
register_op("OneShotIterator", outputs=["handle: resource"],
            attrs=["dataset_factory: func", "dataset_factory_body: string"] + _OUT + _CONTAINER,
            is_stateful=True, shape_fn=_scalar)
register_op("MakeIterator", inputs=["dataset: variant", "iterator: resource"],
            is_stateful=True, shape_fn=lambda op: [])


def _get_next_shape(op: Any) -> list[TensorShape]:
    return list(op.get_attr("output_shapes"))


register_op("IteratorGetNext", inputs=["iterator: resource"],
            outputs=["components: output_types"], attrs=_OUT, is_stateful=True,
            shape_fn=_get_next_shape)
register_op("IteratorToStringHandle", inputs=["resource_handle: resource"],
            outputs=["string_handle: string"], is_stateful=True, shape_fn=_scalar)
register_op("IteratorFromStringHandleV2", inputs=["string_handle: string"],
            outputs=["resource_handle: resource"],
            attrs=["output_types: list(type) >= 0 = []", "output_shapes: list(shape) >= 0 = []"],
            is_stateful=True, shape_fn=_scalar)
