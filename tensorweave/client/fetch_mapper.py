"""Nested fetch structures -> a flat list of unique tensors/ops, and back (follows the
`_FetchMapper` family of TensorFlow's `session.py`)."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tensorweave.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue


class FetchPlan:
    """The flattened fetches of one `run` call and how to rebuild the user's structure."""

    def __init__(self, graph: Any, fetches: Any):
        self.tensors: list[Tensor] = []
        self.targets: list[Operation] = []
        self._index: dict[int, int] = {}
        self._target_ids: set[int] = set()
        self._graph = graph
        self._builder = self._map(fetches)

    def _map(self, fetch: Any) -> Any:
        if fetch is None:
            raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)!r}")
        if isinstance(fetch, list | tuple):
            builders = [self._map(f) for f in fetch]
            if isinstance(fetch, tuple) and hasattr(fetch, "_fields"):
                cls = type(fetch)
                return lambda vals: cls(*[b(vals) for b in builders])
            seq_type = type(fetch)
            if seq_type is list:
                return lambda vals: [b(vals) for b in builders]
            return lambda vals: seq_type(b(vals) for b in builders)
        if isinstance(fetch, dict):
            keys = list(fetch.keys())
            builders = [self._map(fetch[k]) for k in keys]
            dict_type = type(fetch)

            def build_dict(vals: list[Any]) -> Any:
                if dict_type is collections.defaultdict:
                    out = collections.defaultdict(fetch.default_factory)
                else:
                    out = dict_type() if dict_type is not dict else {}
                for k, b in zip(keys, builders):
                    out[k] = b(vals)
                return out

            return build_dict
        if isinstance(fetch, IndexedSlices):
            parts = [self._element(fetch.values), self._element(fetch.indices)]
            if fetch.dense_shape is not None:
                parts.append(self._element(fetch.dense_shape))
            return lambda vals: IndexedSlicesValue(*[p(vals) for p in parts])
        if isinstance(fetch, SparseTensor):
            parts = [self._element(t) for t in (fetch.indices, fetch.values, fetch.dense_shape)]
            return lambda vals: SparseTensorValue(*[p(vals) for p in parts])
        return self._element(fetch)

    def _element(self, fetch: Any) -> Any:
        try:
            el = self._graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        except TypeError as e:
            raise TypeError(
                f"Fetch argument {fetch!r} has invalid type {type(fetch)!r}, must be a string "
                f"or Tensor. ({e})"
            ) from None
        except (ValueError, KeyError) as e:
            raise ValueError(
                f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. ({e})"
            ) from None
        if not self._graph.is_fetchable(el):
            raise ValueError(f"Operation {el.name!r} has been marked as not fetchable.")
        if isinstance(el, Operation):
            if id(el) not in self._target_ids:
                self._target_ids.add(id(el))
                self.targets.append(el)
            return lambda vals: None
        i = self._index.get(id(el))
        if i is None:
            i = self._index[id(el)] = len(self.tensors)
            self.tensors.append(el)
        return lambda vals: vals[i]

    def build(self, values: list[Any]) -> Any:
        """The user's structure filled with `values` (one per entry of `tensors`)."""
        return self._builder(values)


def to_user(value: Any) -> Any:
    """A fetched value as TensorFlow returns it: numpy scalars for 0-d results, and a
    writable copy of arrays owned by the runtime (variables, constants)."""
    if type(value) is np.ndarray:
        if value.ndim == 0:
            return value[()]
        if not value.flags.writeable:
            return value.copy()
    return value
