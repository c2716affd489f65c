"""`tf.data.Iterator` (TF 1.x `python/data/ops/iterator_ops.py`): one-shot, initializable,
reinitializable (`from_structure`) and feedable (`from_string_handle`) iterators.

An iterator is an `IteratorV2`/`OneShotIterator` resource colocated with the dataset that
feeds it; `get_next()` is an `IteratorGetNext` op colocated with the iterator, raising
`OutOfRangeError` at the end of the data.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import dataset_structure as st


def _compatible(a: Any, b: Any) -> bool:
    return a.ndims is None or b.ndims is None or a.is_compatible_with(b)


class Iterator(st.ElementStructure):
    """Reads the elements of a dataset (`tf.compat.v1.data.Iterator`)."""

    def __init__(self, iterator_resource: Tensor, initializer: Any, output_types: Any,
                 output_shapes: Any, output_classes: Any = None):
        self._iterator_resource = iterator_resource
        self._initializer = initializer
        self._types = output_types
        self._shapes = output_shapes

    @staticmethod
    def from_structure(output_types: Any, output_shapes: Any = None, shared_name: Any = None,
                       output_classes: Any = None) -> Iterator:
        """An uninitialized iterator for any dataset of this structure; initialize it with
        `make_initializer(dataset)` (reinitializable iterators)."""
        types = st.map_structure(dtypes_lib.as_dtype, output_types)
        shapes = st.normalize_shapes(types, output_shapes)
        resource = apply_op("IteratorV2", shared_name=shared_name or "", container="",
                            name="Iterator", **st.attrs(types, shapes))
        return Iterator(resource, None, types, shapes)

    @staticmethod
    def from_string_handle(string_handle: Any, output_types: Any, output_shapes: Any = None,
                           output_classes: Any = None) -> Iterator:
        """An iterator chosen at run time by feeding the `string_handle()` of another."""
        types = st.map_structure(dtypes_lib.as_dtype, output_types)
        shapes = st.normalize_shapes(types, output_shapes)
        handle = convert_to_tensor(string_handle, dtype=dtypes_lib.string)
        resource = apply_op("IteratorFromStringHandleV2", string_handle=handle,
                            **st.attrs(types, shapes))
        return Iterator(resource, None, types, shapes)

    @property
    def initializer(self) -> Any:
        """The op that (re)starts the iterator.

        Raises:
          ValueError: for iterators without a dataset (from_structure, one-shot).
        """
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer


    def make_initializer(self, dataset: Any, name: str | None = None) -> Any:
        """A `MakeIterator` op that restarts this iterator on `dataset`.

        Raises:
          TypeError: if the dataset's structure or types differ from the iterator's.
        """
        if st.flatten(dataset.output_types) != st.flatten(self._types) or (
                len(st.flatten(dataset.output_types)) != len(st.flatten(self._types))):
            raise TypeError(f"Expected output types {self._types} but got dataset with "
                            f"output types {dataset.output_types}.")
        for a, b in zip(st.flatten(dataset.output_shapes), st.flatten(self._shapes)):
            if not _compatible(a, b):
                raise TypeError(f"Expected output shapes compatible with {self._shapes} but "
                                f"got dataset with output shapes {dataset.output_shapes}.")
        with graph_mod.colocate_with(self._iterator_resource.op):
            return apply_op("MakeIterator", dataset=dataset._variant_tensor,
                            iterator=self._iterator_resource, name=name)

    def get_next(self, name: str | None = None) -> Any:
        """The next element (a structure of tensors); `OutOfRangeError` at the end."""
        with graph_mod.colocate_with(self._iterator_resource.op):
            out = apply_op("IteratorGetNext", iterator=self._iterator_resource,
                           name=name or "IteratorGetNext", **st.attrs(self._types, self._shapes))
        flat = out[0] if isinstance(out, list) else [out]  # NOTE: one list-valued output arg
        for t, s in zip(flat, st.flatten(self._shapes)):
            if t.shape.ndims is None and s.ndims is not None:
                t._shape = s
        return st.with_sparse_tensors(st.pack_as(self._types, flat))

    def string_handle(self, name: str | None = None) -> Tensor:
        """A string [] handle to feed to `from_string_handle` iterators."""
        with graph_mod.colocate_with(self._iterator_resource.op):
            return apply_op("IteratorToStringHandle",
                            resource_handle=self._iterator_resource, name=name)


def one_shot_iterator(dataset: Any) -> Iterator:
    """The iterator of `Dataset.make_one_shot_iterator()`."""
    body = st.extract_body(dataset._variant_tensor)
    resource = apply_op("OneShotIterator", dataset_factory="_make_dataset",
                        dataset_factory_body=body,
                        **st.attrs(dataset.output_types, dataset.output_shapes))
    return Iterator(resource, None, dataset.output_types, dataset.output_shapes)


def initializable_iterator(dataset: Any, shared_name: Any = None) -> Iterator:
    """The iterator of `Dataset.make_initializable_iterator()`."""
    with graph_mod.colocate_with(dataset._variant_tensor.op):
        resource = apply_op("IteratorV2", shared_name=shared_name or "", container="",
                            name="Iterator",
                            **st.attrs(dataset.output_types, dataset.output_shapes))
        init = apply_op("MakeIterator", dataset=dataset._variant_tensor, iterator=resource)
    return Iterator(resource, init, dataset.output_types, dataset.output_shapes)


def make_one_shot_iterator(dataset: Any) -> Iterator:
    """`tf.data.make_one_shot_iterator(dataset)`."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset: Any, shared_name: Any = None) -> Iterator:
    """`tf.data.make_initializable_iterator(dataset)`."""
    return dataset.make_initializable_iterator(shared_name)


def get_output_types(dataset_or_iterator: Any) -> Any:
    """`tf.data.get_output_types`."""
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator: Any) -> Any:
    """`tf.data.get_output_shapes`."""
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator: Any) -> Any:
    """`tf.data.get_output_classes`."""
    return dataset_or_iterator.output_classes
