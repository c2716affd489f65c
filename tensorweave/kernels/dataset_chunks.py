"""Chunked iteration: elements produced many at a time, as column arrays.

Pipelines of the form `from_tensor_slices -> shuffle -> repeat -> map -> batch` spend
their time moving one element at a time through Python generators. A dataset value may
also offer `chunks(ctx)`: an iterator of tuples of arrays (one per component, equal first
dimension) holding its elements in exactly the order of `iterate`. `BatchDatasetV2` then
cuts batches out of chunks instead of stacking elements. Chunks exist for tensor slices,
a shuffle of tensor slices (the same shuffle order, computed on indices), repeat, and an
element-wise map (`dataset_vectorize`) of a chunked input; every other value iterates
element by element.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

CHUNK = 1024
Columns = tuple[np.ndarray, ...]


class Draws:
    """A stream of uniform [0, 1) numbers from one generator, taken one or many at a time
    (both ways read the same stream, so element and chunk modes shuffle alike)."""

    def __init__(self, seeds: tuple[int, int], epoch: int):
        self._rng = np.random.default_rng([seeds[0], seeds[1], epoch])
        self._block = np.zeros(0)
        self._pos = 0

    def take(self, m: int) -> np.ndarray:
        """The next `m` numbers."""
        have = self._block[self._pos:self._pos + m]
        self._pos += len(have)
        if len(have) == m:
            return have
        return np.concatenate([have, self._rng.random(m - len(have))])

    def pick(self, n: int) -> int:
        """A uniform index in [0, n) from the next number."""
        if self._pos >= len(self._block):
            self._block, self._pos = self._rng.random(CHUNK), 0
        u = self._block[self._pos]
        self._pos += 1
        return int(u * n)


class Epochs:
    """Counts the passes over a shuffle (a new order per pass when reshuffling)."""

    def __init__(self, reshuffle: bool):
        self._reshuffle = reshuffle
        self._next = 0
        self._lock = threading.Lock()

    def next(self) -> int:
        """The epoch number of a new pass (always 0 without reshuffling)."""
        with self._lock:
            epoch, self._next = self._next, self._next + 1
        return epoch if self._reshuffle else 0


def shuffled_order(n: int, buffer_size: int, draws: Draws) -> np.ndarray:
    """The order in which a `buffer_size` shuffle buffer emits elements 0..n-1."""
    buf = list(range(min(buffer_size, n)))
    size = len(buf)
    out: list[int] = []
    if n > size:
        picks = (draws.take(n - size) * size).astype(np.int64).tolist()
        for j, i in zip(range(size, n), picks):
            out.append(buf[i])
            buf[i] = j
    for i in drain_picks(draws, len(buf)):
        buf[i], buf[-1] = buf[-1], buf[i]
        out.append(buf.pop())
    return np.asarray(out, np.int64)


def drain_picks(draws: Draws, m: int) -> list[int]:
    """The indices a buffer of `m` elements is emptied by: one draw each, scaled by the
    shrinking buffer size (what `pick` would give one at a time)."""
    return (draws.take(m) * np.arange(m, 0, -1)).astype(np.int64).tolist()


def shuffle_elements(elements: Iterator[Any], buffer_size: int, draws: Draws) -> Iterator[Any]:
    """The shuffle buffer over arbitrary elements (the order of `shuffled_order`)."""
    buf: list[Any] = []
    for e in elements:
        if len(buf) < buffer_size:
            buf.append(e)
            continue
        i = draws.pick(len(buf))
        out, buf[i] = buf[i], e
        yield out
    for i in drain_picks(draws, len(buf)):
        buf[i], buf[-1] = buf[-1], buf[i]
        yield buf.pop()


def slice_chunks(arrays: list[np.ndarray]) -> Iterator[Columns]:
    """Consecutive row blocks of the component arrays."""
    n = arrays[0].shape[0]
    for s in range(0, n, CHUNK):
        yield tuple(a[s:s + CHUNK].copy() for a in arrays)


def gathered_chunks(arrays: list[np.ndarray], order: np.ndarray) -> Iterator[Columns]:
    """Rows of the component arrays in `order`, a block at a time."""
    for s in range(0, len(order), CHUNK):
        idx = order[s:s + CHUNK]
        yield tuple(a[idx] for a in arrays)


def rebatch(chunks: Iterator[Columns], size: int, drop: bool) -> Iterator[Columns]:
    """Batches of exactly `size` rows cut from chunks (a smaller last one unless `drop`)."""
    pending: list[Columns] = []
    have = 0
    for chunk in chunks:
        rows = len(chunk[0])
        if not rows:
            continue
        pending.append(chunk)
        have += rows
        if have < size:
            continue
        merged = _concat(pending)
        start = 0
        while have - start >= size:
            yield tuple(c[start:start + size] for c in merged)
            start += size
        rest = tuple(c[start:] for c in merged)
        pending, have = ([rest], have - start) if have > start else ([], 0)
    if have and not drop:
        yield _concat(pending)


def _concat(parts: list[Columns]) -> Columns:
    if len(parts) == 1:
        return parts[0]
    return tuple(np.concatenate(cols) for cols in zip(*parts))
