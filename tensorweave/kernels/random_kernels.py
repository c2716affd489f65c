"""NumPy kernels of the stateful random ops.

Each kernel owns a `numpy.random.Generator` created by its builder. The builder runs once
per node per plan, so a new session (a new plan) restarts the sequence and every step
draws fresh numbers, as TensorFlow's kernels do. With `seed == seed2 == 0` the generator
is seeded from OS entropy; otherwise from the pair alone, so equal attrs give equal
sequences. Generators serialize concurrent draws with their own lock.

The values differ from TensorFlow's Philox streams; the distributions and dtypes do not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels.registry import KernelNode, register_kernel

_TRUNCATE = 2.0


def _generator(node: KernelNode) -> np.random.Generator:
    seed = int(node.attrs.get("seed", 0))
    seed2 = int(node.attrs.get("seed2", 0))
    if seed == 0 and seed2 == 0:
        return np.random.default_rng()
    return np.random.default_rng(np.random.SeedSequence([seed % 2**64, seed2 % 2**64]))


def _dims(shape: Any) -> tuple[int, ...]:
    """The output shape given by a `shape` input.

    Raises:
      InvalidArgumentError: unless `shape` is a vector of non-negative ints (TensorFlow's
        `MakeShape` messages).
    """
    arr = np.asarray(shape)
    if arr.ndim != 1:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"shape must be a vector of {{int32,int64}}, got shape {shape_str(arr.shape)}",
        )
    dims = tuple(int(d) for d in arr)
    for d in dims:
        if d < 0:
            raise errors.InvalidArgumentError(None, None, f"Dimension {d} must be >= 0")
    return dims


def _work_dtype(npt: Any) -> Any:
    # float16 is drawn in float32, then rounded.
    return np.float64 if npt is np.float64 else np.float32


@register_kernel("RandomUniform")
def _random_uniform(node: KernelNode) -> Any:
    rng = _generator(node)
    npt = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, shape: Any) -> np.ndarray:
        dims = _dims(shape)
        if npt is np.float16:
            # Ten random mantissa bits, as TensorFlow's half kernel: exact and never 1.0.
            k = rng.integers(0, 1 << 10, dims, dtype=np.int32)
            return (k * np.float32(1.0 / 1024)).astype(np.float16)
        return rng.random(dims, dtype=npt)

    return compute


@register_kernel("RandomStandardNormal")
def _random_standard_normal(node: KernelNode) -> Any:
    rng = _generator(node)
    npt = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, shape: Any) -> np.ndarray:
        return rng.standard_normal(_dims(shape), dtype=_work_dtype(npt)).astype(npt, copy=False)

    return compute


def truncated_standard_normal(
    rng: np.random.Generator, dims: tuple[int, ...], npt: Any
) -> np.ndarray:
    """Standard normal draws of dtype `npt`, every value with magnitude below 2.

    Values at or beyond two standard deviations are re-drawn, as in TensorFlow's
    `TruncatedNormal`; the check runs after rounding to `npt`.
    """
    work = _work_dtype(npt)
    out = rng.standard_normal(dims, dtype=work).astype(npt, copy=False)
    bad = np.abs(out) >= _TRUNCATE
    while bad.any():
        out[bad] = rng.standard_normal(int(bad.sum()), dtype=work).astype(npt, copy=False)
        bad = np.abs(out) >= _TRUNCATE
    return out


@register_kernel("TruncatedNormal")
def _truncated_normal(node: KernelNode) -> Any:
    rng = _generator(node)
    npt = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, shape: Any) -> np.ndarray:
        return truncated_standard_normal(rng, _dims(shape), npt)

    return compute


def _scalar(value: Any, what: str) -> Any:
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise errors.InvalidArgumentError(
            None, None, f"{what} must be 0-D, got shape {shape_str(arr.shape)}"
        )
    return arr


@register_kernel("RandomUniformInt")
def _random_uniform_int(node: KernelNode) -> Any:
    rng = _generator(node)
    npt = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, shape: Any, minval: Any, maxval: Any) -> np.ndarray:
        dims = _dims(shape)
        lo = int(_scalar(minval, "minval"))
        hi = int(_scalar(maxval, "maxval"))
        if int(np.prod(dims)) == 0:
            return np.zeros(dims, dtype=npt)
        # Checked after the empty-output exit, as TensorFlow: zero impossible things are fine.
        if not lo < hi:
            raise errors.InvalidArgumentError(None, None, f"Need minval < maxval: {lo} >= {hi}")
        return rng.integers(lo, hi, dims, dtype=npt)

    return compute


@register_kernel("RandomShuffle")
def _random_shuffle(node: KernelNode) -> Any:
    rng = _generator(node)

    def compute(ctx: Any, value: Any) -> Any:
        arr = np.asarray(value)
        if arr.ndim == 0 or arr.shape[0] <= 1:
            return value
        return arr[rng.permutation(arr.shape[0])]

    return compute


def _row_cdfs(logits: np.ndarray) -> np.ndarray:
    """Unnormalized cumulative probabilities per row; -inf logits get probability 0."""
    x = logits.astype(np.float64)
    finite = np.where(np.isfinite(x), x, -np.inf)
    top = np.max(finite, axis=1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    probs = np.exp(x - top)
    probs[~np.isfinite(probs)] = 0.0
    return np.cumsum(probs, axis=1)


@register_kernel("Multinomial")
def _multinomial(node: KernelNode) -> Any:
    rng = _generator(node)
    npt = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, logits: Any, num_samples: Any) -> np.ndarray:
        logits = np.asarray(logits)
        if logits.ndim != 2:
            raise errors.InvalidArgumentError(
                None, None, f"logits should be a matrix, got shape {shape_str(logits.shape)}"
            )
        n = int(_scalar(num_samples, "num_samples"))
        if n < 0:
            raise errors.InvalidArgumentError(
                None, None, f"num_samples should be nonnegative, got {n}"
            )
        batch, classes = logits.shape
        if classes <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"num_classes should be positive, got {classes}"
            )
        out = np.empty((batch, n), dtype=npt)
        if batch == 0 or n == 0:
            return out
        cdf = _row_cdfs(logits)
        u = rng.random((batch, n)) * cdf[:, -1:]
        for i in range(batch):
            out[i] = np.minimum(np.searchsorted(cdf[i], u[i], side="right"), classes - 1)
        return out

    return compute
