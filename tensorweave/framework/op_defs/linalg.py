"""Linear algebra ops on (batches of) matrices in the last two dimensions.

Follows `tensorflow/core/ops/linalg_ops.cc`: `MatrixInverse`, `MatrixDeterminant`,
`LogMatrixDeterminant`, `Cholesky`, `Qr`, `Svd`, `MatrixSolve`, `MatrixTriangularSolve`,
`MatrixSolveLs`, `SelfAdjointEigV2`, `MatrixSquareRoot`, `MatrixExponential`,
`MatrixLogarithm`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import merge_shapes, op_error, with_rank_at_least
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_T = "T: {double, float, half, complex64, complex128}"


def _square(op: Any) -> TensorShape:
    x = with_rank_at_least(op, op.inputs[0].shape, 2)
    if x.ndims is None:
        return x
    rows, cols = x.as_list()[-2:]
    if rows is not None and cols is not None and rows != cols:
        raise op_error(op, f"Dimensions must be equal, but are {rows} and {cols}")
    n = rows if rows is not None else cols
    return TensorShape(x.as_list()[:-2] + [n, n])


def _square_same(op: Any) -> list[TensorShape]:
    return [_square(op)]


def _determinant(op: Any) -> list[TensorShape]:
    x = _square(op)
    return [unknown_shape() if x.ndims is None else TensorShape(x.as_list()[:-2])]


def _log_determinant(op: Any) -> list[TensorShape]:
    s = _determinant(op)[0]
    return [s, s]


def _qr_shape(op: Any) -> list[TensorShape]:
    x = with_rank_at_least(op, op.inputs[0].shape, 2)
    if x.ndims is None:
        return [unknown_shape(), unknown_shape()]
    batch, (m, n) = x.as_list()[:-2], x.as_list()[-2:]
    if op.get_attr("full_matrices"):
        return [TensorShape(batch + [m, m]), TensorShape(batch + [m, n])]
    k = None if m is None or n is None else min(m, n)
    return [TensorShape(batch + [m, k]), TensorShape(batch + [k, n])]


def _svd_shape(op: Any) -> list[TensorShape]:
    x = with_rank_at_least(op, op.inputs[0].shape, 2)
    if x.ndims is None:
        return [unknown_shape()] * 3
    batch, (m, n) = x.as_list()[:-2], x.as_list()[-2:]
    k = None if m is None or n is None else min(m, n)
    s = TensorShape(batch + [k])
    if not op.get_attr("compute_uv"):
        return [s, TensorShape([0]), TensorShape([0])]
    if op.get_attr("full_matrices"):
        return [s, TensorShape(batch + [m, m]), TensorShape(batch + [n, n])]
    return [s, TensorShape(batch + [m, k]), TensorShape(batch + [n, k])]


def _solve_shape(op: Any) -> list[TensorShape]:
    a = _square(op)
    rhs = with_rank_at_least(op, op.inputs[1].shape, 2)
    if a.ndims is None or rhs.ndims is None:
        return [unknown_shape()]
    merge_shapes(op, TensorShape(a.as_list()[:-1]), TensorShape(rhs.as_list()[:-1]))
    return [TensorShape(a.as_list()[:-1] + rhs.as_list()[-1:])]


def _triangular_solve_shape(op: Any) -> list[TensorShape]:
    a = _square(op)
    rhs = with_rank_at_least(op, op.inputs[1].shape, 2)
    if a.ndims is None or rhs.ndims is None:
        return [unknown_shape()]
    merge_shapes(op, TensorShape([a.as_list()[-1]]), TensorShape([rhs.as_list()[-2]]))
    return [rhs]


def _lstsq_shape(op: Any) -> list[TensorShape]:
    a = with_rank_at_least(op, op.inputs[0].shape, 2)
    rhs = with_rank_at_least(op, op.inputs[1].shape, 2)
    if a.ndims is None or rhs.ndims is None:
        return [unknown_shape()]
    return [TensorShape(a.as_list()[:-2] + [a.as_list()[-1], rhs.as_list()[-1]])]


def _eig_shape(op: Any) -> list[TensorShape]:
    x = _square(op)
    if x.ndims is None:
        return [unknown_shape(), unknown_shape()]
    e = TensorShape(x.as_list()[:-1])
    return [e, x if op.get_attr("compute_v") else TensorShape([0])]


for _name, _fn in (
    ("MatrixInverse", _square_same),
    ("MatrixSolve", _solve_shape),
):
    register_op(
        _name,
        inputs=["input: T"] if _name == "MatrixInverse" else ["matrix: T", "rhs: T"],
        outputs=["output: T"],
        attrs=["adjoint: bool = false", _T],
        shape_fn=_fn,
    )
register_op(
    "MatrixDeterminant",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: {half, float, double, complex64, complex128}"],
    shape_fn=_determinant,
)
register_op(
    "LogMatrixDeterminant",
    inputs=["input: T"],
    outputs=["sign: T", "log_abs_determinant: T"],
    attrs=["T: {half, float, double, complex64, complex128}"],
    shape_fn=_log_determinant,
)
for _name in ("Cholesky", "MatrixSquareRoot", "MatrixExponential", "MatrixLogarithm"):
    register_op(
        _name, inputs=["input: T"], outputs=["output: T"], attrs=[_T], shape_fn=_square_same
    )
register_op(
    "Qr",
    inputs=["input: T"],
    outputs=["q: T", "r: T"],
    attrs=["full_matrices: bool = false", _T],
    shape_fn=_qr_shape,
)
register_op(
    "Svd",
    inputs=["input: T"],
    outputs=["s: T", "u: T", "v: T"],
    attrs=["compute_uv: bool = true", "full_matrices: bool = false", _T],
    shape_fn=_svd_shape,
)
register_op(
    "MatrixTriangularSolve",
    inputs=["matrix: T", "rhs: T"],
    outputs=["output: T"],
    attrs=["lower: bool = true", "adjoint: bool = false", _T],
    shape_fn=_triangular_solve_shape,
)
register_op(
    "MatrixSolveLs",
    inputs=["matrix: T", "rhs: T", "l2_regularizer: double"],
    outputs=["output: T"],
    attrs=[_T, "fast: bool = true"],
    shape_fn=_lstsq_shape,
)
register_op(
    "SelfAdjointEigV2",
    inputs=["input: T"],
    outputs=["e: T", "v: T"],
    attrs=["compute_v: bool = true", _T],
    shape_fn=_eig_shape,
)


def _lu_shape(op: Any) -> list[TensorShape]:
    x = _square(op)
    return [x, unknown_shape() if x.ndims is None else TensorShape(x.as_list()[:-1])]


register_op(
    "Lu",
    inputs=["input: T"],
    outputs=["lu: T", "p: output_idx_type"],
    attrs=[_T, "output_idx_type: {int32, int64} = DT_INT32"],
    shape_fn=_lu_shape,
)


def _tridiagonal_matmul_shape(op: Any) -> list[TensorShape]:
    return [op.inputs[3].shape]


register_op(
    "TridiagonalMatMul",
    inputs=["superdiag: T", "maindiag: T", "subdiag: T", "rhs: T"],
    outputs=["output: T"],
    attrs=[_T],
    shape_fn=_tridiagonal_matmul_shape,
)
register_op(
    "TridiagonalSolve",
    inputs=["diagonals: T", "rhs: T"],
    outputs=["output: T"],
    attrs=["partial_pivoting: bool = true", "perturb_singular: bool = false", _T],
    shape_fn=lambda op: [op.inputs[1].shape],
)
