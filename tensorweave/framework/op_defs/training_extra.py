"""Definitions of the Adadelta, proximal, AdagradDA and FTRL update ops (TF 1.x
`core/ops/training_ops.cc`): `Apply*` and `SparseApply*` with TensorFlow's input order,
attrs and static shape checks. Each takes the variable and its slots as `Ref(T)` inputs and
outputs the variable's ref."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_defs.resource_variable import register_resource_variants
from tensorweave.framework.shape_inference import merge_shapes, op_error, with_rank
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_NUMBER_TYPES = (
    "{float, double, int32, uint8, int16, int8, complex64, int64, uint16, complex128, half, "
    "uint32, uint64}"
)


def _shape_fn(num_refs: int, grad_index: int, scalars: tuple[int, ...], sparse: bool) -> Any:
    """The refs and the gradient (its trailing dimensions when sparse) merge into the
    output shape; `scalars` (input indices) must be rank 0, the indices rank 1."""

    def shape_fn(op: Any) -> list[TensorShape]:
        s = op.inputs[0].shape
        for i in range(1, num_refs):
            s = merge_shapes(op, s, op.inputs[i].shape)
        for i in scalars:
            with_rank(op, op.inputs[i].shape, 0)
        grad = op.inputs[grad_index].shape
        if not sparse:
            s = merge_shapes(op, s, grad)
        else:
            indices = with_rank(op, op.inputs[grad_index + 1].shape, 1)
            if grad.ndims == 0:
                raise op_error(op, "Argument grad must not be a scalar. Got grad with rank 0")
            if grad.ndims is not None:
                merge_shapes(op, TensorShape(indices.as_list()), TensorShape(grad.as_list()[:1]))
                s = merge_shapes(op, s, TensorShape([None]).concatenate(grad[1:]))
        return [s if s.ndims is not None else unknown_shape()]

    return shape_fn


def _register(
    name: str,
    refs: list[str],
    before: list[str],
    after: list[str],
    extra: tuple[str, ...] = (),
    grad: str = "grad",
) -> None:
    """`refs` (Ref(T)), then `before` (T), then grad (and indices for SparseApply*), then
    `after`; "global_step" is int64."""
    sparse = name.startswith("Sparse")
    inputs = [f"{r}: Ref(T)" for r in refs] + [f"{s}: T" for s in before] + [f"{grad}: T"]
    attrs = [f"T: {_NUMBER_TYPES}"]
    if sparse:
        inputs.append("indices: Tindices")
        attrs.append("Tindices: {int32, int64}")
    inputs += [f"{s}: int64" if s == "global_step" else f"{s}: T" for s in after]
    attrs += ["use_locking: bool = false", *extra]
    grad_index = len(refs) + len(before)
    first_after = grad_index + (2 if sparse else 1)
    scalars = (
        *range(len(refs), grad_index),
        *range(first_after, first_after + len(after)),
    )
    register_op(
        name,
        inputs=inputs,
        outputs=["out: Ref(T)"],
        attrs=attrs,
        shape_fn=_shape_fn(len(refs), grad_index, tuple(scalars), sparse),
    )


_ADADELTA = ["var", "accum", "accum_update"]
_DA = ["var", "gradient_accumulator", "gradient_squared_accumulator"]
_FTRL = ["var", "accum", "linear"]
_LINEAR_BY_LR = ("multiply_linear_by_lr: bool = false",)

for _prefix in ("", "Sparse"):
    _register(f"{_prefix}ApplyAdadelta", _ADADELTA, ["lr", "rho", "epsilon"], [])
    _register(f"{_prefix}ApplyProximalAdagrad", ["var", "accum"], ["lr", "l1", "l2"], [])
    _register(f"{_prefix}ApplyAdagradDA", _DA, [], ["lr", "l1", "l2", "global_step"])
    _register(f"{_prefix}ApplyFtrl", _FTRL, [], ["lr", "l1", "l2", "lr_power"], _LINEAR_BY_LR)
    _register(
        f"{_prefix}ApplyFtrlV2",
        _FTRL,
        [],
        ["lr", "l1", "l2", "l2_shrinkage", "lr_power"],
        _LINEAR_BY_LR,
    )
_register("ApplyProximalGradientDescent", ["var"], ["alpha", "l1", "l2"], [], grad="delta")
_register("SparseApplyProximalGradientDescent", ["var"], ["alpha", "l1", "l2"], [])

# The apply ops above; each also has its `Resource*` variant (resource variables).
APPLY_OP_TYPES_EXTRA = tuple(
    f"{prefix}Apply{name}"
    for prefix in ("", "Sparse")
    for name in ("Adadelta", "ProximalAdagrad", "AdagradDA", "Ftrl", "FtrlV2",
                 "ProximalGradientDescent")
)
register_resource_variants(APPLY_OP_TYPES_EXTRA)

register_op(
    "SdcaShrinkL1",
    inputs=["weights: Ref(num_features * float)"],
    attrs=["num_features: int >= 0", "l1: float", "l2: float"],
)
