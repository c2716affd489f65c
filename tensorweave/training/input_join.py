"""`tf.train.batch_join`, `shuffle_batch_join` and the `maybe_*` variants (follows TF 1.x
`training/input.py`), on the queues of `training/input`.

`*_join` functions enqueue each tensor list of `tensors_list` from its own runner thread.
`maybe_*` functions enqueue only what `keep_input` keeps: a scalar bool keeps or drops a
whole example (or, with `enqueue_many`, a bool vector keeps rows); tensorweave does this
with a `boolean_mask` and `enqueue_many` of the kept rows instead of TensorFlow's
`tf.cond`, with the same queue contents.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops.data_flow_ops import FIFOQueue, RandomShuffleQueue
from tensorweave.training.input import _flatten, queue_batch


def _enqueue(queue: Any, tensors: list[Any], enqueue_many: bool, keep_input: Any) -> Any:
    if keep_input is None:
        return queue.enqueue_many(tensors) if enqueue_many else queue.enqueue(tensors)
    keep = convert_to_tensor(keep_input, dtype=dtypes.bool, name="keep_input")
    rank = keep.shape.ndims
    if rank is None or rank > 1:
        raise ValueError("`keep_input` must be a scalar or a vector.")
    if rank == 1 and not enqueue_many:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if rank == 0:
        rows = [array_ops.expand_dims(t, 0) for t in tensors] if not enqueue_many else tensors
        if enqueue_many:
            n = array_ops.shape(tensors[0])[0]
            keep = array_ops.fill(array_ops.reshape(n, [1]), keep)
        else:
            keep = array_ops.reshape(keep, [1])
        tensors = rows
    return queue.enqueue_many([array_ops.boolean_mask(t, keep) for t in tensors])


def _join(
    queue_cls: Any,
    tensors_list: Any,
    batch_size: Any,
    capacity: int,
    enqueue_many: bool,
    shapes: Any,
    allow_smaller_final_batch: bool,
    keep_input: Any,
    summary_name: str,
    name: Any,
    default_name: str,
    **queue_kwargs: Any,
) -> Any:
    if not tensors_list:
        raise ValueError("Expected at least one input in batch_join().")
    flats = []
    rebuild = None
    for tensors in tensors_list:
        flat, rebuild = _flatten(tensors)
        flats.append(flat)
    if len({len(f) for f in flats}) != 1:
        raise ValueError("Expected all inputs of batch_join() to have the same structure.")
    with graph_mod.name_scope(name, default_name, [t for f in flats for t in f]) as scope:
        flats = [[convert_to_tensor(t) for t in flat] for flat in flats]
        out = queue_batch(
            queue_cls, flats[0],
            lambda queue: [_enqueue(queue, flat, enqueue_many, keep_input) for flat in flats],
            batch_size, capacity, enqueue_many, shapes, allow_smaller_final_batch, summary_name,
            scope, **queue_kwargs,
        )
        return rebuild(out)


def batch_join(
    tensors_list,
    batch_size,
    capacity=32,
    enqueue_many=False,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Batches from a FIFOQueue filled by one thread per entry of `tensors_list`.

    Follows `tf.train.batch_join`; every entry has the same structure (list, tuple or
    dict of tensors), which the result keeps.

    Raises:
      ValueError: for an empty list, different structures or unknown shapes.
      NotImplementedError: for `dynamic_pad`.
    """
    if dynamic_pad:
        raise NotImplementedError("dynamic_pad (PaddingFIFOQueue) is not supported")
    return _join(
        FIFOQueue,
        tensors_list,
        batch_size,
        capacity,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        None,
        f"fraction_of_{capacity}_full",
        name,
        "batch_join",
        shared_name=shared_name,
    )


def shuffle_batch_join(
    tensors_list,
    batch_size,
    capacity,
    min_after_dequeue,
    seed=None,
    enqueue_many=False,
    shapes=None,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Random batches from a RandomShuffleQueue filled by one thread per entry.

    Follows `tf.train.shuffle_batch_join`.
    """
    full = f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full"
    return _join(
        RandomShuffleQueue,
        tensors_list,
        batch_size,
        capacity,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        None,
        full,
        name,
        "shuffle_batch_join",
        min_after_dequeue=min_after_dequeue,
        seed=seed,
        shared_name=shared_name,
    )


def maybe_batch(
    tensors,
    keep_input,
    batch_size,
    num_threads=1,
    capacity=32,
    enqueue_many=False,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """`batch` of the examples `keep_input` keeps (follows `tf.train.maybe_batch`).

    Raises:
      ValueError: for a `keep_input` of rank above 1, or a vector without `enqueue_many`.
    """
    if dynamic_pad:
        raise NotImplementedError("dynamic_pad (PaddingFIFOQueue) is not supported")
    return _join(
        FIFOQueue,
        [tensors] * num_threads,
        batch_size,
        capacity,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        keep_input,
        f"fraction_of_{capacity}_full",
        name,
        "batch",
        shared_name=shared_name,
    )


def maybe_batch_join(
    tensors_list,
    keep_input,
    batch_size,
    capacity=32,
    enqueue_many=False,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """`batch_join` of what `keep_input` keeps (follows `tf.train.maybe_batch_join`)."""
    if dynamic_pad:
        raise NotImplementedError("dynamic_pad (PaddingFIFOQueue) is not supported")
    return _join(
        FIFOQueue,
        tensors_list,
        batch_size,
        capacity,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        keep_input,
        f"fraction_of_{capacity}_full",
        name,
        "batch_join",
        shared_name=shared_name,
    )


def maybe_shuffle_batch(
    tensors,
    batch_size,
    capacity,
    min_after_dequeue,
    keep_input,
    num_threads=1,
    seed=None,
    enqueue_many=False,
    shapes=None,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """`shuffle_batch` of what `keep_input` keeps (`tf.train.maybe_shuffle_batch`)."""
    full = f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full"
    return _join(
        RandomShuffleQueue,
        [tensors] * num_threads,
        batch_size,
        capacity,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        keep_input,
        full,
        name,
        "shuffle_batch",
        min_after_dequeue=min_after_dequeue,
        seed=seed,
        shared_name=shared_name,
    )


def maybe_shuffle_batch_join(
    tensors_list,
    batch_size,
    capacity,
    min_after_dequeue,
    keep_input,
    seed=None,
    enqueue_many=False,
    shapes=None,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """`shuffle_batch_join` of what `keep_input` keeps (`maybe_shuffle_batch_join`)."""
    full = f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full"
    return _join(
        RandomShuffleQueue,
        tensors_list,
        batch_size,
        capacity,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        keep_input,
        full,
        name,
        "shuffle_batch_join",
        min_after_dequeue=min_after_dequeue,
        seed=seed,
        shared_name=shared_name,
    )


__all__ = [
    "batch_join",
    "maybe_batch",
    "maybe_batch_join",
    "maybe_shuffle_batch",
    "maybe_shuffle_batch_join",
    "shuffle_batch_join",
]
