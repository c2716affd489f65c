"""Optimizer update ops on reference variables (TF 1.x `training_ops`).

`ApplyGradientDescent`, `ApplyMomentum`, `ApplyAdagrad`, `ApplyAdam`, `ApplyRMSProp`,
`ApplyCenteredRMSProp` and the sparse `SparseApplyMomentum`, `SparseApplyAdagrad`,
`SparseApplyRMSProp`, `SparseApplyCenteredRMSProp`. Follows TF 1.x
`core/ops/training_ops.cc` and the generated `gen_training_ops` wrappers: same op types,
input and attr names, defaults and static shape checks. Each op takes the variable (and its
slots) as `Ref(T)` inputs, updates them in place and outputs the variable's ref. The ops are
not differentiable. Sparse ops update only the rows named by `indices` (`indices: Tindices
[n]`, `grad: T [n, ...]`); duplicate indices are applied one after the other, as
TensorFlow's CPU kernels do (optimizers sum them first).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.op_def import register_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.op_defs.resource_variable_ops import register_resource_variants
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops.gradients_impl import no_gradient

# TensorFlow's `numbertype`, without the quantized types and bfloat16 (absent here).
_NUMBER_TYPES = (
    "{float, double, int32, uint8, int16, int8, complex64, int64, uint16, complex128, half, "
    "uint32, uint64}"
)


# ------------------------------------------------------------------ shape functions
def _dims_str(shape: TensorShape) -> str:
    if shape.ndims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def _fail(op: Any, detail: str) -> None:
    shapes = ", ".join(_dims_str(t.shape) for t in op.inputs)
    raise ValueError(f"{detail} for '{op.name}' (op: '{op.type}') with input shapes: {shapes}.")


def _merge(op: Any, a: TensorShape, b: TensorShape) -> TensorShape:
    try:
        return a.merge_with(b)
    except ValueError:
        if a.ndims is not None and b.ndims is not None and a.ndims != b.ndims:
            _fail(op, f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}")
        _fail(op, f"Shapes {_dims_str(a)} and {_dims_str(b)} are not compatible")
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
    no_gradient(name)


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

APPLY_OPS = (
    "ApplyGradientDescent", "ApplyMomentum", "SparseApplyMomentum", "ApplyAdagrad",
    "SparseApplyAdagrad", "ApplyAdam", "ApplyRMSProp", "SparseApplyRMSProp",
    "ApplyCenteredRMSProp", "SparseApplyCenteredRMSProp",
)
register_resource_variants(APPLY_OPS)
for _name in APPLY_OPS:
    no_gradient("Resource" + _name)


# ------------------------------------------------------------------------ wrappers
def _ref(v: Any) -> Any:
    """A variable's ref tensor, or a resource variable's handle."""
    return v._ref() if hasattr(v, "_ref") else v


def _apply(op_type: str, **inputs: Any) -> Any:
    """`op_type`, or its `Resource` variant when `var` is a resource handle (no output)."""
    var = inputs["var"]
    if getattr(var, "dtype", None) is not None and var.dtype.base_dtype == dtypes.resource:
        op_type = "Resource" + op_type
    return apply_op(op_type, **inputs)


def apply_gradient_descent(
    var: Any, alpha: Any, delta: Any, use_locking: bool = False, name: str | None = None
) -> Any:
    """`var -= alpha * delta` (follows `gen_training_ops.apply_gradient_descent`).

    Args:
      var: a variable (ref) of a number type T, any shape.
      alpha: T scalar, the learning rate.
      delta: T, the shape of `var`.
      use_locking: accepted for compatibility; updates are always atomic here.
      name: op name.

    Returns:
      The ref of `var` after the update (for a resource variable: the update op).

    Raises:
      ValueError: for statically incompatible shapes or a non-scalar `alpha`.
      errors.InvalidArgumentError: at run time, "var and delta do not have the same shape".
    """
    return _apply(
        "ApplyGradientDescent",
        var=_ref(var),
        alpha=alpha,
        delta=delta,
        use_locking=use_locking,
        name=name,
    )


def apply_momentum(
    var: Any,
    accum: Any,
    lr: Any,
    grad: Any,
    momentum: Any,
    use_locking: bool = False,
    use_nesterov: bool = False,
    name: str | None = None,
) -> Any:
    """`accum = accum * momentum + grad; var -= lr * accum` (follows `apply_momentum`).

    With `use_nesterov`: `var -= lr * grad + lr * momentum * accum`. `var`, `accum`: refs of
    T with one shape; `lr`, `momentum`: T scalars; `grad`: T like `var`.
    """
    return _apply(
        "ApplyMomentum",
        var=_ref(var),
        accum=_ref(accum),
        lr=lr,
        grad=grad,
        momentum=momentum,
        use_locking=use_locking,
        use_nesterov=use_nesterov,
        name=name,
    )


def sparse_apply_momentum(
    var: Any,
    accum: Any,
    lr: Any,
    grad: Any,
    indices: Any,
    momentum: Any,
    use_locking: bool = False,
    use_nesterov: bool = False,
    name: str | None = None,
) -> Any:
    """`apply_momentum` on the rows `indices` of `var` (follows `sparse_apply_momentum`).

    `indices`: int32/int64 [n]; `grad`: T [n, var.shape[1:]].
    """
    return _apply(
        "SparseApplyMomentum",
        var=_ref(var),
        accum=_ref(accum),
        lr=lr,
        grad=grad,
        indices=indices,
        momentum=momentum,
        use_locking=use_locking,
        use_nesterov=use_nesterov,
        name=name,
    )


def apply_adagrad(
    var: Any,
    accum: Any,
    lr: Any,
    grad: Any,
    use_locking: bool = False,
    update_slots: bool = True,
    name: str | None = None,
) -> Any:
    """`accum += grad ** 2; var -= lr * grad / sqrt(accum)` (follows `apply_adagrad`).

    `update_slots=False` leaves `accum` unchanged.
    """
    return _apply(
        "ApplyAdagrad",
        var=_ref(var),
        accum=_ref(accum),
        lr=lr,
        grad=grad,
        use_locking=use_locking,
        update_slots=update_slots,
        name=name,
    )


def sparse_apply_adagrad(
    var: Any,
    accum: Any,
    lr: Any,
    grad: Any,
    indices: Any,
    use_locking: bool = False,
    update_slots: bool = True,
    name: str | None = None,
) -> Any:
    """`apply_adagrad` on the rows `indices` of `var` and `accum` (`sparse_apply_adagrad`)."""
    return _apply(
        "SparseApplyAdagrad",
        var=_ref(var),
        accum=_ref(accum),
        lr=lr,
        grad=grad,
        indices=indices,
        use_locking=use_locking,
        update_slots=update_slots,
        name=name,
    )


def apply_adam(
    var: Any,
    m: Any,
    v: Any,
    beta1_power: Any,
    beta2_power: Any,
    lr: Any,
    beta1: Any,
    beta2: Any,
    epsilon: Any,
    grad: Any,
    use_locking: bool = False,
    use_nesterov: bool = False,
    name: str | None = None,
) -> Any:
    """One Adam step (follows `apply_adam`)::

        lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
        m += (grad - m) * (1 - beta1);  v += (grad ** 2 - v) * (1 - beta2)
        var -= lr_t * m / (sqrt(v) + epsilon)

    (Nesterov: `m` replaced by `beta1 * m + (1 - beta1) * grad` in the last line). All
    scalars are T scalars; `m`, `v` are refs shaped like `var`.
    """
    return _apply(
        "ApplyAdam",
        var=_ref(var),
        m=_ref(m),
        v=_ref(v),
        beta1_power=beta1_power,
        beta2_power=beta2_power,
        lr=lr,
        beta1=beta1,
        beta2=beta2,
        epsilon=epsilon,
        grad=grad,
        use_locking=use_locking,
        use_nesterov=use_nesterov,
        name=name,
    )


def apply_rms_prop(
    var: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Any:
    """One RMSProp step (follows `apply_rms_prop`).

    `ms += (grad ** 2 - ms) * (1 - rho); mom = mom * momentum + lr * grad / sqrt(ms +
    epsilon); var -= mom`.
    """
    return _apply(
        "ApplyRMSProp",
        var=_ref(var),
        ms=_ref(ms),
        mom=_ref(mom),
        lr=lr,
        rho=rho,
        momentum=momentum,
        epsilon=epsilon,
        grad=grad,
        use_locking=use_locking,
        name=name,
    )


def sparse_apply_rms_prop(
    var: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
    indices: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Any:
    """`apply_rms_prop` on the rows `indices` (follows `sparse_apply_rms_prop`)."""
    return _apply(
        "SparseApplyRMSProp",
        var=_ref(var),
        ms=_ref(ms),
        mom=_ref(mom),
        lr=lr,
        rho=rho,
        momentum=momentum,
        epsilon=epsilon,
        grad=grad,
        indices=indices,
        use_locking=use_locking,
        name=name,
    )


def apply_centered_rms_prop(
    var: Any,
    mg: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Any:
    """One centered RMSProp step (follows `apply_centered_rms_prop`).

    `mg += (grad - mg) * (1 - rho)`, `ms` as in RMSProp, `mom = mom * momentum + lr * grad /
    sqrt(ms - mg ** 2 + epsilon)`, `var -= mom`.
    """
    return _apply(
        "ApplyCenteredRMSProp",
        var=_ref(var),
        mg=_ref(mg),
        ms=_ref(ms),
        mom=_ref(mom),
        lr=lr,
        rho=rho,
        momentum=momentum,
        epsilon=epsilon,
        grad=grad,
        use_locking=use_locking,
        name=name,
    )


def sparse_apply_centered_rms_prop(
    var: Any,
    mg: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
    indices: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Any:
    """`apply_centered_rms_prop` on the rows `indices` (`sparse_apply_centered_rms_prop`)."""
    return _apply(
        "SparseApplyCenteredRMSProp",
        var=_ref(var),
        mg=_ref(mg),
        ms=_ref(ms),
        mom=_ref(mom),
        lr=lr,
        rho=rho,
        momentum=momentum,
        epsilon=epsilon,
        grad=grad,
        indices=indices,
        use_locking=use_locking,
        name=name,
    )


# NOTE: like TensorFlow's `gen_training_ops`, none of these is exported at the top level.
__all__: list[str] = []
