"""NumPy kernels of `FractionalMaxPool`, `FractionalAvgPool` and their gradients (follow
TensorFlow's `fractional_pool_common.cc`, Graham 2014).

Each pooling sequence cuts a dimension of length n into `m = floor(n / ratio)` intervals:
random (`k = n // m`, `n % m` of them one longer, shuffled) or pseudo-random
(`ceil(alpha * (i + u))`). With `overlapping`, a cell also includes the next boundary.
With `deterministic` every run uses the regions drawn from (seed, seed2); otherwise each
run draws new ones. The numbers differ from TensorFlow's Philox ones.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.kernels.registry import KernelNode, register_kernel


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _sequence(n: int, m: int, rng: np.random.Generator, pseudo: bool) -> np.ndarray:
    if pseudo:
        alpha = n / m
        k = n // m
        max_u = min((k + 2) / alpha - 1, (n + 1 - k) / alpha - (m - 1))
        u = rng.random() * max_u
        cum = [1] + [int(math.ceil(alpha * (i + u))) for i in range(1, m)] + [n + 1]
        diff = np.diff(cum)
    else:
        diff = np.full(m, n // m, dtype=np.int64)
        diff[: n % m] += 1
        rng.shuffle(diff)
    return np.concatenate([[0], np.cumsum(diff)]).astype(np.int64)


def _cells(rows: np.ndarray, cols: np.ndarray, overlapping: bool, h: int, w: int):
    """Yields `(i, j, row slice, col slice)` of every output cell."""
    extra = 1 if overlapping else 0
    for i in range(len(rows) - 1):
        r = slice(int(rows[i]), min(int(rows[i + 1]) + extra, h))
        for j in range(len(cols) - 1):
            yield i, j, r, slice(int(cols[j]), min(int(cols[j + 1]) + extra, w))


def _forward(node: KernelNode, kind: str) -> Any:
    ratio = [float(r) for r in node.attrs["pooling_ratio"]]
    pseudo = bool(node.attrs.get("pseudo_random", False))
    overlapping = bool(node.attrs.get("overlapping", False))
    seed, seed2 = int(node.attrs.get("seed", 0)), int(node.attrs.get("seed2", 0))
    deterministic = bool(node.attrs.get("deterministic", False))
    if not deterministic and (seed or seed2):
        raise _invalid("Both seed and seed2 should be 0 if deterministic is false.")
    shared = np.random.default_rng()

    def compute(ctx: Any, x: Any) -> Any:
        if x.ndim != 4:
            raise _invalid(f"input must be 4-dimensional{list(x.shape)}")
        n, h, w, c = x.shape
        oh, ow = int(h / ratio[1]), int(w / ratio[2])
        if oh < 1 or ow < 1:
            raise _invalid("pooling_ratio is too large for the input size")
        # `deterministic`: the same regions at every run (TensorFlow's contract).
        rng = (
            np.random.default_rng(np.random.SeedSequence([seed % 2**64, seed2 % 2**64]))
            if deterministic
            else shared
        )
        rows, cols = _sequence(h, oh, rng, pseudo), _sequence(w, ow, rng, pseudo)
        out = np.empty((n, oh, ow, c), dtype=x.dtype)
        for i, j, r, col in _cells(rows, cols, overlapping, h, w):
            cell = x[:, r, col, :]
            out[:, i, j, :] = cell.max((1, 2)) if kind == "max" else cell.mean((1, 2))
        return out, rows, cols

    return compute


register_kernel("FractionalMaxPool")(lambda node: _forward(node, "max"))
register_kernel("FractionalAvgPool")(lambda node: _forward(node, "avg"))


@register_kernel("FractionalMaxPoolGrad")
def _max_grad(node: KernelNode) -> Any:
    overlapping = bool(node.attrs.get("overlapping", False))

    def compute(ctx: Any, x: Any, y: Any, dy: Any, rows: Any, cols: Any) -> Any:
        n, h, w, c = x.shape
        out = np.zeros(x.shape, dtype=dy.dtype)
        b_idx, c_idx = np.meshgrid(np.arange(n), np.arange(c), indexing="ij")
        for i, j, r, col in _cells(np.asarray(rows), np.asarray(cols), overlapping, h, w):
            cell = x[:, r, col, :]
            flat = cell.reshape(n, -1, c)
            first = flat.argmax(axis=1)
            ri, ci = np.unravel_index(first, cell.shape[1:3])
            np.add.at(out, (b_idx, ri + r.start, ci + col.start, c_idx), dy[:, i, j, :])
        return out

    return compute


@register_kernel("FractionalAvgPoolGrad")
def _avg_grad(node: KernelNode) -> Any:
    overlapping = bool(node.attrs.get("overlapping", False))

    def compute(ctx: Any, shape: Any, dy: Any, rows: Any, cols: Any) -> Any:
        n, h, w, c = (int(d) for d in np.asarray(shape))
        out = np.zeros((n, h, w, c), dtype=dy.dtype)
        for i, j, r, col in _cells(np.asarray(rows), np.asarray(cols), overlapping, h, w):
            size = (r.stop - r.start) * (col.stop - col.start)
            out[:, r, col, :] += (dy[:, i, j, :] / size)[:, None, None, :].astype(dy.dtype)
        return out

    return compute
