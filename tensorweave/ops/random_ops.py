"""Stateful random ops and the graph/op seed rules.

Follows TF 1.x `random_ops` and `framework/random_seed`.

Every random op carries two int attrs, `seed` and `seed2`, derived by `get_seed` from the
graph-level seed (`tf.set_random_seed`) and the op-level `seed` argument. Both zero means
"nondeterministic": the kernel seeds itself from OS entropy. Otherwise the kernel's
generator is a pure function of the pair, and it restarts whenever a new kernel instance is
built (a new session), exactly as TensorFlow's Philox-based kernels do. The numbers
themselves differ from TensorFlow's: only the seeding contract is reproduced.

Distributions are built as TensorFlow builds them: a unit op (`RandomUniform`,
`RandomStandardNormal`, `TruncatedNormal`) scaled and shifted with math ops, so exported
GraphDefs have TensorFlow's structure and names (`random_normal/RandomStandardNormal`,
`random_normal/mul`, `random_normal`).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, dimension_value
from tensorweave.ops import math_ops
from tensorweave.ops.gradient_registry import no_gradient

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1


# ----------------------------------------------------------------------- shape functions


# TensorFlow declares all of these not differentiable (random_ops.py).
for _op_type in (
    "RandomUniform",
    "RandomStandardNormal",
    "TruncatedNormal",
    "RandomUniformInt",
    "RandomShuffle",
    "Multinomial",
):
    no_gradient(_op_type)


# ---------------------------------------------------------------------------- seeding
def _truncate_seed(seed: int) -> int:
    return seed % _MAXINT32


def get_seed(op_seed: int | None) -> tuple[int | None, int | None]:
    """The `(seed, seed2)` pair a random op should use (follows TF 1.x `tf.get_seed`).

    Rules, with `g` the default graph:
    * graph seed set, `op_seed` None: `(g.seed, g._last_id)`, so ops created in the same
      order in a graph with the same seed get the same sequences;
    * graph seed set, `op_seed` set: `(g.seed, op_seed)`;
    * graph seed None, `op_seed` set: `(87654321, op_seed)`;
    * neither: `(None, None)` (nondeterministic).

    Both values are reduced modulo 2**31 - 1, and `(0, 0)` becomes `(0, 2**31 - 1)`, since
    the kernels read `(0, 0)` as "nondeterministic".

    Args:
      op_seed: the op-level seed (int) or None.

    Returns:
      A pair of ints, or `(None, None)`.
    """
    graph = graph_mod.get_default_graph()
    global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = graph._last_id
        seeds: tuple[int | None, int | None] = (
            _truncate_seed(int(global_seed)),
            _truncate_seed(int(op_seed)),
        )
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, _truncate_seed(int(op_seed))
    else:
        seeds = None, None
    if seeds == (0, 0):
        return 0, _MAXINT32
    return seeds


def _seed_attrs(seed: int | None) -> dict[str, int]:
    seed1, seed2 = get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


def _shape_tensor(shape: Any) -> Tensor:
    """`shape` (list, tuple, TensorShape or 1-D int Tensor) as an int tensor named `shape`."""
    dtype = None
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    if isinstance(shape, list | tuple):
        if not shape:
            dtype = dtypes.int32
        else:
            shape = tuple(dimension_value(d) if not isinstance(d, Tensor) else d for d in shape)
    return convert_to_tensor(shape, dtype=dtype, name="shape")


# -------------------------------------------------------------------------- public API
def random_uniform(
    shape: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Uniform values in `[minval, maxval)` (follows TF 1.x `tf.random_uniform`).

    Floating dtypes use `RandomUniform` scaled to the range; integer dtypes use
    `RandomUniformInt` (slightly biased unless `maxval - minval` is a power of two, as in
    TensorFlow).

    Args:
      shape: 1-D int32/int64 tensor or Python list: the output shape.
      minval: lower bound (inclusive), scalar of `dtype`.
      maxval: upper bound (exclusive), scalar of `dtype`; defaults to 1 for floats.
      dtype: float16, float32, float64, int32 or int64.
      seed: op-level seed, see `get_seed`.
      name: name scope of the ops (default "random_uniform").

    Returns:
      A `Tensor` of `dtype` and `shape`.

    Raises:
      ValueError: for an unsupported dtype, or an integer dtype without `maxval`.
      errors.InvalidArgumentError: at run time, for integers when `minval >= maxval`.
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise ValueError(f"Invalid dtype {dtype!r}")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with graph_mod.name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape_t = _shape_tensor(shape)
        minval = convert_to_tensor(minval, dtype=dtype, name="min")
        maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        seeds = _seed_attrs(seed)
        if dtype.is_integer:
            return apply_op(
                "RandomUniformInt",
                shape=shape_t,
                minval=minval,
                maxval=maxval,
                name=scope,
                **seeds,
            )
        rnd = apply_op("RandomUniform", shape=shape_t, dtype=dtype, **seeds)
        return math_ops.add(rnd * (maxval - minval), minval, name=scope)


def _scaled_normal(
    op_type: str,
    default_name: str,
    shape: Any,
    mean: Any,
    stddev: Any,
    dtype: Any,
    seed: int | None,
    name: str | None,
) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    with graph_mod.name_scope(name, default_name, [shape, mean, stddev]) as scope:
        shape_t = _shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = apply_op(op_type, shape=shape_t, dtype=dtype, **_seed_attrs(seed))
        return math_ops.add(rnd * stddev_t, mean_t, name=scope)


def random_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Normal values of the given mean and stddev (follows TF 1.x `tf.random_normal`).

    Args:
      shape: 1-D int32/int64 tensor or Python list: the output shape.
      mean: scalar (or broadcastable tensor) of `dtype`.
      stddev: scalar (or broadcastable tensor) of `dtype`.
      dtype: float16, float32 or float64.
      seed: op-level seed, see `get_seed`.
      name: name scope of the ops (default "random_normal").

    Returns:
      A `Tensor` of `dtype` and `shape`.

    Raises:
      TypeError: for a non-floating dtype.
    """
    return _scaled_normal(
        "RandomStandardNormal", "random_normal", shape, mean, stddev, dtype, seed, name
    )


def truncated_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Normal values re-drawn beyond two stddevs (follows TF 1.x `tf.truncated_normal`).

    The result's standard deviation is about `0.88 * stddev`.

    Args:
      shape: 1-D int32/int64 tensor or Python list: the output shape.
      mean: scalar (or broadcastable tensor) of `dtype`.
      stddev: scalar (or broadcastable tensor) of `dtype`, before truncation.
      dtype: float16, float32 or float64.
      seed: op-level seed, see `get_seed`.
      name: name scope of the ops (default "truncated_normal").

    Returns:
      A `Tensor` of `dtype` and `shape`, every value in `(mean - 2 stddev, mean + 2 stddev)`.

    Raises:
      TypeError: for a non-floating dtype.
    """
    return _scaled_normal(
        "TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed, name
    )


def random_shuffle(value: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """`value` with its first dimension randomly permuted (follows `tf.random_shuffle`).

    Args:
      value: a tensor of any dtype; a scalar is returned unchanged.
      seed: op-level seed, see `get_seed`.
      name: op name (default "RandomShuffle").

    Returns:
      A `Tensor` of the dtype and shape of `value`.
    """
    return apply_op("RandomShuffle", value=value, name=name, **_seed_attrs(seed))


def multinomial(
    logits: Any,
    num_samples: Any,
    seed: int | None = None,
    name: str | None = None,
    output_dtype: Any = None,
) -> Tensor:
    """Class indices drawn from categorical distributions (follows `tf.multinomial`).

    Args:
      logits: `[batch_size, num_classes]` real tensor of unnormalized log-probabilities.
      num_samples: int32 scalar, samples per row.
      seed: op-level seed, see `get_seed`.
      name: name scope (default "multinomial").
      output_dtype: int32 or int64 (default int64).

    Returns:
      A `[batch_size, num_samples]` tensor of `output_dtype` with values in
      `[0, num_classes)`.

    Raises:
      ValueError: if `logits` is statically not a matrix.
      errors.InvalidArgumentError: at run time, for non-matrix logits, zero classes or a
        negative `num_samples`.
    """
    with graph_mod.name_scope(name, "multinomial", [logits]):
        logits = convert_to_tensor(logits, name="logits")
        return apply_op(
            "Multinomial",
            logits=logits,
            num_samples=num_samples,
            output_dtype=dtypes.as_dtype(output_dtype or dtypes.int64),
            **_seed_attrs(seed),
        )


__all__ = [
    "get_seed",
    "random_uniform",
    "random_normal",
    "truncated_normal",
    "random_shuffle",
    "multinomial",
]
