"""NumPy kernels of `FusedBatchNormV3`, `LRN`, `Selu`, the candidate samplers and
`ComputeAccidentalHits` (follow TensorFlow's CPU kernels).

Samplers keep their generator (and the learned sampler its counts) in the builder's
closure: a new session restarts them, as TensorFlow's kernels. With `unique` they draw
until `num_sampled` distinct ids, and expected counts are `-expm1(tries * log1p(-p))`;
otherwise `p * num_sampled` (TensorFlow's `ExpectedCountHelper`). The numbers drawn differ
from TensorFlow's (NumPy's generator, not Philox); the distributions are the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


# -------------------------------------------------------------------- batch norm
@register_kernel("FusedBatchNormV3")
def _fused_batch_norm(node: KernelNode) -> Any:
    eps = float(node.attrs.get("epsilon", 1e-4))
    factor = float(node.attrs.get("exponential_avg_factor", 1.0))
    training = bool(node.attrs.get("is_training", True))
    channels_first = str(node.attrs.get("data_format", "NHWC")).startswith("NC")

    def compute(ctx: Any, x: Any, scale: Any, offset: Any, mean: Any, variance: Any) -> Any:
        if x.ndim not in (4, 5):
            raise _invalid(f"input must be 4 or 5-dimensional{list(x.shape)}")
        xc = np.moveaxis(x, 1, -1) if channels_first else x
        u = scale.dtype
        axes = tuple(range(xc.ndim - 1))
        xf = xc.astype(u)
        if training:
            n = xf.size // max(xf.shape[-1], 1)
            batch_mean = xf.mean(axis=axes)
            batch_var = xf.var(axis=axes)
            unbiased = batch_var * (n / max(n - 1, 1))
            use_mean, use_var = batch_mean, batch_var
            if factor != 1.0 and mean.size:
                out_mean = (1 - factor) * mean + factor * batch_mean
                out_var = (1 - factor) * variance + factor * unbiased
            else:
                out_mean, out_var = batch_mean, unbiased
        else:
            use_mean, use_var = mean, variance
            out_mean, out_var = mean, variance
            batch_var = variance
        inv = 1.0 / np.sqrt(use_var + eps)
        y = ((xf - use_mean) * (inv * scale) + offset).astype(x.dtype)
        y = np.moveaxis(y, -1, 1) if channels_first else y
        empty = np.zeros([0], dtype=u)
        return (
            y,
            out_mean.astype(u),
            out_var.astype(u),
            np.asarray(use_mean, dtype=u),
            np.asarray(inv if training else batch_var, dtype=u),
            empty,
        )

    return compute


# ---------------------------------------------------------------------------- LRN
@register_kernel("LRN")
def _lrn(node: KernelNode) -> Any:
    radius = int(node.attrs.get("depth_radius", 5))
    bias = float(node.attrs.get("bias", 1.0))
    alpha = float(node.attrs.get("alpha", 1.0))
    beta = float(node.attrs.get("beta", 0.5))

    def compute(ctx: Any, x: Any) -> Any:
        if x.ndim != 4:
            raise _invalid(f"in must be 4-dimensional{list(x.shape)}")
        sq = np.square(x.astype(np.float64))
        padded = np.pad(sq, [(0, 0)] * 3 + [(radius, radius)])
        c = x.shape[-1]
        window = sum(padded[..., i : i + c] for i in range(2 * radius + 1))
        return (x / np.power(bias + alpha * window, beta)).astype(x.dtype)

    return compute


@register_compute("Selu")
def _selu(ctx: Any, x: Any) -> Any:
    negative = _SELU_SCALE * _SELU_ALPHA * np.expm1(np.minimum(x, 0))
    return np.where(x > 0, _SELU_SCALE * x, negative).astype(x.dtype)


# ----------------------------------------------------------------------- samplers
def _generator(node: KernelNode) -> np.random.Generator:
    seed, seed2 = int(node.attrs.get("seed", 0)), int(node.attrs.get("seed2", 0))
    if seed == 0 and seed2 == 0:
        return np.random.default_rng()
    return np.random.default_rng(np.random.SeedSequence([seed % 2**64, seed2 % 2**64]))


def _expected(p: np.ndarray, num_sampled: int, tries: int) -> np.ndarray:
    if tries == num_sampled:
        return (p * num_sampled).astype(np.float32)
    return (-np.expm1(tries * np.log1p(-p))).astype(np.float32)


def _sample(draw: Any, prob: Any, true_classes: Any, num_sampled: int, unique: bool):
    """`(sampled, true_expected, sampled_expected)` with `draw(k)` giving k ids."""
    if not unique:
        sampled = draw(num_sampled)
        tries = num_sampled
    else:
        seen: dict[int, None] = {}
        tries = 0
        while len(seen) < num_sampled:
            batch = draw(max(num_sampled - len(seen), 1))
            for v in batch.tolist():
                tries += 1
                if v not in seen:
                    seen[v] = None
                    if len(seen) == num_sampled:
                        break
        sampled = np.fromiter(seen, dtype=np.int64, count=num_sampled)
    true_exp = _expected(prob(true_classes), num_sampled, tries)
    return sampled.astype(np.int64), true_exp, _expected(prob(sampled), num_sampled, tries)


def _check_true(node: KernelNode, true_classes: Any, range_max: int | None) -> np.ndarray:
    true_classes = np.asarray(true_classes)
    num_true = int(node.attrs["num_true"])
    if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
        raise _invalid(f"true_classes must be a matrix with num_true={num_true} columns")
    num_sampled = int(node.attrs["num_sampled"])
    limit = num_sampled if range_max is None else range_max
    bad = true_classes[(true_classes < 0) | (true_classes >= limit)]
    if bad.size:
        raise _invalid(f"`true_candidate` out of range [0, {limit}), received {int(bad[0])}")
    if range_max is not None and node.attrs["unique"] and num_sampled > range_max:
        raise _invalid("Sampler's range is too small.")
    return true_classes


def _sampler_kernel(make: Any) -> Any:
    """A builder from `make(node, rng) -> (draw, prob, update or None, range_max)`."""

    def builder(node: KernelNode) -> Any:
        rng = _generator(node)
        draw, prob, update, range_max = make(node, rng)
        num_sampled, unique = int(node.attrs["num_sampled"]), bool(node.attrs["unique"])

        def compute(ctx: Any, true_classes: Any) -> Any:
            true_classes = _check_true(node, true_classes, range_max)
            result = _sample(draw, prob, true_classes, num_sampled, unique)
            if update is not None:
                update(true_classes)
            return result

        return compute

    return builder


def _uniform(node: KernelNode, rng: np.random.Generator) -> Any:
    n = int(node.attrs["range_max"])
    return (
        lambda k: rng.integers(0, n, size=k, dtype=np.int64),
        lambda ids: np.full(np.shape(ids), 1.0 / n),
        None,
        n,
    )


def _log_uniform(node: KernelNode, rng: np.random.Generator) -> Any:
    n = int(node.attrs["range_max"])
    log_range = np.log(n + 1.0)

    def draw(k: int) -> np.ndarray:
        ids = np.floor(np.exp(rng.random(k) * log_range)).astype(np.int64) - 1
        return np.clip(ids, 0, n - 1)

    def prob(ids: Any) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.float64)
        return (np.log(ids + 2.0) - np.log(ids + 1.0)) / log_range

    return draw, prob, None, n


def _weighted(rng: np.random.Generator, weights: np.ndarray) -> Any:
    def draw(k: int) -> np.ndarray:
        p = weights / weights.sum()
        return rng.choice(weights.size, size=k, p=p).astype(np.int64)

    def prob(ids: Any) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        ok = (ids >= 0) & (ids < weights.size)
        return np.where(ok, weights[np.clip(ids, 0, weights.size - 1)], 0.0) / weights.sum()

    return draw, prob


def _learned_unigram(node: KernelNode, rng: np.random.Generator) -> Any:
    n = int(node.attrs["range_max"])
    weights = np.ones(n, dtype=np.float64)
    draw, prob = _weighted(rng, weights)

    def update(true_classes: np.ndarray) -> None:
        ids = true_classes.reshape(-1)
        ids = ids[(ids >= 0) & (ids < n)]
        np.add.at(weights, ids, 1.0)

    return draw, prob, update, n


def _read_vocab(path: str) -> list[float]:
    counts = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.strip().split(",")
            if parts and parts[-1]:
                counts.append(float(parts[-1]))
    return counts


def _fixed_unigram(node: KernelNode, rng: np.random.Generator) -> Any:
    n = int(node.attrs["range_max"])
    unigrams = [float(u) for u in node.attrs.get("unigrams", [])]
    vocab = node.attrs.get("vocab_file", "")
    vocab = vocab.decode() if isinstance(vocab, bytes) else vocab
    if vocab:
        unigrams = _read_vocab(vocab)
    reserved = int(node.attrs.get("num_reserved_ids", 0))
    distortion = float(node.attrs.get("distortion", 1.0))
    shards, shard = int(node.attrs.get("num_shards", 1)), int(node.attrs.get("shard", 0))
    if reserved + len(unigrams) != n:
        raise _invalid(
            f"range_max must equal num_reserved_ids + the number of unigrams: {n} vs "
            f"{reserved + len(unigrams)}"
        )
    weights = np.concatenate([np.zeros(reserved), np.power(unigrams, distortion)])
    weights[np.arange(n) % shards != shard] = 0.0
    draw, prob = _weighted(rng, weights)
    return draw, prob, None, n


@register_kernel("AllCandidateSampler")
def _all_sampler(node: KernelNode) -> Any:
    num_sampled = int(node.attrs["num_sampled"])

    def compute(ctx: Any, true_classes: Any) -> Any:
        true_classes = _check_true(node, true_classes, None)
        return (
            np.arange(num_sampled, dtype=np.int64),
            np.ones(true_classes.shape, dtype=np.float32),
            np.ones([num_sampled], dtype=np.float32),
        )

    return compute


register_kernel("UniformCandidateSampler")(_sampler_kernel(_uniform))
register_kernel("LogUniformCandidateSampler")(_sampler_kernel(_log_uniform))
register_kernel("LearnedUnigramCandidateSampler")(_sampler_kernel(_learned_unigram))
register_kernel("FixedUnigramCandidateSampler")(_sampler_kernel(_fixed_unigram))


@register_kernel("ComputeAccidentalHits")
def _accidental_hits(node: KernelNode) -> Any:
    num_true = int(node.attrs["num_true"])

    def compute(ctx: Any, true_classes: Any, sampled: Any) -> Any:
        true_classes = np.asarray(true_classes)
        if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
            raise _invalid(f"true_classes must be a matrix with num_true={num_true} columns")
        # The last position of each sampled id; hits in the order of the true classes.
        position = {v: j for j, v in enumerate(np.asarray(sampled).reshape(-1).tolist())}
        rows, ids = [], []
        for i, row in enumerate(true_classes.tolist()):
            for v in row:
                if v in position:
                    rows.append(i)
                    ids.append(position[v])
        weights = np.full(len(rows), -np.finfo(np.float32).max, dtype=np.float32)
        return np.asarray(rows, np.int32), np.asarray(ids, np.int64), weights

    return compute
