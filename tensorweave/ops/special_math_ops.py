"""Special functions and other math compositions (follows TF 1.x `tf.math.lgamma`,
`digamma`, `erf`, `erfc`, `betainc`, `igamma`, `igammac`, `zeta`, `polygamma`, `lbeta`,
`polyval`, `xlogy`, `xdivy`, `reduce_std`, `erfinv`, `ndtri`, `bessel_i0`, ...).

Element-wise ops broadcast like the binary math ops; float inputs (float16/32/64).
"""

from __future__ import annotations

from typing import Any

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, cwise_ops, nn_ops, reduction_ops


def lgamma(x: Any, name: str | None = None) -> Tensor:
    """`log(|Gamma(x)|)`, inf at the poles (op `Lgamma`)."""
    return apply_op("Lgamma", x=x, name=name)


def digamma(x: Any, name: str | None = None) -> Tensor:
    """`d/dx log(Gamma(x))`, NaN at the poles (op `Digamma`)."""
    return apply_op("Digamma", x=x, name=name)


def erf(x: Any, name: str | None = None) -> Tensor:
    """The Gauss error function (op `Erf`)."""
    return apply_op("Erf", x=x, name=name)


def erfc(x: Any, name: str | None = None) -> Tensor:
    """`1 - erf(x)`, computed without cancellation (op `Erfc`)."""
    return apply_op("Erfc", x=x, name=name)


def erfinv(x: Any, name: str | None = None) -> Tensor:
    """The inverse error function on (-1, 1) (op `Erfinv`)."""
    return apply_op("Erfinv", x=x, name=name)


def ndtri(x: Any, name: str | None = None) -> Tensor:
    """The standard normal quantile function on (0, 1) (op `Ndtri`)."""
    return apply_op("Ndtri", x=x, name=name)


def erfcinv(x: Any, name: str | None = None) -> Tensor:
    """The inverse of erfc on (0, 2): `-ndtri(x / 2) / sqrt(2)` (follows
    `tf.math.erfcinv`)."""
    with graph_mod.name_scope(name, "erfcinv", [x]):
        x = convert_to_tensor(x, name="x")
        return -ndtri(0.5 * x) * (2.0**-0.5)


def bessel_i0(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function of the first kind, order 0 (op `BesselI0`)."""
    return apply_op("BesselI0", x=x, name=name)


def bessel_i1(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function of the first kind, order 1 (op `BesselI1`)."""
    return apply_op("BesselI1", x=x, name=name)


def bessel_i0e(x: Any, name: str | None = None) -> Tensor:
    """`exp(-|x|) * bessel_i0(x)`, without overflow (op `BesselI0e`)."""
    return apply_op("BesselI0e", x=x, name=name)


def bessel_i1e(x: Any, name: str | None = None) -> Tensor:
    """`exp(-|x|) * bessel_i1(x)`, without overflow (op `BesselI1e`)."""
    return apply_op("BesselI1e", x=x, name=name)


def nextafter(x1: Any, x2: Any, name: str | None = None) -> Tensor:
    """The next representable value after `x1` towards `x2` (op `NextAfter`)."""
    return apply_op("NextAfter", x1=x1, x2=x2, name=name)


def igamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x) (op `Igamma`)."""
    return apply_op("Igamma", a=a, x=x, name=name)


def igammac(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The regularized upper incomplete gamma function Q(a, x) (op `Igammac`)."""
    return apply_op("Igammac", a=a, x=x, name=name)


def zeta(x: Any, q: Any, name: str | None = None) -> Tensor:
    """The Hurwitz zeta function `sum_n (q + n)^-x` (op `Zeta`; NaN for x < 1)."""
    return apply_op("Zeta", x=x, q=q, name=name)


def polygamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The a-th derivative of digamma at x, for integer-valued a >= 0 (op `Polygamma`)."""
    return apply_op("Polygamma", a=a, x=x, name=name)


def betainc(a: Any, b: Any, x: Any, name: str | None = None) -> Tensor:
    """The regularized incomplete beta function I_x(a, b) (op `Betainc`); a, b, x
    broadcast (each a scalar or of one common shape)."""
    return apply_op("Betainc", a=a, b=b, x=x, name=name)


def lbeta(x: Any, name: str | None = None) -> Tensor:
    """`log(|Beta(x)|)` over the last dimension: `sum(lgamma(x)) - lgamma(sum(x))`
    (follows `tf.math.lbeta`)."""
    with graph_mod.name_scope(name, "lbeta", [x]):
        x = convert_to_tensor(x, name="x")
        log_prod = reduction_ops.reduce_sum(lgamma(x), axis=[-1])
        return log_prod - lgamma(reduction_ops.reduce_sum(x, axis=[-1]))


def polyval(coeffs: list[Any], x: Any, name: str | None = None) -> Tensor:
    """`coeffs[0] * x**(n-1) + ... + coeffs[n-1]` by Horner's rule (`tf.math.polyval`).

    Raises:
      ValueError: if `coeffs` is not a list.
    """
    if not isinstance(coeffs, list | tuple):
        raise ValueError(f"Argument coeffs must be list type found {type(coeffs)}.")
    with graph_mod.name_scope(name, "polyval", [*coeffs, x]):
        x = convert_to_tensor(x, name="x")
        if not coeffs:
            return array_ops.zeros_like(x)
        p = convert_to_tensor(coeffs[0], dtype=x.dtype)
        for c in coeffs[1:]:
            p = convert_to_tensor(c, dtype=x.dtype) + p * x
        return p


def _where_zero(x: Any, value: Tensor) -> Tensor:
    """`value`, with 0 where (the broadcast) `x` is 0."""
    zeros = array_ops.zeros_like(value)
    return array_ops.where(cwise_ops.equal(x + zeros, zeros), zeros, value)


def xlogy(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x * log(y)`, and 0 where x == 0 (follows `tf.math.xlogy`)."""
    with graph_mod.name_scope(name, "xlogy", [x, y]):
        x, y = convert_to_tensor(x, name="x"), convert_to_tensor(y, name="y")
        return _where_zero(x, x * cwise_ops.log(y))


def xlog1py(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x * log1p(y)`, and 0 where x == 0 (follows `tf.math.xlog1py`)."""
    with graph_mod.name_scope(name, "xlog1py", [x, y]):
        x, y = convert_to_tensor(x, name="x"), convert_to_tensor(y, name="y")
        return _where_zero(x, x * cwise_ops.log1p(y))


def xdivy(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x / y`, and 0 where x == 0 (follows `tf.math.xdivy`)."""
    with graph_mod.name_scope(name, "xdivy", [x, y]):
        x, y = convert_to_tensor(x, name="x"), convert_to_tensor(y, name="y")
        return _where_zero(x, x / y)


def multiply_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x * y`, and 0 where y == 0 even if x is inf/NaN (`tf.math.multiply_no_nan`)."""
    with graph_mod.name_scope(name, "multiply_no_nan", [x, y]):
        x, y = convert_to_tensor(x, name="x"), convert_to_tensor(y, name="y")
        return _where_zero(y, x * y)


def reciprocal_no_nan(x: Any, name: str | None = None) -> Tensor:
    """`1 / x`, and 0 where x == 0 (follows `tf.math.reciprocal_no_nan`)."""
    with graph_mod.name_scope(name, "reciprocal_no_nan", [x]):
        x = convert_to_tensor(x, name="x")
        return cwise_ops.div_no_nan(array_ops.ones_like(x), x)


def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                    name: str | None = None) -> Tensor:
    """The population variance over `axis` (follows `tf.math.reduce_variance`)."""
    with graph_mod.name_scope(name, "reduce_variance", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        mean = reduction_ops.reduce_mean(x, axis=axis, keepdims=True)
        sq = cwise_ops.square(x - mean)
        return reduction_ops.reduce_mean(sq, axis=axis, keepdims=keepdims)


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """The population standard deviation over `axis` (follows `tf.math.reduce_std`)."""
    with graph_mod.name_scope(name, "reduce_std", [input_tensor]):
        return cwise_ops.sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def reduce_euclidean_norm(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                          name: str | None = None) -> Tensor:
    """`sqrt(sum(x**2))` over `axis` (follows `tf.math.reduce_euclidean_norm`)."""
    with graph_mod.name_scope(name, "reduce_euclidean_norm", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        total = reduction_ops.reduce_sum(cwise_ops.square(x), axis=axis, keepdims=keepdims)
        return cwise_ops.sqrt(total)


def cumulative_logsumexp(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
                         name: str | None = None) -> Tensor:
    """`log(cumsum(exp(x)))` along `axis`, shifted by the maximum for stability (follows
    `tf.math.cumulative_logsumexp`)."""
    with graph_mod.name_scope(name, "CumulativeLogsumexp", [x]):
        x = convert_to_tensor(x, name="x")
        top = array_ops.stop_gradient(reduction_ops.reduce_max(x, axis=axis, keepdims=True))
        sums = reduction_ops.cumsum(cwise_ops.exp(x - top), axis=axis, exclusive=exclusive,
                                    reverse=reverse)
        return cwise_ops.log(sums) + top


def log_sigmoid(x: Any, name: str | None = None) -> Tensor:
    """`log(sigmoid(x)) = -softplus(-x)`, stable for large |x| (`tf.math.log_sigmoid`)."""
    with graph_mod.name_scope(name, "LogSigmoid", [x]):
        x = convert_to_tensor(x, name="x")
        return cwise_ops.negative(nn_ops.softplus(cwise_ops.negative(x)))


def is_non_decreasing(x: Any, name: str | None = None) -> Tensor:
    """True if the flattened `x` never decreases (follows `tf.math.is_non_decreasing`)."""
    with graph_mod.name_scope(name, "is_non_decreasing", [x]):
        flat = array_ops.reshape(convert_to_tensor(x, name="x"), [-1])
        return reduction_ops.reduce_all(cwise_ops.less_equal(flat[:-1], flat[1:]))


def is_strictly_increasing(x: Any, name: str | None = None) -> Tensor:
    """True if the flattened `x` always increases (`tf.math.is_strictly_increasing`)."""
    with graph_mod.name_scope(name, "is_strictly_increasing", [x]):
        flat = array_ops.reshape(convert_to_tensor(x, name="x"), [-1])
        return reduction_ops.reduce_all(cwise_ops.less(flat[:-1], flat[1:]))


__all__ = [
    "betainc",
    "bessel_i0",
    "bessel_i0e",
    "bessel_i1",
    "bessel_i1e",
    "digamma",
    "erf",
    "erfc",
    "erfcinv",
    "erfinv",
    "igamma",
    "igammac",
    "is_non_decreasing",
    "is_strictly_increasing",
    "lbeta",
    "lgamma",
    "log_sigmoid",
    "ndtri",
    "nextafter",
    "polygamma",
    "polyval",
    "zeta",
]
