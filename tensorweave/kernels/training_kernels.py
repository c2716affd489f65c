"""Kernels of the optimizer update ops (`Apply*`, `SparseApply*`).

They follow the CPU functors of TensorFlow's `core/kernels/training_ops.cc`.

Each update formula is written once, element-wise, as a function `rule(*old_values, grad)
-> new_values` (variable first, then its slots); dense kernels apply it to whole arrays,
sparse kernels to the gathered rows. Variables change only through `StepContext.update`:
the variable's lock is taken first, then each slot's in input order, so one apply is atomic
with respect to other applies on the same variable, and a failed step restores them all.
Validation happens before anything is written, with TensorFlow's messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.framework.op_defs.training import APPLY_OP_TYPES
from tensorweave.framework.resource_mgr import Var
from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels.registry import KernelNode, invalid, register_compute, register_kernel
from tensorweave.kernels.resource_variable_kernels import register_resource_variant_kernels

Rule = Callable[..., tuple[Any, ...]]


# ---------------------------------------------------------------------- validation
def _check_scalars(names: tuple[str, ...], values: list[Any]) -> None:
    for name, value in zip(names, values):
        if value.ndim:
            raise invalid(f"{name} is not a scalar: {shape_str(value.shape)}")


def _check_same_shape(olds: tuple[Any, ...], names: tuple[str, ...], grad: Any) -> None:
    var = olds[0]
    for old, name in zip(olds[1:], names[1:]):
        if old.shape != var.shape:
            raise invalid(
                f"var and {name} do not have the same shape"
                f"{shape_str(var.shape)} {shape_str(old.shape)}"
            )
    if grad.shape != var.shape:
        raise invalid(
            f"var and grad do not have the same shape{shape_str(var.shape)} {shape_str(grad.shape)}"
        )


def _check_sparse(olds: tuple[Any, ...], names: tuple[str, ...], grad: Any, indices: Any) -> None:
    var = olds[0]
    for old, name in zip(olds[1:], names[1:]):
        if old.shape != var.shape:
            raise invalid(
                f"var and {name} do not have the same shape"
                f"{shape_str(var.shape)} {shape_str(old.shape)}"
            )
    if var.ndim < 1:
        raise invalid("var must be at least 1 dimensional")
    if indices.ndim != 1:
        raise invalid("indices must be one-dimensional")
    if grad.ndim != var.ndim:
        raise invalid(
            f"var and grad do not have the same rank: {shape_str(var.shape)} "
            f"{shape_str(grad.shape)}"
        )
    for d in range(1, var.ndim):
        if var.shape[d] != grad.shape[d]:
            raise invalid(f"var and grad must match in dimension {d}")
    if grad.shape[0] != indices.shape[0]:
        raise invalid("grad must be the same size as indices in the first dimension.")
    bad = np.nonzero((indices < 0) | (indices >= var.shape[0]))[0]
    if bad.size:
        i = int(bad[0])
        raise invalid(f"Index {int(indices[i])} at offset {i} in indices is out of range")


# ------------------------------------------------------------------------ updates
def _update_all(ctx: Any, refs: tuple[Var, ...], fn: Callable[..., Any]) -> None:
    """Atomically replaces the values of `refs` with `fn(*old_values)`.

    Nests one `ctx.update` per ref (locks taken in `refs` order), so `fn` sees a consistent
    snapshot and nothing is written when it raises.

    Raises:
      InvalidArgumentError: if a variable is passed twice (its lock is not reentrant).
      FailedPreconditionError: if a variable is uninitialized.
    """
    n = len(refs)
    if len(set(refs)) != n:
        raise invalid("The variable and its slots must be distinct variables")
    olds: list[Any] = [None] * n
    news: list[Any] = []

    def at(i: int) -> Callable[[Any], Any]:
        def update(old: Any) -> Any:
            olds[i] = old
            if i + 1 < n:
                ctx.update(refs[i + 1], at(i + 1))
            else:
                news.extend(fn(*olds))
            new = news[i]
            # NOTE: keep the variable's dtype (e.g. integer variables with float formulas).
            if new.dtype is old.dtype or new.dtype == old.dtype:
                return new
            return new.astype(old.dtype)

        return update

    ctx.update(refs[0], at(0))


def _kernel(
    names: tuple[str, ...], layout: tuple[str, ...], make_rule: Callable[[KernelNode], Rule]
) -> Callable[[KernelNode], Any]:
    """A builder for `Apply<X>` / `SparseApply<X>`.

    The op's inputs are the refs `names` (var first), then `layout`: the scalar
    hyper-parameters, "grad" and, for sparse ops, "indices", in the op's order. The rule is
    called as `rule(*old_values, grad, *scalars)`, scalars in `layout` order.
    """
    n_refs = len(names)
    g = n_refs + layout.index("grad")
    scalar_names = tuple(x for x in layout if x not in ("grad", "indices"))
    scalar_pos = tuple(n_refs + k for k, x in enumerate(layout) if x in scalar_names)
    if "indices" in layout:
        return _sparse_builder(
            names, make_rule, g, n_refs + layout.index("indices"), scalar_names, scalar_pos
        )

    def builder(node: KernelNode) -> Any:
        rule = make_rule(node)

        def compute(ctx: Any, *inputs: Any) -> Var:
            params = [inputs[k] for k in scalar_pos]
            for p in params:
                if p.ndim:
                    _check_scalars(scalar_names, params)
            grad = inputs[g]
            shape = grad.shape

            def fn(*olds: Any) -> tuple[Any, ...]:
                for old in olds:
                    if old.shape != shape:
                        _check_same_shape(olds, names, grad)
                return rule(*olds, grad, *params)

            _update_all(ctx, inputs[:n_refs], fn)
            return inputs[0]

        return compute

    return builder


def _sparse_builder(
    names: tuple[str, ...],
    make_rule: Callable[[KernelNode], Rule],
    g: int,
    i: int,
    scalar_names: tuple[str, ...],
    scalar_pos: tuple[int, ...],
) -> Callable[[KernelNode], Any]:
    n_refs = len(names)

    def builder(node: KernelNode) -> Any:
        rule = make_rule(node)

        def compute(ctx: Any, *inputs: Any) -> Var:
            params = [inputs[k] for k in scalar_pos]
            _check_scalars(scalar_names, params)
            grad = inputs[g]
            indices = np.asarray(inputs[i])

            def fn(*olds: Any) -> list[Any]:
                _check_sparse(olds, names, grad, indices)
                return _sparse_rows(rule, olds, grad, indices, params)

            _update_all(ctx, inputs[:n_refs], fn)
            return inputs[0]

        return compute

    return builder


def _sparse_rows(
    rule: Rule, olds: tuple[Any, ...], grad: Any, indices: Any, params: list[Any]
) -> list[Any]:
    if indices.size == 0:
        return list(olds)
    news = [old.copy() for old in olds]
    if np.unique(indices).size == indices.size:
        rows = rule(*(old[indices] for old in olds), grad, *params)
        for new, row in zip(news, rows):
            new[indices] = row
        return news
    # Duplicate indices: one row at a time, in order, as TensorFlow's CPU kernels do.
    for k, j in enumerate(indices.tolist()):
        rows = rule(*(new[j] for new in news), grad[k], *params)
        for new, row in zip(news, rows):
            new[j] = row
    return news


# -------------------------------------------------------------------------- rules
# NOTE: rules may modify in place only the temporaries they create, and only with operands
# of their own dtype (divisions and square roots allocate: integer T promotes to float).
def _momentum_rule(node: KernelNode) -> Rule:
    nesterov = bool(node.attrs.get("use_nesterov", False))

    def rule(var: Any, accum: Any, grad: Any, lr: Any, momentum: Any) -> tuple[Any, Any]:
        accum = accum * momentum
        accum += grad
        if nesterov:
            step = grad * lr
            step += accum * momentum * lr
        else:
            step = accum * lr
        return var - step, accum

    return rule


def _adagrad_rule(node: KernelNode) -> Rule:
    update_slots = bool(node.attrs.get("update_slots", True))

    def rule(var: Any, accum: Any, grad: Any, lr: Any) -> tuple[Any, Any]:
        if update_slots:
            squared = grad * grad
            squared += accum
            accum = squared
        return var - grad * lr / np.sqrt(accum), accum

    return rule


def _adam_rule(node: KernelNode) -> Rule:
    nesterov = bool(node.attrs.get("use_nesterov", False))

    def rule(
        var: Any,
        m: Any,
        v: Any,
        grad: Any,
        beta1_power: Any,
        beta2_power: Any,
        lr: Any,
        beta1: Any,
        beta2: Any,
        epsilon: Any,
    ) -> tuple[Any, Any, Any]:
        alpha = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
        new_m = grad - m
        new_m *= 1 - beta1
        new_m += m
        new_v = grad * grad
        new_v -= v
        new_v *= 1 - beta2
        new_v += v
        if nesterov:
            step = grad * (1 - beta1)
            step += beta1 * new_m
        else:
            step = new_m
        return var - step * alpha / (np.sqrt(new_v) + epsilon), new_m, new_v

    return rule


def _mean_square(ms: Any, grad: Any, rho: Any) -> Any:
    new_ms = grad * grad
    new_ms -= ms
    new_ms *= 1 - rho
    new_ms += ms
    return new_ms


def _rms_prop_rule(node: KernelNode) -> Rule:
    def rule(
        var: Any, ms: Any, mom: Any, grad: Any, lr: Any, rho: Any, momentum: Any, epsilon: Any
    ) -> tuple[Any, Any, Any]:
        ms = _mean_square(ms, grad, rho)
        mom = mom * momentum + grad * lr / np.sqrt(ms + epsilon)
        return var - mom, ms, mom

    return rule


def _centered_rms_prop_rule(node: KernelNode) -> Rule:
    def rule(
        var: Any,
        mg: Any,
        ms: Any,
        mom: Any,
        grad: Any,
        lr: Any,
        rho: Any,
        momentum: Any,
        epsilon: Any,
    ) -> tuple[Any, Any, Any, Any]:
        ms = _mean_square(ms, grad, rho)
        new_mg = grad - mg
        new_mg *= 1 - rho
        new_mg += mg
        mom = mom * momentum + grad * lr / np.sqrt(ms - new_mg * new_mg + epsilon)
        return var - mom, new_mg, ms, mom

    return rule


# ------------------------------------------------------------------- registrations
@register_compute("ApplyGradientDescent")
def _apply_gradient_descent(ctx: Any, var: Var, alpha: Any, delta: Any) -> Var:
    # The hot path of SGD: one temporary, reused as the result.
    if alpha.ndim:
        raise invalid(f"alpha is not a scalar: {shape_str(alpha.shape)}")

    def fn(old: Any) -> Any:
        if old.shape != delta.shape:
            raise invalid(
                "var and delta do not have the same shape"
                f"{shape_str(old.shape)} {shape_str(delta.shape)}"
            )
        step = delta * alpha
        if type(step) is np.ndarray and step.dtype == old.dtype:
            return np.subtract(old, step, out=step)
        new = old - step
        return new if new.dtype == old.dtype else new.astype(old.dtype)

    ctx.update(var, fn)
    return var


_MOMENTUM = ("var", "accum")
_RMS = ("var", "ms", "mom")
_CENTERED = ("var", "mg", "ms", "mom")
_RMS_SCALARS = ("lr", "rho", "momentum", "epsilon")
_ADAM_SCALARS = ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon")

register_kernel("ApplyMomentum")(_kernel(_MOMENTUM, ("lr", "grad", "momentum"), _momentum_rule))
register_kernel("SparseApplyMomentum")(
    _kernel(_MOMENTUM, ("lr", "grad", "indices", "momentum"), _momentum_rule)
)
register_kernel("ApplyAdagrad")(_kernel(_MOMENTUM, ("lr", "grad"), _adagrad_rule))
register_kernel("SparseApplyAdagrad")(_kernel(_MOMENTUM, ("lr", "grad", "indices"), _adagrad_rule))
register_kernel("ApplyAdam")(_kernel(("var", "m", "v"), (*_ADAM_SCALARS, "grad"), _adam_rule))
register_kernel("ApplyRMSProp")(_kernel(_RMS, (*_RMS_SCALARS, "grad"), _rms_prop_rule))
register_kernel("SparseApplyRMSProp")(
    _kernel(_RMS, (*_RMS_SCALARS, "grad", "indices"), _rms_prop_rule)
)
register_kernel("ApplyCenteredRMSProp")(
    _kernel(_CENTERED, (*_RMS_SCALARS, "grad"), _centered_rms_prop_rule)
)
register_kernel("SparseApplyCenteredRMSProp")(
    _kernel(_CENTERED, (*_RMS_SCALARS, "grad", "indices"), _centered_rms_prop_rule)
)

register_resource_variant_kernels(APPLY_OP_TYPES)
