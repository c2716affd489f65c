"""Tridiagonal matrices (follows `tf.linalg.tridiagonal_matmul`,
`tf.linalg.tridiagonal_solve` and `tf.linalg.eigh_tridiagonal`).

Diagonal formats: 'compact' [..., 3, M] rows (super, main, sub) where the last superdiagonal
and first subdiagonal entries are ignored; 'sequence', a tuple of three [..., M] tensors;
'matrix', a dense [..., M, M] matrix.
"""

from __future__ import annotations

from typing import Any

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, cwise_ops
from tensorweave.ops.array_ops_more import sort
from tensorweave.ops.linalg_ops import self_adjoint_eig, self_adjoint_eigvals
from tensorweave.ops.matrix_ops import matrix_diag, matrix_diag_part, matrix_transpose


def _pad_shift(x: Tensor, front: bool) -> Tensor:
    """[..., M]: x shifted one place along the last axis, a zero filling the gap."""
    zero = array_ops.zeros_like(x[..., :1])
    return array_ops.concat([zero, x[..., :-1]], -1) if front else array_ops.concat(
        [x[..., 1:], zero], -1)


def _as_sequence(diagonals: Any, fmt: str) -> tuple[Tensor, Tensor, Tensor]:
    if fmt == "compact":
        d = convert_to_tensor(diagonals, name="diagonals")
        return d[..., 0, :], d[..., 1, :], d[..., 2, :]
    if fmt == "sequence":
        return tuple(convert_to_tensor(x) for x in diagonals)
    if fmt == "matrix":
        m = convert_to_tensor(diagonals, name="diagonals")
        main = matrix_diag_part(m)
        upper = matrix_diag_part(m[..., :-1, 1:])
        lower = matrix_diag_part(m[..., 1:, :-1])
        zero = array_ops.zeros_like(main[..., :1])
        return (array_ops.concat([upper, zero], -1), main,
                array_ops.concat([zero, lower], -1))
    raise ValueError(f"Unrecognized diagonals_format: {fmt}")


def tridiagonal_matmul(diagonals: Any, rhs: Any, diagonals_format: str = "compact",
                       name: str | None = None) -> Tensor:
    """`A @ rhs` for the tridiagonal `A` given by `diagonals` (op `TridiagonalMatMul`).

    Raises:
      ValueError: for an unknown `diagonals_format`.
    """
    with graph_mod.name_scope(name, "tridiagonal_matmul", [rhs]):
        sup, main, sub = _as_sequence(diagonals, diagonals_format)
        return apply_op("TridiagonalMatMul", superdiag=array_ops.expand_dims(sup, -2),
                        maindiag=array_ops.expand_dims(main, -2),
                        subdiag=array_ops.expand_dims(sub, -2), rhs=rhs)


def tridiagonal_solve(diagonals: Any, rhs: Any, diagonals_format: str = "compact",
                      transpose_rhs: bool = False, conjugate_rhs: bool = False,
                      name: str | None = None, partial_pivoting: bool = True,
                      perturb_singular: bool = False) -> Tensor:
    """X with `A @ X = rhs` for the tridiagonal `A` (op `TridiagonalSolve`); a 1-D-batched
    rhs [..., M] is treated as one column.

    Raises:
      ValueError: for an unknown `diagonals_format`.
    """
    with graph_mod.name_scope(name, "tridiagonal_solve", [rhs]):
        sup, main, sub = _as_sequence(diagonals, diagonals_format)
        rhs = convert_to_tensor(rhs, name="rhs")
        if transpose_rhs:
            rhs = matrix_transpose(rhs)
        if conjugate_rhs:
            rhs = cwise_ops.conj(rhs)
        vector = rhs.shape.ndims is not None and rhs.shape.ndims == main.shape.ndims
        if vector:
            rhs = array_ops.expand_dims(rhs, -1)
        out = apply_op("TridiagonalSolve", diagonals=array_ops.stack([sup, main, sub], -2),
                       rhs=rhs, partial_pivoting=partial_pivoting,
                       perturb_singular=perturb_singular)
        return array_ops.squeeze(out, [-1]) if vector else out


def eigh_tridiagonal(alpha: Any, beta: Any, eigvals_only: bool = True, select: str = "a",
                     select_range: Any = None, tol: Any = None, name: str | None = None):
    """Eigenvalues (ascending) and optionally eigenvectors of the real symmetric
    tridiagonal matrix with diagonal `alpha` [n] and off-diagonal `beta` [n-1] (follows
    `tf.linalg.eigh_tridiagonal`; select 'a' all, 'i' an index range, 'v' a value range).

    Raises:
      ValueError: for an unknown `select`, or 'v' with eigenvectors.
    """
    with graph_mod.name_scope(name, "eigh_tridiagonal", [alpha, beta]):
        alpha = convert_to_tensor(alpha, name="alpha")
        beta = convert_to_tensor(beta, name="beta", dtype=alpha.dtype)
        dense = matrix_diag(alpha)
        upper = array_ops.pad(matrix_diag(beta), [[0, 1], [1, 0]])
        dense = dense + upper + matrix_transpose(upper)
        if eigvals_only:
            values = sort(self_adjoint_eigvals(dense))
            vectors = None
        else:
            values, vectors = self_adjoint_eig(dense)
        if select == "a":
            pass
        elif select == "i":
            lo, hi = select_range
            values = values[lo : hi + 1]
            vectors = None if vectors is None else vectors[:, lo : hi + 1]
        elif select == "v":
            if vectors is not None:
                raise ValueError("select='v' with eigenvectors is not supported")
            lo, hi = select_range
            keep = cwise_ops.logical_and(cwise_ops.greater(values, lo),
                                         cwise_ops.less_equal(values, hi))
            values = array_ops.boolean_mask(values, keep)
        else:
            raise ValueError(f"Unknown select {select!r}: expected 'a', 'i' or 'v'")
        return values if eigvals_only else (values, vectors)


__all__ = ["eigh_tridiagonal", "tridiagonal_matmul", "tridiagonal_solve"]
