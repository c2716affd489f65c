"""Learning-rate schedules of the global step (follows TF 1.x `learning_rate_decay.py`).

Each function returns a float scalar Tensor of the learning rate's dtype, computed from the
(integer) `global_step` tensor at run time, in a name scope named after the schedule
(`ExponentialDecay`, `PiecewiseConstant`, ...); the result op carries that scope's name.
`piecewise_constant` selects with comparisons and a `gather` instead of TensorFlow's
`tf.case` (tensorweave has no control-flow ops), with the same result.
"""

from __future__ import annotations

import math
from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_n_to_tensor, convert_to_tensor
from tensorweave.ops import array_ops, constant_op, math_ops


def _require_step(global_step: Any, fn: str) -> None:
    if global_step is None:
        raise ValueError(f"global_step is required for {fn}.")


def _require_step_cosine(global_step: Any) -> None:
    if global_step is None:
        raise ValueError("cosine decay requires global_step")


def _decay_inputs(learning_rate: Any, global_step: Any, decay_steps: Any) -> tuple[Any, ...]:
    learning_rate = convert_to_tensor(learning_rate, name="learning_rate")
    dtype = learning_rate.dtype
    return (
        learning_rate,
        dtype,
        math_ops.cast(global_step, dtype),
        math_ops.cast(decay_steps, dtype),
    )


def exponential_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Any:
    """`learning_rate * decay_rate ** (global_step / decay_steps)` (`tf.train.exponential_decay`).

    Args:
      learning_rate: float scalar (Tensor or number), the initial rate.
      global_step: integer scalar Tensor/Variable, the step; must not be None.
      decay_steps: positive number of steps per decay period.
      decay_rate: the decay per period.
      staircase: floor the exponent (decay in discrete intervals).
      name: name scope (default "ExponentialDecay").

    Raises:
      ValueError: if `global_step` is None.
    """
    _require_step(global_step, "exponential_decay")
    values = [learning_rate, global_step, decay_steps, decay_rate]
    with graph_mod.name_scope(name, "ExponentialDecay", values) as name:
        lr, dtype, step, steps = _decay_inputs(learning_rate, global_step, decay_steps)
        decay_rate = math_ops.cast(decay_rate, dtype)
        p = step / steps
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(lr, math_ops.pow(decay_rate, p), name=name)


def piecewise_constant(x: Any, boundaries: list[Any], values: list[Any], name: str | None = None):
    """`values[i]` for `boundaries[i-1] < x <= boundaries[i]` (`tf.train.piecewise_constant`).

    `values[0]` applies for `x <= boundaries[0]`, `values[-1]` for `x > boundaries[-1]`.

    Args:
      x: scalar Tensor (e.g. the global step).
      boundaries: increasing numbers or scalar Tensors of `x`'s dtype (int32 boundaries are
        promoted for an int64 `x`).
      values: one more entry than `boundaries`, all of one dtype.
      name: name scope (default "PiecewiseConstant").

    Returns:
      A scalar Tensor of the values' dtype.

    Raises:
      ValueError: if the lengths do not match or the dtypes differ.
    """
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with graph_mod.name_scope(name, "PiecewiseConstant", [x, boundaries, values, name]) as name:
        x = convert_to_tensor(x)
        base = x.dtype.base_dtype
        boundaries = convert_n_to_tensor(boundaries)
        for i, b in enumerate(boundaries):
            if b.dtype.base_dtype != base:
                if b.dtype.base_dtype == dtypes.int32 and base == dtypes.int64:
                    boundaries[i] = math_ops.cast(b, base)
                else:
                    raise ValueError(
                        f"Boundaries ({b.dtype.base_dtype}) must have the same dtype as x ({base})."
                    )
        values = convert_n_to_tensor(values)
        for v in values[1:]:
            if v.dtype.base_dtype != values[0].dtype.base_dtype:
                raise ValueError(
                    "Values must have elements all with the same dtype "
                    f"({values[0].dtype.base_dtype} vs {v.dtype.base_dtype})."
                )
        # NOTE: the index of the interval is the number of boundaries strictly below x.
        index = (
            math_ops.add_n(
                [math_ops.cast(math_ops.greater(x, b), dtypes.int32) for b in boundaries]
            )
            if boundaries
            else 0
        )
        return array_ops.gather(array_ops.stack(values), index, name=name)


def polynomial_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    end_learning_rate: Any = 0.0001,
    power: Any = 1.0,
    cycle: bool = False,
    name: str | None = None,
) -> Any:
    """Polynomial decay to `end_learning_rate` over `decay_steps` (`polynomial_decay`).

    `(learning_rate - end_learning_rate) * (1 - step / decay_steps) ** power +
    end_learning_rate`, with `step = min(global_step, decay_steps)`; with `cycle`, the
    period instead grows to the first multiple of `decay_steps` above `global_step`.

    Raises:
      ValueError: if `global_step` is None.
    """
    _require_step(global_step, "polynomial_decay")
    values = [learning_rate, global_step, decay_steps, end_learning_rate, power]
    with graph_mod.name_scope(name, "PolynomialDecay", values) as name:
        lr, dtype, step, steps = _decay_inputs(learning_rate, global_step, decay_steps)
        end_lr = math_ops.cast(end_learning_rate, dtype)
        power = math_ops.cast(power, dtype)
        if cycle:
            # NOTE: max(ceil(step / steps), 1) is TF's cond(step == 0, 1, ceil(...)) for
            # non-negative steps.
            multiplier = math_ops.maximum(math_ops.ceil(step / steps), 1.0)
            steps = math_ops.multiply(steps, multiplier)
        else:
            step = math_ops.minimum(step, steps)
        p = math_ops.divide(step, steps)
        return math_ops.add(
            math_ops.multiply(lr - end_lr, math_ops.pow(1 - p, power)), end_lr, name=name
        )


def natural_exp_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Any:
    """`learning_rate * exp(-decay_rate * global_step / decay_steps)` (`natural_exp_decay`).

    Raises:
      ValueError: if `global_step` is None.
    """
    _require_step(global_step, "natural_exp_decay")
    values = [learning_rate, global_step, decay_rate]
    with graph_mod.name_scope(name, "NaturalExpDecay", values) as name:
        lr, dtype, step, steps = _decay_inputs(learning_rate, global_step, decay_steps)
        decay_rate = math_ops.cast(decay_rate, dtype)
        p = step / steps
        if staircase:
            p = math_ops.floor(p)
        exponent = math_ops.exp(math_ops.multiply(math_ops.negative(decay_rate), p))
        return math_ops.multiply(lr, exponent, name=name)


def inverse_time_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Any:
    """`learning_rate / (1 + decay_rate * global_step / decay_steps)` (`inverse_time_decay`).

    Raises:
      ValueError: if `global_step` is None.
    """
    _require_step(global_step, "inverse_time_decay")
    values = [learning_rate, global_step, decay_rate]
    with graph_mod.name_scope(name, "InverseTimeDecay", values) as name:
        lr, dtype, step, steps = _decay_inputs(learning_rate, global_step, decay_steps)
        decay_rate = math_ops.cast(decay_rate, dtype)
        p = step / steps
        if staircase:
            p = math_ops.floor(p)
        const = math_ops.cast(constant_op.constant(1), dtype)
        denom = math_ops.add(const, math_ops.multiply(decay_rate, p))
        return math_ops.divide(lr, denom, name=name)


def cosine_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    alpha: Any = 0.0,
    name: str | None = None,
) -> Any:
    """Cosine decay from `learning_rate` to `alpha * learning_rate` (`tf.train.cosine_decay`).

    `learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * step / decay_steps)) + alpha)` with
    `step = min(global_step, decay_steps)` (Loshchilov and Hutter, SGDR).

    Raises:
      ValueError: if `global_step` is None.
    """
    _require_step_cosine(global_step)
    values = [learning_rate, global_step]
    with graph_mod.name_scope(name, "CosineDecay", values) as name:
        lr, dtype, step, steps = _decay_inputs(learning_rate, global_step, decay_steps)
        step = math_ops.minimum(step, steps)
        completed_fraction = step / steps
        pi = constant_op.constant(math.pi, dtype=dtype)
        cosine_decayed = 0.5 * (1.0 + math_ops.cos(pi * completed_fraction))
        decayed = (1 - alpha) * cosine_decayed + alpha
        return math_ops.multiply(lr, decayed, name=name)


__all__ = [
    "cosine_decay",
    "exponential_decay",
    "inverse_time_decay",
    "natural_exp_decay",
    "piecewise_constant",
    "polynomial_decay",
]
