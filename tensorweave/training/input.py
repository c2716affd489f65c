"""Queue-based input pipelines: `tf.train.input_producer`, `batch`, `shuffle_batch`, ...

Follows TF 1.x `python/training/input.py`: `input_producer`, `string_input_producer`,
`range_input_producer`, `slice_input_producer`, `batch` and `shuffle_batch`.

Each helper builds a queue, adds a `QueueRunner` that fills it to the graph's
`QUEUE_RUNNERS` collection (started by `tf.train.start_queue_runners` or a
MonitoredSession) and returns the queue or its dequeued tensors.

`num_epochs` counts passes with a local variable `epochs` and `CountUpTo`
(`limit_epochs`): the producer's enqueue then fails with OutOfRangeError, its QueueRunner
closes the queue, and readers see OutOfRangeError once it is drained, as in TensorFlow
(run `tf.local_variables_initializer()` first).

Not supported: `dynamic_pad`, sparse tensors and `keep_input`.
"""

from __future__ import annotations

from typing import Any

from tensorweave import summary
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.ops import array_ops, constant_op, logging_ops, math_ops, random_ops
from tensorweave.ops.array_ops_misc import count_up_to
from tensorweave.ops.data_flow_ops import FIFOQueue, RandomShuffleQueue
from tensorweave.ops.variables import GraphKeys, Variable
from tensorweave.training.queue_runner import QueueRunner, add_queue_runner


def limit_epochs(tensor: Any, num_epochs: int | None = None, name: str | None = None) -> Any:
    """`tensor`, readable `num_epochs` times (follows `tf.train.limit_epochs`).

    Creates the int64 local variable `<name>/epochs` (collection `LOCAL_VARIABLES`, so
    `tf.local_variables_initializer()` must run first) and returns `tensor` behind a
    `CountUpTo(limit=num_epochs)` on it: the evaluation after the last allowed one raises
    OutOfRangeError.

    Args:
      tensor: any Tensor (or value convertible to one).
      num_epochs: a positive int, or None for no limit (returns `tensor` unchanged).
      name: name scope (default `limit_epochs`).

    Raises:
      ValueError: `num_epochs` <= 0.
    """
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with graph_mod.name_scope(name, "limit_epochs", [tensor]) as scope:
        zero64 = constant_op.constant(0, dtype=dtypes.int64)
        epochs = Variable(zero64, name="epochs", trainable=False,
                          collections=[GraphKeys.LOCAL_VARIABLES])
        counter = count_up_to(epochs, num_epochs)
        with graph_mod.get_default_graph().control_dependencies([counter]):
            return array_ops.identity(tensor, name=scope)


def input_producer(
    input_tensor: Any,
    element_shape: Any = None,
    num_epochs: Any = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    summary_name: str | None = None,
    name: str | None = None,
    cancel_op: Any = None,
) -> FIFOQueue:
    """A FIFOQueue that a QueueRunner keeps filling with the rows of `input_tensor`.

    Rows are shuffled on each pass with `shuffle`, forever or for `num_epochs` passes
    (follows `tf.train.input_producer`; see `limit_epochs`).

    Raises:
      ValueError: if the row shape is not fully defined by `input_tensor` or
        `element_shape`.
    """
    with graph_mod.name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        row_shape = input_tensor.shape[1:].merge_with(as_shape(element_shape))
        if not row_shape.is_fully_defined():
            raise ValueError(
                "Either `input_tensor` must have a fully defined shape or `element_shape` "
                "must be specified"
            )
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        q = FIFOQueue(
            capacity,
            [input_tensor.dtype.base_dtype],
            shapes=[row_shape],
            shared_name=shared_name,
            name=name or "fifo_queue",
        )
        enq = q.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(q, [enq], cancel_op=cancel_op))
        if summary_name is not None:
            fraction = math_ops.cast(q.size(), dtypes.float32) * (1.0 / capacity)
            summary.scalar(summary_name, fraction)
        return q


def string_input_producer(
    string_tensor: Any,
    num_epochs: Any = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
    cancel_op: Any = None,
) -> FIFOQueue:
    """`input_producer` for a non-empty 1-D string tensor, e.g. file names.

    Follows `tf.train.string_input_producer`.

    Raises:
      ValueError: for an empty Python list; InvalidArgumentError at run time for an
        empty tensor.
    """
    message = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, Tensor) and not len(string_tensor):
        raise ValueError(message)
    with graph_mod.name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        check = logging_ops.Assert(math_ops.greater(array_ops.size(string_tensor), 0), [message])
        with graph_mod.get_default_graph().control_dependencies([check]):
            string_tensor = array_ops.identity(string_tensor)
        return input_producer(
            string_tensor,
            [],
            num_epochs,
            shuffle,
            seed,
            capacity,
            shared_name,
            f"fraction_of_{capacity}_full",
            scope,
            cancel_op,
        )


def range_input_producer(
    limit: Any,
    num_epochs: Any = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
) -> FIFOQueue:
    """`input_producer` of the integers `0 .. limit-1` (`tf.train.range_input_producer`)."""
    with graph_mod.name_scope(name, "input_producer", [limit]) as scope:
        return input_producer(
            array_ops.range(limit),
            [],
            num_epochs,
            shuffle,
            seed,
            capacity,
            shared_name,
            f"fraction_of_{capacity}_full",
            scope,
        )


def slice_input_producer(
    tensor_list: Any,
    num_epochs: Any = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
) -> list[Any]:
    """One row of every tensor of `tensor_list` per step, the same row of each.

    Follows `tf.train.slice_input_producer`.

    Raises:
      ValueError: for an empty `tensor_list`.
    """
    with graph_mod.name_scope(name, "input_producer", list(tensor_list)):
        tensors = [convert_to_tensor(t) for t in tensor_list]
        if not tensors:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        queue = range_input_producer(
            array_ops.shape(tensors[0])[0], num_epochs, shuffle, seed, capacity, shared_name
        )
        index = queue.dequeue()
        return [array_ops.gather(t, index) for t in tensors]


def _flatten(tensors: Any) -> tuple[list[Any], Any]:
    """The tensors of a dict, list/tuple or single tensor, and how to rebuild the original."""
    if isinstance(tensors, dict):
        keys = sorted(tensors)
        return [tensors[k] for k in keys], lambda vals: dict(zip(keys, vals))
    if isinstance(tensors, list | tuple):
        return list(tensors), lambda vals: list(vals)
    return [tensors], lambda vals: vals[0]


def _component_shapes(tensors: list[Any], shapes: Any, enqueue_many: bool) -> list[TensorShape]:
    if shapes is not None:
        return [as_shape(s) for s in shapes]
    out = [t.shape[1:] if enqueue_many else t.shape for t in tensors]
    if not all(s.is_fully_defined() for s in out):
        raise ValueError(f"All shapes must be fully defined: {out}")
    return out


def _batch(
    queue_cls: Any,
    tensors: Any,
    batch_size: Any,
    num_threads: int,
    capacity: int,
    enqueue_many: bool,
    shapes: Any,
    allow_smaller_final_batch: bool,
    summary_name: str,
    name: Any,
    default_name: str,
    **queue_kwargs: Any,
) -> Any:
    flat, rebuild = _flatten(tensors)
    with graph_mod.name_scope(name, default_name, flat) as scope:
        flat = [convert_to_tensor(t) for t in flat]
        if not flat:
            raise ValueError("Expected at least one tensor in batch().")

        def enqueues(q: Any) -> list[Any]:
            enqueue = q.enqueue_many(flat) if enqueue_many else q.enqueue(flat)
            return [enqueue] * num_threads

        out = queue_batch(
            queue_cls, flat, enqueues, batch_size, capacity, enqueue_many, shapes,
            allow_smaller_final_batch, summary_name, scope, **queue_kwargs,
        )
        return rebuild(out)


def queue_batch(
    queue_cls: Any,
    components: list[Any],
    make_enqueues: Any,
    batch_size: Any,
    capacity: int,
    enqueue_many: bool,
    shapes: Any,
    allow_smaller_final_batch: bool,
    summary_name: str,
    scope: str,
    **queue_kwargs: Any,
) -> list[Any]:
    """The queue behind `tf.train.batch` and friends, and one dequeued batch of it.

    Builds a `queue_cls` for tensors like `components`, a `QueueRunner` of the enqueue ops
    `make_enqueues(queue)` returns, the fullness summary `summary_name` (above
    `min_after_dequeue` for a shuffling queue), and dequeues `batch_size` elements (up to,
    with `allow_smaller_final_batch`) as op `scope`. Returns the dequeued components.

    Raises:
      ValueError: for component shapes that are not fully defined (without `shapes`).
    """
    q = queue_cls(
        capacity=capacity,
        dtypes=[t.dtype.base_dtype for t in components],
        shapes=_component_shapes(components, shapes, enqueue_many),
        **queue_kwargs,
    )
    add_queue_runner(QueueRunner(q, make_enqueues(q)))
    size = math_ops.cast(q.size(), dtypes.float32)
    reserve = queue_kwargs.get("min_after_dequeue", 0)
    if reserve:
        size = math_ops.maximum(size - float(reserve), 0.0)
    summary.scalar(summary_name, size * (1.0 / (capacity - reserve)))
    if allow_smaller_final_batch:
        out = q.dequeue_up_to(batch_size, name=scope)
    else:
        out = q.dequeue_many(batch_size, name=scope)
    return out if isinstance(out, list) else [out]


def batch(
    tensors: Any,
    batch_size: Any,
    num_threads: int = 1,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches of `batch_size` from a FIFOQueue filled by `num_threads` runner threads.

    Follows `tf.train.batch`; the structure of `tensors` is kept.

    Raises:
      ValueError: for shapes that are not fully defined (pass `shapes`).
      NotImplementedError: for `dynamic_pad`.
    """
    if dynamic_pad:
        raise NotImplementedError("dynamic_pad (PaddingFIFOQueue) is not supported")
    return _batch(
        FIFOQueue,
        tensors,
        batch_size,
        num_threads,
        capacity,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        f"fraction_of_{capacity}_full",
        name,
        "batch",
        shared_name=shared_name,
    )


def shuffle_batch(
    tensors: Any,
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    num_threads: int = 1,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Random batches from a RandomShuffleQueue (follows `tf.train.shuffle_batch`).

    The queue keeps at least `min_after_dequeue` elements for mixing.
    """
    full = f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full"
    return _batch(
        RandomShuffleQueue,
        tensors,
        batch_size,
        num_threads,
        capacity,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        full,
        name,
        "shuffle_batch",
        min_after_dequeue=min_after_dequeue,
        seed=seed,
        shared_name=shared_name,
    )


__all__ = [
    "batch",
    "input_producer",
    "limit_epochs",
    "range_input_producer",
    "shuffle_batch",
    "slice_input_producer",
    "string_input_producer",
]
