"""Queues: `tf.QueueBase`, `tf.FIFOQueue`, `tf.RandomShuffleQueue` and their V2 ops.

Follows TF 1.x `python/ops/data_flow_ops.py` and `core/ops/data_flow_ops.cc` (the V2,
resource-handle ops).

A queue holds elements, each a tuple of tensors with fixed dtypes (and, optionally, fixed
shapes). The queue op outputs a `resource` handle; the enqueue/dequeue/close/size ops take
it and are colocated with the queue (TensorFlow's placer colocates resource edges; here the
op functions create them under `colocate_with(handle)`). Queues created with a `shared_name` are
shared by every session and graph of the task, like variables.

Errors at run time (from the kernels): dequeue from a closed queue with too few elements
-> `OutOfRangeError`; enqueue to a closed queue -> `CancelledError`; a step cancelled by
`Session.close()` -> `CancelledError`; `RunOptions.timeout_in_ms` or an op's `timeout_ms`
-> `DeadlineExceededError`.

Gradient accumulators live in `data_flow_accumulators` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorweave.framework import dtypes as dtypes_mod
from tensorweave.framework import graph as graph_mod
from tensorweave.framework import tensor_util
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import Dimension, TensorShape, as_shape, unknown_shape
from tensorweave.ops.data_flow_accumulators import (
    ConditionalAccumulator,
    ConditionalAccumulatorBase,
    SparseConditionalAccumulator,
)
from tensorweave.ops.gradient_registry import no_gradient
from tensorweave.ops.random_ops import get_seed

for _name in (
    "FIFOQueueV2",
    "RandomShuffleQueueV2",
    "QueueEnqueueV2",
    "QueueEnqueueManyV2",
    "QueueDequeueV2",
    "QueueDequeueManyV2",
    "QueueDequeueUpToV2",
    "QueueCloseV2",
    "QueueIsClosedV2",
    "QueueSizeV2",
):
    no_gradient(_name)


# ------------------------------------------------------------- raw op functions
def fifo_queue_v2(
    component_types: Any,
    shapes: Any = (),
    capacity: int = -1,
    container: str = "",
    shared_name: str = "",
    name: str | None = None,
) -> Any:
    """The `FIFOQueueV2` op; returns its `resource` handle (`tf.raw_ops.FIFOQueueV2`)."""
    return apply_op(
        "FIFOQueueV2",
        component_types=list(component_types),
        shapes=list(shapes or ()),
        capacity=capacity,
        container=container,
        shared_name=shared_name or "",
        name=name,
    )


def random_shuffle_queue_v2(
    component_types: Any,
    shapes: Any = (),
    capacity: int = -1,
    min_after_dequeue: int = 0,
    seed: int = 0,
    seed2: int = 0,
    container: str = "",
    shared_name: str = "",
    name: str | None = None,
) -> Any:
    """The `RandomShuffleQueueV2` op; returns its `resource` handle."""
    return apply_op(
        "RandomShuffleQueueV2",
        component_types=list(component_types),
        shapes=list(shapes or ()),
        capacity=capacity,
        min_after_dequeue=min_after_dequeue,
        seed=seed,
        seed2=seed2,
        container=container,
        shared_name=shared_name or "",
        name=name,
    )


def _handle_op(op_type: str, handle: Any, **kwargs: Any) -> Any:
    """`apply_op` for an op taking a queue handle, colocated with the queue."""
    graph = getattr(handle, "graph", None)
    if graph is None:
        return apply_op(op_type, handle=handle, **kwargs)
    with graph.as_default(), graph.colocate_with(handle):
        return apply_op(op_type, handle=handle, **kwargs)


def queue_enqueue_v2(
    handle: Any, components: Any, timeout_ms: int = -1, name: str | None = None
) -> Any:
    """The `QueueEnqueueV2` op (an Operation): enqueues one element, blocking while full."""
    return _handle_op(
        "QueueEnqueueV2", handle, components=list(components), timeout_ms=timeout_ms, name=name
    )


def queue_enqueue_many_v2(
    handle: Any, components: Any, timeout_ms: int = -1, name: str | None = None
) -> Any:
    """The `QueueEnqueueManyV2` op: enqueues the slices of `components` along dim 0."""
    return _handle_op(
        "QueueEnqueueManyV2",
        handle,
        components=list(components),
        timeout_ms=timeout_ms,
        name=name,
    )


def queue_dequeue_v2(
    handle: Any, component_types: Any, timeout_ms: int = -1, name: str | None = None
) -> list[Any]:
    """The `QueueDequeueV2` op; returns one Tensor per component."""
    out = _handle_op(
        "QueueDequeueV2",
        handle,
        component_types=list(component_types),
        timeout_ms=timeout_ms,
        name=name,
    )
    return list(out[0])


def queue_dequeue_many_v2(
    handle: Any, n: Any, component_types: Any, timeout_ms: int = -1, name: str | None = None
) -> list[Any]:
    """The `QueueDequeueManyV2` op; returns one `[n, ...]` Tensor per component."""
    out = _handle_op(
        "QueueDequeueManyV2",
        handle,
        n=n,
        component_types=list(component_types),
        timeout_ms=timeout_ms,
        name=name,
    )
    return list(out[0])


def queue_dequeue_up_to_v2(
    handle: Any, n: Any, component_types: Any, timeout_ms: int = -1, name: str | None = None
) -> list[Any]:
    """The `QueueDequeueUpToV2` op; returns one `[<=n, ...]` Tensor per component."""
    out = _handle_op(
        "QueueDequeueUpToV2",
        handle,
        n=n,
        component_types=list(component_types),
        timeout_ms=timeout_ms,
        name=name,
    )
    return list(out[0])


def queue_close_v2(
    handle: Any, cancel_pending_enqueues: bool = False, name: str | None = None
) -> Any:
    """The `QueueCloseV2` op (an Operation)."""
    return _handle_op(
        "QueueCloseV2", handle, cancel_pending_enqueues=cancel_pending_enqueues, name=name
    )


def queue_size_v2(handle: Any, name: str | None = None) -> Any:
    """The `QueueSizeV2` op: an int32 scalar."""
    return _handle_op("QueueSizeV2", handle, name=name)


def queue_is_closed_v2(handle: Any, name: str | None = None) -> Any:
    """The `QueueIsClosedV2` op: a bool scalar."""
    return _handle_op("QueueIsClosedV2", handle, name=name)


# ------------------------------------------------------------------ arguments
def _as_type_list(dtypes: Any) -> list[dtypes_mod.DType]:
    if not isinstance(dtypes, list | tuple):
        dtypes = [dtypes]
    return [dtypes_mod.as_dtype(d) for d in dtypes]


def _as_shape_list(shapes: Any, dtypes: list[Any]) -> list[TensorShape] | None:
    """Normalizes `shapes` (one shape, or one per component; all fully defined)."""
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, list | tuple):
        raise TypeError("shapes must be a TensorShape or a list or tuple of TensorShapes.")
    if all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]
    shapes = [as_shape(s) for s in shapes]
    if any(s.ndims is None for s in shapes):
        raise ValueError(f"All shapes must have a defined rank: {shapes}")
    if any(not s.is_fully_defined() for s in shapes):
        raise ValueError(f"All shapes must be fully defined: {shapes}")
    return shapes


def _as_name_list(names: Any, dtypes: list[Any]) -> list[str] | None:
    if names is None:
        return None
    if not isinstance(names, list | tuple):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError("List of names must have the same length as the list of dtypes")
    return list(names)


class QueueBase:
    """Base class of queues: a queue handle plus component dtypes, shapes and names.

    Follows `tf.QueueBase`.

    Args:
      dtypes: the dtype of each component of an element.
      shapes: the shape of each component, or None (unconstrained).
      names: optional component names; then enqueue takes and dequeue returns dicts.
      queue_ref: the queue's `resource` handle Tensor.

    Raises:
      ValueError: if `shapes` or `names` do not have one entry per dtype.
    """

    def __init__(self, dtypes: Sequence[Any], shapes: Any, names: Any, queue_ref: Any):
        self._dtypes = [dtypes_mod.as_dtype(d) for d in dtypes]
        if shapes is not None:
            if len(shapes) != len(self._dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes")
            self._shapes = [TensorShape(s) for s in shapes]
        else:
            self._shapes = [unknown_shape() for _ in self._dtypes]
        if names is not None and len(names) != len(self._dtypes):
            raise ValueError("Queue names must have the same length as dtypes")
        self._names = list(names) if names is not None else None
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @property
    def queue_ref(self) -> Any:
        """The queue's `resource` handle Tensor."""
        return self._queue_ref

    @property
    def name(self) -> str:
        """The name of the queue op."""
        return self._queue_ref.op.name

    @property
    def dtypes(self) -> list[dtypes_mod.DType]:
        """The dtype of each component."""
        return self._dtypes

    @property
    def shapes(self) -> list[TensorShape]:
        """The shape of each component (unknown when unconstrained)."""
        return self._shapes

    @property
    def names(self) -> list[str] | None:
        """The component names, or None."""
        return self._names

    def _check_enqueue_dtypes(self, vals: Any) -> list[Any]:
        """`vals` (a tensor, a list/tuple, or a dict keyed by `names`) as a list of Tensors.

        Raises:
          ValueError: for a dict without names, dict keys that differ from the names, or a
            non-dict with names.
          TypeError: if a value does not convert to its component's dtype.
        """
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names) != sorted(vals.keys()):
                raise ValueError(
                    "Keys in dictionary to enqueue do not match names of Queue.  Dictionary: "
                    f"({sorted(vals.keys())}), Queue: ({sorted(self._names)})"
                )
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, list | tuple):
                vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Expected {len(self._dtypes)} components to enqueue, got {len(vals)}")
        return [
            convert_to_tensor(v, dtype=dt, name=f"component_{i}")
            for i, (v, dt) in enumerate(zip(vals, self._dtypes))
        ]

    @staticmethod
    def _scope_vals(vals: Any) -> list[Any]:
        if isinstance(vals, list | tuple):
            return list(vals)
        if isinstance(vals, dict):
            return list(vals.values())
        return [vals]

    def _dequeue_return_value(self, tensors: list[Any]) -> Any:
        if self._names:
            return dict(zip(self._names, tensors))
        return tensors[0] if len(tensors) == 1 else tensors

    def enqueue(self, vals: Any, name: str | None = None) -> Any:
        """An op enqueuing one element; blocks at run time while the queue is full.

        Args:
          vals: a tensor, a list/tuple of tensors (one per component), or a dict keyed by
            the component names.
          name: op name (default `<queue>_enqueue`).

        Returns:
          The enqueue Operation. At run time it raises CancelledError if the queue is
          closed (or gets closed with `cancel_pending_enqueues`, or the session closes).

        Raises:
          ValueError: if a value's static shape is incompatible with its component's.
        """
        with graph_mod.name_scope(name, f"{self._name}_enqueue", self._scope_vals(vals)) as scope:
            tensors = self._check_enqueue_dtypes(vals)
            for t, shape in zip(tensors, self._shapes):
                t.shape.assert_is_compatible_with(shape)
            return queue_enqueue_v2(self._queue_ref, tensors, name=scope)

    def enqueue_many(self, vals: Any, name: str | None = None) -> Any:
        """An op enqueuing the slices of `vals` along dimension 0 as separate elements.

        Raises:
          ValueError: if a value has rank 0, the batch sizes differ statically, or a slice
            shape is incompatible with its component's.
        """
        with graph_mod.name_scope(
            name, f"{self._name}_EnqueueMany", self._scope_vals(vals)
        ) as scope:
            tensors = self._check_enqueue_dtypes(vals)
            batch_dim = tensors[0].shape.with_rank_at_least(1)[0]
            for t, shape in zip(tensors, self._shapes):
                batch_dim = batch_dim.merge_with(t.shape.with_rank_at_least(1)[0])
                t.shape[1:].assert_is_compatible_with(shape)
            return queue_enqueue_many_v2(self._queue_ref, tensors, name=scope)

    def dequeue(self, name: str | None = None) -> Any:
        """Dequeues one element: a Tensor, a list of Tensors, or a dict (with names).

        At run time it blocks while the queue is empty, raises OutOfRangeError once the
        queue is closed and empty, and CancelledError when the session closes.
        """
        tensors = queue_dequeue_v2(
            self._queue_ref, self._dtypes, name=name or f"{self._name}_Dequeue"
        )
        for t, shape in zip(tensors, self._shapes):
            t.set_shape(shape)
        return self._dequeue_return_value(tensors)

    def dequeue_many(self, n: Any, name: str | None = None) -> Any:
        """Dequeues `n` elements stacked along a new dimension 0 (shapes `[n] + shape`).

        At run time it raises OutOfRangeError if the queue is closed with fewer than `n`
        elements, and InvalidArgumentError if the queue has no component shapes.
        """
        tensors = queue_dequeue_many_v2(
            self._queue_ref, n, self._dtypes, name=name or f"{self._name}_DequeueMany"
        )
        n_value = tensor_util.constant_value(tensors[0].op.inputs[1])
        batch = Dimension(None if n_value is None else int(n_value))
        for t, shape in zip(tensors, self._shapes):
            t.set_shape(TensorShape([batch]).concatenate(shape))
        return self._dequeue_return_value(tensors)

    def dequeue_up_to(self, n: Any, name: str | None = None) -> Any:
        """Like `dequeue_many`, but a closed queue hands out what remains.

        Shapes are `[None] + shape`; OutOfRangeError once no element remains.
        """
        tensors = queue_dequeue_up_to_v2(
            self._queue_ref, n, self._dtypes, name=name or f"{self._name}_DequeueUpTo"
        )
        for t, shape in zip(tensors, self._shapes):
            t.set_shape(TensorShape([None]).concatenate(shape))
        return self._dequeue_return_value(tensors)

    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None) -> Any:
        """An op closing the queue: later enqueues fail, dequeues drain what remains.

        Without `cancel_pending_enqueues`, enqueues already blocked still complete first;
        with it they fail with CancelledError. Closing a closed queue (without cancel)
        raises CancelledError at run time.
        """
        return queue_close_v2(
            self._queue_ref, cancel_pending_enqueues, name=name or f"{self._name}_Close"
        )

    def is_closed(self, name: str | None = None) -> Any:
        """A bool scalar Tensor: whether the queue is closed."""
        return queue_is_closed_v2(self._queue_ref, name=name or f"{self._name}_Is_Closed")

    def size(self, name: str | None = None) -> Any:
        """An int32 scalar Tensor: the number of elements in the queue."""
        return queue_size_v2(self._queue_ref, name=name or f"{self._name}_Size")


class FIFOQueue(QueueBase):
    """A queue dequeuing in first-in first-out order (follows `tf.FIFOQueue`).

    Args:
      capacity: the maximum number of elements (negative: unbounded).
      dtypes: a dtype, or one per component.
      shapes: optional fully defined shape(s) of the components; required by
        `dequeue_many`/`dequeue_up_to`.
      names: optional component names (enqueue takes, dequeue returns dicts).
      shared_name: if set, every session and graph of the task using this name shares the
        queue.
      name: the op name.

    Raises:
      ValueError: for shapes that are not fully defined or mismatched shapes/names.
    """

    def __init__(
        self,
        capacity: int,
        dtypes: Any,
        shapes: Any = None,
        names: Any = None,
        shared_name: str | None = None,
        name: str = "fifo_queue",
    ):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        names = _as_name_list(names, dtypes)
        g = graph_mod.get_default_graph()
        # As TensorFlow's init_scope: the queue never depends on the creator's control scope.
        with g.control_dependencies(None):
            queue_ref = fifo_queue_v2(
                component_types=dtypes,
                shapes=shapes or [],
                capacity=capacity,
                shared_name=shared_name or "",
                name=name,
            )
        super().__init__(dtypes, shapes, names, queue_ref)


class RandomShuffleQueue(QueueBase):
    """A queue dequeuing in random order (follows `tf.RandomShuffleQueue`).

    Args:
      capacity: the maximum number of elements.
      min_after_dequeue: elements a dequeue leaves behind while the queue is open (ensures
        mixing); ignored once closed.
      dtypes, shapes, names, shared_name, name: as `FIFOQueue`.
      seed: op-level seed (see `tf.set_random_seed`).
    """

    def __init__(
        self,
        capacity: int,
        min_after_dequeue: int,
        dtypes: Any,
        shapes: Any = None,
        names: Any = None,
        seed: int | None = None,
        shared_name: str | None = None,
        name: str = "random_shuffle_queue",
    ):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        names = _as_name_list(names, dtypes)
        seed1, seed2 = get_seed(seed)
        g = graph_mod.get_default_graph()
        with g.control_dependencies(None):
            queue_ref = random_shuffle_queue_v2(
                component_types=dtypes,
                shapes=shapes or [],
                capacity=capacity,
                min_after_dequeue=min_after_dequeue,
                seed=seed1 or 0,
                seed2=seed2 or 0,
                shared_name=shared_name or "",
                name=name,
            )
        super().__init__(dtypes, shapes, names, queue_ref)


__all__ = [
    "ConditionalAccumulator",
    "ConditionalAccumulatorBase",
    "FIFOQueue",
    "QueueBase",
    "RandomShuffleQueue",
    "SparseConditionalAccumulator",
]
