"""`tf.data.Dataset` in graph mode (TF 1.x `DatasetBase`, `python/data/ops/dataset_ops.py`).

Every dataset is a `variant` tensor made by a dataset op with TensorFlow's op type
(`TensorSliceDataset`, `MapDataset`, `BatchDatasetV2`, ...), plus its element structure
(`output_types`, `output_shapes`, `output_classes`). Nothing runs until an iterator's
`get_next` pulls elements; the pipeline then runs on the device its ops are placed on.
Sources live in `dataset_sources`, iterators in `iterator_ops`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import op_defs  # noqa: F401  (registers the dataset ops)
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.ops import dataset_structure as st
from tensorweave.ops import iterator_ops, random_ops
from tensorweave.ops.gradients_impl import no_gradient

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def _i64(x: Any, name: str) -> Tensor:
    return convert_to_tensor(x, dtype=dtypes_lib.int64, name=name)


_attrs = st.attrs
TensorSpec = st.TensorSpec


def _merge_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


class Options:
    """Dataset options (`tf.data.Options`); accepted and ignored by the runtime."""

    def __init__(self) -> None:
        self.experimental_deterministic = None
        self.experimental_optimization = None
        self.experimental_threading = None
        self.threading = ThreadingOptions()

    def merge(self, options: Options) -> Options:
        """Returns self (options have no effect)."""
        return self


class ThreadingOptions:
    """Threading options (`tf.data.ThreadingOptions`); accepted and ignored."""

    def __init__(self) -> None:
        self.max_intra_op_parallelism = None
        self.private_threadpool_size = None


class DatasetBase(st.ElementStructure):
    """The transformations of a pipeline of elements; `dataset_sources.DatasetBase` adds
    the sources (`tf.compat.v1.data.Dataset`). Transformations return `_plain_class()`."""

    def __init__(self, variant: Tensor, output_types: Any, output_shapes: Any):
        self._variant_tensor = variant
        self._types = output_types
        self._shapes = output_shapes


    @classmethod
    def _plain_class(cls) -> type:
        """The class of transformed datasets (file datasets answer `DatasetV1`)."""
        return cls

    def _make(self, variant: Tensor, types: Any, shapes: Any) -> Any:
        return self._plain_class()(variant, types, shapes)

    def _derive(self, op_type: str, name: str | None = None, types: Any = None,
                shapes: Any = None, **inputs: Any) -> DatasetBase:
        types = self._types if types is None else types
        shapes = self._shapes if shapes is None else shapes
        variant = apply_op(op_type, input_dataset=self._variant_tensor, name=name,
                           **inputs, **_attrs(types, shapes))
        return self._make(variant, types, shapes)

    def __iter__(self) -> Any:
        raise RuntimeError("Iterating a dataset in Python is only supported in eager mode; "
                           "use make_one_shot_iterator() or make_initializable_iterator().")

    # ----------------------------------------------------------- iterators
    def make_one_shot_iterator(self) -> Any:
        """An iterator that initializes itself on first use (no placeholders allowed).

        Raises:
          ValueError: if the dataset depends on a placeholder or a variable.
        """
        return iterator_ops.one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name: str | None = None) -> Any:
        """An iterator to be initialized by running its `initializer`."""
        return iterator_ops.initializable_iterator(self, shared_name)

    # ----------------------------------------------------------- transformations
    def concatenate(self, dataset: DatasetBase) -> DatasetBase:
        """The elements of self, then those of `dataset` (same types).

        Raises:
          TypeError: if the element types differ.
        """
        if st.flatten(self._types) != st.flatten(dataset._types):
            raise TypeError(f"Two datasets to concatenate have different types "
                            f"{self._types} and {dataset._types}")
        shapes = st.map_structure(_merge_shape, self._shapes, dataset._shapes)
        variant = apply_op("ConcatenateDataset", input_dataset=self._variant_tensor,
                           another_dataset=dataset._variant_tensor,
                           **_attrs(self._types, shapes))
        return self._make(variant, self._types, shapes)

    def map(self, map_func: Any, num_parallel_calls: Any = None,
            deterministic: Any = None, name: str | None = None) -> DatasetBase:
        """`map_func` applied to each element (tuples unpacked into arguments).

        With `num_parallel_calls`, up to that many calls run at once; the order of the
        elements is kept.
        """
        fn = st.trace(map_func, self._types, self._shapes, "Dataset.map")
        common = dict(other_arguments=fn.captured, f=fn.name, f_body=fn.body)
        if num_parallel_calls is None:
            return self._derive("MapDataset", name, fn.output_types, fn.output_shapes,
                                **common)
        return self._derive("ParallelMapDatasetV2", name, fn.output_types, fn.output_shapes,
                            num_parallel_calls=_i64(num_parallel_calls, "num_parallel_calls"),
                            **common)

    def _trace_dataset_fn(self, fn: Any, what: str) -> tuple[Any, DatasetBase]:
        made: list[DatasetBase] = []

        def to_tensors(result: Any) -> Any:
            if not isinstance(result, DatasetBase):
                raise TypeError(f"`map_func` of {what} must return a `Dataset` object, got "
                                f"{type(result).__name__}")
            made.append(result)
            return result._variant_tensor

        traced = st.trace(fn, self._types, self._shapes, what, to_tensors)
        return traced, made[0]

    def flat_map(self, map_func: Any, name: str | None = None) -> DatasetBase:
        """The concatenation of the datasets `map_func` returns for each element."""
        fn, inner = self._trace_dataset_fn(map_func, "Dataset.flat_map")
        return self._derive("FlatMapDataset", name, inner._types, inner._shapes,
                            other_arguments=fn.captured, f=fn.name, f_body=fn.body)

    def interleave(self, map_func: Any, cycle_length: Any = None, block_length: Any = None,
                   num_parallel_calls: Any = None, deterministic: Any = None,
                   name: str | None = None) -> DatasetBase:
        """Interleaves the datasets `map_func` returns: `cycle_length` open at once,
        `block_length` consecutive elements from each (TensorFlow's order)."""
        fn, inner = self._trace_dataset_fn(map_func, "Dataset.interleave")
        common = dict(
            other_arguments=fn.captured, f=fn.name, f_body=fn.body,
            cycle_length=_i64(AUTOTUNE if cycle_length is None else cycle_length,
                              "cycle_length"),
            block_length=_i64(1 if block_length is None else block_length, "block_length"),
        )
        if num_parallel_calls is None:
            return self._derive("InterleaveDataset", name, inner._types, inner._shapes,
                                **common)
        return self._derive(
            "ParallelInterleaveDatasetV4", name, inner._types, inner._shapes,
            buffer_output_elements=_i64(AUTOTUNE, "buffer_output_elements"),
            prefetch_input_elements=_i64(AUTOTUNE, "prefetch_input_elements"),
            num_parallel_calls=_i64(num_parallel_calls, "num_parallel_calls"), **common)

    def filter(self, predicate: Any, name: str | None = None) -> DatasetBase:
        """The elements for which `predicate` (returning a scalar bool) is true.

        Raises:
          ValueError: if `predicate` does not return a scalar bool tensor.
        """
        fn = st.trace(predicate, self._types, self._shapes, "Dataset.filter")
        out_t, out_s = fn.output_types, fn.output_shapes
        if st.is_nested(out_t) or out_t != dtypes_lib.bool or out_s.ndims not in (0, None):
            raise ValueError("`predicate` return type must be convertible to a scalar boolean "
                             f"tensor. Was {out_t} with shape {out_s}.")
        return self._derive("FilterDataset", name, other_arguments=fn.captured,
                            predicate=fn.name, predicate_body=fn.body)

    def batch(self, batch_size: Any, drop_remainder: bool = False,
              num_parallel_calls: Any = None, deterministic: Any = None,
              name: str | None = None) -> DatasetBase:
        """Stacks `batch_size` consecutive elements; the last batch may be smaller unless
        `drop_remainder`. Elements of one batch must have equal shapes."""
        static = batch_size if isinstance(batch_size, int | np.integer) else None
        dim = static if drop_remainder else None
        shapes = st.map_structure(lambda s: TensorShape([dim]).concatenate(s), self._shapes)
        return self._derive("BatchDatasetV2", name, shapes=shapes,
                            batch_size=_i64(batch_size, "batch_size"),
                            drop_remainder=convert_to_tensor(bool(drop_remainder),
                                                             dtype=dtypes_lib.bool,
                                                             name="drop_remainder"))

    def padded_batch(self, batch_size: Any, padded_shapes: Any = None,
                     padding_values: Any = None, drop_remainder: bool = False,
                     name: str | None = None) -> DatasetBase:
        """Batches elements padded to `padded_shapes` (None/-1 dims: the batch maximum)
        with `padding_values` (default 0, or b"" for strings)."""
        if padded_shapes is None:
            padded_shapes = self._shapes
        flat_shapes = [as_shape(s) for s in st.flatten_up_to(self._types, padded_shapes)]
        flat_types = st.flatten(self._types)
        if padding_values is None:
            flat_pads = [b"" if t == dtypes_lib.string else 0 for t in flat_types]
        else:
            flat_pads = st.flatten_up_to(self._types, padding_values)
        static = batch_size if isinstance(batch_size, int | np.integer) else None
        dim = static if drop_remainder else None
        out_shapes = st.pack_as(self._types, [TensorShape([dim]).concatenate(s)
                                              for s in flat_shapes])
        variant = apply_op(
            "PaddedBatchDatasetV2", input_dataset=self._variant_tensor,
            batch_size=_i64(batch_size, "batch_size"),
            padded_shapes=[_i64([-1 if d is None else d for d in s.as_list()], "padded_shape")
                           for s in flat_shapes],
            padding_values=[convert_to_tensor(p, dtype=t, name="padding_value")
                            for p, t in zip(flat_pads, flat_types)],
            drop_remainder=convert_to_tensor(bool(drop_remainder), dtype=dtypes_lib.bool),
            output_shapes=st.flatten(out_shapes), name=name)
        return self._make(variant, self._types, out_shapes)

    def shuffle(self, buffer_size: Any, seed: Any = None,
                reshuffle_each_iteration: Any = None, name: str | None = None) -> DatasetBase:
        """Elements drawn at random from a buffer of `buffer_size` (seeded with the graph
        and op seeds; a new order for each pass unless `reshuffle_each_iteration=False`)."""
        seed1, seed2 = random_ops.get_seed(seed)
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return self._derive("ShuffleDataset", name, buffer_size=_i64(buffer_size, "buffer_size"),
                            seed=_i64(seed1 or 0, "seed"), seed2=_i64(seed2 or 0, "seed2"),
                            reshuffle_each_iteration=reshuffle)

    def repeat(self, count: Any = None, name: str | None = None) -> DatasetBase:
        """The elements `count` times (forever when None or -1)."""
        return self._derive("RepeatDataset", name, count=_i64(-1 if count is None else count,
                                                              "count"))

    def take(self, count: Any, name: str | None = None) -> DatasetBase:
        """At most the first `count` elements (all for -1)."""
        return self._derive("TakeDataset", name, count=_i64(count, "count"))

    def skip(self, count: Any, name: str | None = None) -> DatasetBase:
        """All but the first `count` elements (none for -1)."""
        return self._derive("SkipDataset", name, count=_i64(count, "count"))

    def prefetch(self, buffer_size: Any, name: str | None = None) -> DatasetBase:
        """Produces up to `buffer_size` elements ahead in a background thread."""
        return self._derive("PrefetchDataset", name, buffer_size=_i64(buffer_size,
                                                                       "buffer_size"))

    def cache(self, filename: Any = "", name: str | None = None) -> DatasetBase:
        """Keeps the elements of the first complete pass (in memory) for later passes."""
        return self._derive("CacheDataset", name,
                            filename=convert_to_tensor(filename, dtype=dtypes_lib.string))

    def shard(self, num_shards: Any, index: Any, name: str | None = None) -> DatasetBase:
        """Every `num_shards`-th element starting at `index` (disjoint per worker).

        Raises:
          InvalidArgumentError: at run time if `index` is not in [0, num_shards).
        """
        return self._derive("ShardDataset", name, num_shards=_i64(num_shards, "num_shards"),
                            index=_i64(index, "index"))

    def apply(self, transformation_func: Any) -> DatasetBase:
        """`transformation_func(self)`."""
        return transformation_func(self)

    def with_options(self, options: Options, name: str | None = None) -> DatasetBase:
        """Returns self (options have no effect here)."""
        return self

    def options(self) -> Options:
        """Default options."""
        return Options()


for _op in ("TensorDataset", "TensorSliceDataset", "RangeDataset", "ZipDataset",
            "ConcatenateDataset", "MapDataset", "ParallelMapDatasetV2", "FlatMapDataset",
            "InterleaveDataset", "ParallelInterleaveDatasetV4", "FilterDataset",
            "BatchDatasetV2", "PaddedBatchDatasetV2", "ShuffleDataset", "RepeatDataset",
            "TakeDataset", "SkipDataset", "PrefetchDataset", "CacheDataset", "ShardDataset",
            "TextLineDataset", "TFRecordDataset", "FixedLengthRecordDatasetV2",
            "PyGeneratorDataset", "IteratorV2", "OneShotIterator", "MakeIterator",
            "IteratorGetNext", "IteratorToStringHandle", "IteratorFromStringHandleV2"):
    no_gradient(_op)
