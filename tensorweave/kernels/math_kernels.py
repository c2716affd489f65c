"""NumPy kernels of the element-wise math ops.

Also `Cast`, `CheckNumerics`, the `*Grad` helper ops and `BroadcastGradientArgs`.

Kernels call one NumPy function per step where possible; everything that depends on attrs
(dtype checks, integer-division guards) is decided in the builder. Results keep the op's
dtype exactly: inputs of one op share a dtype, so NumPy's promotion never widens them.
Reduction and matmul kernels live in `reduction_kernels` and `matmul_kernels`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel


def _incompatible(x: Any, y: Any, error: ValueError) -> Exception:
    """TensorFlow's message for shapes that do not broadcast (else the original error)."""
    try:
        np.broadcast_shapes(np.shape(x), np.shape(y))
    except ValueError:
        return errors.InvalidArgumentError(
            None,
            None,
            f"Incompatible shapes: {shape_str(np.shape(x))} vs. {shape_str(np.shape(y))}",
        )
    return error


def _binary_compute(fn: Any) -> Any:
    def compute(ctx: Any, x: Any, y: Any) -> Any:
        try:
            return fn(x, y)
        except ValueError as e:
            raise _incompatible(x, y, e) from None

    return compute


def _is_int(node: KernelNode) -> bool:
    dt = node.attrs.get("T")
    return dt is not None and dt.is_integer


_INT_DIV_ZERO = "Integer division by zero"


def _int_div_guard(fn: Any) -> Any:
    def compute(ctx: Any, x: Any, y: Any) -> Any:
        if not np.all(y):
            raise errors.InvalidArgumentError(None, None, _INT_DIV_ZERO)
        try:
            return fn(x, y)
        except ValueError as e:
            raise _incompatible(x, y, e) from None

    return compute


def trunc_div(x: Any, y: Any) -> Any:
    """Integer division rounding toward zero (C semantics), in the inputs' dtype."""
    q = np.floor_divide(x, y)
    fix = (np.remainder(x, y) != 0) & ((np.less(x, 0)) != (np.less(y, 0)))
    return q + fix.astype(q.dtype)


def _register_binary(op_type: str, float_fn: Any, int_fn: Any = None) -> None:
    """Registers a builder choosing the zero-guarded `int_fn` for integer T."""
    float_compute = _binary_compute(float_fn)
    int_compute = _int_div_guard(int_fn) if int_fn is not None else None

    def builder(node: KernelNode) -> Any:
        if int_compute is not None and _is_int(node):
            return int_compute
        return float_compute

    register_kernel(op_type)(builder)


for _op, _fn in (
    ("Add", np.add),
    ("AddV2", np.add),
    ("Sub", np.subtract),
    ("Mul", np.multiply),
    ("Maximum", np.maximum),
    ("Minimum", np.minimum),
    ("Pow", np.power),
    ("Atan2", np.arctan2),
    ("Less", np.less),
    ("LessEqual", np.less_equal),
    ("Greater", np.greater),
    ("GreaterEqual", np.greater_equal),
    ("LogicalAnd", np.logical_and),
    ("LogicalOr", np.logical_or),
):
    register_compute(_op)(_binary_compute(_fn))

_register_binary("Div", np.true_divide, trunc_div)
_register_binary("RealDiv", np.true_divide, trunc_div)
_register_binary("TruncateDiv", lambda x, y: np.trunc(np.true_divide(x, y)), trunc_div)
_register_binary("FloorDiv", np.floor_divide, np.floor_divide)
_register_binary("FloorMod", np.remainder, np.remainder)
_register_binary("TruncateMod", np.fmod, np.fmod)


@register_compute("DivNoNan")
def _div_no_nan(ctx: Any, x: Any, y: Any) -> Any:
    try:
        q = np.true_divide(x, y)
    except ValueError as e:
        raise _incompatible(x, y, e) from None
    zero = np.equal(y, 0)
    if zero.any():
        q = np.where(zero, np.zeros((), q.dtype), q).astype(q.dtype, copy=False)
    return q


@register_kernel("SquaredDifference")
def _squared_difference(node: KernelNode) -> Any:
    if node.attrs["T"].is_complex:

        def sq_complex(x: Any, y: Any) -> Any:
            d = np.subtract(x, y)
            return np.multiply(d, np.conj(d))

        return _binary_compute(sq_complex)

    def sq(x: Any, y: Any) -> Any:
        d = np.subtract(x, y)
        return np.multiply(d, d, out=d) if type(d) is np.ndarray else d * d

    return _binary_compute(sq)


def _equality(fn: Any, mismatch: bool) -> Any:
    def builder(node: KernelNode) -> Any:
        if node.attrs.get("incompatible_shape_error", True):
            return _binary_compute(fn)

        def compute(ctx: Any, x: Any, y: Any) -> Any:
            try:
                return fn(x, y)
            except ValueError:
                return np.bool_(mismatch)

        return compute

    return builder


register_kernel("Equal")(_equality(np.equal, False))
register_kernel("NotEqual")(_equality(np.not_equal, True))


# ---------------------------------------------------------------------- unary
for _op, _fn in (
    ("Neg", np.negative),
    ("Square", np.square),
    ("Sqrt", np.sqrt),
    ("Exp", np.exp),
    ("Expm1", np.expm1),
    ("Log", np.log),
    ("Log1p", np.log1p),
    ("Abs", np.abs),
    ("Sign", np.sign),
    ("Floor", np.floor),
    ("Ceil", np.ceil),
    ("Rint", np.rint),
    ("Tanh", np.tanh),
    ("Sin", np.sin),
    ("Cos", np.cos),
    ("Tan", np.tan),
    ("Asin", np.arcsin),
    ("Acos", np.arccos),
    ("Atan", np.arctan),
    ("Sinh", np.sinh),
    ("Cosh", np.cosh),
    ("Asinh", np.arcsinh),
    ("Acosh", np.arccosh),
    ("Atanh", np.arctanh),
    ("IsNan", np.isnan),
    ("IsInf", np.isinf),
    ("IsFinite", np.isfinite),
    ("LogicalNot", np.logical_not),
):
    register_compute(_op)(lambda ctx, x, _f=_fn: _f(x))


@register_compute("Rsqrt")
def _rsqrt(ctx: Any, x: Any) -> Any:
    r = np.sqrt(x)
    return np.reciprocal(r, out=r) if type(r) is np.ndarray else np.reciprocal(r)


@register_kernel("Round")
def _round(node: KernelNode) -> Any:
    if node.attrs["T"].is_integer:
        return lambda ctx, x: x
    # NOTE: np.round rounds halves to even, TensorFlow's (banker's) rounding.
    return lambda ctx, x: np.round(x)


@register_kernel("Reciprocal")
def _reciprocal(node: KernelNode) -> Any:
    if not node.attrs["T"].is_integer:
        return lambda ctx, x: np.reciprocal(x)

    def compute(ctx: Any, x: Any) -> Any:
        if not np.all(x):
            raise errors.InvalidArgumentError(None, None, _INT_DIV_ZERO)
        return trunc_div(np.ones_like(x), x)

    return compute


@register_compute("Sigmoid")
def _sigmoid(ctx: Any, x: Any) -> Any:
    # 1 / (1 + exp(-x)): exp overflows to inf for very negative x, giving exactly 0.
    e = np.negative(x)
    if type(e) is np.ndarray:
        np.exp(e, out=e)
        np.add(e, 1, out=e)
        return np.reciprocal(e, out=e)
    return np.reciprocal(np.exp(e) + 1)


# ----------------------------------------------------------- gradient helpers
@register_compute("SqrtGrad")
def _sqrt_grad(ctx: Any, y: Any, dy: Any) -> Any:
    # dy * 0.5 / conj(y)
    return np.true_divide(np.multiply(dy, 0.5), np.conj(y))


@register_compute("RsqrtGrad")
def _rsqrt_grad(ctx: Any, y: Any, dy: Any) -> Any:
    # dy * -0.5 * conj(y)^3
    cy = np.conj(y)
    return np.multiply(np.multiply(dy, -0.5), cy * cy * cy)


def _fresh_like(t: Any, dy: Any) -> bool:
    """Whether `t` (a temporary of the kernel) can hold `dy * t` in place."""
    return type(t) is np.ndarray and type(dy) is np.ndarray and t.shape == dy.shape


@register_kernel("TanhGrad")
def _tanh_grad(node: KernelNode) -> Any:
    # NOTE: conj copies a real array; for real dtypes it is the identity.
    conj = np.conj if node.attrs["T"].is_complex else _same

    def compute(ctx: Any, y: Any, dy: Any) -> Any:
        # dy * (1 - conj(y)^2), the temporaries reused in place (same operations)
        cy = conj(y)
        t = cy * cy
        if _fresh_like(t, dy):
            np.subtract(1, t, out=t)
            return np.multiply(dy, t, out=t)
        return np.multiply(dy, 1 - t)

    return compute


@register_kernel("SigmoidGrad")
def _sigmoid_grad(node: KernelNode) -> Any:
    conj = np.conj if node.attrs["T"].is_complex else _same

    def compute(ctx: Any, y: Any, dy: Any) -> Any:
        # dy * (conj(y) * (1 - conj(y))), the temporary reused in place (same operations)
        cy = conj(y)
        t = 1 - cy
        if _fresh_like(t, dy):
            np.multiply(cy, t, out=t)
            return np.multiply(dy, t, out=t)
        return np.multiply(dy, cy * t)

    return compute


def _same(x: Any) -> Any:
    return x


@register_compute("ReciprocalGrad")
def _reciprocal_grad(ctx: Any, y: Any, dy: Any) -> Any:
    # -dy * conj(y)^2
    cy = np.conj(y)
    return np.multiply(np.negative(dy), cy * cy)


# ---------------------------------------------------------------------- casts
@register_kernel("Cast")
def _cast(node: KernelNode) -> Any:
    src, dst = node.attrs["SrcT"], node.attrs["DstT"]
    if src is dst:
        return lambda ctx, x: x
    for t in (src, dst):
        if not (t.is_floating or t.is_integer or t.is_complex or t.is_bool):
            raise errors.UnimplementedError(
                None, None, f"Cast {src.name} to {dst.name} is not supported"
            )
    npt = dst.as_numpy_dtype
    if src.is_complex and dst.is_bool:
        return lambda ctx, x: np.not_equal(x, 0)
    if src.is_complex and not dst.is_complex:
        return lambda ctx, x: np.real(x).astype(npt)
    return lambda ctx, x: x.astype(npt) if hasattr(x, "astype") else np.asarray(x, npt)


@register_compute("Conj")
def _conj(ctx: Any, x: Any) -> Any:
    return np.conj(x)


@register_kernel("CheckNumerics")
def _check_numerics(node: KernelNode) -> Any:
    message = node.attrs["message"]

    def compute(ctx: Any, x: Any) -> Any:
        if np.isfinite(x).all():
            return x
        has_nan, has_inf = bool(np.isnan(x).any()), bool(np.isinf(x).any())
        what = "Inf and NaN" if has_nan and has_inf else ("NaN" if has_nan else "Inf")
        raise errors.InvalidArgumentError(None, None, f"{message} : Tensor had {what} values")

    return compute


def broadcast_reduction_indices(sx: Any, sy: Any) -> tuple[list[int], list[int]] | None:
    """TensorFlow's `BCast` gradient reduction indices for shapes `sx` and `sy`.

    Returns None when the shapes do not broadcast. Dimensions where both are 1 are reduced
    for both inputs, as TensorFlow does; identical shapes reduce nothing.
    """
    sx, sy = [int(d) for d in sx], [int(d) for d in sy]
    if sx == sy:
        return [], []
    n = max(len(sx), len(sy))
    x = [1] * (n - len(sx)) + sx
    y = [1] * (n - len(sy)) + sy
    rx: list[int] = []
    ry: list[int] = []
    for i, (a, b) in enumerate(zip(x, y)):
        if a == b:
            if a == 1:
                rx.append(i)
                ry.append(i)
        elif a == 1:
            rx.append(i)
        elif b == 1:
            ry.append(i)
        else:
            return None
    return rx, ry


@register_kernel("BroadcastGradientArgs")
def _broadcast_gradient_args(node: KernelNode) -> Any:
    npt = node.attrs["T"].as_numpy_dtype

    def compute(ctx: Any, s0: Any, s1: Any) -> Any:
        for i, s in enumerate((s0, s1)):
            if np.ndim(s) != 1:
                raise errors.InvalidArgumentError(
                    None, None, f"In[{i}] must be a vector.{shape_str(np.shape(s))}"
                )
        r = broadcast_reduction_indices(s0, s1)
        if r is None:
            raise errors.InvalidArgumentError(
                None, None, f"Incompatible shapes: {shape_str(s0)} vs. {shape_str(s1)}"
            )
        return np.array(r[0], dtype=npt), np.array(r[1], dtype=npt)

    return compute
