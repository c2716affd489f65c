"""The `tf.linalg` namespace (explicit re-exports of TF 1.x `tf.linalg` names).

The logic lives in `tensorweave.ops.linalg_ops` (decompositions and solves),
`matrix_ops` (bands, diagonals, einsum), `linalg_tridiagonal` and `matmul_ops`. The
`LinearOperator*` classes are dense-backed (see `tensorweave.ops.linear_operator`).
"""

from tensorweave.ops.array_ops import transpose
from tensorweave.ops.clip_ops import global_norm
from tensorweave.ops.linalg_ops import (
    cholesky,
    cholesky_solve,
    logdet,
    lu,
    lu_matrix_inverse,
    lu_reconstruct,
    lu_solve,
    matrix_rank,
    matvec,
    norm,
    normalize,
    pinv,
    qr,
    slogdet,
    svd,
)
from tensorweave.ops.linalg_ops import matrix_determinant as det
from tensorweave.ops.linalg_ops import matrix_exponential as expm
from tensorweave.ops.linalg_ops import matrix_inverse as inv
from tensorweave.ops.linalg_ops import matrix_logarithm as logm
from tensorweave.ops.linalg_ops import matrix_solve as solve
from tensorweave.ops.linalg_ops import matrix_solve_ls as lstsq
from tensorweave.ops.linalg_ops import matrix_square_root as sqrtm
from tensorweave.ops.linalg_ops import matrix_triangular_solve as triangular_solve
from tensorweave.ops.linalg_ops import self_adjoint_eig as eigh
from tensorweave.ops.linalg_ops import self_adjoint_eigvals as eigvalsh
from tensorweave.ops.linalg_tridiagonal import (
    eigh_tridiagonal,
    tridiagonal_matmul,
    tridiagonal_solve,
)
from tensorweave.ops.linear_operator import (
    LinearOperator,
    LinearOperatorAdjoint,
    LinearOperatorComposition,
    LinearOperatorDiag,
    LinearOperatorFullMatrix,
    LinearOperatorIdentity,
    LinearOperatorInversion,
    LinearOperatorLowerTriangular,
    LinearOperatorScaledIdentity,
    LinearOperatorZeros,
)
from tensorweave.ops.linear_operator_more import (
    LinearOperatorBlockDiag,
    LinearOperatorBlockLowerTriangular,
    LinearOperatorCirculant,
    LinearOperatorCirculant2D,
    LinearOperatorCirculant3D,
    LinearOperatorHouseholder,
    LinearOperatorKronecker,
    LinearOperatorLowRankUpdate,
    LinearOperatorPermutation,
    LinearOperatorToeplitz,
    LinearOperatorTridiag,
)
from tensorweave.ops.matmul_ops import matmul, tensordot
from tensorweave.ops.matrix_ops import adjoint, cross, einsum, eye, matrix_transpose, trace
from tensorweave.ops.matrix_ops import diag as tensor_diag
from tensorweave.ops.matrix_ops import diag_part as tensor_diag_part
from tensorweave.ops.matrix_ops import matrix_band_part as band_part
from tensorweave.ops.matrix_ops import matrix_diag as diag
from tensorweave.ops.matrix_ops import matrix_diag_part as diag_part
from tensorweave.ops.matrix_ops import matrix_set_diag as set_diag
from tensorweave.ops.nn_impl import l2_normalize

__all__ = [
    "LinearOperator",
    "LinearOperatorAdjoint",
    "LinearOperatorBlockDiag",
    "LinearOperatorBlockLowerTriangular",
    "LinearOperatorCirculant",
    "LinearOperatorCirculant2D",
    "LinearOperatorCirculant3D",
    "LinearOperatorComposition",
    "LinearOperatorDiag",
    "LinearOperatorFullMatrix",
    "LinearOperatorHouseholder",
    "LinearOperatorIdentity",
    "LinearOperatorInversion",
    "LinearOperatorKronecker",
    "LinearOperatorLowRankUpdate",
    "LinearOperatorLowerTriangular",
    "LinearOperatorPermutation",
    "LinearOperatorScaledIdentity",
    "LinearOperatorToeplitz",
    "LinearOperatorTridiag",
    "LinearOperatorZeros",
    "adjoint",
    "band_part",
    "cholesky",
    "cholesky_solve",
    "cross",
    "det",
    "diag",
    "diag_part",
    "eigh",
    "eigh_tridiagonal",
    "eigvalsh",
    "einsum",
    "expm",
    "eye",
    "global_norm",
    "inv",
    "l2_normalize",
    "logdet",
    "logm",
    "lstsq",
    "lu",
    "lu_matrix_inverse",
    "lu_reconstruct",
    "lu_solve",
    "matmul",
    "matrix_rank",
    "matrix_transpose",
    "matvec",
    "norm",
    "normalize",
    "pinv",
    "qr",
    "set_diag",
    "slogdet",
    "solve",
    "sqrtm",
    "svd",
    "tensor_diag",
    "tensor_diag_part",
    "tensordot",
    "trace",
    "transpose",
    "triangular_solve",
    "tridiagonal_matmul",
    "tridiagonal_solve",
]
