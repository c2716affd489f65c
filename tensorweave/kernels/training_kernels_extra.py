"""Kernels of the Adadelta, proximal, AdagradDA and FTRL update ops.

They follow the CPU functors of TensorFlow's `core/kernels/training_ops.cc`, written as
element-wise rules over the variable and its slots and run by `training_kernels._kernel`
(dense and sparse, atomic, validated before anything is written).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework.op_defs.training_extra import APPLY_OP_TYPES_EXTRA
from tensorweave.kernels.registry import KernelNode, register_kernel
from tensorweave.kernels.resource_variable_kernels import register_resource_variant_kernels
from tensorweave.kernels.training_kernels import Rule, _kernel


def _shrink(prox: Any, step: Any, l1: Any, l2: Any) -> Any:
    """The L1/L2 proximal operator with step `step`."""
    if l1 > 0:
        return np.sign(prox) * np.maximum(np.abs(prox) - step * l1, 0) / (1 + step * l2)
    return prox / (1 + step * l2)


def _adadelta_rule(node: KernelNode) -> Rule:
    def rule(var, accum, accum_update, grad, lr, rho, epsilon):
        accum = accum * rho + grad * grad * (1 - rho)
        update = np.sqrt(accum_update + epsilon) / np.sqrt(accum + epsilon) * grad
        accum_update = accum_update * rho + update * update * (1 - rho)
        return var - update * lr, accum, accum_update

    return rule


def _proximal_adagrad_rule(node: KernelNode) -> Rule:
    def rule(var, accum, grad, lr, l1, l2):
        accum = accum + grad * grad
        step = lr / np.sqrt(accum)
        return _shrink(var - grad * step, step, l1, l2), accum

    return rule


def _proximal_gd_rule(node: KernelNode) -> Rule:
    def rule(var, delta, alpha, l1, l2):
        return (_shrink(var - alpha * delta, alpha, l1, l2),)

    return rule


def _adagrad_da_rule(node: KernelNode) -> Rule:
    def rule(var, g_acc, gg_acc, grad, lr, l1, l2, global_step):
        g_acc = g_acc + grad
        gg_acc = gg_acc + grad * grad
        t = global_step.astype(var.dtype)
        denominator = l2 * t * lr + np.sqrt(gg_acc)
        if l1 > 0:
            numerator = np.sign(-g_acc) * np.maximum(np.abs(g_acc) - l1 * t, 0)
        else:
            numerator = -g_acc
        return numerator * lr / denominator, g_acc, gg_acc

    return rule


def _ftrl_update(var, accum, linear, grad, linear_grad, lr, l1, l2, lr_power):
    new_accum = accum + grad * grad
    if lr_power == -0.5:
        sigma = (np.sqrt(new_accum) - np.sqrt(accum)) / lr
        y = np.sqrt(new_accum) / lr + 2 * l2
    else:
        sigma = (np.power(new_accum, -lr_power) - np.power(accum, -lr_power)) / lr
        y = np.power(new_accum, -lr_power) / lr + 2 * l2
    linear = linear + linear_grad - sigma * var
    shrunk = (np.clip(linear, -l1, l1) - linear) / y
    new_var = np.where(np.abs(linear) > l1, shrunk, np.zeros_like(shrunk))
    return new_var, new_accum, linear


def _ftrl_rule(node: KernelNode) -> Rule:
    if node.attrs.get("multiply_linear_by_lr", False):
        raise NotImplementedError("ApplyFtrl with multiply_linear_by_lr=True")

    def rule(var, accum, linear, grad, lr, l1, l2, lr_power):
        return _ftrl_update(var, accum, linear, grad, grad, lr, l1, l2, lr_power)

    return rule


def _ftrl_v2_rule(node: KernelNode) -> Rule:
    if node.attrs.get("multiply_linear_by_lr", False):
        raise NotImplementedError("ApplyFtrlV2 with multiply_linear_by_lr=True")

    def rule(var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power):
        shrunk_grad = grad + 2 * l2_shrinkage * var
        return _ftrl_update(var, accum, linear, grad, shrunk_grad, lr, l1, l2, lr_power)

    return rule


_ADADELTA = ("var", "accum", "accum_update")
_DA = ("var", "gradient_accumulator", "gradient_squared_accumulator")
_FTRL = ("var", "accum", "linear")
_FTRL_SCALARS = ("lr", "l1", "l2", "lr_power")
_FTRL_V2_SCALARS = ("lr", "l1", "l2", "l2_shrinkage", "lr_power")
_DA_SCALARS = ("lr", "l1", "l2", "global_step")

register_kernel("ApplyAdadelta")(
    _kernel(_ADADELTA, ("lr", "rho", "epsilon", "grad"), _adadelta_rule)
)
register_kernel("SparseApplyAdadelta")(
    _kernel(_ADADELTA, ("lr", "rho", "epsilon", "grad", "indices"), _adadelta_rule)
)
register_kernel("ApplyProximalAdagrad")(
    _kernel(("var", "accum"), ("lr", "l1", "l2", "grad"), _proximal_adagrad_rule)
)
register_kernel("SparseApplyProximalAdagrad")(
    _kernel(("var", "accum"), ("lr", "l1", "l2", "grad", "indices"), _proximal_adagrad_rule)
)
register_kernel("ApplyProximalGradientDescent")(
    _kernel(("var",), ("alpha", "l1", "l2", "grad"), _proximal_gd_rule)
)
register_kernel("SparseApplyProximalGradientDescent")(
    _kernel(("var",), ("alpha", "l1", "l2", "grad", "indices"), _proximal_gd_rule)
)
register_kernel("ApplyAdagradDA")(_kernel(_DA, ("grad", *_DA_SCALARS), _adagrad_da_rule))
register_kernel("SparseApplyAdagradDA")(
    _kernel(_DA, ("grad", "indices", *_DA_SCALARS), _adagrad_da_rule)
)
register_kernel("ApplyFtrl")(_kernel(_FTRL, ("grad", *_FTRL_SCALARS), _ftrl_rule))
register_kernel("SparseApplyFtrl")(_kernel(_FTRL, ("grad", "indices", *_FTRL_SCALARS), _ftrl_rule))
register_kernel("ApplyFtrlV2")(_kernel(_FTRL, ("grad", *_FTRL_V2_SCALARS), _ftrl_v2_rule))
register_kernel("SparseApplyFtrlV2")(
    _kernel(_FTRL, ("grad", "indices", *_FTRL_V2_SCALARS), _ftrl_v2_rule)
)


@register_kernel("SdcaShrinkL1")
def _sdca_shrink_l1(node: KernelNode) -> Any:
    shrinkage = float(node.attrs["l1"]) / float(node.attrs["l2"])

    def shrink(w: Any) -> Any:
        return (np.sign(w) * np.maximum(np.abs(w) - shrinkage, 0)).astype(w.dtype)

    def compute(ctx: Any, *weights: Any) -> None:
        for var in weights:
            ctx.update(var, shrink)

    return compute


register_resource_variant_kernels(APPLY_OP_TYPES_EXTRA)
