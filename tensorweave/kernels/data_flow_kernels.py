"""Kernels of the queue and accumulator ops (`FIFOQueueV2`, `ConditionalAccumulator`, ...).

The creation kernels look their resource up in `ctx.resource_mgr` under (container,
shared_name or node name), create it on first use and cache it per resource-manager
generation, as `VariableV2` does; the handle they output *is* the resource object. The ops
that may wait (enqueue on a full queue, dequeue on an empty one, close behind pending
enqueues, take with too few gradients) are `AsyncKernel`s: they register with
`ctx.cancellation` and finish through `done`, so a cancelled step (Session.close, the step
deadline) removes them from the resource without losing an element.

Unshared queues are named after their node, like variables: TensorFlow instead makes them
private to the session's kernel (named `_<id>_<node>`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.kernels.accumulator_resources import (
    AccumulatorResource,
    SparseAccumulatorResource,
)
from tensorweave.kernels.queue_resources import QueueResource, RandomShuffleQueueResource
from tensorweave.kernels.registry import AsyncKernel, KernelNode, register_compute, register_kernel


def _np_dtypes(types: Any) -> list[np.dtype]:
    return [np.dtype(t.as_numpy_dtype) for t in types]


def _full_shapes(node: KernelNode) -> list[tuple[int, ...]]:
    shapes = []
    for s in node.attrs.get("shapes") or []:
        dims = s.as_list() if s.ndims is not None else None
        if dims is None or any(d is None for d in dims):
            raise errors.InvalidArgumentError(
                None, None, f"Queue shapes must be fully defined, got {s} for node {node.name}"
            )
        shapes.append(tuple(dims))
    return shapes


def _resource_lookup(
    node: KernelNode, create: Callable[[str], Any], check: Callable[[Any, str], None]
) -> Callable[[Any], Any]:
    """A compute function returning the resource of a creation node (cached per generation)."""
    container = node.attrs.get("container", "") or ""
    name = node.attrs.get("shared_name") or node.name
    cache: list[Any] = [None, -1, None]  # resource manager, its generation, the resource

    def compute(ctx: Any) -> Any:
        rm = ctx.resource_mgr
        if cache[0] is rm and cache[1] == rm.generation:
            return cache[2]
        generation = rm.generation
        resource = rm.lookup_or_create(container, name, lambda: create(name))
        check(resource, name)
        cache[:] = [rm, generation, resource]
        return resource

    return compute


# ------------------------------------------------------------------ queues
@register_kernel("FIFOQueueV2")
def _fifo_queue(node: KernelNode) -> Any:
    types = _np_dtypes(node.attrs["component_types"])
    shapes = _full_shapes(node)
    capacity = int(node.attrs.get("capacity", -1))

    def check(q: Any, name: str) -> None:
        if not isinstance(q, QueueResource):
            raise errors.InvalidArgumentError(
                None, None, f"Resource {name} exists and is not a queue"
            )
        q.check_matches(node.op, node.name, types, shapes, capacity)

    return _resource_lookup(node, lambda name: QueueResource(name, types, shapes, capacity), check)


@register_kernel("RandomShuffleQueueV2")
def _random_shuffle_queue(node: KernelNode) -> Any:
    types = _np_dtypes(node.attrs["component_types"])
    shapes = _full_shapes(node)
    capacity = int(node.attrs.get("capacity", -1))
    min_after = int(node.attrs.get("min_after_dequeue", 0))
    seed, seed2 = int(node.attrs.get("seed", 0)), int(node.attrs.get("seed2", 0))

    def create(name: str) -> Any:
        if seed == 0 and seed2 == 0:
            rng = np.random.default_rng()
        else:
            rng = np.random.default_rng(np.random.SeedSequence([seed % 2**64, seed2 % 2**64]))
        return RandomShuffleQueueResource(name, types, shapes, capacity, min_after, rng)

    def check(q: Any, name: str) -> None:
        if not isinstance(q, QueueResource):
            raise errors.InvalidArgumentError(
                None, None, f"Resource {name} exists and is not a queue"
            )
        q.check_matches(node.op, node.name, types, shapes, capacity)

    return _resource_lookup(node, create, check)


def _timeout_s(node: KernelNode) -> float | None:
    ms = int(node.attrs.get("timeout_ms", -1))
    return None if ms < 0 else ms / 1000.0


def _queue(handle: Any) -> QueueResource:
    if not isinstance(handle, QueueResource):
        raise errors.InvalidArgumentError(None, None, f"Expected a queue handle, got {handle!r}")
    return handle


def _outputs(components: tuple[np.ndarray, ...]) -> Any:
    return components[0] if len(components) == 1 else tuple(components)


class _QueueKernel(AsyncKernel):
    """An async queue kernel: `request(queue, inputs, done, cm)` starts the attempt."""

    def __init__(self, node: KernelNode, request: Callable[..., None]):
        self.node = node
        self.timeout_s = _timeout_s(node)
        self.request = request

    def start(self, ctx: Any, inputs: list[Any], done: Callable[..., None]) -> None:
        """Starts the request on the queue of `inputs[0]`; errors complete `done`."""
        try:
            self.request(self, _queue(inputs[0]), inputs[1:], done, ctx.cancellation)
        except Exception as e:  # noqa: BLE001  (the executor converts it to an OpError)
            done(error=e)


def _enqueue(k: _QueueKernel, q: QueueResource, args: list[Any], done: Any, cm: Any) -> None:
    q.enqueue(list(args), done, cm, k.timeout_s)


def _enqueue_many(k: _QueueKernel, q: QueueResource, args: list[Any], done: Any, cm: Any) -> None:
    q.enqueue_many(list(args), done, cm, k.timeout_s)


def _dequeue(k: _QueueKernel, q: QueueResource, args: list[Any], done: Any, cm: Any) -> None:
    def finish(result: Any = None, error: Any = None) -> None:
        done(error=error) if error is not None else done(_outputs(result))

    q.dequeue(finish, cm, k.timeout_s)


def _dequeue_n(small_batch: bool) -> Callable[..., None]:
    def request(k: _QueueKernel, q: QueueResource, args: list[Any], done: Any, cm: Any) -> None:
        n = np.asarray(args[0])
        if n.ndim != 0:
            raise errors.InvalidArgumentError(
                None, None, f"Input 'n' must be a scalar, got shape {list(n.shape)}"
            )

        def finish(result: Any = None, error: Any = None) -> None:
            done(error=error) if error is not None else done(_outputs(result))

        q.dequeue_many(int(n), finish, cm, k.timeout_s, allow_small_batch=small_batch)

    return request


def _close(k: _QueueKernel, q: QueueResource, args: list[Any], done: Any, cm: Any) -> None:
    q.close(bool(k.node.attrs.get("cancel_pending_enqueues", False)), done, cm)


for _op, _request in (
    ("QueueEnqueueV2", _enqueue),
    ("QueueEnqueueManyV2", _enqueue_many),
    ("QueueDequeueV2", _dequeue),
    ("QueueDequeueManyV2", _dequeue_n(False)),
    ("QueueDequeueUpToV2", _dequeue_n(True)),
    ("QueueCloseV2", _close),
):
    register_kernel(_op)(lambda node, _r=_request: _QueueKernel(node, _r))


@register_compute("QueueSizeV2")
def _queue_size(ctx: Any, handle: Any) -> np.ndarray:
    return np.int32(_queue(handle).size())


@register_compute("QueueIsClosedV2")
def _queue_is_closed(ctx: Any, handle: Any) -> np.ndarray:
    return np.bool_(_queue(handle).is_closed())


# ------------------------------------------------------------ accumulators
def _accumulator_kernel(cls: type) -> Callable[[KernelNode], Any]:
    def builder(node: KernelNode) -> Any:
        dtype = np.dtype(node.attrs["dtype"].as_numpy_dtype)
        shape_attr = node.attrs.get("shape")
        shape = None
        if shape_attr is not None and shape_attr.ndims is not None:
            shape = shape_attr.as_list()
        reduction = node.attrs.get("reduction_type", "MEAN") or "MEAN"

        def check(acc: Any, name: str) -> None:
            if type(acc) is not cls:
                raise errors.InvalidArgumentError(
                    None, None, f"Resource {name} exists and is not a {cls.kind}"
                )

        return _resource_lookup(node, lambda name: cls(name, dtype, shape, reduction), check)

    return builder


register_kernel("ConditionalAccumulator")(_accumulator_kernel(AccumulatorResource))
register_kernel("SparseConditionalAccumulator")(_accumulator_kernel(SparseAccumulatorResource))


def _accumulator(handle: Any, node: KernelNode, cls: type = object) -> Any:
    if not isinstance(handle, AccumulatorResource | SparseAccumulatorResource):
        raise errors.InvalidArgumentError(
            None, None, f"Expected an accumulator handle, got {handle!r}"
        )
    if not isinstance(handle, cls):
        raise errors.InvalidArgumentError(
            None, None, f"{node.op} needs a {cls.kind}, got {handle.kind} '{handle.name}'"
        )
    want = node.attrs.get("dtype")
    if want is not None and np.dtype(want.as_numpy_dtype) != handle.dtype:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Accumulator '{handle.name}' has dtype {handle.dtype}, but {node.op} "
            f"{node.name} asks for {np.dtype(want.as_numpy_dtype)}",
        )
    return handle


def _scalar(value: Any, what: str) -> int:
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise errors.InvalidArgumentError(
            None, None, f"Argument {what} must be scalar, but had bad shape {list(arr.shape)}"
        )
    return int(arr)


@register_kernel("AccumulatorApplyGradient")
def _apply_gradient(node: KernelNode) -> Any:
    def compute(ctx: Any, handle: Any, local_step: Any, gradient: Any) -> None:
        acc = _accumulator(handle, node, AccumulatorResource)
        acc.apply(_scalar(local_step, "local_step"), gradient)

    return compute


@register_kernel("SparseAccumulatorApplyGradient")
def _sparse_apply_gradient(node: KernelNode) -> Any:
    known = bool(node.attrs.get("has_known_shape", False))

    def compute(
        ctx: Any, handle: Any, local_step: Any, indices: Any, values: Any, shape: Any
    ) -> None:
        acc = _accumulator(handle, node, SparseAccumulatorResource)
        acc.apply(_scalar(local_step, "local_step"), indices, values, shape, known)

    return compute


class _TakeGradient(AsyncKernel):
    def __init__(self, node: KernelNode, cls: type):
        self.node = node
        self.cls = cls

    def start(self, ctx: Any, inputs: list[Any], done: Callable[..., None]) -> None:
        """Starts a take on the accumulator of `inputs[0]`; errors complete `done`."""
        try:
            acc = _accumulator(inputs[0], self.node, self.cls)
            acc.take(_scalar(inputs[1], "num_required"), done, ctx.cancellation)
        except Exception as e:  # noqa: BLE001  (the executor converts it to an OpError)
            done(error=e)


register_kernel("AccumulatorTakeGradient")(lambda node: _TakeGradient(node, AccumulatorResource))
register_kernel("SparseAccumulatorTakeGradient")(
    lambda node: _TakeGradient(node, SparseAccumulatorResource)
)


@register_kernel("AccumulatorNumAccumulated")
def _num_accumulated(node: KernelNode) -> Any:
    def compute(ctx: Any, handle: Any) -> np.ndarray:
        return np.int32(_accumulator(handle, node).num_accumulated())

    return compute


@register_kernel("AccumulatorSetGlobalStep")
def _set_global_step(node: KernelNode) -> Any:
    def compute(ctx: Any, handle: Any, new_global_step: Any) -> None:
        _accumulator(handle, node).set_global_step(_scalar(new_global_step, "new_global_step"))

    return compute
