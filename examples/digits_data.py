"""The digits data set shared by the digits examples and benchmarks.

scikit-learn's bundled 8x8 handwritten digits (1,797 images, no network access), scaled to
[0, 1], split 80/20 with a fixed seed (stratified), plus a deterministic minibatch
iterator. NumPy and scikit-learn only (no tensorweave import), so that a benchmark run
under TensorFlow (`benchmarks/layouts.py --backend tensorflow`) reads the same data.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np

NUM_CLASSES = 10
IMAGE_SIZE = 8


@dataclasses.dataclass(frozen=True)
class DigitsSplit:
    """Train and test sets: float32 `[n, 64]` pixels in [0, 1] and int64 `[n]` labels."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def load_digits_split(seed: int = 0) -> DigitsSplit:
    """The digits, scaled to [0, 1] and split 80/20 (stratified) with `seed`.

    Args:
      seed: `random_state` of `sklearn.model_selection.train_test_split`.

    Returns:
      A `DigitsSplit` (1,437 training and 360 test examples).
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=seed, stratify=y
    )
    return DigitsSplit(x_train, y_train, x_test, y_test)


def minibatches(
    x: np.ndarray, y: np.ndarray, batch_size: int, seed: int = 0
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Endless `(x, y)` minibatches: each epoch a fresh permutation from `seed`.

    The last incomplete batch of an epoch is dropped, so every batch has `batch_size` rows.

    Args:
      x: `[n, ...]` inputs.
      y: `[n]` labels.
      batch_size: rows per batch, at most `n`.
      seed: seed of the permutations (the sequence is deterministic).

    Raises:
      ValueError: if `batch_size` is not in `[1, n]`.
    """
    n = len(x)
    if not 1 <= batch_size <= n:
        raise ValueError(f"batch_size must be in [1, {n}], got {batch_size}")
    rng = np.random.default_rng(seed)
    while True:
        order = rng.permutation(n)
        for start in range(0, n - batch_size + 1, batch_size):
            idx = order[start : start + batch_size]
            yield x[idx], y[idx]


def blas_threads(threads: int) -> Any:
    """A context capping the BLAS thread pool at `threads` (0: leave it alone).

    One thread is the examples' default: these matmuls are small, and OpenBLAS's threads
    cost far more than they give on a busy two-core machine.
    """
    if threads <= 0:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits  # installed with scikit-learn

    return threadpool_limits(threads, user_api="blas")
