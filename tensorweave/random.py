"""The `tf.random` namespace (explicit re-exports of TF 1.x `tf.random` names).

The logic lives in `tensorweave.ops.random_ops`. TensorFlow 2's stateful `Generator`
API (`Generator`, `Algorithm`, `get_global_generator`, `set_global_generator`,
`create_rng_state`, `fold_in`, `split`) is not part of the TF1 graph runtime and raises
NotImplementedError naming the feature.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.graph import set_random_seed
from tensorweave.ops.random_more_ops import random_gamma as gamma
from tensorweave.ops.random_more_ops import random_poisson as poisson
from tensorweave.ops.random_more_ops import (
    stateless_categorical,
    stateless_multinomial,
    stateless_parameterized_truncated_normal,
    stateless_truncated_normal,
)
from tensorweave.ops.random_more_ops import stateless_random_binomial as stateless_binomial
from tensorweave.ops.random_more_ops import stateless_random_gamma as stateless_gamma
from tensorweave.ops.random_more_ops import stateless_random_normal as stateless_normal
from tensorweave.ops.random_more_ops import stateless_random_poisson as stateless_poisson
from tensorweave.ops.random_more_ops import stateless_random_uniform as stateless_uniform
from tensorweave.ops.random_ops import get_seed, multinomial, truncated_normal
from tensorweave.ops.random_ops import random_normal as normal
from tensorweave.ops.random_ops import random_shuffle as shuffle
from tensorweave.ops.random_ops import random_uniform as uniform


def categorical(logits: Any, num_samples: Any, dtype: Any = None, seed: Any = None,
                name: str | None = None) -> Any:
    """Samples [batch, num_samples] of class indices from unnormalized log-probabilities
    `logits` [batch, classes] (follows `tf.random.categorical`; int64 by default)."""
    return multinomial(logits, num_samples, seed=seed, name=name,
                       output_dtype=dtypes.as_dtype(dtype or dtypes.int64))


def _tf2_generator_api(feature: str) -> Any:
    def unavailable(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"tf.random.{feature} belongs to TensorFlow 2's stateful Generator API, which "
            "tensorweave's TF1 graph runtime does not provide; use the seeded tf.random "
            "ops (tf.set_random_seed + seed=)"
        )

    unavailable.__name__ = feature
    unavailable.__doc__ = f"Raises NotImplementedError: `tf.random.{feature}` (TF2 Generator API)."
    return unavailable


Generator = _tf2_generator_api("Generator")
Algorithm = _tf2_generator_api("Algorithm")
get_global_generator = _tf2_generator_api("get_global_generator")
set_global_generator = _tf2_generator_api("set_global_generator")
create_rng_state = _tf2_generator_api("create_rng_state")
fold_in = _tf2_generator_api("fold_in")
split = _tf2_generator_api("split")

# The candidate samplers live in `tf.nn` (tensorweave.nn owns them); `tf.random` exposes
# the same functions, looked up on first use so this module does not import the nn package.
_FROM_NN = (
    "all_candidate_sampler",
    "fixed_unigram_candidate_sampler",
    "learned_unigram_candidate_sampler",
    "log_uniform_candidate_sampler",
    "uniform_candidate_sampler",
)


def __getattr__(name: str) -> Any:
    if name in _FROM_NN:
        import importlib

        nn = importlib.import_module("tensorweave.nn")
        if hasattr(nn, name):
            return getattr(nn, name)
    raise AttributeError(f"module 'tensorweave.random' has no attribute {name!r}")


__all__ = [
    "Algorithm",
    "Generator",
    "categorical",
    "create_rng_state",
    "fold_in",
    "gamma",
    "get_global_generator",
    "get_seed",
    "multinomial",
    "normal",
    "poisson",
    "set_global_generator",
    "set_random_seed",
    "shuffle",
    "split",
    "stateless_binomial",
    "stateless_categorical",
    "stateless_gamma",
    "stateless_multinomial",
    "stateless_normal",
    "stateless_parameterized_truncated_normal",
    "stateless_poisson",
    "stateless_truncated_normal",
    "stateless_uniform",
    "truncated_normal",
    "uniform",
]
