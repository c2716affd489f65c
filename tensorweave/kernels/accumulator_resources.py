"""Gradient accumulators: the objects behind the (Sparse)ConditionalAccumulator ops.

Follows TensorFlow's `ConditionalAccumulatorBase`, `ConditionalAccumulator` and
`SparseConditionalAccumulator` kernels.

An accumulator sums the gradients applied with `local_step >= global_step` (older, stale
ones are silently dropped) and counts them. A take waits until at least `num_required`
gradients were counted, then returns their mean (or sum), resets the sum and the count, and
advances the accumulator's global step by one. Takes are served in order; a cancelled or
deleted take consumes nothing.

Framework-free, like `queue_resources`, and built on the same attempt lines (`attempt_lines`).
"""

from __future__ import annotations

import collections
import logging
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels.attempt_lines import (
    COMPLETE,
    NO_PROGRESS,
    Attempt,
    AttemptLines,
    Done,
)

_log = logging.getLogger("tensorweave.accumulators")


def _divide(total: np.ndarray, count: Any) -> np.ndarray:
    """`total / count` in `total`'s dtype; integers truncate toward zero, as C++ does."""
    count = np.asarray(count)
    if total.dtype.kind in "iu":
        quotient = np.abs(total) // count.astype(total.dtype)
        return (np.sign(total) * quotient).astype(total.dtype)
    return (total / count.astype(total.dtype)).astype(total.dtype)


def _compatible(declared: list[int | None] | None, shape: tuple[int, ...]) -> bool:
    if declared is None:
        return True
    return len(declared) == len(shape) and all(d is None or d == s for d, s in zip(declared, shape))


class _AccumulatorBase(AttemptLines):
    """Counter, global step and the line of pending takes."""

    kind = "ConditionalAccumulator"

    def __init__(
        self, name: str, dtype: Any, shape: list[int | None] | None, reduction_type: str = "MEAN"
    ):
        super().__init__(name)
        self.dtype = np.dtype(dtype)
        self.shape = None if shape is None else list(shape)
        self.reduction_type = reduction_type
        self.counter = 0
        self.global_step = 0
        self._takes: collections.deque[Attempt] = collections.deque()
        self._lines = (self._takes,)

    def num_accumulated(self) -> int:
        """The number of gradients accumulated since the last take."""
        with self._lock:
            return self.counter

    def set_global_step(self, new_global_step: int) -> None:
        """Sets the global step (a smaller value is logged and set anyway, as TF)."""
        with self._lock:
            if new_global_step < self.global_step:
                _log.warning(
                    "Attempt to set current_global_step_ to smaller value: "
                    "current_global_step_ = %d >= %d = new_global_step.",
                    self.global_step,
                    new_global_step,
                )
            self.global_step = int(new_global_step)
        self._flush()

    def _apply(self, local_step: int, validate_and_add: Any) -> None:
        with self._lock:
            if local_step < self.global_step:
                return  # stale gradient: dropped silently
            validate_and_add()
            self.counter += 1
        self._flush()

    def take(self, num_required: int, done: Done, cm: Any = None) -> None:
        """Waits for `num_required` gradients, then completes with the aggregate.

        Raises:
          InvalidArgumentError: if `num_required <= 0`.
        """
        if num_required <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"Argument num_required must be positive, but was {num_required}"
            )

        def run(attempt: Attempt) -> int:
            if self.counter < num_required:
                return NO_PROGRESS
            self.global_step += 1
            attempt.result = self._result()
            self.counter = 0
            self._reset()
            return COMPLETE

        self._add(self._takes, Attempt(run, done, num_required, "TakeGrad"), cm, None)

    @property
    def pending_takes(self) -> int:
        """Takes waiting for gradients."""
        return self.pending(0)

    def _result(self) -> Any:
        raise NotImplementedError

    def _reset(self) -> None:
        raise NotImplementedError


class AccumulatorResource(_AccumulatorBase):
    """A dense gradient accumulator.

    Args:
      name: the resource name (shared_name, else the node name).
      dtype: NumPy dtype of the gradients.
      shape: the declared gradient shape (None dims unknown), or None for unknown rank.
      reduction_type: `"MEAN"` (take returns the average) or `"SUM"`.
    """

    def __init__(
        self, name: str, dtype: Any, shape: list[int | None] | None, reduction_type: str = "MEAN"
    ):
        super().__init__(name, dtype, shape, reduction_type)
        self._sum: np.ndarray | None = None

    def apply(self, local_step: int, gradient: Any) -> None:
        """Adds `gradient` unless stale.

        Raises:
          InvalidArgumentError: if its shape differs from the accumulated one or is
            incompatible with the declared shape ("Shape mismatch: expected ..., got ...").
        """
        grad = np.asarray(gradient)

        def add() -> None:
            if self.counter > 0 and self._sum is not None and self._sum.shape != grad.shape:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Shape mismatch: expected {shape_str(self._sum.shape)}, got "
                    f"{shape_str(grad.shape)}",
                )
            if not _compatible(self.shape, grad.shape):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Shape mismatch: expected {shape_str(self.shape)}, got "
                    f"{shape_str(grad.shape)}",
                )
            value = grad.astype(self.dtype, copy=True)
            self._sum = value if self.counter == 0 else self._sum + value

        self._apply(int(local_step), add)

    def _result(self) -> np.ndarray:
        total = self._sum
        if self.reduction_type == "MEAN":
            total = _divide(total, self.counter)
        return total

    def _reset(self) -> None:
        self._sum = None


class SparseAccumulatorResource(_AccumulatorBase):
    """A sparse (IndexedSlices) gradient accumulator.

    Rows are summed per index; the MEAN divides each row by the number of gradients that
    had that index.

    Args:
      name, dtype, reduction_type: as `AccumulatorResource`.
      shape: the declared dense shape (None dims unknown), or None for unknown rank.
    """

    kind = "SparseConditionalAccumulator"

    def __init__(
        self, name: str, dtype: Any, shape: list[int | None] | None, reduction_type: str = "MEAN"
    ):
        super().__init__(name, dtype, shape, reduction_type)
        self._rows: dict[int, list[Any]] = {}  # index -> [row sum, count]
        self._row_shape: tuple[int, ...] | None = None

    def apply(
        self, local_step: int, indices: Any, values: Any, dense_shape: Any, has_known_shape: bool
    ) -> None:
        """Adds the slices `values[i]` at `indices[i]` unless stale.

        Raises:
          InvalidArgumentError: for non-vector indices, 0-d values, a count mismatch, an
            index beyond the declared first dimension or incompatible shapes.
        """
        idx = np.asarray(indices)
        vals = np.asarray(values)
        if idx.ndim != 1:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Input indices should be vector but received shape: {shape_str(idx.shape)}",
            )
        if vals.ndim == 0:
            raise errors.InvalidArgumentError(None, None, "Values cannot be 0-dimensional.")
        if vals.shape[0] != idx.shape[0]:
            raise errors.InvalidArgumentError(
                None, None, f"Expected {idx.shape[0]} non-empty input values, got {vals.shape[0]}"
            )

        def add() -> None:
            self._validate(idx, vals, np.asarray(dense_shape) if has_known_shape else None)
            if self.counter == 0:
                self._rows = {}
            self._row_shape = vals.shape[1:]
            for i, row in zip(idx.tolist(), vals.astype(self.dtype)):
                entry = self._rows.get(i)
                if entry is None:
                    self._rows[i] = [np.array(row, copy=True), 1]
                else:
                    entry[0] = entry[0] + row
                    entry[1] += 1

        self._apply(int(local_step), add)

    def _validate(self, idx: np.ndarray, vals: np.ndarray, dense_shape: Any) -> None:
        declared = self.shape
        if dense_shape is not None and declared is not None:
            if len(declared) > dense_shape.size:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Shape mismatch: expected shape rank at least "
                    f"{len(declared)}, got {dense_shape.size}",
                )
            for i, d in enumerate(declared):
                if d is not None and d != int(dense_shape[i]):
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"Shape mismatch: expected shape dim {i} to be {d}, got "
                        f"{int(dense_shape[i])}",
                    )
        if declared and declared[0] is not None:
            for i, v in enumerate(idx.tolist()):
                if v >= declared[0]:
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"Shape mismatch: index of slice {i} exceeded limits of "
                        f"shape; index is {v} exceeded {declared[0]}",
                    )
        self._validate_values(vals)

    def _validate_values(self, vals: np.ndarray) -> None:
        if self.counter > 0 and self._row_shape is not None:
            if len(self._row_shape) + 1 != vals.ndim:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Shape mismatch: expected values rank "
                    f"{len(self._row_shape) + 1}, got {vals.ndim}",
                )
            for i, (want, got) in enumerate(zip(self._row_shape, vals.shape[1:]), 1):
                if want != got:
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"Shape mismatch: expected values dim {i} to be {want}, got {got}",
                    )
            return
        declared = self.shape
        if declared is None:
            return
        if len(declared) > vals.ndim:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Shape mismatch: expected values rank at least {len(declared)}, got {vals.ndim}",
            )
        for i in range(1, len(declared)):
            if declared[i] is not None and declared[i] != vals.shape[i]:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Shape mismatch: expected values dim {i} to be "
                    f"{declared[i]}, got {vals.shape[i]}",
                )

    def _result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        keys = sorted(self._rows)
        row_shape = self._row_shape or ()
        indices = np.asarray(keys, dtype=np.int64)
        if keys:
            rows = []
            for k in keys:
                total, count = self._rows[k]
                rows.append(_divide(total, count) if self.reduction_type == "MEAN" else total)
            values = np.stack(rows).astype(self.dtype)
        else:
            values = np.zeros((0, *row_shape), dtype=self.dtype)
        first = self.shape[0] if self.shape else None
        dense = [-1 if first is None else first, *row_shape]
        return indices, values, np.asarray(dense, dtype=np.int64)

    def _reset(self) -> None:
        self._rows = {}
