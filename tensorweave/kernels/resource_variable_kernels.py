"""Kernels of resource variables (`VarHandleOp`, `ReadVariableOp`, `AssignVariableOp`, ...).

The handle a `VarHandleOp` outputs *is* the variable's `Var` (looked up or created in the
device's resource manager, as `VariableV2` does), so the state is the same copy-on-write,
undoable `Var` a reference variable has: every kernel of a ref-variable update op serves its
resource variant too (`register_resource_variant_kernels`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.resource_mgr import Var
from tensorweave.kernels.registry import (
    KernelNode,
    kernel_registry,
    lookup_builder,
    register_compute,
    register_kernel,
)
from tensorweave.kernels.state_kernels import check_indices, variable_lookup

# NOTE: the handle *is* the variable's `Var`, found or created as `VariableV2` does.
register_kernel("VarHandleOp")(variable_lookup)


def _read(var: Var) -> Any:
    value = var.value
    if value is None:
        raise errors.FailedPreconditionError(
            None,
            None,
            f"Error while reading resource variable {var.name}. This could mean that the "
            "variable was uninitialized.",
        )
    return value


@register_kernel("ReadVariableOp")
def _read_variable(node: KernelNode) -> Any:
    want = node.attrs["dtype"]

    def compute(ctx: Any, var: Var) -> Any:
        value = _read(var)
        if value.dtype != want.as_numpy_dtype and want.name != "string":
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Trying to read variable {var.name} with wrong dtype. Expected "
                f"{want.name} got {np.dtype(value.dtype).name}",
            )
        return value

    return compute


@register_compute("AssignVariableOp")
def _assign_variable(ctx: Any, var: Var, value: Any) -> None:
    ctx.assign(var, np.array(value, copy=True) if _writable(value) else value)


def _writable(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.flags.writeable


def _same_shape(var: Var, old: Any, value: Any) -> None:
    if np.shape(old) != np.shape(value):
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Cannot update variable {var.name} with shape {list(np.shape(old))} using a "
            f"Tensor with shape {list(np.shape(value))}, shapes must be equal.",
        )


@register_compute("AssignAddVariableOp")
def _assign_add_variable(ctx: Any, var: Var, value: Any) -> None:
    def fn(old: Any) -> Any:
        _same_shape(var, old, value)
        return old + value

    ctx.update(var, fn)


@register_compute("AssignSubVariableOp")
def _assign_sub_variable(ctx: Any, var: Var, value: Any) -> None:
    def fn(old: Any) -> Any:
        _same_shape(var, old, value)
        return old - value

    ctx.update(var, fn)


@register_compute("VarIsInitializedOp")
def _is_initialized(ctx: Any, var: Var) -> Any:
    return np.bool_(var.is_initialized)


@register_kernel("VariableShape")
def _variable_shape(node: KernelNode) -> Any:
    out = node.attrs.get("out_type").as_numpy_dtype

    def compute(ctx: Any, var: Var) -> Any:
        return np.array(np.shape(_read(var)), dtype=out)

    return compute


@register_kernel("DestroyResourceOp")
def _destroy(node: KernelNode) -> Any:
    ignore = node.attrs.get("ignore_lookup_error", True)

    def compute(ctx: Any, var: Var) -> None:
        rm = ctx.resource_mgr
        for container in rm.containers():
            if rm.lookup(container, var.name) is var:
                rm.delete(container, var.name)
                return
        if not ignore:
            raise errors.NotFoundError(None, None, f"Resource {var.name} does not exist")

    return compute


@register_compute("ResourceGather")
def _resource_gather(ctx: Any, var: Var, indices: Any) -> Any:
    params = _read(var)
    idx = check_indices(indices, params.shape[0] if params.ndim else 0)
    return np.take(params, idx, axis=0)


_SCATTER = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
    "Min": np.minimum, "Max": np.maximum,
}


def _scatter(kind: str) -> Any:
    def compute(ctx: Any, var: Var, indices: Any, updates: Any) -> None:
        def fn(old: Any) -> Any:
            idx = check_indices(indices, old.shape[0] if old.ndim else 0)
            upd = np.broadcast_to(np.asarray(updates, dtype=old.dtype), idx.shape + old.shape[1:])
            new = old.copy()
            if kind == "Update":
                new[idx] = upd
            else:
                _SCATTER[kind].at(new, idx, upd)
            return new

        ctx.update(var, fn)

    return compute


for _kind in ("Add", "Sub", "Mul", "Div", "Min", "Max", "Update"):
    register_compute(f"ResourceScatter{_kind}")(_scatter(_kind))


def register_resource_variant_kernels(op_names: Iterable[str]) -> None:
    """Registers the kernel of `Resource<Name>` as `<Name>`'s, without its output.

    The handle input carries the same `Var` a ref input would, so the update is the same.

    Raises:
      LookupError: if `<Name>` has no kernel.
    """
    for name in op_names:
        builder = lookup_builder(name)

        def variant(node: KernelNode, _builder: Any = builder) -> Any:
            compute = _builder(node)

            def run(ctx: Any, *inputs: Any) -> None:
                compute(ctx, *inputs)

            return run

        kernel_registry.register(variant, ("Resource" + name, "CPU"))
