"""NumPy kernels of `RandomGamma`, `RandomPoissonV2`, the stateless random ops, and the
implicit-reparameterization gradients `RandomGammaGrad` and `IgammaGradA`.

Stateful kernels own a generator seeded from the `seed`/`seed2` attrs (see
`random_kernels`). A stateless kernel seeds a fresh generator from its `seed` input and
the op type on every call, so equal seeds give equal outputs. The streams differ from
TensorFlow's Philox/ThreeFry counters: only the determinism contract is reproduced.
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np

from tensorweave.kernels.array_kernels import invalid
from tensorweave.kernels.random_kernels import _dims, _generator
from tensorweave.kernels.registry import KernelNode, register_kernel
from tensorweave.kernels.special_math_kernels import _igamma, _ndtri


@register_kernel("RandomGamma")
def _random_gamma(node: KernelNode) -> Any:
    rng = _generator(node)
    npt = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, shape: Any, alpha: Any) -> Any:
        alpha = np.asarray(alpha, np.float64)
        out_shape = _dims(shape) + alpha.shape
        draws = rng.standard_gamma(np.broadcast_to(alpha, out_shape))
        return np.asarray(draws).astype(npt)

    return compute


@register_kernel("RandomPoissonV2")
def _random_poisson(node: KernelNode) -> Any:
    rng = _generator(node)
    npt = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, shape: Any, rate: Any) -> Any:
        rate = np.asarray(rate, np.float64)
        if np.any(rate < 0):
            raise invalid("rate must be non-negative")
        out_shape = _dims(shape) + rate.shape
        return rng.poisson(np.broadcast_to(rate, out_shape)).astype(npt)

    return compute


def _stateless_rng(op_type: str, seed: Any) -> np.random.Generator:
    seed = np.asarray(seed).reshape(-1)
    if seed.size != 2:
        raise invalid(f"seed must have shape [2], not [{seed.size}]")
    key = [int(s) % 2**64 for s in seed] + [zlib.crc32(op_type.encode())]
    return np.random.default_rng(np.random.SeedSequence(key))


def _truncated(rng: np.random.Generator, size: tuple[int, ...], lo: Any, hi: Any) -> Any:
    """Standard normals conditioned on [lo, hi] (broadcast), by rejection."""
    lo, hi = np.broadcast_to(lo, size), np.broadcast_to(hi, size)
    out = rng.standard_normal(size)
    bad = (out < lo) | (out > hi)
    for _ in range(1000):
        if not bad.any():
            break
        out[bad] = rng.standard_normal(int(bad.sum()))
        bad = (out < lo) | (out > hi)
    if bad.any():
        out[bad] = np.clip(0.0, lo[bad], hi[bad])
    return out


def _stateless(op_type: str, draw: Any) -> Any:
    def builder(node: KernelNode) -> Any:
        npt = node.output_dtypes[0].as_numpy_dtype

        def compute(ctx: Any, shape: Any, seed: Any, *params: Any) -> Any:
            rng = _stateless_rng(op_type, seed)
            return np.asarray(draw(rng, _dims(shape), *params)).astype(npt)

        return compute

    register_kernel(op_type)(builder)


_stateless("StatelessRandomUniform", lambda rng, size: rng.random(size))
_stateless("StatelessRandomNormal", lambda rng, size: rng.standard_normal(size))
_stateless("StatelessTruncatedNormal", lambda rng, size: _truncated(rng, size, -2.0, 2.0))
def _gamma_quantile(a: float, u: float) -> float:
    """X with P(a, x) = u: Newton steps inside a shrinking bracket."""
    if a <= 0 or not 0.0 < u < 1.0:
        return math.nan if a <= 0 else (0.0 if u <= 0 else math.inf)
    if a < 1.0:
        x = (u * math.gamma(a + 1.0)) ** (1.0 / a)
    else:
        z = _ndtri(u)
        x = max(a * (1.0 - 1.0 / (9.0 * a) + z / (3.0 * math.sqrt(a))) ** 3, 1e-3)
    lo, hi = 0.0, math.inf
    for _ in range(100):
        err = _igamma(a, x) - u
        if err > 0:
            hi = x
        else:
            lo = x
        density = math.exp((a - 1.0) * math.log(x) - x - math.lgamma(a)) if x > 0 else 0.0
        step = err / density if density > 0 else math.inf
        nxt = x - step
        if not lo < nxt < hi:
            nxt = (lo + hi) / 2 if math.isfinite(hi) else 2 * x
        if abs(nxt - x) <= 1e-15 * max(x, 1e-300):
            return nxt
        x = nxt
    return x


_gamma_quantiles = np.vectorize(_gamma_quantile, otypes=[np.float64])


def _stateless_gamma(rng: np.random.Generator, size: Any, alpha: Any) -> Any:
    # Inverse-CDF sampling: for a fixed seed the sample is a smooth function of alpha,
    # so the implicit-reparameterization gradient is its exact derivative.
    u = rng.random(size)
    alpha = np.broadcast_to(np.asarray(alpha, np.float64), size)
    return _gamma_quantiles(alpha, u) if u.size else np.zeros(size)


_stateless("StatelessRandomGammaV2", _stateless_gamma)
_stateless("StatelessRandomPoisson",
           lambda rng, size, lam: rng.poisson(np.broadcast_to(np.asarray(lam, float), size)))
_stateless("StatelessRandomBinomial", lambda rng, size, n, p: rng.binomial(
    np.broadcast_to(np.asarray(n).astype(np.int64), size), np.broadcast_to(p, size)))


def _uniform_int(rng: np.random.Generator, size: Any, lo: Any, hi: Any) -> Any:
    if int(lo) >= int(hi):
        raise invalid(f"Need minval < maxval: {int(lo)} >= {int(hi)}")
    return rng.integers(int(lo), int(hi), size)


_stateless("StatelessRandomUniformInt", _uniform_int)


def _parameterized(rng: np.random.Generator, size: Any, mean: Any, std: Any, lo: Any,
                   hi: Any) -> Any:
    mean, std = np.broadcast_to(mean, size), np.broadcast_to(std, size)
    z = _truncated(rng, size, (np.asarray(lo) - mean) / std, (np.asarray(hi) - mean) / std)
    return mean + std * z


_stateless("StatelessParameterizedTruncatedNormal", _parameterized)


@register_kernel("StatelessMultinomial")
def _stateless_multinomial(node: KernelNode) -> Any:
    npt = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, logits: Any, num_samples: Any, seed: Any) -> Any:
        logits = np.asarray(logits, np.float64)
        if logits.ndim != 2:
            raise invalid(f"logits should be a matrix, got shape {list(logits.shape)}")
        rng = _stateless_rng("StatelessMultinomial", seed)
        n = int(num_samples)
        top = np.max(logits, axis=1, keepdims=True) if logits.size else 0.0
        cdf = np.cumsum(np.exp(logits - top), axis=1)
        u = rng.random((logits.shape[0], n)) * cdf[:, -1:]
        out = np.stack([np.searchsorted(c, row, side="right") for c, row in zip(cdf, u)]) \
            if logits.shape[0] else np.zeros((0, n))
        return np.minimum(out, logits.shape[1] - 1).astype(npt)

    return compute


def _igamma_grad_a(a: float, x: float) -> float:
    """dP(a, x)/da by Richardson-extrapolated central differences of P."""
    if math.isnan(a) or math.isnan(x) or a <= 0 or x <= 0:
        return math.nan if (a <= 0 or math.isnan(a) or math.isnan(x)) else 0.0
    h = 1e-3 * max(a, 1e-2)

    def central(step: float) -> float:
        return (_igamma(a + step, x) - _igamma(a - step, x)) / (2 * step)

    return (4 * central(h / 2) - central(h)) / 3


def _elementwise2(fn: Any) -> Any:
    vec = np.vectorize(fn, otypes=[np.float64])

    def builder(node: KernelNode) -> Any:
        npt = node.output_dtypes[0].as_numpy_dtype

        def compute(ctx: Any, a: Any, b: Any) -> Any:
            a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
            if a.size == 0:
                return np.zeros(a.shape, npt)
            with np.errstate(all="ignore"):
                return np.asarray(vec(a, b)).astype(npt)

        return compute

    return builder


def _gamma_sample_grad(alpha: float, x: float) -> float:
    """D sample / d alpha for a unit-rate gamma sample: -(dP/da) / (dP/dx)."""
    if x <= 0 or alpha <= 0:
        return 0.0
    density = math.exp((alpha - 1) * math.log(x) - x - math.lgamma(alpha))
    return -_igamma_grad_a(alpha, x) / density if density > 0 else 0.0


register_kernel("IgammaGradA")(_elementwise2(_igamma_grad_a))
register_kernel("RandomGammaGrad")(_elementwise2(_gamma_sample_grad))
