"""`tf.data.experimental` basics used by TF 1.x programs."""

from __future__ import annotations

from typing import Any

from tensorweave.ops.dataset_ops import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from tensorweave.ops.iterator_ops import make_initializable_iterator, make_one_shot_iterator


def shuffle_and_repeat(buffer_size: Any, count: Any = None, seed: Any = None) -> Any:
    """A transformation: `shuffle(buffer_size, seed).repeat(count)`."""
    return lambda ds: ds.shuffle(buffer_size, seed).repeat(count)


def map_and_batch(map_func: Any, batch_size: Any, num_parallel_batches: Any = None,
                  drop_remainder: bool = False, num_parallel_calls: Any = None) -> Any:
    """A transformation: `map(map_func).batch(batch_size, drop_remainder)`."""
    return lambda ds: ds.map(map_func, num_parallel_calls).batch(batch_size, drop_remainder)


def unbatch() -> Any:
    """A transformation: `Dataset.unbatch()`."""
    return lambda ds: ds.unbatch()


def ignore_errors() -> Any:
    """Not supported: raises NotImplementedError when applied."""

    def apply(ds: Any) -> Any:
        raise NotImplementedError("tf.data.experimental.ignore_errors is not supported")

    return apply


__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "ignore_errors",
    "make_initializable_iterator",
    "make_one_shot_iterator",
    "map_and_batch",
    "shuffle_and_repeat",
    "unbatch",
]
