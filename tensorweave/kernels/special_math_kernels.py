"""NumPy kernels of the special functions (no SciPy): log-gamma, digamma, error
functions, regularized incomplete gamma and beta, Hurwitz zeta and polygamma.

Computed in float64 and cast to the input dtype. The algorithms are the classic ones
(Cephes' Hurwitz zeta by Euler-Maclaurin summation; series and Lentz continued fractions
for the incomplete gamma and beta functions, as in Numerical Recipes), with TensorFlow's
(Eigen's) conventions at the poles and outside the domains: NaN for invalid arguments,
`lgamma` = inf at the poles.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensorweave.kernels.registry import register_compute

_EPS = 1e-16
_TINY = 1e-300
_MAX_ITER = 2000
# Bernoulli numbers B_2k / (2k)! used by the Euler-Maclaurin tail of the zeta function.
_ZETA_A = (
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
    7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
    -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18,
)


def _lgamma(x: float) -> float:
    if math.isnan(x):
        return x
    if math.isinf(x) or (x <= 0 and x == math.floor(x)):
        return math.inf
    return math.lgamma(x)


def _digamma(x: float) -> float:
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return x
    if x <= 0 and x == math.floor(x):
        return math.nan
    result = 0.0
    if x < 0.5:
        result = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 10.0:
        result -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
        1 / 240 - inv2 * (1 / 132 - inv2 * (691 / 32760 - inv2 / 12))))))
    return result + math.log(x) - 0.5 / x - series


def _zeta(s: float, q: float) -> float:
    """Hurwitz zeta `sum_k (k + q)^-s` (Cephes `zeta`)."""
    if math.isnan(s) or math.isnan(q):
        return math.nan
    if s == 1.0:
        return math.inf
    if s < 1.0:
        return math.nan
    if q <= 0.0:
        if q == math.floor(q):
            return math.inf
        if s != math.floor(s):
            return math.nan
    total = q**-s
    a, i, b = q, 0, 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a**-s
        total += b
        if abs(b / total) < _EPS:
            return total
    w = a
    total += b * w / (s - 1.0) - 0.5 * b
    fac, k = 1.0, 0.0
    for coef in _ZETA_A:
        fac *= s + k
        b /= w
        term = fac * b / coef
        total += term
        if abs(term / total) < _EPS:
            break
        k += 1.0
        fac *= s + k
        b /= w
        k += 1.0
    return total


def _polygamma(n: float, x: float) -> float:
    if math.isnan(n) or math.isnan(x) or n < 0 or n != math.floor(n):
        return math.nan
    if n == 0:
        return _digamma(x)
    sign = 1.0 if int(n) % 2 else -1.0
    return sign * math.exp(math.lgamma(n + 1.0)) * _zeta(n + 1.0, x)


def _igamma_series(a: float, x: float) -> float:
    term = total = 1.0 / a
    ap = a
    for _ in range(_MAX_ITER):
        ap += 1.0
        term *= x / ap
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _igammac_fraction(a: float, x: float) -> float:
    b = x + 1.0 - a
    c, d = 1.0 / _TINY, 1.0 / b
    h = d
    for i in range(1, _MAX_ITER):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def _igamma(a: float, x: float) -> float:
    """Regularized lower incomplete gamma P(a, x)."""
    if math.isnan(a) or math.isnan(x) or a <= 0 or x < 0:
        return math.nan
    if x == 0:
        return 0.0
    if math.isinf(x):
        return 1.0
    if x < a + 1.0:
        return _igamma_series(a, x)
    return 1.0 - _igammac_fraction(a, x)


def _igammac(a: float, x: float) -> float:
    """Regularized upper incomplete gamma Q(a, x)."""
    if math.isnan(a) or math.isnan(x) or a <= 0 or x < 0:
        return math.nan
    if x == 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    if x < a + 1.0:
        return 1.0 - _igamma_series(a, x)
    return _igammac_fraction(a, x)


def _beta_fraction(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (_TINY if abs(d) < _TINY else d)
    h = d
    for m in range(1, _MAX_ITER):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (_TINY if abs(d) < _TINY else d)
            c = 1.0 + aa / c
            c = _TINY if abs(c) < _TINY else c
            delta = d * c
            h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if math.isnan(a) or math.isnan(b) or math.isnan(x) or a <= 0 or b <= 0:
        return math.nan
    if x < 0 or x > 1:
        return math.nan
    if x == 0 or x == 1:
        return x
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def _elementwise(fn: Any) -> Any:
    vec = np.vectorize(fn, otypes=[np.float64])

    def compute(ctx: Any, *args: Any) -> Any:
        dtype = np.result_type(*[np.asarray(a).dtype for a in args])
        arrays = np.broadcast_arrays(*[np.asarray(a, np.float64) for a in args])
        if arrays[0].size == 0:
            return np.zeros(arrays[0].shape, dtype)
        with np.errstate(all="ignore"):
            return np.asarray(vec(*arrays)).astype(dtype)

    return compute


register_compute("Lgamma")(_elementwise(_lgamma))
register_compute("Digamma")(_elementwise(_digamma))
register_compute("Erf")(_elementwise(math.erf))
register_compute("Erfc")(_elementwise(math.erfc))
register_compute("Igamma")(_elementwise(_igamma))
register_compute("Igammac")(_elementwise(_igammac))
register_compute("Zeta")(_elementwise(_zeta))
register_compute("Polygamma")(_elementwise(_polygamma))
register_compute("Betainc")(_elementwise(_betainc))


# Acklam's rational approximation of the normal quantile, refined by Newton steps.
_ACKLAM_A = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
             1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)
_ACKLAM_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
             6.680131188771972e01, -1.328068155288572e01, 1.0)
_ACKLAM_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
             -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)
_ACKLAM_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
             3.754408661907416e00, 1.0)


def _horner(coefs: tuple[float, ...], x: float) -> float:
    acc = 0.0
    for c in coefs:
        acc = acc * x + c
    return acc


def _ndtri(p: float) -> float:
    """The standard normal quantile: x with Phi(x) = p."""
    if math.isnan(p) or p < 0 or p > 1:
        return math.nan
    if p == 0:
        return -math.inf
    if p == 1:
        return math.inf
    if p > 0.5:
        return -_ndtri(1.0 - p)
    if p < 0.02425:
        q = math.sqrt(-2.0 * math.log(p))
        x = _horner(_ACKLAM_C, q) / _horner(_ACKLAM_D, q)
    else:
        q = p - 0.5
        x = q * _horner(_ACKLAM_A, q * q) / _horner(_ACKLAM_B, q * q)
    for _ in range(2):
        err = 0.5 * math.erfc(-x / math.sqrt(2.0)) - p
        u = err * math.sqrt(2.0 * math.pi) * math.exp(0.5 * x * x)
        x -= u / (1.0 + 0.5 * x * u)
    return x


def _erfinv(y: float) -> float:
    """X with erf(x) = y, by Newton steps on erf (erfc near +-1)."""
    if math.isnan(y) or abs(y) > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    if y < 0:
        return -_erfinv(-y)
    if y < 0.5:
        x = math.sqrt(math.pi) / 2 * (y + math.pi * y**3 / 12)
        for _ in range(4):
            x -= (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        return x
    x = _ndtri((y + 1.0) / 2.0) / math.sqrt(2.0)
    for _ in range(3):
        x -= ((1.0 - y) - math.erfc(x)) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def _bessel_scaled(nu: int, x: float) -> float:
    """exp(-|x|) I_nu(|x|) for nu in {0, 1}: power series, or the asymptotic series."""
    ax = abs(x)
    if ax <= 30.0:
        term = (ax / 2.0) ** nu / math.factorial(nu)
        total, k = term, 0
        while term > total * 1e-17:
            k += 1
            term *= (ax / 2.0) ** 2 / (k * (k + nu))
            total += term
        return total * math.exp(-ax)
    total, term, mu = 1.0, 1.0, 4.0 * nu * nu
    for k in range(1, 40):
        term *= -(mu - (2 * k - 1) ** 2) / (k * 8.0 * ax)
        total += term
        if abs(term) < 1e-17:
            break
    return total / math.sqrt(2.0 * math.pi * ax)


def _bessel_i0e(x: float) -> float:
    return x if math.isnan(x) else _bessel_scaled(0, x)


def _bessel_i1e(x: float) -> float:
    return x if math.isnan(x) else math.copysign(_bessel_scaled(1, x), x)


def _bessel_i0(x: float) -> float:
    if math.isnan(x):
        return x
    return math.inf if abs(x) > 713.0 else _bessel_scaled(0, x) * math.exp(abs(x))


def _bessel_i1(x: float) -> float:
    if math.isnan(x):
        return x
    if abs(x) > 713.0:
        return math.copysign(math.inf, x)
    return math.copysign(_bessel_scaled(1, x) * math.exp(abs(x)), x)


register_compute("Ndtri")(_elementwise(_ndtri))
register_compute("Erfinv")(_elementwise(_erfinv))
register_compute("BesselI0")(_elementwise(_bessel_i0))
register_compute("BesselI1")(_elementwise(_bessel_i1))
register_compute("BesselI0e")(_elementwise(_bessel_i0e))
register_compute("BesselI1e")(_elementwise(_bessel_i1e))


@register_compute("NextAfter")
def _next_after(ctx: Any, x1: Any, x2: Any) -> Any:
    return np.nextafter(x1, x2)
