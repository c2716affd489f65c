"""Gamma and Poisson sampling, stateless random ops and `random_crop` (follows TF 1.x
`tf.random.gamma`/`tf.random_gamma`, `tf.random.poisson`/`tf.random_poisson`,
`tf.random.stateless_*` and `tf.random_crop`).

Stateless ops take `seed`, an int32/int64 tensor of shape [2], and return the same values
for the same seed, shape and parameters, in any session (the streams are not
TensorFlow's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, cwise_ops, random_ops
from tensorweave.ops.array_ops_more import broadcast_to
from tensorweave.ops.logging_ops import assert_greater_equal


def _shape(shape: Any) -> Tensor:
    return convert_to_tensor(shape, dtypes.int32, name="shape")


def random_gamma(shape: Any, alpha: Any, beta: Any = None, dtype: Any = dtypes.float32,
                 seed: Any = None, name: str | None = None) -> Tensor:
    """Gamma(alpha, beta) samples [*shape, *broadcast(alpha, beta).shape] (follows
    `tf.random.gamma`, op `RandomGamma`); differentiable in alpha and beta."""
    with graph_mod.name_scope(name, "random_gamma", [shape, alpha, beta]):
        dtype = dtypes.as_dtype(dtype)
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        beta = convert_to_tensor(1.0 if beta is None else beta, dtype=dtype, name="beta")
        broadcast = alpha + array_ops.zeros_like(beta)
        seed1, seed2 = random_ops.get_seed(seed)
        sample = apply_op("RandomGamma", shape=_shape(shape), alpha=broadcast,
                          seed=seed1 or 0, seed2=seed2 or 0)
        tiny = np.finfo(dtype.as_numpy_dtype).tiny
        return cwise_ops.maximum(tiny, sample / beta)


def random_poisson(lam: Any, shape: Any, dtype: Any = dtypes.float32, seed: Any = None,
                   name: str | None = None) -> Tensor:
    """Poisson(lam) samples [*shape, *lam.shape] (follows TF 1.x `tf.random.poisson`,
    op `RandomPoissonV2`; note the TF1 argument order, `lam` first)."""
    with graph_mod.name_scope(name, "random_poisson", [lam, shape]):
        lam = convert_to_tensor(lam, name="lam", dtype=dtypes.float32)
        seed1, seed2 = random_ops.get_seed(seed)
        return apply_op("RandomPoissonV2", shape=_shape(shape), rate=lam,
                        dtype=dtypes.as_dtype(dtype), seed=seed1 or 0, seed2=seed2 or 0)


def random_crop(value: Any, size: Any, seed: Any = None, name: str | None = None) -> Tensor:
    """A random `size` slice of `value` (follows `tf.random_crop`).

    Raises:
      InvalidArgumentError: at run time, if `size` exceeds `value`'s shape.
    """
    with graph_mod.name_scope(name, "random_crop", [value, size]):
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = array_ops.shape(value)
        limit = shape - size + 1
        check = assert_greater_equal(shape, size, message="Need value.shape >= size")
        with graph_mod.control_dependencies([check]):
            offset = random_ops.random_uniform(array_ops.shape(shape), dtype=dtypes.int32,
                                               maxval=dtypes.int32.max, seed=seed) % limit
        return array_ops.slice(value, offset, size)


def _seed(seed: Any) -> Tensor:
    return convert_to_tensor(seed, name="seed")


def stateless_random_uniform(shape: Any, seed: Any, minval: Any = 0, maxval: Any = None,
                             dtype: Any = dtypes.float32, name: str | None = None,
                             alg: Any = "auto_select") -> Tensor:
    """Uniform samples in [minval, maxval), a pure function of `seed` (follows
    `tf.random.stateless_uniform`; ints need both bounds).

    Raises:
      ValueError: for an integer dtype without `maxval`.
    """
    dtype = dtypes.as_dtype(dtype)
    with graph_mod.name_scope(name, "stateless_random_uniform", [shape, seed]):
        if dtype.is_integer:
            if maxval is None:
                raise ValueError("Must specify maxval for integer dtype "
                                 f"{dtype.name} in stateless_uniform")
            return apply_op("StatelessRandomUniformInt", shape=_shape(shape), seed=_seed(seed),
                            minval=convert_to_tensor(minval, dtype),
                            maxval=convert_to_tensor(maxval, dtype))
        maxval = 1 if maxval is None else maxval
        unit = apply_op("StatelessRandomUniform", shape=_shape(shape), seed=_seed(seed),
                        dtype=dtype)
        lo = convert_to_tensor(minval, dtype)
        return unit * (convert_to_tensor(maxval, dtype) - lo) + lo


def stateless_random_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                            dtype: Any = dtypes.float32, name: str | None = None,
                            alg: Any = "auto_select") -> Tensor:
    """Normal samples, a pure function of `seed` (follows `tf.random.stateless_normal`)."""
    dtype = dtypes.as_dtype(dtype)
    with graph_mod.name_scope(name, "stateless_random_normal", [shape, seed]):
        unit = apply_op("StatelessRandomNormal", shape=_shape(shape), seed=_seed(seed),
                        dtype=dtype)
        return unit * convert_to_tensor(stddev, dtype) + convert_to_tensor(mean, dtype)


def stateless_truncated_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                               dtype: Any = dtypes.float32, name: str | None = None,
                               alg: Any = "auto_select") -> Tensor:
    """Normal samples within two standard deviations, a pure function of `seed` (follows
    `tf.random.stateless_truncated_normal`)."""
    dtype = dtypes.as_dtype(dtype)
    with graph_mod.name_scope(name, "stateless_truncated_normal", [shape, seed]):
        unit = apply_op("StatelessTruncatedNormal", shape=_shape(shape), seed=_seed(seed),
                        dtype=dtype)
        return unit * convert_to_tensor(stddev, dtype) + convert_to_tensor(mean, dtype)


def stateless_multinomial(logits: Any, num_samples: Any, seed: Any,
                          output_dtype: Any = dtypes.int64, name: str | None = None) -> Tensor:
    """Class samples [batch, num_samples] from `logits`, a pure function of `seed`
    (follows `tf.random.stateless_multinomial`)."""
    return apply_op("StatelessMultinomial", logits=logits,
                    num_samples=convert_to_tensor(num_samples, dtypes.int32), seed=_seed(seed),
                    output_dtype=dtypes.as_dtype(output_dtype), name=name)


def stateless_categorical(logits: Any, num_samples: Any, seed: Any, dtype: Any = dtypes.int64,
                          name: str | None = None) -> Tensor:
    """Same as `stateless_multinomial` (follows `tf.random.stateless_categorical`)."""
    return stateless_multinomial(logits, num_samples, seed, output_dtype=dtype, name=name)


def stateless_random_gamma(shape: Any, seed: Any, alpha: Any, beta: Any = None,
                           dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """Gamma(alpha, beta) samples of `shape` (alpha/beta broadcast to it), a pure function
    of `seed` (follows `tf.random.stateless_gamma`); differentiable in alpha and beta."""
    dtype = dtypes.as_dtype(dtype)
    with graph_mod.name_scope(name, "stateless_random_gamma", [shape, seed, alpha, beta]):
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        beta = convert_to_tensor(1.0 if beta is None else beta, dtype=dtype, name="beta")
        shape = _shape(shape)
        full_alpha = broadcast_to(alpha, shape)
        sample = apply_op("StatelessRandomGammaV2", shape=shape, seed=_seed(seed),
                          alpha=full_alpha)
        return sample / beta


def stateless_random_poisson(shape: Any, seed: Any, lam: Any, dtype: Any = dtypes.int32,
                             name: str | None = None) -> Tensor:
    """Poisson(lam) samples of `shape`, a pure function of `seed` (follows
    `tf.random.stateless_poisson`)."""
    return apply_op("StatelessRandomPoisson", shape=_shape(shape), seed=_seed(seed),
                    lam=convert_to_tensor(lam, name="lam"), dtype=dtypes.as_dtype(dtype),
                    name=name)


def stateless_random_binomial(shape: Any, seed: Any, counts: Any, probs: Any,
                              output_dtype: Any = dtypes.int32,
                              name: str | None = None) -> Tensor:
    """Binomial(counts, probs) samples of `shape`, a pure function of `seed` (follows
    `tf.random.stateless_binomial`)."""
    probs = convert_to_tensor(probs, name="probs")
    return apply_op("StatelessRandomBinomial", shape=_shape(shape), seed=_seed(seed),
                    counts=convert_to_tensor(counts, probs.dtype), probs=probs,
                    dtype=dtypes.as_dtype(output_dtype), name=name)


def stateless_parameterized_truncated_normal(shape: Any, seed: Any, means: Any = 0.0,
                                             stddevs: Any = 1.0, minvals: Any = -2.0,
                                             maxvals: Any = 2.0,
                                             name: str | None = None) -> Tensor:
    """Normal(means, stddevs) samples conditioned on [minvals, maxvals], a pure function of
    `seed` (follows `tf.random.stateless_parameterized_truncated_normal`)."""
    means = convert_to_tensor(means, name="means")
    dt = means.dtype
    return apply_op("StatelessParameterizedTruncatedNormal", shape=_shape(shape),
                    seed=_seed(seed), means=means, stddevs=convert_to_tensor(stddevs, dt),
                    minvals=convert_to_tensor(minvals, dt),
                    maxvals=convert_to_tensor(maxvals, dt), name=name)


__all__ = ["random_crop", "random_gamma", "random_poisson"]
