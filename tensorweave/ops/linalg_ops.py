"""Linear algebra on (batches of) matrices (follows TF 1.x `tf.linalg`: `inv`, `det`,
`slogdet`, `logdet`, `cholesky`, `cholesky_solve`, `qr`, `svd`, `solve`,
`triangular_solve`, `lstsq`, `eigh`, `eigvalsh`, `sqrtm`, `expm`, `logm`, `norm`, `pinv`,
`matrix_rank`, `lu`, `matvec`, tridiagonal products and solves).

Matrices are the last two dimensions; leading dimensions are batch dimensions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, cwise_ops, matmul_ops, reduction_ops
from tensorweave.ops.matrix_ops import (
    eye,
    matrix_band_part,
    matrix_diag_part,
    matrix_set_diag,
)


def matrix_inverse(input: Any, adjoint: bool = False, name: str | None = None) -> Tensor:  # noqa: A002
    """Inverses of the square matrices [..., M, M] (op `MatrixInverse`).

    Raises:
      InvalidArgumentError: at run time, for a singular matrix.
    """
    return apply_op("MatrixInverse", input=input, adjoint=adjoint, name=name)


def matrix_determinant(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Determinants [...] of the square matrices [..., M, M] (op `MatrixDeterminant`)."""
    return apply_op("MatrixDeterminant", input=input, name=name)


def slogdet(input: Any, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """`(sign, log|det|)` of the square matrices (op `LogMatrixDeterminant`)."""
    sign, logdet = apply_op("LogMatrixDeterminant", input=input, name=name)
    return sign, logdet


def logdet(matrix: Any, name: str | None = None) -> Tensor:
    """`log(det(matrix))` of Hermitian positive-definite matrices, via Cholesky
    (follows `tf.linalg.logdet`)."""
    with graph_mod.name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        diag = matrix_diag_part(chol)
        return 2.0 * reduction_ops.reduce_sum(cwise_ops.log(diag), axis=[-1])


def cholesky(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Lower Cholesky factors of Hermitian positive-definite matrices (op `Cholesky`).

    Raises:
      InvalidArgumentError: at run time, if a matrix is not positive definite.
    """
    return apply_op("Cholesky", input=input, name=name)


def qr(input: Any, full_matrices: bool = False, name: str | None = None):  # noqa: A002
    """`(q, r)` with orthonormal q and upper-triangular r (op `Qr`)."""
    q, r = apply_op("Qr", input=input, full_matrices=full_matrices, name=name)
    return q, r


def svd(tensor: Any, full_matrices: bool = False, compute_uv: bool = True,
        name: str | None = None) -> Any:
    """Singular values `s` [..., K] and, with `compute_uv`, `(s, u, v)` such that
    `tensor = u @ diag(s) @ adjoint(v)` (follows `tf.linalg.svd`, op `Svd`)."""
    s, u, v = apply_op("Svd", input=tensor, full_matrices=full_matrices,
                       compute_uv=compute_uv, name=name)
    return (s, u, v) if compute_uv else s


def matrix_solve(matrix: Any, rhs: Any, adjoint: bool = False, name: str | None = None):
    """Solutions X of `matrix @ X = rhs` (op `MatrixSolve`).

    Raises:
      InvalidArgumentError: at run time, for a singular matrix.
    """
    return apply_op("MatrixSolve", matrix=matrix, rhs=rhs, adjoint=adjoint, name=name)


def matrix_triangular_solve(matrix: Any, rhs: Any, lower: bool = True, adjoint: bool = False,
                            name: str | None = None) -> Tensor:
    """Solutions X of `matrix @ X = rhs` for triangular matrices; only the `lower` (or
    upper) triangle of `matrix` is read (op `MatrixTriangularSolve`)."""
    return apply_op("MatrixTriangularSolve", matrix=matrix, rhs=rhs, lower=lower,
                    adjoint=adjoint, name=name)


def cholesky_solve(chol: Any, rhs: Any, name: str | None = None) -> Tensor:
    """Solutions of `A X = rhs` given `chol = cholesky(A)` (`tf.linalg.cholesky_solve`)."""
    with graph_mod.name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, lower=True, adjoint=False)
        return matrix_triangular_solve(chol, y, lower=True, adjoint=True)


def matrix_solve_ls(matrix: Any, rhs: Any, l2_regularizer: Any = 0.0, fast: bool = True,
                    name: str | None = None) -> Tensor:
    """Least-squares solutions of `matrix @ X = rhs` with an optional L2 penalty, by the
    normal equations (follows `tf.linalg.lstsq` with `fast=True`, op `MatrixSolveLs`)."""
    with graph_mod.name_scope(name, "matrix_solve_ls", [matrix, rhs]):
        reg = convert_to_tensor(l2_regularizer, dtype=dtypes.float64)
        return apply_op("MatrixSolveLs", matrix=matrix, rhs=rhs, l2_regularizer=reg,
                        fast=fast)


def self_adjoint_eig(tensor: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Ascending eigenvalues and eigenvectors (columns) of self-adjoint matrices
    (op `SelfAdjointEigV2`)."""
    e, v = apply_op("SelfAdjointEigV2", input=tensor, compute_v=True, name=name)
    return e, v


def self_adjoint_eigvals(tensor: Any, name: str | None = None) -> Tensor:
    """Ascending eigenvalues of self-adjoint matrices (op `SelfAdjointEigV2`)."""
    e, _ = apply_op("SelfAdjointEigV2", input=tensor, compute_v=False, name=name)
    return e


def matrix_square_root(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The principal square roots of the matrices (op `MatrixSquareRoot`)."""
    return apply_op("MatrixSquareRoot", input=input, name=name)


def matrix_exponential(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Matrix exponentials (op `MatrixExponential`; scaling and squaring)."""
    return apply_op("MatrixExponential", input=input, name=name)


def matrix_logarithm(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Principal matrix logarithms of complex matrices (op `MatrixLogarithm`)."""
    return apply_op("MatrixLogarithm", input=input, name=name)


def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None, keepdims: Any = None,  # noqa: A002
         name: str | None = None, keep_dims: Any = None) -> Tensor:
    """Vector norms (`ord` in 'euclidean', 1, 2, inf, p > 0) and matrix norms over two
    axes ('fro', 'euclidean', 1, inf) (follows `tf.norm`).

    Raises:
      ValueError: for an unsupported `ord`/`axis` combination.
    """
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    is_matrix = isinstance(axis, list | tuple) and len(axis) == 2
    supported = ("fro", "euclidean", 1, np.inf) if is_matrix else ("euclidean", 1, 2, np.inf)
    if ord not in supported and not (not is_matrix and isinstance(ord, int | float) and ord > 0):
        raise ValueError(f"'ord' must be a supported vector norm, got {ord!r}.")
    with graph_mod.name_scope(name, "norm", [tensor]):
        x = convert_to_tensor(tensor, name="tensor")
        mag = cwise_ops.abs(x)
        if is_matrix and ord in (1, np.inf):
            rows, cols = axis
            first, second = (rows, cols) if ord == 1 else (cols, rows)
            summed = reduction_ops.reduce_sum(mag, axis=first, keepdims=True)
            out = reduction_ops.reduce_max(summed, axis=second, keepdims=True)
            return out if keepdims else array_ops.squeeze(out, list(axis))
        if ord in ("fro", "euclidean", 2):
            out = cwise_ops.sqrt(reduction_ops.reduce_sum(mag * mag, axis=axis, keepdims=True))
        elif ord == 1:
            out = reduction_ops.reduce_sum(mag, axis=axis, keepdims=True)
        elif ord == np.inf:
            out = reduction_ops.reduce_max(mag, axis=axis, keepdims=True)
        else:
            p = cwise_ops.cast(ord, mag.dtype)
            out = cwise_ops.pow(reduction_ops.reduce_sum(cwise_ops.pow(mag, p), axis=axis,
                                                         keepdims=True), 1.0 / p)
        if keepdims:
            return out
        return reduction_ops.reduce_sum(out, axis=axis) if axis is not None else \
            array_ops.reshape(out, [])


def normalize(tensor: Any, ord: Any = "euclidean", axis: Any = None, name: str | None = None):  # noqa: A002
    """`(tensor / norm, norm)` (follows `tf.linalg.normalize`)."""
    with graph_mod.name_scope(name, "normalize", [tensor]):
        x = convert_to_tensor(tensor, name="tensor")
        n = norm(x, ord=ord, axis=axis, keepdims=True)
        return x / n, n


def matvec(a: Any, b: Any, transpose_a: bool = False, adjoint_a: bool = False,
           name: str | None = None) -> Tensor:
    """`a @ b` for matrices a [..., M, N] and vectors b [..., N] (`tf.linalg.matvec`)."""
    with graph_mod.name_scope(name, "matvec", [a, b]):
        b = array_ops.expand_dims(convert_to_tensor(b, name="b"), -1)
        out = matmul_ops.matmul(a, b, transpose_a=transpose_a, adjoint_a=adjoint_a)
        return array_ops.squeeze(out, axis=-1)


def pinv(a: Any, rcond: Any = None, validate_args: bool = False, name: str | None = None):
    """The Moore-Penrose pseudo-inverse via the SVD (follows `tf.linalg.pinv`)."""
    with graph_mod.name_scope(name, "pinv", [a]):
        a = convert_to_tensor(a, name="a")
        s, u, v = svd(a, full_matrices=False, compute_uv=True)
        if rcond is None:
            dims = a.shape.as_list()[-2:]
            rcond = 10.0 * max(dims) * np.finfo(a.dtype.as_numpy_dtype).eps
        cutoff = cwise_ops.cast(rcond, a.dtype) * reduction_ops.reduce_max(
            s, axis=-1, keepdims=True)
        big = cwise_ops.greater(s, cutoff)
        inv_s = array_ops.where(big, 1.0 / array_ops.where(big, s, array_ops.ones_like(s)),
                                array_ops.zeros_like(s))
        return matmul_ops.matmul(v * array_ops.expand_dims(inv_s, -2), u, adjoint_b=True)


def matrix_rank(a: Any, tol: Any = None, validate_args: bool = False,
                name: str | None = None) -> Tensor:
    """The number of singular values above `tol` (follows `tf.linalg.matrix_rank`)."""
    with graph_mod.name_scope(name, "matrix_rank", [a]):
        a = convert_to_tensor(a, name="a")
        s = svd(a, compute_uv=False)
        if tol is None:
            dims = a.shape.as_list()[-2:]
            eps = np.finfo(a.dtype.as_numpy_dtype).eps
            tol = reduction_ops.reduce_max(s, axis=-1, keepdims=True) * (max(dims) * eps)
        return reduction_ops.reduce_sum(
            cwise_ops.cast(cwise_ops.greater(s, tol), dtypes.int32), axis=-1)


def lu(input: Any, output_idx_type: Any = dtypes.int32, name: str | None = None):  # noqa: A002
    """`(lu, p)`: packed unit-lower L and upper U with `P @ input = L @ U`, and the row
    permutation p (follows `tf.linalg.lu`, op `Lu`)."""
    lu_, p = apply_op("Lu", input=input, output_idx_type=dtypes.as_dtype(output_idx_type),
                      name=name)
    return lu_, p


def lu_reconstruct(lower_upper: Any, perm: Any, validate_args: bool = False,
                   name: str | None = None) -> Tensor:
    """The matrix whose `lu` is `(lower_upper, perm)` (follows `tf.linalg.lu_reconstruct`)."""
    with graph_mod.name_scope(name, "lu_reconstruct", [lower_upper, perm]):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        lower = matrix_set_diag(matrix_band_part(lower_upper, -1, 0),
                                array_ops.ones_like(matrix_diag_part(lower_upper)))
        upper = matrix_band_part(lower_upper, 0, -1)
        permuted = matmul_ops.matmul(lower, upper)
        inverse = array_ops.invert_permutation(perm)
        return array_ops.gather(permuted, inverse, axis=-2)


def lu_solve(lower_upper: Any, perm: Any, rhs: Any, validate_args: bool = False,
             name: str | None = None) -> Tensor:
    """Solutions of `A X = rhs` from `lu(A)` (follows `tf.linalg.lu_solve`)."""
    with graph_mod.name_scope(name, "lu_solve", [lower_upper, perm, rhs]):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        permuted = array_ops.gather(convert_to_tensor(rhs, name="rhs"), perm, axis=-2)
        lower = matrix_set_diag(matrix_band_part(lower_upper, -1, 0),
                                array_ops.ones_like(matrix_diag_part(lower_upper)))
        y = matrix_triangular_solve(lower, permuted, lower=True)
        return matrix_triangular_solve(lower_upper, y, lower=False)


def lu_matrix_inverse(lower_upper: Any, perm: Any, validate_args: bool = False,
                      name: str | None = None) -> Tensor:
    """The inverse of the matrix whose `lu` is given (`tf.linalg.lu_matrix_inverse`)."""
    with graph_mod.name_scope(name, "lu_matrix_inverse", [lower_upper, perm]):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        n = array_ops.shape(lower_upper)[-1]
        ident = eye(n, dtype=lower_upper.dtype)
        return lu_solve(lower_upper, perm, ident)


__all__ = [
    "cholesky",
    "cholesky_solve",
    "matrix_determinant",
    "matrix_inverse",
    "matrix_solve",
    "matrix_solve_ls",
    "matrix_square_root",
    "matrix_triangular_solve",
    "norm",
    "qr",
    "self_adjoint_eig",
    "self_adjoint_eigvals",
    "svd",
]
