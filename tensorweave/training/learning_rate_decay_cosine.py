"""Cosine learning-rate schedules with restarts and linear decay (follows TF 1.x
`learning_rate_decay.py`: `cosine_decay_restarts`, `linear_cosine_decay`,
`noisy_linear_cosine_decay`).

`cosine_decay_restarts` chooses between the arithmetic and geometric restart formulas with
a `where` on `t_mul == 1` instead of TensorFlow's `tf.cond` (both are computed; the chosen
one is returned), with the same result.
"""

from __future__ import annotations

import math
from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.ops import array_ops, constant_op, math_ops, random_ops
from tensorweave.training.learning_rate_decay import _decay_inputs, _require_step_cosine


def _restart_step(fraction: Any, t_mul: Any) -> tuple[Any, Any]:
    """`(i_restart, fraction within the current period)` of SGDR."""
    arithmetic_i = math_ops.floor(fraction)
    arithmetic = (arithmetic_i, fraction - arithmetic_i)
    # Where t_mul == 1 the geometric formula divides by log(1): keep its inputs finite.
    one = math_ops.equal(t_mul, 1.0)
    safe_t = array_ops.where(one, 2.0 + 0.0 * t_mul, t_mul)
    geometric_i = math_ops.floor(
        math_ops.log(1.0 - fraction * (1.0 - safe_t)) / math_ops.log(safe_t)
    )
    sum_r = (1.0 - math_ops.pow(safe_t, geometric_i)) / (1.0 - safe_t)
    geometric_f = (fraction - sum_r) / math_ops.pow(safe_t, geometric_i)
    return (
        array_ops.where(one, arithmetic[0], geometric_i),
        array_ops.where(one, arithmetic[1], geometric_f),
    )


def cosine_decay_restarts(
    learning_rate: Any,
    global_step: Any,
    first_decay_steps: Any,
    t_mul: float = 2.0,
    m_mul: float = 1.0,
    alpha: float = 0.0,
    name: str | None = None,
) -> Any:
    """Cosine decay with warm restarts, SGDR (follows `tf.train.cosine_decay_restarts`).

    Period `i` lasts `first_decay_steps * t_mul**i` steps and starts from
    `learning_rate * m_mul**i`; within it the rate follows `cosine_decay` down to
    `alpha` times that start.

    Args:
      learning_rate: float scalar.
      global_step: integer scalar Tensor (or variable).
      first_decay_steps: the length of the first period, in steps.
      t_mul: the factor by which each period is longer than the previous one.
      m_mul: the factor by which each restart's rate is lower than the previous one.
      alpha: the minimum rate, as a fraction of `learning_rate`.
      name: name scope (default "SGDRDecay").

    Returns:
      A scalar of the learning rate's dtype.

    Raises:
      ValueError: if `global_step` is None.
    """
    _require_step_cosine(global_step)
    with graph_mod.name_scope(name, "SGDRDecay", [learning_rate, global_step]) as name:
        lr, dtype, step, steps = _decay_inputs(learning_rate, global_step, first_decay_steps)
        alpha_t = math_ops.cast(alpha, dtype)
        t_mul_t = math_ops.cast(t_mul, dtype)
        m_mul_t = math_ops.cast(m_mul, dtype)
        i_restart, fraction = _restart_step(step / steps, t_mul_t)
        m_fac = math_ops.pow(m_mul_t, i_restart)
        pi = constant_op.constant(math.pi, dtype=dtype)
        cosine = 0.5 * m_fac * (1.0 + math_ops.cos(pi * fraction))
        decayed = (1 - alpha_t) * cosine + alpha_t
        return math_ops.multiply(lr, decayed, name=name)


def _linear_cosine(step: Any, steps: Any, num_periods: Any, dtype: Any) -> tuple[Any, Any]:
    linear = (steps - step) / steps
    fraction = 2.0 * math_ops.cast(num_periods, dtype) * (step / steps)
    pi = constant_op.constant(math.pi, dtype=dtype)
    return linear, 0.5 * (1.0 + math_ops.cos(pi * fraction))


def linear_cosine_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    num_periods: float = 0.5,
    alpha: float = 0.0,
    beta: float = 0.001,
    name: str | None = None,
) -> Any:
    """Linear cosine decay (follows `tf.train.linear_cosine_decay`, Bello et al. 2017).

    With `s = min(global_step, decay_steps)`:
    `lr * ((alpha + (decay_steps - s) / decay_steps) * 0.5 * (1 + cos(2 pi num_periods s /
    decay_steps)) + beta)`. Scope default "LinearCosineDecay".

    Raises:
      ValueError: if `global_step` is None.
    """
    _require_step_cosine(global_step)
    with graph_mod.name_scope(name, "LinearCosineDecay", [learning_rate, global_step]) as name:
        lr, dtype, step, steps = _decay_inputs(learning_rate, global_step, decay_steps)
        step = math_ops.minimum(step, steps)
        linear, cosine = _linear_cosine(step, steps, num_periods, dtype)
        decayed = (math_ops.cast(alpha, dtype) + linear) * cosine + math_ops.cast(beta, dtype)
        return math_ops.multiply(lr, decayed, name=name)


def noisy_linear_cosine_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    initial_variance: float = 1.0,
    variance_decay: float = 0.55,
    num_periods: float = 0.5,
    alpha: float = 0.0,
    beta: float = 0.001,
    name: str | None = None,
) -> Any:
    """`linear_cosine_decay` with Gaussian noise on the linear term.

    Follows `tf.train.noisy_linear_cosine_decay`: the noise has variance
    `initial_variance / (1 + s) ** variance_decay`. Scope default
    "NoisyLinearCosineDecay".

    Raises:
      ValueError: if `global_step` is None.
    """
    _require_step_cosine(global_step)
    values = [learning_rate, global_step]
    with graph_mod.name_scope(name, "NoisyLinearCosineDecay", values) as name:
        lr, dtype, step, steps = _decay_inputs(learning_rate, global_step, decay_steps)
        step = math_ops.minimum(step, steps)
        linear, cosine = _linear_cosine(step, steps, num_periods, dtype)
        variance = math_ops.cast(initial_variance, dtype) / math_ops.pow(
            1.0 + step, math_ops.cast(variance_decay, dtype)
        )
        noise = random_ops.random_normal([], stddev=math_ops.sqrt(variance), dtype=dtype)
        decayed = (math_ops.cast(alpha, dtype) + linear + noise) * cosine
        return math_ops.multiply(lr, decayed + math_ops.cast(beta, dtype), name=name)


__all__ = ["cosine_decay_restarts", "linear_cosine_decay", "noisy_linear_cosine_decay"]
