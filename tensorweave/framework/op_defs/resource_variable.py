"""Op definitions of resource variables (TensorFlow's `resource_variable_ops.cc`).

A resource variable is a `VarHandleOp` whose `resource` output names the variable's state;
reads (`ReadVariableOp`) and writes (`AssignVariableOp`, `ResourceApply*`, ...) take that
handle. TF 2.x's `compat.v1` builds these by default, so a TensorFlow client's graphs use them.

`register_resource_variants` derives `ResourceApplyX` / `ResourceSparseApplyX` from every
ref-variable update op `ApplyX` / `SparseApplyX`, as TF defines them: each `Ref(T)` input
becomes a `resource` input, and the op has no outputs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.op_def import OpDef, op_def_registry, register_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_INDICES = "Tindices: {int32, int64}"


def _scalar(op: Any) -> list[TensorShape]:
    return [TensorShape([])]


def _none(op: Any) -> list[TensorShape]:
    return []


def _declared_shape(op: Any) -> list[TensorShape]:
    shape = op.get_attr("shape")
    return [shape if isinstance(shape, TensorShape) else unknown_shape()]


register_op(
    "VarHandleOp",
    outputs=["resource: resource"],
    attrs=[
        "container: string = ''",
        "shared_name: string = ''",
        "dtype: type",
        "shape: shape",
        "allowed_devices: list(string) = []",
    ],
    is_stateful=True,
    shape_fn=_scalar,
)

register_op(
    "ReadVariableOp",
    inputs=["resource: resource"],
    outputs=["value: dtype"],
    attrs=["dtype: type"],
    is_stateful=True,
    shape_fn=lambda op: [_handle_shape(op)],
)

for _name in ("AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"):
    register_op(
        _name,
        inputs=["resource: resource", "value: dtype"],
        attrs=["dtype: type"] + (["validate_shape: bool = false"] if _name == "AssignVariableOp"
                                 else []),
        is_stateful=True,
        shape_fn=_none,
    )

register_op(
    "VarIsInitializedOp",
    inputs=["resource: resource"],
    outputs=["is_initialized: bool"],
    is_stateful=True,
    shape_fn=_scalar,
)

register_op(
    "VariableShape",
    inputs=["input: resource"],
    outputs=["output: out_type"],
    attrs=["out_type: {int32, int64} = DT_INT32"],
    is_stateful=True,
    shape_fn=lambda op: [TensorShape([_handle_shape(op).ndims])],
)

register_op(
    "DestroyResourceOp",
    inputs=["resource: resource"],
    attrs=["ignore_lookup_error: bool = true"],
    is_stateful=True,
    shape_fn=_none,
)


def _gather_shape(op: Any) -> list[TensorShape]:
    params = _handle_shape(op)
    indices = op.inputs[1].shape
    if params.ndims is None or indices.ndims is None:
        return [unknown_shape()]
    return [TensorShape(indices.as_list() + params.as_list()[1:])]


register_op(
    "ResourceGather",
    inputs=["resource: resource", "indices: Tindices"],
    outputs=["output: dtype"],
    attrs=["batch_dims: int = 0", "validate_indices: bool = true", "dtype: type", _INDICES],
    is_stateful=True,
    shape_fn=_gather_shape,
)

for _kind in ("Add", "Sub", "Mul", "Div", "Min", "Max", "Update"):
    register_op(
        f"ResourceScatter{_kind}",
        inputs=["resource: resource", "indices: Tindices", "updates: dtype"],
        attrs=["dtype: type", _INDICES],
        is_stateful=True,
        shape_fn=_none,
    )


def _handle_shape(op: Any) -> TensorShape:
    """The variable's shape, from the `VarHandleOp` feeding input 0 when it is visible."""
    producer = op.inputs[0].op
    if producer.type == "VarHandleOp":
        shape = producer.get_attr("shape")
        if isinstance(shape, TensorShape):
            return shape
    return unknown_shape()


def register_resource_variants(op_names: Iterable[str]) -> None:
    """Registers `Resource<Name>` for each ref-variable update op `<Name>` (no outputs).

    Raises:
      KeyError: if an op is unknown, or its variant is already registered.
    """
    for name in op_names:
        ref_def: OpDef = op_def_registry.lookup(name)
        inputs = [
            dataclasses.replace(a, type=dtypes.resource, type_attr=None, is_ref=False)
            if a.is_ref else a
            for a in ref_def.inputs
        ]
        variant = dataclasses.replace(
            ref_def, name="Resource" + name, inputs=inputs, outputs=[], is_stateful=True,
            shape_fn=_none,
        )
        op_def_registry.register(variant, variant.name)
