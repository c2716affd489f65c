"""Slot variables: per-variable optimizer state (follows TF 1.x `training/slot_creator.py`).

A slot is a non-trainable variable in `GLOBAL_VARIABLES` named `<primary op name>/<name>`
(made unique: `v/Adam`, `v/Adam_1`), created through `tf.get_variable` in a variable scope
of that name, so its name depends on the current variable scope and not on name scopes.
By default it is colocated with its primary, so a slot of a variable on `/job:ps/task:1`
lives on that task too.

Deviation: when the primary's shape is not fully defined, the zeros slot takes its shape
from the primary's initial value rather than from `initialized_value()` (which, in
tensorweave, re-runs the primary's initializer).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array_ops, init_ops, variable_scope
from tensorweave.ops.variables import Variable


def _slot_name_for_slice(slot: Variable, primary: Any) -> str:
    return slot.op.name[len(primary.op.name) + 1 :]


def _create_slot_var(
    primary: Any, val: Any, validate_shape: bool, shape: Any, dtype: Any
) -> Variable:
    """`get_variable("")` in the current (slot) scope, without the scope's partitioner."""
    scope = variable_scope.get_variable_scope()
    partitioner = scope.partitioner
    scope.set_partitioner(None)
    try:
        slot = variable_scope.get_variable(
            "",
            shape=shape if callable(val) else None,
            dtype=dtype,
            initializer=val,
            trainable=False,
            validate_shape=validate_shape,
            # NOTE: TF's rule: slots of a resource variable are resource variables.
            use_resource=getattr(primary, "_is_resource_variable", False),
        )
    finally:
        scope.set_partitioner(partitioner)
    info = primary._get_save_slice_info() if isinstance(primary, Variable) else None
    if info is not None:
        # NOTE: slots of a partitioned variable are partitioned like it.
        slot._set_save_slice_info(
            type(info)(
                info.full_name + "/" + _slot_name_for_slice(slot, primary),
                info.full_shape[:],
                info.var_offset[:],
                info.var_shape[:],
            )
        )
    return slot


def _in_slot_scope(primary: Any, name: str, colocate: bool, create: Any) -> Variable:
    graph = primary.graph
    with graph.as_default(), variable_scope.variable_scope(None, primary.op.name + "/" + name):
        if colocate:
            with graph.colocate_with(primary):
                return create()
        return create()


def create_slot(
    primary: Any, val: Tensor, name: str, colocate_with_primary: bool = True
) -> Variable:
    """A slot for `primary` initialized to the tensor `val` (follows `create_slot`).

    Args:
      primary: the `Variable` (or Tensor) the slot belongs to.
      val: the initial value; its dtype and shape are the slot's.
      name: the slot's name under the primary, e.g. the optimizer's name.
      colocate_with_primary: place the slot on the primary's device.

    Returns:
      The slot `Variable` (not trainable, in `GLOBAL_VARIABLES`).

    Raises:
      ValueError: if a variable of that name exists and the variable scope does not reuse.
    """
    validate_shape = val.shape.is_fully_defined()
    dtype = val.dtype.base_dtype

    def create() -> Variable:
        return _create_slot_var(primary, val, validate_shape, None, dtype)

    return _in_slot_scope(primary, name, colocate_with_primary, create)


def create_slot_with_initializer(
    primary: Any,
    initializer: Any,
    shape: Any,
    dtype: Any,
    name: str,
    colocate_with_primary: bool = True,
) -> Variable:
    """A slot for `primary` from an initializer (follows `create_slot_with_initializer`).

    Args:
      primary: the `Variable` (or Tensor) the slot belongs to.
      initializer: an initializer (e.g. `zeros_initializer()`) or a Tensor.
      shape: the slot's shape (`TensorShape` or list).
      dtype: the slot's dtype.
      name: the slot's name under the primary.
      colocate_with_primary: place the slot on the primary's device.

    Returns:
      The slot `Variable`.
    """
    shape = TensorShape(shape)
    validate_shape = shape.is_fully_defined()
    dtype = dtypes.as_dtype(dtype).base_dtype

    def create() -> Variable:
        return _create_slot_var(primary, initializer, validate_shape, shape, dtype)

    return _in_slot_scope(primary, name, colocate_with_primary, create)


def create_zeros_slot(
    primary: Any, name: str, dtype: Any = None, colocate_with_primary: bool = True
) -> Variable:
    """A slot of zeros shaped like `primary` (follows `create_zeros_slot`).

    Args:
      primary: the `Variable` (or Tensor) the slot belongs to.
      name: the slot's name under the primary.
      dtype: the slot's dtype (default: the primary's base dtype).
      colocate_with_primary: place the slot on the primary's device.

    Returns:
      The slot `Variable`, initialized by `<slot>/Initializer/zeros` when the primary's shape
      is fully defined.
    """
    dtype = dtypes.as_dtype(dtype or primary.dtype).base_dtype
    slot_shape = primary.get_shape()
    if slot_shape.is_fully_defined():
        return create_slot_with_initializer(
            primary, init_ops.zeros_initializer(), slot_shape, dtype, name, colocate_with_primary
        )
    with primary.graph.as_default():
        source = primary.initial_value if isinstance(primary, Variable) else primary
        val = array_ops.zeros(array_ops.shape(source), dtype=dtype)
    return create_slot(primary, val, name, colocate_with_primary)


__all__ = ["create_slot", "create_slot_with_initializer", "create_zeros_slot"]
