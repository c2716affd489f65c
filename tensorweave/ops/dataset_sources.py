"""`tf.data.Dataset`'s sources and the file datasets (`TextLineDataset`,
`TFRecordDataset`, `FixedLengthRecordDataset`), following TF 1.x
`python/data/ops/dataset_ops.py` and `readers.py`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.py_funcs import py_funcs
from tensorweave.framework.record_io import compression_type_name
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import dataset_structure as st
from tensorweave.ops import string_io_ops
from tensorweave.ops.dataset_ops import DatasetBase, _attrs, _i64


def _to_components(tensors: Any) -> Any:
    """A structure of tensors (lists and arrays become single tensors)."""
    if isinstance(tensors, dict):
        return {k: _to_components(v) for k, v in tensors.items()}
    if isinstance(tensors, tuple):
        parts = [_to_components(v) for v in tensors]
        return type(tensors)(*parts) if hasattr(tensors, "_fields") else tuple(parts)
    if isinstance(tensors, DatasetBase):
        raise TypeError("A dataset cannot be an element component")
    return convert_to_tensor(tensors, name="component")


def from_tensors(tensors: Any, name: str | None = None) -> DatasetV1:
    """A dataset of exactly one element, `tensors` (`Dataset.from_tensors`)."""
    with graph_mod.name_scope("TensorDataset"):
        comps = _to_components(tensors)
    flat = st.flatten(comps)
    variant = apply_op("TensorDataset", components=flat,
                       output_shapes=[t.shape for t in flat], name=name)
    return DatasetV1(variant, st.map_structure(lambda t: t.dtype.base_dtype, comps),
                     st.map_structure(lambda t: t.shape, comps))


def from_tensor_slices(tensors: Any, name: str | None = None) -> DatasetV1:
    """One element per slice of the first dimension (`Dataset.from_tensor_slices`).

    Raises:
      ValueError: for scalar components or first dimensions that differ statically.
    """
    with graph_mod.name_scope("TensorSliceDataset"):
        comps = _to_components(tensors)
    flat = st.flatten(comps)
    first = None
    for t in flat:
        if t.shape.ndims == 0:
            raise ValueError(f"Unbatching a tensor is only supported for rank >= 1, got "
                             f"{t.name} of shape {t.shape}")
        dim = t.shape[0].value if t.shape.ndims else None
        if dim is not None and first is not None and dim != first:
            raise ValueError("Dimensions of the components must be equal in the 0th "
                             f"dimension, got {first} and {dim}")
        first = dim if dim is not None else first
    slice_shapes = [t.shape[1:] if t.shape.ndims else TensorShape(None) for t in flat]
    variant = apply_op("TensorSliceDataset", components=flat, output_shapes=slice_shapes,
                       name=name)
    return DatasetV1(variant, st.map_structure(lambda t: t.dtype.base_dtype, comps),
                     st.pack_as(comps, slice_shapes))


def range_dataset(*args: Any, output_type: Any = dtypes_lib.int64,
                  name: str | None = None) -> DatasetV1:
    """`range(start, stop, step)` as int64 scalars (`Dataset.range`).

    Raises:
      ValueError: for 0 or more than 3 positional arguments.
    """
    if not 1 <= len(args) <= 3:
        raise ValueError(f"Invalid arguments to Dataset.range: {args}")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (
        (args[0], args[1], 1) if len(args) == 2 else args)
    dt = dtypes_lib.as_dtype(output_type)
    variant = apply_op("RangeDataset", start=_i64(start, "start"), stop=_i64(stop, "stop"),
                       step=_i64(step, "step"), output_types=[dt],
                       output_shapes=[TensorShape([])], name=name)
    return DatasetV1(variant, dt, TensorShape([]))


def zip_datasets(datasets: Any, name: str | None = None) -> DatasetV1:
    """Elements of several datasets side by side, until the shortest ends (`Dataset.zip`).

    Raises:
      TypeError: if `datasets` is not a (nested) tuple or dict of datasets.
    """
    flat = st.flatten(datasets)
    if not flat or not all(isinstance(d, DatasetBase) for d in flat):
        raise TypeError("The argument to `Dataset.zip()` must be a (nested) structure of "
                        "`Dataset` objects.")
    types = st.map_structure(lambda d: d.output_types, datasets)
    shapes = st.map_structure(lambda d: d.output_shapes, datasets)
    variant = apply_op("ZipDataset", input_datasets=[d._variant_tensor for d in flat],
                       name=name, **_attrs(types, shapes))
    return DatasetV1(variant, types, shapes)


def from_generator(generator: Any, output_types: Any, output_shapes: Any = None,
                   args: Any = None, output_signature: Any = None,
                   name: str | None = None) -> DatasetV1:
    """The elements a Python generator yields (`Dataset.from_generator`).

    The generator runs in the process that built the graph (as TensorFlow's `py_func`):
    a pipeline using it cannot be placed on another task. `args` must be Python values.

    Raises:
      InvalidArgumentError: at run time for elements of the wrong type or shape.
    """
    if output_types is None:
        raise TypeError("from_generator needs output_types")
    types = st.map_structure(dtypes_lib.as_dtype, output_types)
    shapes = st.normalize_shapes(types, output_shapes)
    call_args = tuple(args or ())

    def flat_elements() -> Any:
        for value in generator(*call_args):
            yield tuple(st.flatten_up_to(types, value))

    graph = graph_mod.get_default_graph()
    token = py_funcs.register(graph, flat_elements)
    variant = apply_op("PyGeneratorDataset", token=token, name=name, **_attrs(types, shapes))
    return DatasetV1(variant, types, shapes)


def list_files(file_pattern: Any, shuffle: Any = None, seed: Any = None,
               name: str | None = None) -> DatasetV1:
    """The files matching a glob pattern (shuffled unless `shuffle=False`)."""
    ds = from_tensor_slices(string_io_ops.matching_files(file_pattern))
    if shuffle is None or shuffle:
        ds = ds.shuffle(10000, seed=seed)
    return ds


class DatasetV1(DatasetBase):
    """A pipeline of elements (`tf.compat.v1.data.Dataset`): sources as static methods,
    transformations from `DatasetBase`."""

    from_tensors = staticmethod(from_tensors)
    from_tensor_slices = staticmethod(from_tensor_slices)
    from_generator = staticmethod(from_generator)
    range = staticmethod(range_dataset)
    zip = staticmethod(zip_datasets)
    list_files = staticmethod(list_files)

    def unbatch(self, name: str | None = None) -> DatasetV1:
        """Splits each element along its first dimension into elements."""
        types, shapes = self._types, self._shapes

        def split(*args: Any) -> DatasetV1:
            return from_tensor_slices(args if type(types) is tuple else args[0])

        out = self.flat_map(split)
        return DatasetV1(out._variant_tensor, types,
                         st.map_structure(lambda s: s[1:] if s.ndims else s, shapes))

    def enumerate(self, start: int = 0, name: str | None = None) -> DatasetV1:
        """(index int64, element) pairs, counting from `start`."""
        return zip_datasets((range_dataset(start, np.iinfo(np.int64).max), self))


class _FileDataset(DatasetV1):
    @classmethod
    def _plain_class(cls) -> type:
        return DatasetV1


def _file_inputs(filenames: Any, compression_type: Any) -> tuple[Any, Any]:
    names = convert_to_tensor(filenames, dtype=dtypes_lib.string, name="filenames")
    kind = compression_type_name(compression_type)
    return names, convert_to_tensor(kind, dtype=dtypes_lib.string, name="compression_type")


class TextLineDataset(_FileDataset):
    """The lines of text files, without line endings (`tf.data.TextLineDataset`)."""

    def __init__(self, filenames: Any, compression_type: Any = None, buffer_size: Any = None,
                 num_parallel_reads: Any = None, name: str | None = None):
        names, kind = _file_inputs(filenames, compression_type)
        variant = apply_op("TextLineDataset", filenames=names, compression_type=kind,
                           buffer_size=_i64(buffer_size or 256 * 1024, "buffer_size"),
                           name=name)
        super().__init__(variant, dtypes_lib.string, TensorShape([]))


class TFRecordDataset(_FileDataset):
    """The records of TFRecord files, in file order (`tf.data.TFRecordDataset`).

    Raises:
      DataLossError: at run time for a corrupted file, naming it and the offset.
    """

    def __init__(self, filenames: Any, compression_type: Any = None, buffer_size: Any = None,
                 num_parallel_reads: Any = None, name: str | None = None):
        names, kind = _file_inputs(filenames, compression_type)
        variant = apply_op("TFRecordDataset", filenames=names, compression_type=kind,
                           buffer_size=_i64(buffer_size or 256 * 1024, "buffer_size"),
                           name=name)
        super().__init__(variant, dtypes_lib.string, TensorShape([]))


class FixedLengthRecordDataset(_FileDataset):
    """Fixed-size records of binary files (`tf.data.FixedLengthRecordDataset`).

    Raises:
      DataLossError: at run time if a file's body is not a multiple of `record_bytes`.
    """

    def __init__(self, filenames: Any, record_bytes: Any, header_bytes: Any = None,
                 footer_bytes: Any = None, buffer_size: Any = None,
                 compression_type: Any = None, num_parallel_reads: Any = None,
                 name: str | None = None):
        names, kind = _file_inputs(filenames, compression_type)
        variant = apply_op(
            "FixedLengthRecordDatasetV2", filenames=names,
            header_bytes=_i64(header_bytes or 0, "header_bytes"),
            record_bytes=_i64(record_bytes, "record_bytes"),
            footer_bytes=_i64(footer_bytes or 0, "footer_bytes"),
            buffer_size=_i64(buffer_size or 256 * 1024, "buffer_size"),
            compression_type=kind, name=name)
        super().__init__(variant, dtypes_lib.string, TensorShape([]))
