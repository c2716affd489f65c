"""Kernels of variables and their updates.

Variable values are read-only arrays replaced on every update (see
`framework.resource_mgr.Var`), so updates are atomic and undoable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.resource_mgr import Var
from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel


@register_kernel("VariableV2")
def variable_lookup(node: KernelNode) -> Any:
    """The compute function of a variable-creating node (`VariableV2`, `VarHandleOp`): looks
    up or creates its `Var` in the device's resource manager, cached per generation."""
    container = node.attrs.get("container", "")
    name = node.attrs.get("shared_name") or node.name
    shape = node.attrs.get("shape")
    cache: list[Any] = [None, -1, None]  # resource manager, its generation, the Var

    def compute(ctx: Any) -> Var:
        rm = ctx.resource_mgr
        if cache[0] is rm and cache[1] == rm.generation:
            return cache[2]
        gen = rm.generation
        var = rm.lookup_or_create(container, name, lambda: Var(name, shape))
        if not isinstance(var, Var):
            raise errors.InvalidArgumentError(
                None, None, f"Resource {name} exists and is not a variable"
            )
        cache[:] = [rm, gen, var]
        return var

    return compute


def _declared_shape(var: Var) -> Any:
    if var.value is not None:
        return np.shape(var.value)
    if var.shape is not None and var.shape.is_fully_defined():
        return tuple(var.shape.as_list())
    return None


@register_kernel("Assign")
def _assign(node: KernelNode) -> Any:
    validate = node.attrs.get("validate_shape", True)

    def compute(ctx: Any, var: Var, value: Any) -> Var:
        if validate:
            lhs = _declared_shape(var)
            if lhs is not None and tuple(lhs) != np.shape(value):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    "Assign requires shapes of both tensors to match. lhs shape= "
                    f"{shape_str(lhs)} rhs shape= {shape_str(np.shape(value))}",
                )
        ctx.assign(var, np.array(value, copy=True) if _is_writable(value) else value)
        return var

    return compute


def _is_writable(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.flags.writeable


def _check_same(var: Var, old: Any, value: Any) -> None:
    if np.shape(old) != np.shape(value):
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Must have the same shape: variable {var.name} has shape "
            f"{shape_str(np.shape(old))}, update has {shape_str(np.shape(value))}",
        )


@register_compute("AssignAdd")
def _assign_add(ctx: Any, var: Var, value: Any) -> Var:
    def fn(old: Any) -> Any:
        _check_same(var, old, value)
        return old + value

    ctx.update(var, fn)
    return var


@register_compute("AssignSub")
def _assign_sub(ctx: Any, var: Var, value: Any) -> Var:
    def fn(old: Any) -> Any:
        _check_same(var, old, value)
        return old - value

    ctx.update(var, fn)
    return var


@register_compute("IsVariableInitialized")
def _is_initialized(ctx: Any, var: Any) -> Any:
    return np.bool_(isinstance(var, Var) and var.is_initialized)


def check_indices(indices: Any, limit: int, what: str = "indices") -> np.ndarray:
    """Validates gather/scatter indices against `[0, limit)`.

    Raises:
      InvalidArgumentError: naming the first bad index, as TensorFlow does.
    """
    idx = np.asarray(indices)
    if idx.size:
        flat = idx.reshape(-1)
        bad = np.nonzero((flat < 0) | (flat >= limit))[0]
        if bad.size:
            i = int(bad[0])
            raise errors.InvalidArgumentError(
                None, None, f"{what}[{i}] = {int(flat[i])} is not in [0, {limit})"
            )
    return idx


def _scatter_kernel(mode: str) -> Any:
    def compute(ctx: Any, var: Var, indices: Any, updates: Any) -> Var:
        def fn(old: Any) -> Any:
            idx = check_indices(indices, old.shape[0] if old.ndim else 0)
            upd = np.broadcast_to(updates, idx.shape + old.shape[1:])
            new = old.copy()
            if mode == "update":
                new[idx] = upd
            elif mode == "add":
                np.add.at(new, idx, upd)
            else:
                np.subtract.at(new, idx, upd)
            return new

        ctx.update(var, fn)
        return var

    return compute


register_compute("ScatterUpdate")(_scatter_kernel("update"))
register_compute("ScatterAdd")(_scatter_kernel("add"))
register_compute("ScatterSub")(_scatter_kernel("sub"))
