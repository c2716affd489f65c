"""Variable state ops: `VariableV2`, `Assign*`, `Scatter*`, `IsVariableInitialized`.

Follows TF 1.x `state_ops`. Update ops are colocated with their variable by the placer (ref
edge).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops.gradient_registry import no_gradient

# As TensorFlow's `state_grad.py`: updates and variables are not differentiable.
for _op_type in (
    "Assign",
    "AssignAdd",
    "AssignSub",
    "IsVariableInitialized",
    "ScatterAdd",
    "ScatterSub",
    "ScatterUpdate",
    "VariableV2",
):
    no_gradient(_op_type)


def variable_op_v2(
    shape: Any, dtype: Any, name: str = "Variable", container: str = "", shared_name: str = ""
) -> Any:
    """A `VariableV2` op; returns its `_ref` output tensor."""
    return apply_op(
        "VariableV2",
        shape=TensorShape(shape),
        dtype=dtypes.as_dtype(dtype),
        container=container,
        shared_name=shared_name,
        name=name,
    )


def _ref_of(ref: Any) -> Any:
    return ref._ref() if hasattr(ref, "_ref") else ref


def _is_resource(ref: Any) -> bool:
    # NOTE: as TF's state_ops, the functions below hand resource variables to their methods.
    return getattr(ref, "_is_resource_variable", False)


def assign(
    ref: Any,
    value: Any,
    validate_shape: bool | None = None,
    use_locking: bool | None = None,
    name: str | None = None,
) -> Any:
    """Assigns `value` to the variable `ref` (follows `tf.assign`).

    Returns the ref after the assignment.

    Raises:
      TypeError: if `ref` is not a variable (ref tensor).
      ValueError: if `validate_shape` and the static shapes differ.
    """
    if _is_resource(ref):
        return ref.assign(value, name=name)
    kwargs: dict[str, Any] = {}
    if validate_shape is not None:
        kwargs["validate_shape"] = validate_shape
    if use_locking is not None:
        kwargs["use_locking"] = use_locking
    return apply_op("Assign", ref=_ref_of(ref), value=value, name=name, **kwargs)


def assign_add(ref: Any, value: Any, use_locking: bool | None = None, name: str | None = None):
    """Adds `value` to the variable `ref` atomically (follows `tf.assign_add`)."""
    if _is_resource(ref):
        return ref.assign_add(value, name=name)
    kwargs = {} if use_locking is None else {"use_locking": use_locking}
    return apply_op("AssignAdd", ref=_ref_of(ref), value=value, name=name, **kwargs)


def assign_sub(ref: Any, value: Any, use_locking: bool | None = None, name: str | None = None):
    """Subtracts `value` from the variable `ref` atomically (follows `tf.assign_sub`)."""
    if _is_resource(ref):
        return ref.assign_sub(value, name=name)
    kwargs = {} if use_locking is None else {"use_locking": use_locking}
    return apply_op("AssignSub", ref=_ref_of(ref), value=value, name=name, **kwargs)


def is_variable_initialized(ref: Any, name: str | None = None) -> Any:
    """A bool scalar: whether the variable has a value (follows `tf.is_variable_initialized`)."""
    if _is_resource(ref):
        return ref.is_initialized(name=name)
    return apply_op("IsVariableInitialized", ref=_ref_of(ref), name=name)


def _scatter(op_type: str, ref: Any, indices: Any, updates: Any, use_locking: Any, name: Any):
    if _is_resource(ref):
        return ref._scatter(op_type[len("Scatter"):], indices, updates, name)
    kwargs = {} if use_locking is None else {"use_locking": use_locking}
    return apply_op(
        op_type, ref=_ref_of(ref), indices=indices, updates=updates, name=name, **kwargs
    )


def scatter_update(
    ref: Any, indices: Any, updates: Any, use_locking: bool | None = None, name: str | None = None
) -> Any:
    """`ref[indices] = updates` on a variable (follows `tf.scatter_update`).

    Raises:
      errors.InvalidArgumentError: at run time, for indices out of range.
    """
    return _scatter("ScatterUpdate", ref, indices, updates, use_locking, name)


def scatter_add(
    ref: Any, indices: Any, updates: Any, use_locking: bool | None = None, name: str | None = None
) -> Any:
    """`ref[indices] += updates`, duplicates accumulating (follows `tf.scatter_add`)."""
    return _scatter("ScatterAdd", ref, indices, updates, use_locking, name)


def scatter_sub(
    ref: Any, indices: Any, updates: Any, use_locking: bool | None = None, name: str | None = None
) -> Any:
    """`ref[indices] -= updates`, duplicates accumulating (follows `tf.scatter_sub`)."""
    return _scatter("ScatterSub", ref, indices, updates, use_locking, name)


__all__ = [
    "assign",
    "assign_add",
    "assign_sub",
    "is_variable_initialized",
    "scatter_update",
    "scatter_add",
    "scatter_sub",
]
