"""Optimizer update ops on reference variables (TF 1.x `training_ops`).

`ApplyGradientDescent`, `ApplyMomentum`, `ApplyAdagrad`, `ApplyAdam`, `ApplyRMSProp`,
`ApplyCenteredRMSProp` and the sparse `SparseApplyMomentum`, `SparseApplyAdagrad`,
`SparseApplyRMSProp`, `SparseApplyCenteredRMSProp`. Follows TF 1.x
`core/ops/training_ops.cc` and the generated `gen_training_ops` wrappers: same op types,
input and attr names, defaults and static shape checks. Each op takes the variable (and its
slots) as `Ref(T)` inputs, updates them in place and outputs the variable's ref. The ops are
not differentiable. Sparse ops update only the rows named by `indices` (`indices: Tindices
[n]`, `grad: T [n, ...]`); duplicate indices are applied one after the other, as
TensorFlow's CPU kernels do (optimizers sum them first).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.op_def import get_op_def
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.op_defs.training import APPLY_OP_TYPES
from tensorweave.ops.gradient_registry import no_gradient

for _op_type in APPLY_OP_TYPES:
    no_gradient(_op_type)
    no_gradient("Resource" + _op_type)


# ------------------------------------------------------------------------ wrappers
def variable_ref(v: Any) -> Any:
    """A variable's ref tensor, or a resource variable's handle."""
    return v._ref() if hasattr(v, "_ref") else v


def apply_training_op(op_type: str, args: dict[str, Any]) -> Any:
    """Adds `op_type` for a `gen_training_ops`-style wrapper's arguments (its `locals()`).

    The op's `Ref(T)` inputs (the variable and its slots, from its definition) take the
    variables' refs; a resource variable's handle selects the `Resource` variant (no output).
    """
    refs = {arg.name for arg in get_op_def(op_type).inputs if arg.is_ref}
    inputs = {k: variable_ref(v) if k in refs else v for k, v in args.items()}
    var = inputs["var"]
    if getattr(var, "dtype", None) is not None and var.dtype.base_dtype == dtypes.resource:
        op_type = "Resource" + op_type
    return apply_op(op_type, **inputs)


def apply_gradient_descent(
    var: Any, alpha: Any, delta: Any, use_locking: bool = False, name: str | None = None
) -> Any:
    """`var -= alpha * delta` (follows `gen_training_ops.apply_gradient_descent`).

    Args:
      var: a variable (ref) of a number type T, any shape.
      alpha: T scalar, the learning rate.
      delta: T, the shape of `var`.
      use_locking: accepted for compatibility; updates are always atomic here.
      name: op name.

    Returns:
      The ref of `var` after the update (for a resource variable: the update op).

    Raises:
      ValueError: for statically incompatible shapes or a non-scalar `alpha`.
      errors.InvalidArgumentError: at run time, "var and delta do not have the same shape".
    """
    return apply_training_op("ApplyGradientDescent", locals())


def apply_momentum(
    var: Any,
    accum: Any,
    lr: Any,
    grad: Any,
    momentum: Any,
    use_locking: bool = False,
    use_nesterov: bool = False,
    name: str | None = None,
) -> Any:
    """`accum = accum * momentum + grad; var -= lr * accum` (follows `apply_momentum`).

    With `use_nesterov`: `var -= lr * grad + lr * momentum * accum`. `var`, `accum`: refs of
    T with one shape; `lr`, `momentum`: T scalars; `grad`: T like `var`.
    """
    return apply_training_op("ApplyMomentum", locals())


def sparse_apply_momentum(
    var: Any,
    accum: Any,
    lr: Any,
    grad: Any,
    indices: Any,
    momentum: Any,
    use_locking: bool = False,
    use_nesterov: bool = False,
    name: str | None = None,
) -> Any:
    """`apply_momentum` on the rows `indices` of `var` (follows `sparse_apply_momentum`).

    `indices`: int32/int64 [n]; `grad`: T [n, var.shape[1:]].
    """
    return apply_training_op("SparseApplyMomentum", locals())


def apply_adagrad(
    var: Any,
    accum: Any,
    lr: Any,
    grad: Any,
    use_locking: bool = False,
    update_slots: bool = True,
    name: str | None = None,
) -> Any:
    """`accum += grad ** 2; var -= lr * grad / sqrt(accum)` (follows `apply_adagrad`).

    `update_slots=False` leaves `accum` unchanged.
    """
    return apply_training_op("ApplyAdagrad", locals())


def sparse_apply_adagrad(
    var: Any,
    accum: Any,
    lr: Any,
    grad: Any,
    indices: Any,
    use_locking: bool = False,
    update_slots: bool = True,
    name: str | None = None,
) -> Any:
    """`apply_adagrad` on the rows `indices` of `var` and `accum` (`sparse_apply_adagrad`)."""
    return apply_training_op("SparseApplyAdagrad", locals())


def apply_adam(
    var: Any,
    m: Any,
    v: Any,
    beta1_power: Any,
    beta2_power: Any,
    lr: Any,
    beta1: Any,
    beta2: Any,
    epsilon: Any,
    grad: Any,
    use_locking: bool = False,
    use_nesterov: bool = False,
    name: str | None = None,
) -> Any:
    """One Adam step (follows `apply_adam`)::

        lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
        m += (grad - m) * (1 - beta1);  v += (grad ** 2 - v) * (1 - beta2)
        var -= lr_t * m / (sqrt(v) + epsilon)

    (Nesterov: `m` replaced by `beta1 * m + (1 - beta1) * grad` in the last line). All
    scalars are T scalars; `m`, `v` are refs shaped like `var`.
    """
    return apply_training_op("ApplyAdam", locals())


def apply_rms_prop(
    var: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Any:
    """One RMSProp step (follows `apply_rms_prop`).

    `ms += (grad ** 2 - ms) * (1 - rho); mom = mom * momentum + lr * grad / sqrt(ms +
    epsilon); var -= mom`.
    """
    return apply_training_op("ApplyRMSProp", locals())


def sparse_apply_rms_prop(
    var: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
    indices: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Any:
    """`apply_rms_prop` on the rows `indices` (follows `sparse_apply_rms_prop`)."""
    return apply_training_op("SparseApplyRMSProp", locals())


def apply_centered_rms_prop(
    var: Any,
    mg: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Any:
    """One centered RMSProp step (follows `apply_centered_rms_prop`).

    `mg += (grad - mg) * (1 - rho)`, `ms` as in RMSProp, `mom = mom * momentum + lr * grad /
    sqrt(ms - mg ** 2 + epsilon)`, `var -= mom`.
    """
    return apply_training_op("ApplyCenteredRMSProp", locals())


def sparse_apply_centered_rms_prop(
    var: Any,
    mg: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
    indices: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Any:
    """`apply_centered_rms_prop` on the rows `indices` (`sparse_apply_centered_rms_prop`)."""
    return apply_training_op("SparseApplyCenteredRMSProp", locals())


# NOTE: like TensorFlow's `gen_training_ops`, none of these is exported at the top level.
__all__: list[str] = []
