"""Gradients of the math ops (follows TensorFlow's `math_grad.py`).

Broadcasting binary ops sum the gradient back to each input's shape. Where the reduction
indices are decidable from the static shapes they are computed while building the graph
(TensorFlow's `SmartBroadcastGradientArgs` does the same for fully defined shapes; here
partially known shapes such as `[None, 10] + [10]` qualify too whenever every dimension's
broadcast is certain), which saves the `Shape`/`BroadcastGradientArgs` ops and, when
nothing of an input's own dimensions is broadcast, the final `Reshape`. Otherwise the
gradient uses `Shape` + `BroadcastGradientArgs` + `Sum` + `Reshape`, as TensorFlow does.

TensorFlow wraps several gradients in `control_dependencies([grad])` only to delay their
computation on GPUs; that scheduling hint is omitted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import constant_op, cwise_ops, matmul_ops, reduction_ops
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient


def _array_ops() -> Any:
    # NOTE: array_ops is extended by another module; resolve it at gradient-build time.
    from tensorweave.ops import array_ops

    return array_ops


def _dense(grad: Any) -> Any:
    if grad is None or isinstance(grad, Tensor):
        return grad
    return convert_to_tensor(grad)


def _shape_tuple(t: Tensor) -> tuple[int | None, ...] | None:
    s = t.shape
    return None if s.ndims is None else tuple(s.as_list())


def _const(value: Any, dtype: dtypes.DType) -> Tensor:
    return constant_op.constant(value, dtype=dtype)


# ------------------------------------------------------- broadcasting gradients
def static_reduction_indices(
    xs: tuple[int | None, ...], ys: tuple[int | None, ...]
) -> tuple[list[int], list[int]] | None:
    """TensorFlow's `BroadcastGradientArgs` from (partial) static shapes, or None.

    None means that some dimension's broadcast depends on run-time sizes.

    Summing over a dimension of size 1 and reshaping back changes nothing, so an input
    whose dimension is 1 is always reduced there, and an input whose unknown dimension
    meets a 1 (or a missing dimension) on the other side is never reduced there.
    """
    if xs == ys and None not in xs:
        return [], []
    n = max(len(xs), len(ys))
    x = (1,) * (n - len(xs)) + tuple(xs)
    y = (1,) * (n - len(ys)) + tuple(ys)
    rx: list[int] = []
    ry: list[int] = []
    for i, (a, b) in enumerate(zip(x, y)):
        if a is None and b is None:
            return None
        if a is None:
            if b != 1:
                return None
            ry.append(i)
        elif b is None:
            if a != 1:
                return None
            rx.append(i)
        elif a == b:
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


def _sum_to_static(
    g: Tensor, x: Tensor, xs: tuple[int | None, ...], r: list[int], out_rank: int
) -> Tensor:
    if not r:
        return g
    s = reduction_ops.reduce_sum(g, r)
    lead = out_rank - len(xs)
    if all(a < lead for a in r):
        return s
    target: Any = list(xs) if None not in xs else _array_ops().shape(x)
    return _array_ops().reshape(s, target)


def _broadcast_reducers(x: Tensor, y: Tensor) -> tuple[Any, Any]:
    """Functions mapping a gradient of the broadcast shape to the shapes of `x` and `y`."""
    xs, ys = _shape_tuple(x), _shape_tuple(y)
    static = None if xs is None or ys is None else static_reduction_indices(xs, ys)
    if static is not None:
        rx, ry = static
        n = max(len(xs), len(ys))
        return (
            lambda g: _sum_to_static(g, x, xs, rx, n),
            lambda g: _sum_to_static(g, y, ys, ry, n),
        )
    array_ops = _array_ops()
    sx, sy = array_ops.shape(x), array_ops.shape(y)
    rx_t, ry_t = cwise_ops.broadcast_gradient_args(sx, sy)
    return (
        lambda g: array_ops.reshape(reduction_ops.reduce_sum(g, rx_t), sx),
        lambda g: array_ops.reshape(reduction_ops.reduce_sum(g, ry_t), sy),
    )


@RegisterGradient("Add")
@RegisterGradient("AddV2")
def _add_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    grad = _dense(grad)
    to_x, to_y = _broadcast_reducers(op.inputs[0], op.inputs[1])
    return to_x(grad), to_y(grad)


@RegisterGradient("Sub")
def _sub_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    grad = _dense(grad)
    to_x, to_y = _broadcast_reducers(op.inputs[0], op.inputs[1])
    return to_x(grad), to_y(cwise_ops.negative(grad))


@RegisterGradient("Mul")
def _mul_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    grad = _dense(grad)
    x, y = op.inputs
    to_x, to_y = _broadcast_reducers(x, y)
    cx, cy = cwise_ops.conj(x), cwise_ops.conj(y)
    return to_x(cwise_ops.multiply(grad, cy)), to_y(cwise_ops.multiply(cx, grad))


def _div_grad_with(divide: Any) -> Any:
    def grad_fn(op: Any, grad: Any) -> tuple[Any, Any]:
        grad = _dense(grad)
        x, y = op.inputs
        to_x, to_y = _broadcast_reducers(x, y)
        cx, cy = cwise_ops.conj(x), cwise_ops.conj(y)
        gx = divide(grad, cy)
        gy = cwise_ops.multiply(grad, divide(divide(cwise_ops.negative(cx), cy), cy))
        return to_x(gx), to_y(gy)

    return grad_fn


RegisterGradient("Div")(_div_grad_with(cwise_ops.divide))
RegisterGradient("RealDiv")(_div_grad_with(cwise_ops.realdiv))
RegisterGradient("DivNoNan")(_div_grad_with(cwise_ops.div_no_nan))


@RegisterGradient("FloorDiv")
def _floor_div_grad(op: Any, grad: Any) -> tuple[None, None]:
    return None, None


@RegisterGradient("TruncateDiv")
def _truncate_div_grad(op: Any, grad: Any) -> tuple[None, None]:
    return None, None


def _mod_grad_with(quotient: Any) -> Any:
    def grad_fn(op: Any, grad: Any) -> tuple[Any, Any]:
        grad = _dense(grad)
        x, y = op.inputs
        to_x, to_y = _broadcast_reducers(x, y)
        q = quotient(x, y)
        return to_x(grad), to_y(cwise_ops.multiply(grad, cwise_ops.negative(q)))

    return grad_fn


RegisterGradient("FloorMod")(_mod_grad_with(cwise_ops.floor_div))
RegisterGradient("TruncateMod")(_mod_grad_with(cwise_ops.truncatediv))


@RegisterGradient("Pow")
def _pow_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    """`grad * y * x^(y-1)` and `grad * z * log(x)` (0 where x <= 0, avoiding log(0))."""
    array_ops = _array_ops()
    grad = _dense(grad)
    x, y = op.inputs
    to_x, to_y = _broadcast_reducers(x, y)
    cx, cy = cwise_ops.conj(x), cwise_ops.conj(y)
    one = _const(1, y.dtype.base_dtype)
    gx = cwise_ops.multiply(
        cwise_ops.multiply(grad, cy), cwise_ops.pow(cx, cwise_ops.subtract(cy, one))
    )
    z = cwise_ops.conj(op.outputs[0])
    if cx.dtype.base_dtype.is_complex:
        mask = cwise_ops.not_equal(cx, _const(0, cx.dtype.base_dtype))
    else:
        mask = cwise_ops.greater(cx, _const(0, cx.dtype.base_dtype))
    safe_x = array_ops.where(mask, cx, array_ops.ones_like(cx))
    log_x = array_ops.where(mask, cwise_ops.log(safe_x), array_ops.zeros_like(cx))
    gy = cwise_ops.multiply(cwise_ops.multiply(grad, z), log_x)
    return to_x(gx), to_y(gy)


def _maximum_minimum_grad(op: Any, grad: Any, selector: Any) -> tuple[Any, Any]:
    array_ops = _array_ops()
    grad = _dense(grad)
    x, y = op.inputs
    to_x, to_y = _broadcast_reducers(x, y)
    zeros = array_ops.zeros_like(grad)
    xmask = selector(x, y)
    return (
        to_x(array_ops.where(xmask, grad, zeros)),
        to_y(array_ops.where(xmask, zeros, grad)),
    )


@RegisterGradient("Maximum")
def _maximum_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    return _maximum_minimum_grad(op, grad, cwise_ops.greater_equal)


@RegisterGradient("Minimum")
def _minimum_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    return _maximum_minimum_grad(op, grad, cwise_ops.less_equal)


@RegisterGradient("SquaredDifference")
def _squared_difference_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    grad = _dense(grad)
    x, y = op.inputs
    to_x, to_y = _broadcast_reducers(x, y)
    x_grad = cwise_ops.multiply(cwise_ops.scalar_mul(2.0, grad), cwise_ops.subtract(x, y))
    return to_x(x_grad), cwise_ops.negative(to_y(x_grad))


@RegisterGradient("Atan2")
def _atan2_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    grad = _dense(grad)
    y, x = op.inputs
    to_y, to_x = _broadcast_reducers(y, x)
    grad_inv = cwise_ops.divide(grad, cwise_ops.add(cwise_ops.square(x), cwise_ops.square(y)))
    return (
        to_y(cwise_ops.multiply(x, grad_inv)),
        to_x(cwise_ops.multiply(cwise_ops.negative(y), grad_inv)),
    )


for _name in (
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "Equal",
    "NotEqual",
    "LogicalAnd",
    "LogicalOr",
    "LogicalNot",
    "IsNan",
    "IsInf",
    "IsFinite",
    "ArgMax",
    "ArgMin",
    "All",
    "Any",
    "BroadcastGradientArgs",
):
    no_gradient(_name)


# ----------------------------------------------------------------------- unary
@RegisterGradient("Neg")
def _neg_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.negative(_dense(grad))


@RegisterGradient("Abs")
def _abs_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(_dense(grad), cwise_ops.sign(op.inputs[0]))


@RegisterGradient("Square")
def _square_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    two = _const(2.0, x.dtype.base_dtype)
    return cwise_ops.multiply(_dense(grad), cwise_ops.multiply(x, two))


@RegisterGradient("Sqrt")
def _sqrt_grad(op: Any, grad: Any) -> Any:
    return _unary_grad_op("SqrtGrad", op.outputs[0], grad)


@RegisterGradient("Rsqrt")
def _rsqrt_grad(op: Any, grad: Any) -> Any:
    return _unary_grad_op("RsqrtGrad", op.outputs[0], grad)


@RegisterGradient("Reciprocal")
def _reciprocal_grad(op: Any, grad: Any) -> Any:
    return _unary_grad_op("ReciprocalGrad", op.outputs[0], grad)


@RegisterGradient("Tanh")
def _tanh_grad(op: Any, grad: Any) -> Any:
    return _unary_grad_op("TanhGrad", cwise_ops.conj(op.outputs[0]), grad)


@RegisterGradient("Sigmoid")
def _sigmoid_grad(op: Any, grad: Any) -> Any:
    return _unary_grad_op("SigmoidGrad", cwise_ops.conj(op.outputs[0]), grad)


def _unary_grad_op(op_type: str, y: Tensor, dy: Any) -> Tensor:
    return apply_op(op_type, y=y, dy=_dense(dy))


@RegisterGradient("Exp")
def _exp_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(_dense(grad), cwise_ops.conj(op.outputs[0]))


@RegisterGradient("Expm1")
def _expm1_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(_dense(grad), cwise_ops.exp(cwise_ops.conj(op.inputs[0])))


@RegisterGradient("Log")
def _log_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    return cwise_ops.multiply(_dense(grad), cwise_ops.reciprocal(x))


@RegisterGradient("Log1p")
def _log1p_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    one = _const(1, x.dtype.base_dtype)
    return cwise_ops.multiply(_dense(grad), cwise_ops.reciprocal(cwise_ops.add(one, x)))


@RegisterGradient("Sign")
def _sign_grad(op: Any, grad: Any) -> Any:
    return _array_ops().zeros_like(op.inputs[0])


@RegisterGradient("Floor")
@RegisterGradient("Ceil")
@RegisterGradient("Round")
@RegisterGradient("Rint")
def _piecewise_constant_grad(op: Any, grad: Any) -> list[None]:
    return [None]


@RegisterGradient("Sin")
def _sin_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(_dense(grad), cwise_ops.cos(cwise_ops.conj(op.inputs[0])))


@RegisterGradient("Cos")
def _cos_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(
        cwise_ops.negative(_dense(grad)), cwise_ops.sin(cwise_ops.conj(op.inputs[0]))
    )


@RegisterGradient("Tan")
def _tan_grad(op: Any, grad: Any) -> Any:
    secx = cwise_ops.reciprocal(cwise_ops.cos(cwise_ops.conj(op.inputs[0])))
    return cwise_ops.multiply(cwise_ops.square(secx), _dense(grad))


def _one_minus_square(x: Tensor) -> Tensor:
    return cwise_ops.subtract(_const(1, x.dtype.base_dtype), cwise_ops.square(x))


@RegisterGradient("Asin")
def _asin_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    inv = cwise_ops.reciprocal(cwise_ops.sqrt(_one_minus_square(x)))
    return cwise_ops.multiply(_dense(grad), inv)


@RegisterGradient("Acos")
def _acos_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    inv = cwise_ops.reciprocal(cwise_ops.sqrt(_one_minus_square(x)))
    return cwise_ops.multiply(cwise_ops.negative(_dense(grad)), inv)


@RegisterGradient("Atan")
def _atan_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    one = _const(1, x.dtype.base_dtype)
    inv = cwise_ops.reciprocal(cwise_ops.add(one, cwise_ops.square(x)))
    return cwise_ops.multiply(_dense(grad), inv)


@RegisterGradient("Sinh")
def _sinh_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(_dense(grad), cwise_ops.cosh(cwise_ops.conj(op.inputs[0])))


@RegisterGradient("Cosh")
def _cosh_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.multiply(_dense(grad), cwise_ops.sinh(cwise_ops.conj(op.inputs[0])))


@RegisterGradient("Asinh")
def _asinh_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.divide(_dense(grad), cwise_ops.cosh(cwise_ops.conj(op.outputs[0])))


@RegisterGradient("Acosh")
def _acosh_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.divide(_dense(grad), cwise_ops.sinh(cwise_ops.conj(op.outputs[0])))


@RegisterGradient("Atanh")
def _atanh_grad(op: Any, grad: Any) -> Any:
    x = cwise_ops.conj(op.inputs[0])
    return cwise_ops.multiply(_dense(grad), cwise_ops.reciprocal(_one_minus_square(x)))


# ------------------------------------------- second order (the *Grad helper ops)
@RegisterGradient("SqrtGrad")
def _sqrt_grad_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    a = op.inputs[0]
    y = op.outputs[0]  # y = 0.5 * b / conj(a)
    ga = cwise_ops.divide(_dense(grad), a)
    half = _const(0.5, ga.dtype.base_dtype)
    return (
        cwise_ops.multiply(cwise_ops.negative(cwise_ops.conj(ga)), y),
        cwise_ops.multiply(half, ga),
    )


@RegisterGradient("RsqrtGrad")
def _rsqrt_grad_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    a, b = op.inputs  # y = -0.5 * b * conj(a)^3
    ca, cg = cwise_ops.conj(a), cwise_ops.conj(_dense(grad))
    k = _const(-1.5, ca.dtype.base_dtype)
    grad_a = cwise_ops.multiply(
        cwise_ops.multiply(cwise_ops.multiply(k, cg), b), cwise_ops.square(ca)
    )
    return grad_a, _unary_grad_op("RsqrtGrad", ca, grad)


@RegisterGradient("TanhGrad")
def _tanh_grad_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    a, b = (cwise_ops.conj(t) for t in op.inputs)  # y = b * (1 - a^2)
    grad = _dense(grad)
    k = _const(-2.0, a.dtype.base_dtype)
    return (
        cwise_ops.multiply(cwise_ops.multiply(cwise_ops.multiply(grad, k), b), a),
        _unary_grad_op("TanhGrad", a, grad),
    )


@RegisterGradient("SigmoidGrad")
def _sigmoid_grad_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    a, b = (cwise_ops.conj(t) for t in op.inputs)  # y = b * a * (1 - a)
    grad = _dense(grad)
    gb = cwise_ops.multiply(grad, b)
    two = _const(2.0, a.dtype.base_dtype)
    return (
        cwise_ops.subtract(gb, cwise_ops.multiply(cwise_ops.multiply(two, gb), a)),
        _unary_grad_op("SigmoidGrad", a, grad),
    )


@RegisterGradient("ReciprocalGrad")
def _reciprocal_grad_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    a, b = op.inputs  # y = -b * conj(a)^2
    ca, cg = cwise_ops.conj(a), cwise_ops.conj(_dense(grad))
    k = _const(-2.0, ca.dtype.base_dtype)
    return (
        cwise_ops.multiply(cwise_ops.multiply(cwise_ops.multiply(cg, k), b), ca),
        _unary_grad_op("ReciprocalGrad", ca, grad),
    )


# ---------------------------------------------------------- casts and checks
_FLOATING = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


@RegisterGradient("Cast")
def _cast_grad(op: Any, grad: Any) -> Any:
    src = op.inputs[0].dtype.base_dtype
    dst = grad.dtype.base_dtype
    if src in _FLOATING and dst in _FLOATING:
        return cwise_ops.cast(grad, src)
    return None


@RegisterGradient("Conj")
def _conj_grad(op: Any, grad: Any) -> Any:
    return cwise_ops.conj(_dense(grad))


@RegisterGradient("CheckNumerics")
def _check_numerics_grad(op: Any, grad: Any) -> Any:
    message = op.get_attr("message")
    if isinstance(message, bytes):
        message = message.decode("utf-8")
    return cwise_ops.check_numerics(
        _dense(grad),
        f"Not a number (NaN) or infinity (Inf) values detected in gradient. {message}",
    )


@RegisterGradient("AddN")
def _add_n_grad(op: Any, grad: Any) -> list[Any]:
    return [grad] * len(op.inputs)


# -------------------------------------------------------------------- matmul
@RegisterGradient("MatMul")
def _matmul_grad(op: Any, grad: Any) -> tuple[Any, Any]:
    grad = _dense(grad)
    t_a, t_b = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    a, b = cwise_ops.conj(op.inputs[0]), cwise_ops.conj(op.inputs[1])

    def mm(p: Tensor, q: Tensor, ta: bool = False, tb: bool = False) -> Tensor:
        return apply_op("MatMul", a=p, b=q, transpose_a=ta, transpose_b=tb)

    if not t_a and not t_b:
        return mm(grad, b, tb=True), mm(a, grad, ta=True)
    if not t_a and t_b:
        return mm(grad, b), mm(grad, a, ta=True)
    if t_a and not t_b:
        return mm(b, grad, tb=True), mm(a, grad)
    return mm(b, grad, ta=True, tb=True), mm(grad, a, ta=True, tb=True)


def _batch_matmul_grads(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    grad = _dense(grad)
    x, y = op.inputs
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    mm = matmul_ops.matmul
    if not adj_x:
        if not adj_y:
            return mm(grad, y, adjoint_b=True), mm(x, grad, adjoint_a=True)
        return mm(grad, y), mm(grad, x, adjoint_a=True)
    if not adj_y:
        return mm(y, grad, adjoint_b=True), mm(x, grad)
    return mm(y, grad, adjoint_a=True, adjoint_b=True), mm(grad, x, adjoint_a=True, adjoint_b=True)


@RegisterGradient("BatchMatMul")
def _batch_matmul_grad(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    return _batch_matmul_grads(op, grad)


@RegisterGradient("BatchMatMulV2")
def _batch_matmul_v2_grad(op: Any, grad: Any) -> tuple[Tensor, Tensor]:
    grad_x, grad_y = _batch_matmul_grads(op, grad)
    x, y = op.inputs
    xs, ys = _shape_tuple(x), _shape_tuple(y)
    if xs is not None and ys is not None:
        static = static_reduction_indices(xs[:-2], ys[:-2])
        if static is not None:
            n = max(len(xs), len(ys))
            rx, ry = static
            return _sum_to_static(grad_x, x, xs, rx, n), _sum_to_static(grad_y, y, ys, ry, n)
    array_ops = _array_ops()
    sx, sy = array_ops.shape(x), array_ops.shape(y)
    rx_t, ry_t = cwise_ops.broadcast_gradient_args(sx[:-2], sy[:-2])
    return (
        array_ops.reshape(reduction_ops.reduce_sum(grad_x, rx_t), sx),
        array_ops.reshape(reduction_ops.reduce_sum(grad_y, ry_t), sy),
    )


# ----------------------------------------------------------------- reductions
def _reduction_layout(x: Tensor, axes_t: Tensor) -> tuple[Any, Any, list[int] | None]:
    """How a reduction of `x` over `axes_t` maps back to `x`: `(kept, multiples, axes)`.

    `kept` is the keep-dims shape (a list with at most one -1 when static, else a Tensor),
    `multiples` the Tile multiples back to `x`'s shape (a list when static, else a
    Tensor), `axes` the sorted reduced axes when static, else None.
    """
    array_ops = _array_ops()
    shape = x.shape
    axes = constant_value(axes_t)
    if shape.ndims is not None and axes is not None:
        rank = shape.ndims
        red = sorted({int(a) % rank for a in np.asarray(axes).reshape(-1).tolist()}) if rank else []
        dims = shape.as_list()
        kept = [1 if i in red else d for i, d in enumerate(dims)]
        mult = [d if i in red else 1 for i, d in enumerate(dims)]
        kept_t: Any
        if None not in kept:
            kept_t = kept
        elif kept.count(None) == 1 and 0 not in kept:
            kept_t = [-1 if d is None else d for d in kept]
        else:
            kept_t = reduction_ops.reduced_shape(array_ops.shape(x), red)
        mult_t: Any
        if None not in mult:
            mult_t = mult
        elif len(red) == rank:
            mult_t = array_ops.shape(x)
        else:
            mask = np.array([1 if i in red else 0 for i in range(rank)], dtype=np.int32)
            mult_t = cwise_ops.add(
                cwise_ops.multiply(array_ops.shape(x), _const(mask, dtypes.int32)),
                _const(1 - mask, dtypes.int32),
            )
        return kept_t, mult_t, red
    in_shape = array_ops.shape(x)
    kept_dyn = reduction_ops.reduced_shape(in_shape, axes_t)
    mult_dyn = cwise_ops.floor_div(in_shape, cwise_ops.maximum(kept_dyn, 1))
    return kept_dyn, mult_dyn, None


def _reshape_unless_same(g: Tensor, target: Any) -> Tensor:
    if isinstance(target, list) and -1 not in target and _shape_tuple(g) == tuple(target):
        return g
    return _array_ops().reshape(g, target)


def _sum_grad_and_multiples(op: Any, grad: Any) -> tuple[Tensor, Any]:
    grad = _dense(grad)
    kept, mult, _ = _reduction_layout(op.inputs[0], op.inputs[1])
    g = _reshape_unless_same(grad, kept)
    if isinstance(mult, list) and all(m == 1 for m in mult):
        return g, mult
    return _array_ops().tile(g, mult), mult


@RegisterGradient("Sum")
def _sum_grad(op: Any, grad: Any) -> tuple[Tensor, None]:
    return _sum_grad_and_multiples(op, grad)[0], None


@RegisterGradient("Mean")
def _mean_grad(op: Any, grad: Any) -> tuple[Tensor, None]:
    sum_grad, mult = _sum_grad_and_multiples(op, grad)
    dt = sum_grad.dtype.base_dtype
    if isinstance(mult, list):
        factor = _const(int(np.prod(mult, dtype=np.int64)), dt)
    else:
        factor = cwise_ops.cast(reduction_ops.reduce_prod(mult), dt)
    return cwise_ops.truediv(sum_grad, factor), None


def _min_or_max_grad(op: Any, grad: Any) -> tuple[Tensor, None]:
    """Splits the gradient evenly between the inputs that equal the extremum (TF's rule)."""
    grad = _dense(grad)
    x, axes = op.inputs
    y = op.outputs[0]
    kept, _, _ = _reduction_layout(x, axes)
    if not op.get_attr("keep_dims"):
        y = _reshape_unless_same(y, kept)
        grad = _reshape_unless_same(grad, kept)
    indicators = cwise_ops.cast(cwise_ops.equal(y, x), grad.dtype.base_dtype)
    num_selected = reduction_ops.reduce_sum(indicators, axes, keepdims=True)
    return cwise_ops.multiply(cwise_ops.divide(indicators, num_selected), grad), None


RegisterGradient("Max")(_min_or_max_grad)
RegisterGradient("Min")(_min_or_max_grad)


@RegisterGradient("Prod")
def _prod_grad(op: Any, grad: Any) -> tuple[Tensor, None]:
    """Products of all other entries, from exclusive cumprods of each side (TF's method).

    Zeros in the input are handled exactly.

    Raises:
      ValueError: when the input rank or the reduction axes are not known statically.
    """
    array_ops = _array_ops()
    x, axes = op.inputs
    kept, mult, red = _reduction_layout(x, axes)
    if red is None:
        raise ValueError(
            f"The gradient of {op.name} (Prod) needs a static input rank and constant "
            "reduction indices"
        )
    grad = _reshape_unless_same(_dense(grad), kept)
    if not (isinstance(mult, list) and all(m == 1 for m in mult)):
        grad = array_ops.tile(grad, mult)
    rank = x.shape.ndims
    if rank == 0:
        return grad, None
    other = [i for i in range(rank) if i not in red]
    perm = red + other
    dims = x.shape.as_list()
    reduced_num = (
        None if any(dims[i] is None for i in red) else int(np.prod([dims[i] for i in red]))
    )
    other_num = (
        None if any(dims[i] is None for i in other) else int(np.prod([dims[i] for i in other]))
    )
    permuted = x if perm == list(range(rank)) else array_ops.transpose(x, perm)
    if reduced_num is not None and other_num is not None:
        target: Any = [reduced_num, other_num]
    elif reduced_num:
        target = [reduced_num, -1]
    elif other_num:
        target = [-1, other_num]
    else:
        in_shape = array_ops.shape(x)
        target = array_ops.stack(
            [
                reduction_ops.reduce_prod(array_ops.gather(in_shape, red)),
                reduction_ops.reduce_prod(array_ops.gather(in_shape, other)),
            ]
        )
    reshaped = array_ops.reshape(permuted, target)
    left = reduction_ops.cumprod(reshaped, axis=0, exclusive=True)
    right = reduction_ops.cumprod(reshaped, axis=0, exclusive=True, reverse=True)
    product = cwise_ops.multiply(cwise_ops.conj(left), cwise_ops.conj(right))
    permuted_dims = [dims[p] for p in perm]
    permuted_shape: Any = permuted_dims if None not in permuted_dims else array_ops.shape(permuted)
    y = array_ops.reshape(product, permuted_shape)
    if perm != list(range(rank)):
        y = array_ops.transpose(y, [int(i) for i in np.argsort(perm)])
    return cwise_ops.multiply(grad, y), None


@RegisterGradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op: Any, grad: Any) -> tuple[Tensor, None, None]:
    """Gathers the gradient rows back; rows of negative (dropped) ids get zeros."""
    array_ops = _array_ops()
    grad = _dense(grad)
    ids = op.inputs[1]
    ids_v = constant_value(ids)
    if ids_v is not None and (np.asarray(ids_v) >= 0).all():
        return array_ops.gather(grad, ids), None, None
    zero = _const(0, ids.dtype.base_dtype)
    gathered = array_ops.gather(grad, cwise_ops.maximum(ids, zero))
    is_positive = cwise_ops.greater_equal(ids, zero)
    ids_rank, grad_rank = ids.shape.ndims, grad.shape.ndims
    if ids_rank is not None and grad_rank is not None:
        k = grad_rank - 1
        ids_dims = ids.shape.as_list()
        if k and ids_dims.count(None) <= 1:
            target = [-1 if d is None else d for d in ids_dims] + [1] * k
            is_positive = array_ops.reshape(is_positive, target)
        elif k:
            for _ in range(k):
                is_positive = array_ops.expand_dims(is_positive, -1)
    else:
        # Unknown ranks: make the mask's rank match by reshaping to shape(ids) + ones.
        ones = array_ops.ones_like(array_ops.shape(grad))
        tail = ones[1:]
        is_positive = array_ops.reshape(
            is_positive, array_ops.concat([array_ops.shape(ids), tail], 0)
        )
    is_positive = cwise_ops.logical_and(
        is_positive, array_ops.ones_like(gathered, dtype=dtypes.bool)
    )
    return array_ops.where(is_positive, gathered, array_ops.zeros_like(gathered)), None, None


@RegisterGradient("Cumsum")
def _cumsum_grad(op: Any, grad: Any) -> tuple[Tensor, None]:
    return reduction_ops.cumsum(
        _dense(grad),
        op.inputs[1],
        exclusive=op.get_attr("exclusive"),
        reverse=not op.get_attr("reverse"),
    ), None


@RegisterGradient("Cumprod")
def _cumprod_grad(op: Any, grad: Any) -> tuple[Tensor, None]:
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    # NOTE: as in TensorFlow, this divides by x and so fails where x contains 0.
    prod = reduction_ops.cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = reduction_ops.cumsum(
        cwise_ops.multiply(prod, _dense(grad)), axis, exclusive=exclusive, reverse=not reverse
    )
    return cwise_ops.divide(out, x), None
