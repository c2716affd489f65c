"""Gradient-check cases of the math ops (consumed by the gradient checker tests).

Each case builds a small float64 graph around one math op. Broadcasting cases cover
`[3, 1]` vs `[1, 4]`, scalar vs matrix and vector vs matrix; `dynamic` cases hide the
static shapes behind `placeholder_with_default` so that the gradients take their
run-time (`Shape` + `BroadcastGradientArgs` / `reduced_shape`) paths.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import array_ops, constant_op, math_ops
from tensorweave.testing.gradient_case import GradientCase

_POSITIVE = (0.5, 2.0)


def _unknown(x: Any) -> Any:
    """`x` with an unknown static shape of the same rank."""
    return array_ops.placeholder_with_default(x, [None] * x.shape.ndims)


def _unknown_rank(x: Any) -> Any:
    """`x` with an unknown static rank."""
    return array_ops.placeholder_with_default(x, None)


def _op(op_type: str, **inputs: Any) -> Any:
    return apply_op(op_type, **inputs)


def _binary_cases(op_type: str, fn: Any, input_range: tuple[float, float] = (-1.0, 1.0)):
    return [
        GradientCase(op_type, fn, ((2, 3), (2, 3)), "same", input_range),
        GradientCase(op_type, fn, ((3, 1), (1, 4)), "3x1_1x4", input_range),
        GradientCase(op_type, fn, ((), (2, 3)), "scalar_matrix", input_range),
        GradientCase(op_type, fn, ((2, 3), (3,)), "matrix_vector", input_range),
        GradientCase(
            op_type,
            lambda x, y: fn(_unknown(x), _unknown(y)),
            ((3, 1), (1, 4)),
            "dynamic",
            input_range,
        ),
        GradientCase(
            op_type,
            lambda x, y: fn(_unknown_rank(x), y),
            ((2, 3), (3,)),
            "unknown_rank",
            input_range,
        ),
    ]


BINARY_CASES: list[GradientCase] = [
    *_binary_cases("AddV2", lambda x, y: x + y),
    GradientCase("Add", math_ops.add, ((2, 3), (3,)), "matrix_vector"),
    GradientCase("Add", math_ops.add, ((3, 1), (1, 4)), "3x1_1x4"),
    *_binary_cases("Sub", math_ops.subtract),
    *_binary_cases("Mul", math_ops.multiply),
    *_binary_cases("RealDiv", math_ops.realdiv, _POSITIVE),
    GradientCase("Div", lambda x, y: _op("Div", x=x, y=y), ((3, 1), (1, 4)), "3x1_1x4", _POSITIVE),
    GradientCase("DivNoNan", math_ops.div_no_nan, ((3, 1), (1, 4)), "3x1_1x4", _POSITIVE),
    *_binary_cases("Pow", math_ops.pow, _POSITIVE),
    *_binary_cases("Maximum", math_ops.maximum),
    *_binary_cases("Minimum", math_ops.minimum),
    *_binary_cases("SquaredDifference", math_ops.squared_difference),
    GradientCase("Atan2", math_ops.atan2, ((3, 1), (1, 4)), "3x1_1x4"),
    GradientCase("FloorMod", math_ops.floormod, ((3, 1), (1, 4)), "3x1_1x4", _POSITIVE),
    GradientCase("TruncateMod", math_ops.truncatemod, ((2, 3), (3,)), "", _POSITIVE),
    GradientCase("FloorDiv", math_ops.floor_div, ((2, 3), (2, 3)), "", _POSITIVE),
    GradientCase("TruncateDiv", math_ops.truncatediv, ((2, 3), (2, 3)), "", _POSITIVE),
]

UNARY_CASES: list[GradientCase] = [
    GradientCase("Neg", math_ops.negative, ((2, 3),)),
    GradientCase("Neg", lambda x: -x, ((),), "operator_scalar"),
    GradientCase("Abs", math_ops.abs, ((2, 3),)),
    GradientCase("Square", math_ops.square, ((2, 3),)),
    GradientCase("Sqrt", math_ops.sqrt, ((2, 3),), "", _POSITIVE),
    GradientCase("Rsqrt", math_ops.rsqrt, ((2, 3),), "", _POSITIVE),
    GradientCase("Reciprocal", math_ops.reciprocal, ((2, 3),), "", _POSITIVE),
    GradientCase("Exp", math_ops.exp, ((2, 3),)),
    GradientCase("Expm1", math_ops.expm1, ((2, 3),)),
    GradientCase("Log", math_ops.log, ((2, 3),), "", _POSITIVE),
    GradientCase("Log1p", math_ops.log1p, ((2, 3),), "", _POSITIVE),
    GradientCase("Tanh", math_ops.tanh, ((2, 3),)),
    GradientCase("Sigmoid", math_ops.sigmoid, ((2, 3),), "", (-3.0, 3.0)),
    GradientCase("Sign", math_ops.sign, ((2, 3),)),
    GradientCase("Floor", math_ops.floor, ((2, 3),), "", (0.1, 0.9)),
    GradientCase("Ceil", math_ops.ceil, ((2, 3),), "", (0.1, 0.9)),
    GradientCase("Round", math_ops.round, ((2, 3),), "", (0.1, 0.4)),
    GradientCase("Rint", math_ops.rint, ((2, 3),), "", (0.1, 0.4)),
    GradientCase("Sin", math_ops.sin, ((2, 3),)),
    GradientCase("Cos", math_ops.cos, ((2, 3),)),
    GradientCase("Tan", math_ops.tan, ((2, 3),)),
    GradientCase("Asin", math_ops.asin, ((2, 3),), "", (-0.9, 0.9)),
    GradientCase("Acos", math_ops.acos, ((2, 3),), "", (-0.9, 0.9)),
    GradientCase("Atan", math_ops.atan, ((2, 3),)),
    GradientCase("Sinh", math_ops.sinh, ((2, 3),)),
    GradientCase("Cosh", math_ops.cosh, ((2, 3),)),
    GradientCase("Asinh", math_ops.asinh, ((2, 3),)),
    GradientCase("Acosh", math_ops.acosh, ((2, 3),), "", (1.5, 3.0)),
    GradientCase("Atanh", math_ops.atanh, ((2, 3),), "", (-0.9, 0.9)),
    GradientCase("CheckNumerics", lambda x: math_ops.check_numerics(x, "bad"), ((2, 3),)),
    GradientCase("Cast", lambda x: math_ops.cast(x, dtypes.float32), ((2, 3),), "to_float32"),
    GradientCase(
        "Conj",
        lambda x: math_ops.cast(math_ops.conj(math_ops.cast(x, dtypes.complex128)), dtypes.float64),
        ((2, 3),),
        "via_complex",
    ),
]

# The *Grad helper ops, differentiated once more (second-order gradients).
SECOND_ORDER_CASES: list[GradientCase] = [
    GradientCase(name, lambda y, dy, _n=name: _op(_n, y=y, dy=dy), ((2, 3), (2, 3)), "", _POSITIVE)
    for name in ("SqrtGrad", "RsqrtGrad", "TanhGrad", "SigmoidGrad", "ReciprocalGrad")
]

MATMUL_CASES: list[GradientCase] = [
    GradientCase("MatMul", math_ops.matmul, ((2, 3), (3, 4)), "plain"),
    GradientCase(
        "MatMul",
        lambda a, b: math_ops.matmul(a, b, transpose_a=True),
        ((3, 2), (3, 4)),
        "transpose_a",
    ),
    GradientCase(
        "MatMul",
        lambda a, b: math_ops.matmul(a, b, transpose_b=True),
        ((2, 3), (4, 3)),
        "transpose_b",
    ),
    GradientCase(
        "MatMul",
        lambda a, b: math_ops.matmul(a, b, transpose_a=True, transpose_b=True),
        ((3, 2), (4, 3)),
        "transpose_both",
    ),
    GradientCase("MatMul", lambda a, b: a @ b, ((1, 3), (3, 1)), "operator"),
    GradientCase(
        "MatMul",
        lambda a, b: math_ops.tensordot(a, b, [[0, 2], [1, 0]]),
        ((2, 3, 4), (4, 2, 2)),
        "tensordot",
    ),
    GradientCase("BatchMatMulV2", math_ops.matmul, ((2, 2, 3), (2, 3, 4)), "plain"),
    GradientCase(
        "BatchMatMulV2",
        lambda a, b: math_ops.matmul(a, b, adjoint_a=True),
        ((2, 3, 2), (2, 3, 4)),
        "adjoint_a",
    ),
    GradientCase(
        "BatchMatMulV2",
        lambda a, b: math_ops.matmul(a, b, adjoint_b=True),
        ((2, 2, 3), (2, 4, 3)),
        "adjoint_b",
    ),
    GradientCase(
        "BatchMatMulV2",
        lambda a, b: math_ops.matmul(a, b, transpose_a=True, transpose_b=True),
        ((2, 3, 2), (2, 4, 3)),
        "transpose_both",
    ),
    GradientCase("BatchMatMulV2", math_ops.matmul, ((2, 1, 2, 3), (3, 3, 2)), "broadcast_batch"),
    GradientCase("BatchMatMulV2", math_ops.matmul, ((2, 2, 3), (3, 4)), "broadcast_matrix"),
    GradientCase(
        "BatchMatMulV2",
        lambda a, b: math_ops.matmul(_unknown(a), _unknown(b)),
        ((2, 1, 2, 3), (3, 3, 2)),
        "dynamic",
    ),
    GradientCase(
        "BatchMatMul",
        lambda x, y: _op("BatchMatMul", x=x, y=y, adj_y=True),
        ((2, 2, 3), (2, 4, 3)),
        "adj_y",
    ),
]


def _reduction_cases(op_type: str, fn: Any, input_range: tuple[float, float] = (-1.0, 1.0)):
    return [
        GradientCase(op_type, lambda x: fn(x), ((2, 3),), "all", input_range),
        GradientCase(op_type, lambda x: fn(x, axis=1), ((2, 3),), "axis1", input_range),
        GradientCase(
            op_type,
            lambda x: fn(x, axis=0, keepdims=True),
            ((2, 3),),
            "axis0_keepdims",
            input_range,
        ),
        GradientCase(op_type, lambda x: fn(x, axis=[0, 2]), ((2, 3, 2),), "axes02", input_range),
        GradientCase(
            op_type,
            lambda x: fn(x, axis=-1, keepdims=True),
            ((2, 2, 3),),
            "negative_keepdims",
            input_range,
        ),
        GradientCase(op_type, lambda x: fn(x, axis=[]), ((2, 3),), "no_axes", input_range),
        GradientCase(
            op_type, lambda x: fn(_unknown(x), axis=1), ((3, 2, 2),), "dynamic", input_range
        ),
        GradientCase(
            op_type,
            lambda x: fn(array_ops.placeholder_with_default(x, [None, 3]), axis=0),
            ((4, 3),),
            "batch",
            input_range,
        ),
        GradientCase(
            op_type, lambda x: fn(_unknown_rank(x)), ((2, 3),), "unknown_rank_all", input_range
        ),
        GradientCase(
            op_type,
            lambda x: fn(_unknown_rank(x), axis=[1], keepdims=True),
            ((2, 3, 2),),
            "unknown_rank_keepdims",
            input_range,
        ),
        GradientCase(
            op_type,
            lambda x: fn(_unknown_rank(x), keepdims=True),
            ((2, 3),),
            "unknown_rank_all_keepdims",
            input_range,
        ),
    ]


REDUCTION_CASES: list[GradientCase] = [
    *_reduction_cases("Sum", math_ops.reduce_sum),
    *_reduction_cases("Mean", math_ops.reduce_mean),
    *_reduction_cases("Max", math_ops.reduce_max),
    *_reduction_cases("Min", math_ops.reduce_min),
    GradientCase("Prod", lambda x: math_ops.reduce_prod(x), ((2, 3),), "all", _POSITIVE),
    GradientCase("Prod", lambda x: math_ops.reduce_prod(x, axis=1), ((2, 3),), "axis1", _POSITIVE),
    GradientCase(
        "Prod",
        lambda x: math_ops.reduce_prod(x, axis=[0, 2], keepdims=True),
        ((2, 3, 2),),
        "axes02_keepdims",
        _POSITIVE,
    ),
    GradientCase("Prod", lambda x: math_ops.reduce_prod(x, axis=-1), ((2, 3),), "negative"),
    GradientCase(
        "Prod",
        lambda x: math_ops.reduce_prod(array_ops.placeholder_with_default(x, [None, 3]), 0),
        ((4, 3),),
        "batch",
    ),
    GradientCase("AddN", lambda a, b, c: math_ops.add_n([a, b, c]), ((2, 3),) * 3),
    GradientCase(
        "UnsortedSegmentSum",
        lambda d: math_ops.unsorted_segment_sum(d, constant_op.constant([0, 2, 0, 1]), 3),
        ((4, 2),),
        "rows",
    ),
    GradientCase(
        "UnsortedSegmentSum",
        lambda d: math_ops.unsorted_segment_sum(d, constant_op.constant([[0, -1], [2, 0]]), 3),
        ((2, 2, 3),),
        "negative_ids",
    ),
    GradientCase("Cumsum", lambda x: math_ops.cumsum(x, axis=1), ((2, 3),), "axis1"),
    GradientCase(
        "Cumsum",
        lambda x: math_ops.cumsum(x, exclusive=True, reverse=True),
        ((4,),),
        "exclusive_reverse",
    ),
    GradientCase("Cumprod", lambda x: math_ops.cumprod(x, axis=1), ((2, 3),), "axis1", _POSITIVE),
    GradientCase(
        "Cumprod",
        lambda x: math_ops.cumprod(x, exclusive=True, reverse=True),
        ((4,),),
        "exclusive_reverse",
        _POSITIVE,
    ),
]

CASES: list[GradientCase] = [
    *BINARY_CASES,
    *UNARY_CASES,
    *SECOND_ORDER_CASES,
    *MATMUL_CASES,
    *REDUCTION_CASES,
]
