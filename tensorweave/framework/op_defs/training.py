"""Optimizer apply op definitions: ApplyGradientDescent, ApplyMomentum, ApplyAdam, ...

Follows TensorFlow's `core/ops/training_ops.cc` (op types, input/attr names and defaults).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_defs.resource_variable import register_resource_variants
from tensorweave.framework.shape_inference import op_error, shape_str
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

# TensorFlow's `numbertype`, without the quantized types and bfloat16 (absent here).
_NUMBER_TYPES = (
    "{float, double, int32, uint8, int16, int8, complex64, int64, uint16, complex128, half, "
    "uint32, uint64}"
)


def _fail(op: Any, detail: str) -> None:
    raise op_error(op, detail)


def _merge(op: Any, a: TensorShape, b: TensorShape) -> TensorShape:
    try:
        return a.merge_with(b)
    except ValueError:
        if a.ndims is not None and b.ndims is not None and a.ndims != b.ndims:
            _fail(op, f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}")
        _fail(op, f"Shapes {shape_str(a)} and {shape_str(b)} are not compatible")
    raise AssertionError("unreachable")


def _with_rank(op: Any, i: int, rank: int) -> TensorShape:
    shape = op.inputs[i].shape
    if shape.ndims is not None and shape.ndims != rank:
        _fail(op, f"Shape must be rank {rank} but is rank {shape.ndims}")
    return shape


def _apply_shape_fn(num_refs: int, num_scalars: int, sparse: bool, trailing: int = 0) -> Any:
    """TF's `Apply*ShapeFn` for refs, `num_scalars` scalars, grad (+ indices), `trailing`.

    The refs (var first) and the gradient merge into the output shape (for sparse ops, the
    gradient's trailing dimensions); scalars must have rank 0, indices rank 1.
    """

    def shape_fn(op: Any) -> list[TensorShape]:
        s = op.inputs[0].shape
        for i in range(1, num_refs):
            s = _merge(op, s, op.inputs[i].shape)
        for i in range(num_refs, num_refs + num_scalars):
            _with_rank(op, i, 0)
        g = num_refs + num_scalars
        grad = op.inputs[g].shape
        if not sparse:
            s = _merge(op, s, grad)
        else:
            indices = _with_rank(op, g + 1, 1)
            if grad.ndims == 0:
                _fail(op, "Argument grad must not be a scalar. Got grad with rank 0")
            if grad.ndims is not None:
                _merge(
                    op,
                    TensorShape(indices.as_list()[:1] if indices.ndims else [None]),
                    TensorShape(grad.as_list()[:1]),
                )
                s = _merge(op, s, TensorShape([None]).concatenate(grad[1:]))
        first_trailing = g + (2 if sparse else 1)
        for i in range(first_trailing, first_trailing + trailing):
            _with_rank(op, i, 0)
        return [s if s.ndims is not None else unknown_shape()]

    return shape_fn


def _register(
    name: str,
    refs: list[str],
    scalars: list[str],
    sparse: bool = False,
    trailing: tuple[str, ...] = (),
    extra_attrs: tuple[str, ...] = (),
    grad: str = "grad",
) -> None:
    inputs = [f"{r}: Ref(T)" for r in refs] + [f"{s}: T" for s in scalars]
    inputs.append(f"{grad}: T")
    attrs = [f"T: {_NUMBER_TYPES}"]
    if sparse:
        inputs.append("indices: Tindices")
        attrs.append("Tindices: {int32, int64}")
    inputs.extend(f"{s}: T" for s in trailing)
    attrs.append("use_locking: bool = false")
    attrs.extend(extra_attrs)
    register_op(
        name,
        inputs=inputs,
        outputs=["out: Ref(T)"],
        attrs=attrs,
        shape_fn=_apply_shape_fn(len(refs), len(scalars), sparse, len(trailing)),
    )


_NESTEROV = ("use_nesterov: bool = false",)
_UPDATE_SLOTS = ("update_slots: bool = true",)
_RMS_SCALARS = ["lr", "rho", "momentum", "epsilon"]
_register("ApplyGradientDescent", ["var"], ["alpha"], grad="delta")
_register("ApplyMomentum", ["var", "accum"], ["lr"], trailing=("momentum",), extra_attrs=_NESTEROV)
_register(
    "SparseApplyMomentum",
    ["var", "accum"],
    ["lr"],
    sparse=True,
    trailing=("momentum",),
    extra_attrs=_NESTEROV,
)
_register("ApplyAdagrad", ["var", "accum"], ["lr"], extra_attrs=_UPDATE_SLOTS)
_register("SparseApplyAdagrad", ["var", "accum"], ["lr"], sparse=True, extra_attrs=_UPDATE_SLOTS)
_register(
    "ApplyAdam",
    ["var", "m", "v"],
    ["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"],
    extra_attrs=_NESTEROV,
)
_register("ApplyRMSProp", ["var", "ms", "mom"], _RMS_SCALARS)
_register("SparseApplyRMSProp", ["var", "ms", "mom"], _RMS_SCALARS, sparse=True)
_register("ApplyCenteredRMSProp", ["var", "mg", "ms", "mom"], _RMS_SCALARS)
_register("SparseApplyCenteredRMSProp", ["var", "mg", "ms", "mom"], _RMS_SCALARS, sparse=True)

# The apply ops above (not differentiable; `ops.training_ops` declares that).
APPLY_OP_TYPES = (
    "ApplyGradientDescent",
    "ApplyMomentum",
    "SparseApplyMomentum",
    "ApplyAdagrad",
    "SparseApplyAdagrad",
    "ApplyAdam",
    "ApplyRMSProp",
    "SparseApplyRMSProp",
    "ApplyCenteredRMSProp",
    "SparseApplyCenteredRMSProp",
)
register_resource_variants(APPLY_OP_TYPES)
