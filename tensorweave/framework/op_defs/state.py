"""Variable op definitions: VariableV2, Assign*, Scatter*, IsVariableInitialized.

Follows TensorFlow's `core/ops/state_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape


def _assign_shape(op: Any) -> list[TensorShape]:
    if op.get_attr("validate_shape"):
        return [op.inputs[0].shape.merge_with(op.inputs[1].shape)]
    return [op.inputs[1].shape]


def _same_shape_update(op: Any) -> list[TensorShape]:
    return [op.inputs[0].shape.merge_with(op.inputs[1].shape)]


def _scatter_shape(op: Any) -> list[TensorShape]:
    ref, indices, updates = (t.shape for t in op.inputs)
    expected = indices.concatenate(ref[1:]) if ref.ndims is not None else unknown_shape()
    if not updates.is_compatible_with(expected) and updates.ndims != 0:
        raise ValueError(
            f"Shapes of updates {updates} must equal indices.shape + params.shape[1:] "
            f"= {expected} for '{op.name}' (op: '{op.type}')"
        )
    return [ref]


register_op(
    "VariableV2",
    outputs=["ref: Ref(dtype)"],
    attrs=["shape: shape", "dtype: type", "container: string = ''", "shared_name: string = ''"],
    is_stateful=True,
    shape_fn=lambda op: [op.get_attr("shape")],
)
register_op(
    "Assign",
    inputs=["ref: Ref(T)", "value: T"],
    outputs=["output_ref: Ref(T)"],
    attrs=["T: type", "validate_shape: bool = true", "use_locking: bool = true"],
    allows_uninitialized_input=True,
    shape_fn=_assign_shape,
)
_NUMERIC = (
    "{float, double, int32, int64, uint8, int16, int8, complex64, complex128, half, uint16,"
    " uint32, uint64}"
)
for _name in ("AssignAdd", "AssignSub"):
    register_op(
        _name,
        inputs=["ref: Ref(T)", "value: T"],
        outputs=["output_ref: Ref(T)"],
        attrs=[f"T: {_NUMERIC}", "use_locking: bool = false"],
        shape_fn=_same_shape_update,
    )
register_op(
    "IsVariableInitialized",
    inputs=["ref: Ref(dtype)"],
    outputs=["is_initialized: bool"],
    attrs=["dtype: type"],
    allows_uninitialized_input=True,
    shape_fn=lambda op: [TensorShape([])],
)
for _name, _locking in (
    ("ScatterUpdate", "true"),
    ("ScatterAdd", "false"),
    ("ScatterSub", "false"),
):
    register_op(
        _name,
        inputs=["ref: Ref(T)", "indices: Tindices", "updates: T"],
        outputs=["output_ref: Ref(T)"],
        attrs=["T: type", "Tindices: {int32, int64}", f"use_locking: bool = {_locking}"],
        shape_fn=_scatter_shape,
    )
