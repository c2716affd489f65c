"""N-dimensional gather/scatter and the variable scatter updates.

Follows `tensorflow/core/ops/array_ops.cc` (`GatherNd`, `ScatterNd`, `TensorScatter*`) and
`state_ops.cc` (`ScatterMul|Div|Min|Max`, `ScatterNdUpdate|Add|Sub` on reference variables).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_defs._types import NUMBER, REAL_NUMBER
from tensorweave.framework.shape_inference import (
    merge_shapes,
    op_error,
    static_shape_value,
    with_rank_at_least,
)
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_INDICES = "Tindices: {int16, int32, int64}"


def _gather_nd_shape(op: Any) -> list[TensorShape]:
    params, indices = op.inputs[0].shape, op.inputs[1].shape
    if indices.ndims is None or params.ndims is None:
        return [unknown_shape()]
    with_rank_at_least(op, indices, 1)
    r = indices.as_list()[-1]
    if r is None:
        return [unknown_shape()]
    if r > params.ndims:
        raise op_error(
            op,
            f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
            f"{indices.as_list()} and params shape: {params.as_list()}",
        )
    return [TensorShape(indices.as_list()[:-1] + params.as_list()[r:])]


def _check_updates(op: Any, indices: TensorShape, updates: TensorShape, out: TensorShape) -> None:
    if indices.ndims is None or updates.ndims is None or out.ndims is None:
        return
    r = indices.as_list()[-1] if indices.ndims else None
    if r is None:
        return
    want = TensorShape(indices.as_list()[:-1] + out.as_list()[r:])
    if want.ndims != updates.ndims:
        raise op_error(
            op,
            f"Dimensions [{indices.ndims - 1},{updates.ndims}) of updates[shape="
            f"{updates.as_list()}] must match dimensions [{r},{out.ndims}) of output",
        )
    merge_shapes(op, want, updates)


def _scatter_nd_shape(op: Any) -> list[TensorShape]:
    out = static_shape_value(op.inputs[2])
    _check_updates(op, op.inputs[0].shape, op.inputs[1].shape, out)
    return [out]


def _tensor_scatter_shape(op: Any) -> list[TensorShape]:
    out = op.inputs[0].shape
    _check_updates(op, op.inputs[1].shape, op.inputs[2].shape, out)
    return [out]


def _ref_shape(op: Any) -> list[TensorShape]:
    return [op.inputs[0].shape]


register_op(
    "GatherNd",
    inputs=["params: Tparams", "indices: Tindices"],
    outputs=["output: Tparams"],
    attrs=["Tparams: type", _INDICES],
    shape_fn=_gather_nd_shape,
)
register_op(
    "ScatterNd",
    inputs=["indices: Tindices", "updates: T", "shape: Tindices"],
    outputs=["output: T"],
    attrs=["T: type", _INDICES],
    shape_fn=_scatter_nd_shape,
)
for _name, _types in (
    ("TensorScatterUpdate", "type"),
    ("TensorScatterAdd", "type"),
    ("TensorScatterSub", "type"),
    ("TensorScatterMax", "type"),
    ("TensorScatterMin", "type"),
):
    register_op(
        _name,
        inputs=["tensor: T", "indices: Tindices", "updates: T"],
        outputs=["output: T"],
        attrs=[f"T: {_types}", _INDICES],
        shape_fn=_tensor_scatter_shape,
    )
for _name, _types in (
    ("ScatterMul", NUMBER),
    ("ScatterDiv", NUMBER),
    ("ScatterMin", REAL_NUMBER),
    ("ScatterMax", REAL_NUMBER),
):
    register_op(
        _name,
        inputs=["ref: Ref(T)", "indices: Tindices", "updates: T"],
        outputs=["output_ref: Ref(T)"],
        attrs=[f"T: {{{_types}}}", "Tindices: {int32, int64}", "use_locking: bool = false"],
        shape_fn=_ref_shape,
    )
for _name, _types, _locking in (
    ("ScatterNdUpdate", "type", "true"),
    ("ScatterNdAdd", f"{{{NUMBER}}}", "false"),
    ("ScatterNdSub", f"{{{NUMBER}}}", "false"),
):
    register_op(
        _name,
        inputs=["ref: Ref(T)", "indices: Tindices", "updates: T"],
        outputs=["output_ref: Ref(T)"],
        attrs=[f"T: {_types}", "Tindices: {int32, int64}", f"use_locking: bool = {_locking}"],
        shape_fn=_ref_shape,
    )
