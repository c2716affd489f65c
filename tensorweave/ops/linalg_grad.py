"""Gradients of the linear algebra ops (follows TensorFlow's `linalg_grad.py`).

`Svd` needs static matrix dimensions and `Qr` rows >= columns without `full_matrices`
(as in TensorFlow; NotImplementedError otherwise). `Lu`, `MatrixSolveLs`,
`MatrixSquareRoot`, `MatrixExponential` and `MatrixLogarithm` have no gradient here.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import array_ops, matmul_ops, reduction_ops
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient
from tensorweave.ops.linalg_ops import (
    matrix_inverse,
    matrix_solve,
    matrix_triangular_solve,
    self_adjoint_eig,
    svd,
)
from tensorweave.ops.matrix_ops import (
    adjoint,
    matrix_band_part,
    matrix_diag,
    matrix_diag_part,
    matrix_set_diag,
    matrix_transpose,
)

_matmul = matmul_ops.matmul


def _scale_matrices(scalars: Any, matrices: Any) -> Any:
    """`scalars` [...] times `matrices` [..., M, N]."""
    return array_ops.expand_dims(array_ops.expand_dims(scalars, -1), -1) * matrices


@RegisterGradient("MatrixInverse")
def _matrix_inverse_grad(op: Any, grad: Any) -> Any:
    ainv = op.outputs[0]
    return -_matmul(ainv, _matmul(grad, ainv, adjoint_b=True), adjoint_a=True)


@RegisterGradient("MatrixDeterminant")
def _matrix_determinant_grad(op: Any, grad: Any) -> Any:
    a, c = op.inputs[0], op.outputs[0]
    return _scale_matrices(grad * c, matrix_inverse(a, adjoint=True))


@RegisterGradient("LogMatrixDeterminant")
def _log_matrix_determinant_grad(op: Any, _: Any, grad_b: Any) -> Any:
    return _scale_matrices(grad_b, matrix_inverse(op.inputs[0], adjoint=True))


@RegisterGradient("Cholesky")
def _cholesky_grad(op: Any, grad: Any) -> Any:
    chol = op.outputs[0]
    ident = array_ops.ones_like(matrix_diag_part(chol))
    chol_inv = matrix_triangular_solve(chol, matrix_diag(ident))
    middle = _matmul(chol, grad, adjoint_a=True)
    middle = matrix_set_diag(middle, 0.5 * matrix_diag_part(middle))
    middle = matrix_band_part(middle, -1, 0)
    grad_a = _matmul(_matmul(chol_inv, middle, adjoint_a=True), chol_inv)
    return 0.5 * (grad_a + adjoint(grad_a))


@RegisterGradient("MatrixSolve")
def _matrix_solve_grad(op: Any, grad: Any) -> Any:
    a, c = op.inputs[0], op.outputs[0]
    adj = op.get_attr("adjoint")
    grad_b = matrix_solve(a, grad, adjoint=not adj)
    if adj:
        return -_matmul(c, grad_b, adjoint_b=True), grad_b
    return -_matmul(grad_b, c, adjoint_b=True), grad_b


@RegisterGradient("MatrixTriangularSolve")
def _matrix_triangular_solve_grad(op: Any, grad: Any) -> Any:
    a, c = op.inputs[0], op.outputs[0]
    adj, lower = op.get_attr("adjoint"), op.get_attr("lower")
    grad_b = matrix_triangular_solve(a, grad, lower=lower, adjoint=not adj)
    grad_a = -_matmul(c, grad_b, adjoint_b=True) if adj else -_matmul(grad_b, c, adjoint_b=True)
    grad_a = matrix_band_part(grad_a, -1, 0) if lower else matrix_band_part(grad_a, 0, -1)
    return grad_a, grad_b


def _solve_right_upper(x: Any, r: Any) -> Any:
    """`x @ adjoint(inverse(r))` for upper-triangular r (TensorFlow's `_TriangularSolve`)."""
    return adjoint(matrix_triangular_solve(r, adjoint(x), lower=False, adjoint=False))


@RegisterGradient("Qr")
def _qr_grad(op: Any, dq: Any, dr: Any) -> Any:
    a = op.inputs[0]
    q, r = op.outputs
    m, n = a.shape.as_list()[-2:] if a.shape.ndims is not None else (None, None)
    if op.get_attr("full_matrices") or m is None or n is None or m < n:
        raise NotImplementedError(
            "The gradient of tf.linalg.qr is implemented for matrices with rows >= columns "
            "(statically known) and full_matrices=False only"
        )
    # r's strictly lower triangle is constant zero: only its upper part carries gradient.
    dr = matrix_band_part(dr, 0, -1)
    qdq = _matmul(q, dq, adjoint_a=True)
    qdq_ = qdq - adjoint(qdq)
    rdr = _matmul(r, dr, adjoint_b=True)
    rdr_ = rdr - adjoint(rdr)
    tril = matrix_band_part(qdq_ + rdr_, -1, 0)
    grad_a = _matmul(q, dr + _solve_right_upper(tril, r))
    grad_b = _solve_right_upper(dq - _matmul(q, qdq), r)
    return grad_a + grad_b


@RegisterGradient("Svd")
def _svd_grad(op: Any, grad_s: Any, grad_u: Any, grad_v: Any) -> Any:
    a = op.inputs[0]
    if not op.get_attr("compute_uv"):
        _, u, v = svd(a, full_matrices=False, compute_uv=True)
        return _matmul(u * array_ops.expand_dims(grad_s, -2), v, adjoint_b=True)
    if a.shape.ndims is None or None in a.shape.as_list()[-2:]:
        raise NotImplementedError(
            "The gradient of tf.linalg.svd needs statically known matrix dimensions"
        )
    m, n = a.shape.as_list()[-2:]
    s, u, v = op.outputs
    use_adjoint = m > n
    if use_adjoint:
        # Differentiate A^H = V S U^H instead, and take the adjoint at the end.
        m, n, u, v, grad_u, grad_v = n, m, v, u, grad_v, grad_u
    full = op.get_attr("full_matrices")
    s_mat = matrix_diag(s)
    s2 = s * s
    diff = array_ops.expand_dims(s2, -2) - array_ops.expand_dims(s2, -1)
    f = matrix_set_diag(1.0 / matrix_set_diag(diff, array_ops.ones_like(s)),
                        array_ops.zeros_like(s))
    v1, grad_v1 = v[..., :, :m], grad_v[..., :, :m]
    f_u = f * _matmul(u, grad_u, adjoint_a=True)
    f_v = f * _matmul(v1, grad_v1, adjoint_a=True)
    inner = (matrix_diag(grad_s) + _matmul(f_u + adjoint(f_u), s_mat)
             + _matmul(s_mat, f_v + adjoint(f_v)))
    grad_a = _matmul(u, _matmul(inner, v1, adjoint_b=True))
    if m != n:
        gv1t = adjoint(grad_v1)
        term = gv1t - _matmul(_matmul(gv1t, v1), v1, adjoint_b=True)
        if full:
            v2, grad_v2 = v[..., :, m:n], grad_v[..., :, m:n]
            term = term - _matmul(_matmul(v1, grad_v2, adjoint_a=True), v2, adjoint_b=True)
        grad_a = grad_a + _matmul(u * array_ops.expand_dims(1.0 / s, -2), term)
    return adjoint(grad_a) if use_adjoint else grad_a


@RegisterGradient("SelfAdjointEigV2")
def _self_adjoint_eig_grad(op: Any, grad_e: Any, grad_v: Any) -> Any:
    e = op.outputs[0]
    if op.get_attr("compute_v"):
        v = op.outputs[1]
        diff = array_ops.expand_dims(e, -2) - array_ops.expand_dims(e, -1)
        safe = matrix_set_diag(diff, array_ops.ones_like(e))
        f = matrix_set_diag(1.0 / safe, array_ops.zeros_like(e))
        inner = matrix_diag(grad_e) + f * _matmul(v, grad_v, adjoint_a=True)
    else:
        _, v = self_adjoint_eig(op.inputs[0])
        inner = matrix_diag(grad_e)
    grad_a = _matmul(v, _matmul(inner, v, adjoint_b=True))
    grad_a = matrix_band_part(grad_a + adjoint(grad_a), -1, 0)
    return matrix_set_diag(grad_a, 0.5 * matrix_diag_part(grad_a))


for _op in (
    "Lu", "MatrixSolveLs", "MatrixSquareRoot", "MatrixExponential", "MatrixLogarithm"
):
    no_gradient(_op)


def _shift(x: Any, front: bool) -> Any:
    """[..., 1, M] shifted one place along the last axis, zero-filled."""
    zero = array_ops.zeros_like(x[..., :1])
    return array_ops.concat([zero, x[..., :-1]], -1) if front else array_ops.concat(
        [x[..., 1:], zero], -1)


@RegisterGradient("TridiagonalMatMul")
def _tridiagonal_matmul_grad(op: Any, grad: Any) -> Any:
    sup, main, sub, rhs = op.inputs
    # dL/du_i = sum_n g[i] x[i+1]; dL/dd_i = sum_n g[i] x[i]; dL/ds_i = sum_n g[i] x[i-1].
    g_t, x_t = matrix_transpose(grad), matrix_transpose(rhs)
    row = lambda t: array_ops.expand_dims(reduction_ops.reduce_sum(t, -2), -2)  # noqa: E731
    sup_grad = row(g_t * _shift(x_t, front=False))
    main_grad = row(g_t * x_t)
    sub_grad = row(g_t * _shift(x_t, front=True))
    # A^T has superdiagonal s[i+1] and subdiagonal u[i-1].
    rhs_grad = apply_op("TridiagonalMatMul", superdiag=_shift(sub, front=False),
                        maindiag=main, subdiag=_shift(sup, front=True), rhs=grad)
    return sup_grad, main_grad, sub_grad, rhs_grad


@RegisterGradient("TridiagonalSolve")
def _tridiagonal_solve_grad(op: Any, grad: Any) -> Any:
    diags = op.inputs[0]
    x = op.outputs[0]
    sup, main, sub = diags[..., 0:1, :], diags[..., 1:2, :], diags[..., 2:3, :]
    transposed = array_ops.concat([_shift(sub, front=False), main, _shift(sup, front=True)], -2)
    rhs_grad = apply_op("TridiagonalSolve", diagonals=transposed, rhs=grad,
                        partial_pivoting=op.get_attr("partial_pivoting"),
                        perturb_singular=op.get_attr("perturb_singular"))
    b_t, x_t = matrix_transpose(rhs_grad), matrix_transpose(x)
    row = lambda t: array_ops.expand_dims(reduction_ops.reduce_sum(t, -2), -2)  # noqa: E731
    diags_grad = -array_ops.concat([row(b_t * _shift(x_t, front=False)), row(b_t * x_t),
                                    row(b_t * _shift(x_t, front=True))], -2)
    return diags_grad, rhs_grad
