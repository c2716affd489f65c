"""NumPy kernels of the linear algebra ops (batched over leading dimensions).

Singular or non positive-definite inputs raise `InvalidArgumentError` with TensorFlow's
messages.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.kernels.array_kernels import invalid
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel


def _square(x: Any, what: str = "Input") -> np.ndarray:
    x = np.asarray(x)
    if x.ndim < 2:
        raise invalid(f"{what} must have rank >= 2, got {x.ndim}")
    if x.shape[-1] != x.shape[-2]:
        raise invalid(f"{what} matrices must be squares, got {x.shape[-2]} != {x.shape[-1]}")
    return x


def _adj(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


@register_kernel("MatrixInverse")
def _inverse(node: KernelNode) -> Any:
    adjoint = node.attrs["adjoint"]

    def compute(ctx: Any, x: Any) -> Any:
        x = _square(x)
        if adjoint:
            x = _adj(x)
        try:
            return np.linalg.inv(x).astype(x.dtype)
        except np.linalg.LinAlgError:
            raise invalid("Input is not invertible.") from None

    return compute


@register_compute("MatrixDeterminant")
def _determinant(ctx: Any, x: Any) -> Any:
    x = _square(x)
    return np.asarray(np.linalg.det(x), dtype=x.dtype)


@register_compute("LogMatrixDeterminant")
def _log_determinant(ctx: Any, x: Any) -> Any:
    x = _square(x)
    sign, logdet = np.linalg.slogdet(x)
    return np.asarray(sign, x.dtype), np.asarray(logdet, x.dtype)


@register_compute("Cholesky")
def _cholesky(ctx: Any, x: Any) -> Any:
    x = _square(x)
    try:
        return np.linalg.cholesky(x).astype(x.dtype)
    except np.linalg.LinAlgError:
        raise invalid(
            "Cholesky decomposition was not successful. The input might not be valid."
        ) from None


@register_kernel("Qr")
def _qr(node: KernelNode) -> Any:
    mode = "complete" if node.attrs["full_matrices"] else "reduced"

    def compute(ctx: Any, x: Any) -> Any:
        x = np.asarray(x)
        if x.ndim < 2:
            raise invalid(f"Input must have rank >= 2, got {x.ndim}")
        q, r = np.linalg.qr(x, mode=mode)
        return q.astype(x.dtype), r.astype(x.dtype)

    return compute


@register_kernel("Svd")
def _svd(node: KernelNode) -> Any:
    compute_uv, full = node.attrs["compute_uv"], node.attrs["full_matrices"]

    def compute(ctx: Any, x: Any) -> Any:
        x = np.asarray(x)
        if x.ndim < 2:
            raise invalid(f"Input must have rank >= 2, got {x.ndim}")
        if not compute_uv:
            s = np.linalg.svd(x, compute_uv=False)
            empty = np.zeros((0,), x.dtype)
            return s.astype(x.dtype), empty, empty
        u, s, vh = np.linalg.svd(x, full_matrices=full)
        return s.astype(x.dtype), u.astype(x.dtype), _adj(vh).astype(x.dtype)

    return compute


@register_kernel("MatrixSolve")
def _solve(node: KernelNode) -> Any:
    adjoint = node.attrs["adjoint"]

    def compute(ctx: Any, a: Any, rhs: Any) -> Any:
        a, rhs = _square(a), np.asarray(rhs)
        if rhs.ndim != a.ndim or rhs.shape[-2] != a.shape[-1]:
            raise invalid(
                f"Input matrix and right-hand side must have the same number of rows: "
                f"{list(a.shape)} vs {list(rhs.shape)}"
            )
        try:
            return np.linalg.solve(_adj(a) if adjoint else a, rhs).astype(a.dtype)
        except np.linalg.LinAlgError:
            raise invalid("Input matrix is not invertible.") from None

    return compute


def triangular_solve(a: np.ndarray, b: np.ndarray, lower: bool) -> np.ndarray:
    """Solves `a x = b` for triangular `a` [..., n, n] by substitution (batched)."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(a, b))
    rows = range(n) if lower else range(n - 1, -1, -1)
    for i in rows:
        acc = b[..., i, :] - np.einsum("...k,...kj->...j", a[..., i, :], x)
        x[..., i, :] = acc / a[..., i, i][..., None]
    return x


@register_kernel("MatrixTriangularSolve")
def _triangular_solve(node: KernelNode) -> Any:
    lower, adjoint = node.attrs["lower"], node.attrs["adjoint"]

    def compute(ctx: Any, a: Any, rhs: Any) -> Any:
        a, rhs = _square(a), np.asarray(rhs)
        if rhs.ndim < 2 or rhs.shape[-2] != a.shape[-1]:
            raise invalid(
                f"Input matrix and right-hand side must have the same number of rows: "
                f"{list(a.shape)} vs {list(rhs.shape)}"
            )
        tri = np.tril(a) if lower else np.triu(a)
        if np.any(np.diagonal(tri, axis1=-2, axis2=-1) == 0):
            raise invalid("Input matrix is not invertible.")
        if adjoint:
            tri, lower_eff = _adj(tri), not lower
        else:
            lower_eff = lower
        return triangular_solve(tri, rhs, lower_eff).astype(a.dtype)

    return compute


@register_kernel("MatrixSolveLs")
def _solve_ls(node: KernelNode) -> Any:
    def compute(ctx: Any, a: Any, rhs: Any, l2: Any) -> Any:
        a, rhs, l2 = np.asarray(a), np.asarray(rhs), float(l2)
        m, n = a.shape[-2:]
        ah = _adj(a)
        if m >= n:
            gram = ah @ a + l2 * np.eye(n, dtype=a.dtype)
            return np.linalg.solve(gram, ah @ rhs).astype(a.dtype)
        gram = a @ ah + l2 * np.eye(m, dtype=a.dtype)
        return (ah @ np.linalg.solve(gram, rhs)).astype(a.dtype)

    return compute


@register_kernel("SelfAdjointEigV2")
def _eigh(node: KernelNode) -> Any:
    compute_v = node.attrs["compute_v"]

    def compute(ctx: Any, x: Any) -> Any:
        x = _square(x)
        if not compute_v:
            return np.linalg.eigvalsh(x).astype(x.dtype), np.zeros((0,), x.dtype)
        e, v = np.linalg.eigh(x)
        return e.astype(x.dtype), v.astype(x.dtype)

    return compute


def _eig_fn(x: np.ndarray, fn: Any) -> np.ndarray:
    w, v = np.linalg.eig(x)
    out = v @ (fn(w)[..., None] * np.linalg.inv(v))
    return out


@register_compute("MatrixSquareRoot")
def _sqrtm(ctx: Any, x: Any) -> Any:
    x = _square(x)
    out = _eig_fn(x.astype(np.complex128), np.sqrt)
    return (out if np.iscomplexobj(x) else out.real).astype(x.dtype)


@register_compute("MatrixExponential")
def _expm(ctx: Any, x: Any) -> Any:
    x = _square(x)
    # Scaling and squaring with a Taylor series: exact to rounding for moderate norms.
    norm = np.max(np.abs(x)) * x.shape[-1] if x.size else 0.0
    squarings = max(0, int(np.ceil(np.log2(norm))) + 1) if norm > 0.5 else 0
    a = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64) / 2.0**squarings
    term = np.broadcast_to(np.eye(x.shape[-1]), a.shape).astype(a.dtype)
    out = term.copy()
    for k in range(1, 30):
        term = term @ a / k
        out = out + term
    for _ in range(squarings):
        out = out @ out
    return out.astype(x.dtype)


@register_compute("MatrixLogarithm")
def _logm(ctx: Any, x: Any) -> Any:
    x = _square(x)
    return _eig_fn(x.astype(np.complex128), np.log).astype(x.dtype)


def _lu_one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Doolittle LU with partial pivoting: packed factors and the row permutation."""
    a = a.copy()
    n = a.shape[0]
    perm = np.arange(n)
    for k in range(n):
        pivot = k + int(np.argmax(np.abs(a[k:, k])))
        if a[pivot, k] == 0:
            raise invalid("Input is not invertible.")
        if pivot != k:
            a[[k, pivot]] = a[[pivot, k]]
            perm[[k, pivot]] = perm[[pivot, k]]
        a[k + 1 :, k] /= a[k, k]
        a[k + 1 :, k + 1 :] -= np.outer(a[k + 1 :, k], a[k, k + 1 :])
    return a, perm


@register_kernel("Lu")
def _lu(node: KernelNode) -> Any:
    idx_dtype = node.output_dtypes[1].as_numpy_dtype

    def compute(ctx: Any, x: Any) -> Any:
        x = _square(x)
        flat = x.reshape((-1,) + x.shape[-2:])
        outs = [_lu_one(m) for m in flat]
        lu = np.stack([o[0] for o in outs]).reshape(x.shape) if outs else x.copy()
        perm = np.stack([o[1] for o in outs]).reshape(x.shape[:-1]) if outs else np.zeros(
            x.shape[:-1], idx_dtype)
        return lu.astype(x.dtype), perm.astype(idx_dtype)

    return compute


@register_compute("TridiagonalMatMul")
def _tridiagonal_matmul(ctx: Any, superdiag: Any, maindiag: Any, subdiag: Any, rhs: Any):
    rhs = np.asarray(rhs)
    u, d, s = (np.swapaxes(np.asarray(v), -1, -2) for v in (superdiag, maindiag, subdiag))
    if u.shape[-2] != rhs.shape[-2]:
        raise invalid(f"diagonals must have length {rhs.shape[-2]}, got {u.shape[-2]}")
    out = d * rhs
    out[..., :-1, :] += u[..., :-1, :] * rhs[..., 1:, :]
    out[..., 1:, :] += s[..., 1:, :] * rhs[..., :-1, :]
    return out


@register_kernel("TridiagonalSolve")
def _tridiagonal_solve(node: KernelNode) -> Any:
    def compute(ctx: Any, diagonals: Any, rhs: Any) -> Any:
        diagonals, rhs = np.asarray(diagonals), np.asarray(rhs)
        if diagonals.shape[-2] != 3:
            raise invalid(f"Expected diagonals [..., 3, M], got {list(diagonals.shape)}")
        m = diagonals.shape[-1]
        dense = np.zeros(diagonals.shape[:-2] + (m, m), diagonals.dtype)
        idx = np.arange(m)
        dense[..., idx, idx] = diagonals[..., 1, :]
        dense[..., idx[:-1], idx[1:]] = diagonals[..., 0, :-1]
        dense[..., idx[1:], idx[:-1]] = diagonals[..., 2, 1:]
        try:
            return np.linalg.solve(dense, rhs).astype(rhs.dtype)
        except np.linalg.LinAlgError:
            raise invalid("The matrix is not invertible.") from None

    return compute
