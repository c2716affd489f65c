"""Candidate samplers and accidental hits (follows TF 1.x `candidate_sampling_ops.py`).

Each sampler takes `true_classes: int64 [batch_size, num_true]` and returns
`(sampled_candidates int64 [num_sampled], true_expected_count float32 [batch_size,
num_true], sampled_expected_count float32 [num_sampled])`: the expected number of times
each class appears among the samples (TensorFlow's formulas). Seeds follow
`tf.get_seed`. Definitions in `framework/op_defs/nn_extra.py`, kernels in
`kernels/nn_extra_kernels.py`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.op_defs import nn_extra as _defs  # noqa: F401
from tensorweave.ops.gradient_registry import no_gradient
from tensorweave.ops.random_ops import get_seed


def _seeds(seed: Any) -> dict[str, int]:
    s1, s2 = get_seed(seed)
    return {"seed": s1 or 0, "seed2": s2 or 0}


def _sampler(op_type: str, seed: Any, **args: Any) -> tuple:
    """The outputs of `op_type` for a wrapper's arguments (its `locals()`) and `seed`."""
    return tuple(apply_op(op_type, **args, **_seeds(seed)))


def uniform_candidate_sampler(
    true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None
):
    """Samples classes uniformly from `[0, range_max)` (`tf.nn.uniform_candidate_sampler`).

    Args:
      true_classes: int64 [batch_size, num_true].
      num_true: the number of target classes per example.
      num_sampled: the number of classes to sample.
      unique: sample without replacement (then `num_sampled <= range_max`).
      range_max: the number of classes.
      seed: op seed.
      name: op name.

    Returns:
      `(sampled_candidates, true_expected_count, sampled_expected_count)`.
    """
    return _sampler("UniformCandidateSampler", **locals())


def log_uniform_candidate_sampler(
    true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None
):
    """Samples with `P(k) = log((k + 2) / (k + 1)) / log(range_max + 1)` (Zipfian).

    Follows `tf.nn.log_uniform_candidate_sampler`; arguments as
    `uniform_candidate_sampler`.
    """
    return _sampler("LogUniformCandidateSampler", **locals())


def learned_unigram_candidate_sampler(
    true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None
):
    """Samples by the frequency of the true classes seen so far (each class starts at 1).

    Follows `tf.nn.learned_unigram_candidate_sampler`; the counts live in the op's kernel
    and restart with each session.
    """
    return _sampler("LearnedUnigramCandidateSampler", **locals())


def fixed_unigram_candidate_sampler(
    true_classes,
    num_true,
    num_sampled,
    unique,
    range_max,
    vocab_file="",
    distortion=1.0,
    num_reserved_ids=0,
    num_shards=1,
    shard=0,
    unigrams=(),
    seed=None,
    name=None,
):
    """Samples by given unigram counts raised to `distortion`.

    Follows `tf.nn.fixed_unigram_candidate_sampler`: counts come from `unigrams` or from
    the last comma-separated field of each line of `vocab_file`; the first
    `num_reserved_ids` ids have weight 0; with `num_shards`, only ids with
    `id % num_shards == shard` are drawn.
    """
    unigrams = list(unigrams)
    return _sampler("FixedUnigramCandidateSampler", **locals())


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """Returns classes `0 .. num_sampled - 1`, all expected counts 1 (for testing).

    Follows `tf.nn.all_candidate_sampler`.
    """
    return _sampler("AllCandidateSampler", **locals())


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """Where sampled candidates equal a true class (`tf.nn.compute_accidental_hits`).

    Returns:
      `(indices int32 [n], ids int64 [n], weights float32 [n])`: the example, the position
      in `sampled_candidates` and `-FLOAT_MAX` for each hit, in the order of the true classes.
    """
    return _sampler("ComputeAccidentalHits", **locals())


__all__ = [
    "all_candidate_sampler",
    "compute_accidental_hits",
    "fixed_unigram_candidate_sampler",
    "learned_unigram_candidate_sampler",
    "log_uniform_candidate_sampler",
    "uniform_candidate_sampler",
]


# As TensorFlow: samplers take integer classes; nothing to differentiate.
for _op in ("UniformCandidateSampler", "LogUniformCandidateSampler",
            "LearnedUnigramCandidateSampler", "FixedUnigramCandidateSampler",
            "AllCandidateSampler", "ComputeAccidentalHits"):
    no_gradient(_op)
