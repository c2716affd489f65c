"""Kernels of the iterator ops: `IteratorV2`, `OneShotIterator`, `MakeIterator`,
`IteratorGetNext`, `IteratorToStringHandle`, `IteratorFromStringHandleV2`.

An iterator is a resource of its device's resource manager (container, then shared_name
or the node name, as queues are), so a pipeline placed on a worker keeps its position
there between steps. `get_next` raises `OutOfRangeError` at the end of the data and
`FailedPreconditionError` before `MakeIterator` ran (TensorFlow's messages).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import (
    function_runtime,
    op_defs,  # noqa: F401  (op definitions)
)
from tensorweave.kernels import dataset_values as dv
from tensorweave.kernels.registry import KernelNode, register_kernel
from tensorweave.protos import resource_handle_pb2

_TYPE_NAME = "tensorweave::IteratorResource"


class IteratorResource:
    """The state of one iterator: the running Python iterator over a dataset."""

    def __init__(self, container: str, name: str, device: str, dtypes: list[Any]):
        self.container = container
        self.name = name
        self.device = device
        self.dtypes = dtypes
        self.lock = threading.Lock()
        self._it: Any = None
        self.initialized = False

    def reset(self, dataset: dv.DatasetValue, ctx: Any) -> None:
        """Starts iterating over `dataset` (re-initialization restarts it).

        Raises:
          InvalidArgumentError: if the dataset's component types differ from the iterator's.
        """
        if list(dataset.dtypes) != list(self.dtypes):
            raise errors.InvalidArgumentError(
                None, None, f"Number of components or types of the dataset "
                f"({[str(t) for t in dataset.dtypes]}) do not match the iterator "
                f"({[str(t) for t in self.dtypes]}).")
        with self.lock:
            old, self._it = self._it, dataset.iterate(ctx)
            self.initialized = True
        _close(old)

    def get_next(self) -> list[Any]:
        """The next element's components.

        Raises:
          FailedPreconditionError: before initialization.
          OutOfRangeError: at the end of the data.
        """
        with self.lock:
            if self._it is None:
                raise errors.FailedPreconditionError(
                    None, None, "GetNext() failed because the iterator has not been "
                    "initialized. Ensure that you have run the initializer operation for this "
                    "iterator before getting the next element.")
            element = next(self._it, None)
        if element is None:
            raise errors.OutOfRangeError(None, None, "End of sequence")
        return list(element)

    def close_on_delete(self) -> None:
        """Stops background work when the resource is removed."""
        with self.lock:
            it, self._it = self._it, None
        _close(it)


def _close(it: Any) -> None:
    """Stops a generator's background work; plain iterators (`zip`, `map`) have none."""
    close = getattr(it, "close", None)
    if close is not None:
        close()


def _np_types(node: KernelNode) -> list[Any]:
    return [np.dtype(t.as_numpy_dtype) for t in node.attrs["output_types"]]


def _lookup(node: KernelNode, ctx: Any, container: str, name: str) -> IteratorResource:
    types = _np_types(node)
    res = ctx.resource_mgr.lookup_or_create(
        container, name,
        lambda: IteratorResource(container or ctx.resource_mgr.default_container, name,
                                 ctx.device, types))
    if not isinstance(res, IteratorResource):
        raise errors.InvalidArgumentError(
            None, None, f"Resource {name} exists and is not an iterator")
    return res


@register_kernel("IteratorV2")
def _iterator_v2(node: KernelNode) -> Any:
    container = node.attrs.get("container", "") or ""
    name = node.attrs.get("shared_name") or node.name
    return lambda ctx: _lookup(node, ctx, container, name)


@register_kernel("OneShotIterator")
def _one_shot_iterator(node: KernelNode) -> Any:
    container = node.attrs.get("container", "") or ""
    name = node.attrs.get("shared_name") or node.name
    factory = function_runtime.instantiate(
        node.attrs["dataset_factory_body"], 0, 1, node.device)

    def compute(ctx: Any) -> IteratorResource:
        res = _lookup(node, ctx, container, name)
        if not res.initialized:
            with res.lock:
                pending = not res.initialized
            if pending:
                dataset = dv.call_function(factory, ctx, [], node.op, node.name)[0]
                res.reset(dataset, ctx)
        return res

    return compute


def _iterator(x: Any) -> IteratorResource:
    if not isinstance(x, IteratorResource):
        raise errors.InvalidArgumentError(None, None, f"Expected an iterator, got {type(x)}")
    return x


@register_kernel("MakeIterator")
def _make_iterator(node: KernelNode) -> Any:
    def compute(ctx: Any, dataset: Any, iterator: Any) -> None:
        if not isinstance(dataset, dv.DatasetValue):
            raise errors.InvalidArgumentError(
                None, None, f"Expected a dataset, got {type(dataset).__name__}: a dataset "
                "cannot be sent between tasks; build it on the iterator's device")
        _iterator(iterator).reset(dataset, ctx)

    return compute


@register_kernel("IteratorGetNext")
def _iterator_get_next(node: KernelNode) -> Any:
    single = len(node.attrs["output_types"]) == 1

    def compute(ctx: Any, iterator: Any) -> Any:
        values = _iterator(iterator).get_next()
        return values[0] if single else values

    return compute


@register_kernel("IteratorToStringHandle")
def _to_string_handle(node: KernelNode) -> Any:
    def compute(ctx: Any, iterator: Any) -> Any:
        it = _iterator(iterator)
        proto = resource_handle_pb2.ResourceHandleProto(
            device=it.device, container=it.container, name=it.name, maybe_type_name=_TYPE_NAME)
        out = np.empty((), np.object_)
        out[()] = proto.SerializeToString()
        return out

    return compute


@register_kernel("IteratorFromStringHandleV2")
def _from_string_handle(node: KernelNode) -> Any:
    types = _np_types(node) if node.attrs.get("output_types") else None

    def compute(ctx: Any, handle: Any) -> IteratorResource:
        proto = resource_handle_pb2.ResourceHandleProto()
        try:
            proto.ParseFromString(bytes(np.asarray(handle, np.object_).item()))
        except Exception:  # noqa: BLE001  (DecodeError)
            raise errors.InvalidArgumentError(
                None, None, "Could not parse an iterator string handle") from None
        res = ctx.resource_mgr.lookup(proto.container, proto.name)
        if not isinstance(res, IteratorResource):
            raise errors.NotFoundError(
                None, None, f"Iterator {proto.container}/{proto.name} (device {proto.device}) "
                f"does not exist on {ctx.device}")
        if types is not None and list(types) != list(res.dtypes):
            raise errors.InvalidArgumentError(
                None, None, f"The iterator of the string handle has types "
                f"{[str(t) for t in res.dtypes]}, expected {[str(t) for t in types]}")
        return res

    return compute
