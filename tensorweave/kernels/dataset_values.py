"""The run-time values of `variant` dataset tensors: immutable descriptions of a pipeline
whose `iterate(ctx)` returns a fresh Python iterator of elements (tuples of arrays).

A dataset op's kernel builds one of these from its inputs; `MakeIterator` calls `iterate`.
Functions run through `framework.function_runtime` on the resource manager of the
iterator's device. Follows the element order of TensorFlow's dataset kernels
(`core/kernels/data/*.cc`) for every deterministic transformation.

Differences from TensorFlow: an error inside a function ends the iteration (the next
`get_next` raises `OutOfRangeError`), where TensorFlow may continue with the next element;
`cache` keeps elements in memory whatever its filename.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.kernels import dataset_chunks as chunks_mod

Element = tuple[Any, ...]


def as_array(value: Any, dtype: Any) -> np.ndarray:
    """`value` as an ndarray of `dtype` (strings as object arrays of bytes)."""
    if dtype != np.object_:
        return np.asarray(value, dtype)
    if isinstance(value, np.ndarray) and value.dtype == np.object_:
        return value
    arr = np.array(value, dtype=object)
    flat = arr.reshape(-1)
    for i, s in enumerate(flat):
        if isinstance(s, str):
            flat[i] = s.encode()
        elif isinstance(s, np.bytes_):
            flat[i] = bytes(s)
    return arr


def stack(values: list[Any], dtype: Any, component: int) -> np.ndarray:
    """Stacks the values of one component into a batch.

    Raises:
      InvalidArgumentError: if the values have different shapes.
    """
    if dtype != np.object_:
        try:
            return np.stack(values).astype(dtype, copy=False)
        except ValueError:
            pass  # NOTE: shapes differ: the loop below names the first odd element
    first = np.shape(values[0])
    for i, v in enumerate(values[1:], 1):
        if np.shape(v) != first:
            raise errors.InvalidArgumentError(
                None, None,
                f"Cannot batch tensors with different shapes in component {component}. "
                f"First element had shape {list(first)} and element {i} had shape "
                f"{list(np.shape(v))}.",
            )
    out = np.empty((len(values),) + first, dtype)
    for i, v in enumerate(values):
        out[i] = v
    return out


def function_error(e: errors.OpError, op: str, name: str) -> errors.OpError:
    """`e` (from a dataset function) re-raised naming the dataset op."""
    return type(e)(None, None, f"{e.message}\n\t [[{{{{node {name}}}}}]] (in the function of {op})")


class DatasetValue:
    """Base class: `name`/`op` of the node that made it, `dtypes` of its components,
    `chunks`: None, or a function `ctx -> iterator of column tuples` (`dataset_chunks`),
    and `vectorized`: True when each element is cut from chunks (cheap to produce)."""

    vectorized = False

    def __init__(self, name: str, op: str, dtypes: list[Any], chunks: Any = None):
        self.name = name
        self.op = op
        self.dtypes = dtypes
        self.chunks = chunks

    def iterate(self, ctx: Any) -> Iterator[Element]:
        """A fresh iterator over the elements."""
        raise NotImplementedError


class Generated(DatasetValue):
    """A dataset defined by a generator function `make(ctx)`."""

    def __init__(self, name: str, op: str, dtypes: list[Any],
                 make: Callable[[Any], Iterator[Element]], chunks: Any = None):
        super().__init__(name, op, dtypes, chunks)
        self._make = make

    def iterate(self, ctx: Any) -> Iterator[Element]:
        """A fresh iterator from the generator function."""
        return self._make(ctx)


class SliceValue(Generated):
    """The value of `TensorSliceDataset` over non-string arrays (rows in order)."""

    def __init__(self, name: str, op: str, dtypes: list[Any], arrays: list[np.ndarray]):
        super().__init__(name, op, dtypes, lambda ctx: zip(*arrays),
                         lambda ctx: chunks_mod.slice_chunks(arrays))
        self.arrays = arrays


class MapValue(Generated):
    """The value of `MapDataset`: also keeps its input and function, so a following batch
    can run an element-wise function once per batch (`dataset_vectorize`)."""

    def __init__(self, name: str, op: str, dtypes: list[Any], source: DatasetValue, fn: Any,
                 captured: list[Any], parallel: int, elementwise: bool):
        chunks = None
        if elementwise and source.chunks is not None:
            def chunks(ctx: Any) -> Iterator[Any]:
                for cols in source.chunks(ctx):
                    yield tuple(call_function(fn, ctx, [*cols, *captured], op, name))

        super().__init__(name, op, dtypes, map_iter(source, fn, captured, op, name, parallel),
                         chunks)
        self.source = source
        self.fn = fn
        self.captured = captured
        self.elementwise = elementwise


def call_function(fn: Any, ctx: Any, args: list[Any], op: str, name: str) -> list[Any]:
    """Runs a dataset function; OpErrors name the dataset op."""
    try:
        return fn(ctx, args)
    except errors.OpError as e:
        raise function_error(e, op, name) from e


def map_iter(inp: DatasetValue, fn: Any, captured: list[Any], op: str, name: str,
             parallel: int = 1) -> Callable[[Any], Iterator[Element]]:
    """The iteration of `MapDataset` (ordered; up to `parallel` calls in flight)."""

    def run(ctx: Any) -> Iterator[Element]:
        if parallel <= 1:
            for e in inp.iterate(ctx):
                yield tuple(call_function(fn, ctx, [*e, *captured], op, name))
            return
        # NOTE: imported by the parallel map that needs it: concurrent.futures costs ~7 ms
        # of every `import tensorweave` (benchmarks/startup.py).
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(parallel, thread_name_prefix="tw-map") as pool:
            pending: collections.deque = collections.deque()
            for e in inp.iterate(ctx):
                pending.append(pool.submit(call_function, fn, ctx, [*e, *captured], op, name))
                if len(pending) >= parallel:
                    yield tuple(pending.popleft().result())
            while pending:
                yield tuple(pending.popleft().result())

    return run


def interleave_iter(inp: DatasetValue, fn: Any, captured: list[Any], cycle: int, block: int,
                    op: str, name: str) -> Callable[[Any], Iterator[Element]]:
    """The iteration of `InterleaveDataset`: TensorFlow's cycle/block order."""

    def run(ctx: Any) -> Iterator[Element]:
        source = inp.iterate(ctx)
        slots: list[Iterator[Element] | None] = [None] * cycle
        idx = block_index = 0
        inputs_done = False
        while True:
            it = slots[idx]
            if it is not None:
                e = next(it, None)
                if e is None:
                    slots[idx] = None
                    idx, block_index = (idx + 1) % cycle, 0
                    continue
                block_index += 1
                if block_index == block:
                    idx, block_index = (idx + 1) % cycle, 0
                yield e
                continue
            if not inputs_done:
                x = next(source, None)
                if x is None:
                    inputs_done = True
                else:
                    out = call_function(fn, ctx, [*x, *captured], op, name)
                    slots[idx] = out[0].iterate(ctx)
                    continue
            if all(s is None for s in slots):
                return
            idx, block_index = (idx + 1) % cycle, 0

    return run


def prefetch_iter(inp: DatasetValue, size: int) -> Callable[[Any], Iterator[Element]]:
    """The iteration of `PrefetchDataset`: a background thread keeps up to `size` elements
    ready; when none is ready the consumer produces the next one itself instead of waiting
    for the thread (the input is advanced under one lock, so the order is kept). On a busy
    machine this never makes `get_next` wait for a descheduled thread's whole turn."""

    def run(ctx: Any) -> Iterator[Element]:
        source = inp.iterate(ctx)
        buf: collections.deque = collections.deque()
        cond = threading.Condition()
        state: dict[str, Any] = {"done": False, "stop": False, "error": None}

        def produce() -> None:
            while True:
                with cond:  # NOTE: released between elements, so the consumer gets a turn
                    while len(buf) >= size and not state["stop"]:
                        cond.wait()
                    if state["stop"] or state["done"]:
                        return
                    try:
                        e = next(source, None)
                    except BaseException as ex:  # noqa: BLE001  (handed to the consumer)
                        state["error"], state["done"] = ex, True
                        return
                    if e is None:
                        state["done"] = True
                        return
                    buf.append(e)

        threading.Thread(target=produce, name="tw-prefetch", daemon=True).start()
        try:
            while True:
                with cond:
                    if buf:
                        e = buf.popleft()
                        cond.notify_all()
                    elif state["error"] is not None:
                        raise state["error"]
                    elif state["done"]:
                        return
                    else:
                        e = next(source, None)
                        if e is None:
                            state["done"] = True
                            return
                yield e
        finally:
            with cond:
                state["stop"] = True
                cond.notify_all()

    return run


def cache_iter(inp: DatasetValue) -> Callable[[Any], Iterator[Element]]:
    """The iteration of `CacheDataset`: the first complete pass is kept in memory."""
    cached: list[list[Element]] = []
    lock = threading.Lock()

    def run(ctx: Any) -> Iterator[Element]:
        with lock:
            done = cached[0] if cached else None
        if done is not None:
            yield from done
            return
        seen = []
        for e in inp.iterate(ctx):
            seen.append(e)
            yield e
        with lock:
            if not cached:
                cached.append(seen)

    return run


def repeat_iter(inp: DatasetValue, count: int) -> Callable[[Any], Iterator[Element]]:
    """The iteration of `RepeatDataset` (`count` < 0: forever; stops on an empty input)."""
    return lambda ctx: _repeat(lambda: inp.iterate(ctx), count)


def repeat_chunks(inp: DatasetValue, count: int) -> Callable[[Any], Iterator[Any]] | None:
    """The chunks of `RepeatDataset`, if its input has chunks."""
    if inp.chunks is None:
        return None
    return lambda ctx: _repeat(lambda: inp.chunks(ctx), count)


def _repeat(make: Callable[[], Iterator[Any]], count: int) -> Iterator[Any]:
    i = 0
    while count < 0 or i < count:
        produced = False
        for e in make():
            produced = True
            yield e
        if not produced:
            return
        i += 1
