"""Queue resources: the shared objects behind `FIFOQueueV2` and `RandomShuffleQueueV2`.

Follows TensorFlow's `QueueBase`, `FIFOQueue` and `RandomShuffleQueue` kernels.

Framework-free: NumPy arrays in, NumPy arrays out, completion through callbacks. A blocking
request is an attempt on the queue's enqueue or dequeue line (`attempt_lines`); attempts are
served strictly in order, so producers and consumers are served first come, first served,
as in TensorFlow.

Every attempt completes exactly once: when it is satisfied, when the queue is closed, when
its step is cancelled, when its `timeout_ms` passes, or when the queue is deleted.
Cancellation removes the attempt *before* it consumes anything: a dequeue-many that already
holds part of its batch puts those elements back at the front of the queue, so a cancelled
step loses no element (TensorFlow drops them).

Deliberate differences from TensorFlow: `timeout_ms` is honoured (TensorFlow ignores it),
and a close without `cancel_pending_enqueues` may itself be cancelled by its step.
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
    PROGRESS,
    Attempt,
    AttemptLines,
    Done,
)
from tensorweave.kernels.registry import invalid

_log = logging.getLogger("tensorweave.queues")

UNBOUNDED = 2**31 - 1


def frozen(value: Any) -> np.ndarray:
    """`value` as a read-only array owned by the caller (copied when it was writable)."""
    arr = np.array(value, copy=True) if _writable(value) else np.asarray(value)
    arr.flags.writeable = False
    return arr


def _writable(value: Any) -> bool:
    return not isinstance(value, np.ndarray) or value.flags.writeable


class QueueResource(AttemptLines):
    """A bounded FIFO queue of tuples of arrays (TensorFlow's `FIFOQueue`).

    Args:
      name: the resource name used in messages (shared_name, else the node name).
      dtypes: NumPy dtype of each component.
      shapes: shape (tuple of ints) of each component, or `[]` when unconstrained (then
        dequeue_many/up_to are refused).
      capacity: the maximum number of elements; negative means unbounded.
    """

    kind = "FIFOQueue"
    op_types = ("FIFOQueue", "FIFOQueueV2")

    def __init__(
        self, name: str, dtypes: list[Any], shapes: list[tuple[int, ...]], capacity: int = -1
    ):
        super().__init__(name)
        self.dtypes = [np.dtype(d) for d in dtypes]
        self.shapes = [tuple(s) for s in shapes]
        self.capacity = UNBOUNDED if capacity < 0 else capacity
        self._items: collections.deque[tuple[np.ndarray, ...]] = collections.deque()
        self._enqueues: collections.deque[Attempt] = collections.deque()
        self._dequeues: collections.deque[Attempt] = collections.deque()
        self._lines = (self._enqueues, self._dequeues)
        self._closed = False

    # --------------------------------------------------------------- sharing
    def check_matches(
        self,
        op_type: str,
        node_name: str,
        dtypes: list[Any],
        shapes: list[tuple[int, ...]],
        capacity: int,
    ) -> None:
        """Checks that a node asking for this shared queue describes it identically.

        Raises:
          InvalidArgumentError: TensorFlow's "Shared queue ..." messages.
        """
        if op_type not in self.op_types:
            raise invalid(
                f"Shared queue '{self.name}' has type '{self.op_types[-1]}' that "
                f"does not match type of Node '{node_name}': {op_type}",
            )
        requested = UNBOUNDED if capacity < 0 else capacity
        if requested != self.capacity:
            raise invalid(
                f"Shared queue '{self.name}' has capacity {self.capacity} but "
                f"requested capacity was {requested}",
            )
        if [np.dtype(d) for d in dtypes] != self.dtypes:
            raise invalid(
                f"Shared queue '{self.name}' has component types "
                f"{_types_str(self.dtypes)} but requested component types were "
                f"{_types_str(dtypes)}",
            )
        if [tuple(s) for s in shapes] != self.shapes:
            raise invalid(
                f"Shared queue '{self.name}' has component shapes "
                f"{_shapes_str(self.shapes)} but requested component shapes were "
                f"{_shapes_str(shapes)}",
            )

    # ------------------------------------------------------------ validation
    def _check_tuple(self, values: list[Any]) -> list[np.ndarray]:
        """The components as arrays of the queue's dtypes (same-kind casts allowed).

        Raises:
          InvalidArgumentError: for a wrong number of components or an incompatible dtype.
        """
        if len(values) != len(self.dtypes):
            raise invalid(
                f"Wrong number of components in tuple. Expected "
                f"{len(self.dtypes)}, got {len(values)}",
            )
        out = []
        for i, (v, dt) in enumerate(zip(values, self.dtypes)):
            arr = np.asarray(v)
            if arr.dtype != dt:
                if not np.can_cast(arr.dtype, dt, "same_kind"):
                    raise invalid(
                        f"Type mismatch in tuple component {i}. Expected "
                        f"{_types_str([dt])}, got {_types_str([arr.dtype])}",
                    )
                arr = arr.astype(dt)
            out.append(arr)
        return out

    def _check_shapes(self, values: list[Any], batch: int | None) -> None:
        if self.shapes:
            for i, (v, shape) in enumerate(zip(values, self.shapes)):
                want = shape if batch is None else (batch, *shape)
                if np.shape(v) != want:
                    raise invalid(
                        f"Shape mismatch in tuple component {i}. Expected "
                        f"{shape_str(want)}, got {shape_str(np.shape(v))}",
                    )
        elif batch is not None:
            for i, v in enumerate(values[1:], 1):
                if np.shape(v)[0] != batch:
                    raise invalid(
                        "All input tensors must have the same size in the 0th "
                        f"dimension. Component {i} has {np.shape(v)[0]}, and should have "
                        f"{batch}",
                    )

    # --------------------------------------------------------------- storing
    def _push(self, element: tuple[np.ndarray, ...]) -> None:
        self._items.append(element)

    def _pop(self) -> tuple[np.ndarray, ...]:
        return self._items.popleft()

    def _available(self) -> int:
        """Elements a dequeue may take now (RandomShuffleQueue keeps a minimum back)."""
        return len(self._items)

    def _give_back(self, attempt: Attempt) -> None:
        for element in reversed(attempt.taken):
            self._items.appendleft(element)
        attempt.taken = []

    def _stack(self, elements: list[tuple[np.ndarray, ...]], n: int) -> tuple[np.ndarray, ...]:
        if not elements:
            return tuple(np.zeros((0, *s), dtype=d) for s, d in zip(self.shapes, self.dtypes))
        return tuple(np.stack([e[i] for e in elements]) for i in range(len(self.dtypes)))

    def _closed_error(self) -> errors.OpError:
        return errors.CancelledError(None, None, f"{self.kind} '{self.name}' is closed.")

    def _insufficient(self, requested: int, size: int) -> errors.OpError:
        return errors.OutOfRangeError(
            None,
            None,
            f"{self.kind} '{self.name}' is closed and has insufficient elements "
            f"(requested {requested}, current size {size})",
        )

    # ------------------------------------------------------------- requests
    def enqueue(
        self, values: list[Any], done: Done, cm: Any = None, timeout_s: float | None = None
    ) -> None:
        """Enqueues one element, blocking while the queue is full.

        Completes with CancelledError if the queue is (or gets) closed before it is stored,
        InvalidArgumentError for a wrong tuple (raised immediately).
        """
        values = self._check_tuple(values)
        self._check_shapes(values, None)
        element = tuple(frozen(v) for v in values)

        def run(attempt: Attempt) -> int:
            if self._closed:
                attempt.error = self._closed_error()
                return COMPLETE
            if len(self._items) < self.capacity:
                self._push(element)
                return COMPLETE
            return NO_PROGRESS

        self._add(self._enqueues, Attempt(run, done, 1, "Enqueue"), cm, timeout_s)

    def enqueue_many(
        self, values: list[Any], done: Done, cm: Any = None, timeout_s: float | None = None
    ) -> None:
        """Enqueues the slices of `values` along dimension 0, as room appears.

        Raises:
          InvalidArgumentError: for a wrong tuple, a 0-d component or unequal batch sizes.
        """
        values = self._check_tuple(values)
        for i, v in enumerate(values):
            if np.ndim(v) < 1:
                raise invalid(
                    f"Component {i} of an EnqueueMany must have rank >= 1, got "
                    f"shape {shape_str(np.shape(v))}",
                )
        batch = np.shape(values[0])[0]
        self._check_shapes(values, batch)
        if batch == 0:
            done(None)
            return
        arrays = [frozen(v) for v in values]

        def run(attempt: Attempt) -> int:
            if self._closed:
                attempt.error = self._closed_error()
                return COMPLETE
            state = NO_PROGRESS
            while len(self._items) < self.capacity:
                state = PROGRESS
                index = batch - attempt.requested
                self._push(tuple(a[index, ...] for a in arrays))
                attempt.requested -= 1
                if attempt.requested == 0:
                    return COMPLETE
            return state

        self._add(self._enqueues, Attempt(run, done, batch, "Enqueue"), cm, timeout_s)

    def dequeue(self, done: Done, cm: Any = None, timeout_s: float | None = None) -> None:
        """Dequeues one element (a tuple of arrays), blocking while the queue is empty.

        Completes with OutOfRangeError once the queue is closed and empty.
        """

        def run(attempt: Attempt) -> int:
            if self._closed and not self._items:
                attempt.error = self._insufficient(1, 0)
                return COMPLETE
            if self._available() > 0:
                attempt.result = self._pop()
                return COMPLETE
            return NO_PROGRESS

        self._add(self._dequeues, Attempt(run, done, 1, "Dequeue"), cm, timeout_s)

    def dequeue_many(
        self,
        n: int,
        done: Done,
        cm: Any = None,
        timeout_s: float | None = None,
        allow_small_batch: bool = False,
    ) -> None:
        """Dequeues `n` elements stacked along a new dimension 0.

        With `allow_small_batch` (`dequeue_up_to`), fewer once the queue is closed.

        Raises:
          InvalidArgumentError: if the components have no declared shapes, or `n < 0`.
        """
        op = "DequeueUpToOp" if allow_small_batch else "DequeueManyOp"
        if n < 0:
            raise errors.InvalidArgumentError(None, None, f"{op} requested {n} < 0 elements")
        if not self.shapes:
            raise invalid(
                f"{self.kind}'s DequeueMany and DequeueUpTo require the "
                "components to have specified shapes.",
            )
        if n == 0:
            done(self._stack([], 0))
            return

        def run(attempt: Attempt) -> int:
            if self._closed and len(self._items) + len(attempt.taken) < attempt.requested:
                return self._end_of_data(attempt, allow_small_batch)
            state = NO_PROGRESS
            available = self._available()
            while available > 0 and len(attempt.taken) < attempt.requested:
                state = PROGRESS
                attempt.taken.append(self._pop())
                available -= 1
            if len(attempt.taken) == attempt.requested:
                attempt.result = self._stack(attempt.taken, attempt.requested)
                attempt.taken = []
                return COMPLETE
            return state

        self._add(self._dequeues, Attempt(run, done, n, "Dequeue"), cm, timeout_s)

    def _end_of_data(self, attempt: Attempt, allow_small_batch: bool) -> int:
        """A dequeue-many that the closed queue cannot fill (under the lock)."""
        self._give_back(attempt)
        size = len(self._items)
        if allow_small_batch and size > 0:
            attempt.taken = [self._pop() for _ in range(size)]
            attempt.result = self._stack(attempt.taken, size)
            attempt.taken = []
            return COMPLETE
        if allow_small_batch and self._enqueues:
            return PROGRESS  # enqueues still in line may add elements (they fail first)
        attempt.error = self._insufficient(attempt.requested, size)
        return COMPLETE

    def close(self, cancel_pending_enqueues: bool, done: Done, cm: Any = None) -> None:
        """Closes the queue (follows `QueueBase::Close`).

        Without `cancel_pending_enqueues`, the close waits in the enqueue line behind the
        pending enqueues, which may still complete; closing twice then completes with
        CancelledError "Queue '...' is already closed.". With it, pending enqueues fail
        with CancelledError and the queue closes at once.
        """
        if cancel_pending_enqueues:
            with self._lock:
                self._closed = True
                cancelled = list(self._enqueues)
                self._enqueues.clear()
                for attempt in cancelled:
                    attempt.finished = True
                    attempt.error = errors.CancelledError(
                        None, None, "Enqueue operation was cancelled"
                    )
            for attempt in cancelled:
                attempt.finish()
            done(None)
            self._flush()
            return

        def run(attempt: Attempt) -> int:
            if self._closed:
                attempt.error = errors.CancelledError(
                    None, None, f"Queue '{self.name}' is already closed."
                )
            self._closed = True
            return COMPLETE

        self._add(self._enqueues, Attempt(run, done, 0, "Close"), cm, None)

    # ----------------------------------------------------------------- state
    def size(self) -> int:
        """The number of elements in the queue."""
        with self._lock:
            return len(self._items)

    def is_closed(self) -> bool:
        """True once closed."""
        with self._lock:
            return self._closed

    @property
    def pending_enqueues(self) -> int:
        """Enqueue (and close) requests waiting in line."""
        return self.pending(0)

    @property
    def pending_dequeues(self) -> int:
        """Dequeue requests waiting in line."""
        return self.pending(1)

    def close_on_delete(self) -> None:
        """Deletion (`Session.reset`): closes the queue and fails pending requests."""
        with self._lock:
            self._closed = True
        super().close_on_delete()


class RandomShuffleQueueResource(QueueResource):
    """A queue dequeuing in random order (TensorFlow's `RandomShuffleQueue`).

    It keeps `min_after_dequeue` elements back until closed.

    Args:
      name, dtypes, shapes, capacity: as `QueueResource`.
      min_after_dequeue: elements a dequeue leaves behind while the queue is open.
      rng: the `np.random.Generator` choosing elements.
    """

    kind = "RandomShuffleQueue"
    op_types = ("RandomShuffleQueue", "RandomShuffleQueueV2")

    def __init__(
        self,
        name: str,
        dtypes: list[Any],
        shapes: list[tuple[int, ...]],
        capacity: int,
        min_after_dequeue: int,
        rng: np.random.Generator,
    ):
        super().__init__(name, dtypes, shapes, capacity)
        self.min_after_dequeue = min_after_dequeue
        self._rng = rng

    def _push(self, element: tuple[np.ndarray, ...]) -> None:
        self._items.append(element)

    def _pop(self) -> tuple[np.ndarray, ...]:
        i = int(self._rng.integers(len(self._items)))
        self._items[i], self._items[-1] = self._items[-1], self._items[i]
        return self._items.pop()

    def _available(self) -> int:
        if self._closed:
            return len(self._items)
        return max(len(self._items) - self.min_after_dequeue, 0)


def _types_str(dts: list[Any]) -> str:
    return ", ".join(_TF_TYPE_NAMES.get(np.dtype(d).name, np.dtype(d).name) for d in dts)


def _shapes_str(shapes: list[tuple[int, ...]]) -> str:
    return "[" + ", ".join(shape_str(s) for s in shapes) + "]"


_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "object": "string", "float16": "half"}
