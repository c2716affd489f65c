"""Wrappers of the Adadelta, proximal, AdagradDA and FTRL update ops (follows TF 1.x
`gen_training_ops`: `apply_adadelta`, `apply_proximal_adagrad`,
`apply_proximal_gradient_descent`, `apply_adagrad_da`, `apply_ftrl`, `apply_ftrl_v2` and
their `sparse_*` forms). Definitions in `framework/op_defs/training_extra.py`; the ops are
not differentiable.

Dense forms take the variable (and slots) as refs of a number type T, T scalars and
`grad: T` of the variable's shape; sparse forms take `grad: T [n, var.shape[1:]]` and
`indices: int32/int64 [n]` and update only those rows. Each returns the variable's ref.
Static shape mismatches raise ValueError; run-time ones `errors.InvalidArgumentError`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.op_defs import training_extra as _defs  # noqa: F401
from tensorweave.ops.gradients_impl import no_gradient
from tensorweave.ops.training_ops import apply_training_op, variable_ref

for _op in (
    "ApplyAdadelta",
    "ApplyProximalAdagrad",
    "ApplyAdagradDA",
    "ApplyFtrl",
    "ApplyFtrlV2",
    "ApplyProximalGradientDescent",
):
    no_gradient(_op)
    no_gradient(f"Sparse{_op}")
    no_gradient(f"Resource{_op}")
    no_gradient(f"ResourceSparse{_op}")
no_gradient("SdcaShrinkL1")


def apply_adadelta(
    var, accum, accum_update, lr, rho, epsilon, grad, use_locking=False, name=None
) -> Any:
    """Adadelta: `accum = rho * accum + (1 - rho) * grad**2`;
    `update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad`;
    `accum_update = rho * accum_update + (1 - rho) * update**2`; `var -= lr * update`."""
    return apply_training_op("ApplyAdadelta", locals())


def sparse_apply_adadelta(
    var, accum, accum_update, lr, rho, epsilon, grad, indices, use_locking=False, name=None
) -> Any:
    """`apply_adadelta` on the rows `indices`."""
    return apply_training_op("SparseApplyAdadelta", locals())


def apply_proximal_adagrad(var, accum, lr, l1, l2, grad, use_locking=False, name=None) -> Any:
    """`accum += grad**2`; `prox = var - lr * grad / sqrt(accum)`; then the L1/L2 proximal
    step `sign(prox) * max(|prox| - a * l1, 0) / (1 + a * l2)` with `a = lr / sqrt(accum)`."""
    return apply_training_op("ApplyProximalAdagrad", locals())


def sparse_apply_proximal_adagrad(
    var, accum, lr, l1, l2, grad, indices, use_locking=False, name=None
) -> Any:
    """`apply_proximal_adagrad` on the rows `indices`."""
    return apply_training_op("SparseApplyProximalAdagrad", locals())


def apply_proximal_gradient_descent(var, alpha, l1, l2, delta, use_locking=False, name=None) -> Any:
    """`prox = var - alpha * delta`; `var = sign(prox) * max(|prox| - alpha * l1, 0) /
    (1 + alpha * l2)`."""
    return apply_training_op("ApplyProximalGradientDescent", locals())


def sparse_apply_proximal_gradient_descent(
    var, alpha, l1, l2, grad, indices, use_locking=False, name=None
) -> Any:
    """`apply_proximal_gradient_descent` on the rows `indices`."""
    return apply_training_op("SparseApplyProximalGradientDescent", locals())


def apply_adagrad_da(
    var,
    gradient_accumulator,
    gradient_squared_accumulator,
    grad,
    lr,
    l1,
    l2,
    global_step,
    use_locking=False,
    name=None,
) -> Any:
    """Adagrad dual averaging: the accumulators add `grad` and `grad**2`; then
    `var = sign(-g) * max(|g| - l1 * t, 0) * lr / (l2 * t * lr + sqrt(gg))` (`g`, `gg` the
    accumulators, `t` the int64 `global_step`)."""
    return apply_training_op("ApplyAdagradDA", locals())


def sparse_apply_adagrad_da(
    var,
    gradient_accumulator,
    gradient_squared_accumulator,
    grad,
    indices,
    lr,
    l1,
    l2,
    global_step,
    use_locking=False,
    name=None,
) -> Any:
    """`apply_adagrad_da` on the rows `indices`."""
    return apply_training_op("SparseApplyAdagradDA", locals())


def apply_ftrl(
    var,
    accum,
    linear,
    grad,
    lr,
    l1,
    l2,
    lr_power,
    use_locking=False,
    name=None,
    multiply_linear_by_lr=False,
) -> Any:
    """FTRL-Proximal (McMahan et al. 2013): `new_accum = accum + grad**2`;
    `linear += grad - (new_accum**-p - accum**-p) / lr * var`; `var = (l1 * sign(linear) -
    linear) / (new_accum**-p / lr + 2 * l2)` where `|linear| > l1`, else 0 (`p` =
    `lr_power`)."""
    return apply_training_op("ApplyFtrl", locals())


def sparse_apply_ftrl(
    var,
    accum,
    linear,
    grad,
    indices,
    lr,
    l1,
    l2,
    lr_power,
    use_locking=False,
    name=None,
    multiply_linear_by_lr=False,
) -> Any:
    """`apply_ftrl` on the rows `indices`."""
    return apply_training_op("SparseApplyFtrl", locals())


def apply_ftrl_v2(
    var,
    accum,
    linear,
    grad,
    lr,
    l1,
    l2,
    l2_shrinkage,
    lr_power,
    use_locking=False,
    name=None,
    multiply_linear_by_lr=False,
) -> Any:
    """`apply_ftrl` with `linear` using `grad + 2 * l2_shrinkage * var` (the accumulator
    still sums the plain `grad**2`)."""
    return apply_training_op("ApplyFtrlV2", locals())


def sparse_apply_ftrl_v2(
    var,
    accum,
    linear,
    grad,
    indices,
    lr,
    l1,
    l2,
    l2_shrinkage,
    lr_power,
    use_locking=False,
    name=None,
    multiply_linear_by_lr=False,
) -> Any:
    """`apply_ftrl_v2` on the rows `indices`."""
    return apply_training_op("SparseApplyFtrlV2", locals())


def sdca_shrink_l1(weights: Any, l1: float, l2: float, name: str | None = None) -> Any:
    """`w = sign(w) * max(|w| - l1 / l2, 0)` in place on each float32 variable of `weights`.

    Follows `tf.train.sdca_shrink_l1` (the `SdcaShrinkL1` op); returns the op.
    """
    refs = [variable_ref(w) for w in weights]
    return apply_op("SdcaShrinkL1", weights=refs, l1=l1, l2=l2, name=name)
