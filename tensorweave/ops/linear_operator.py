"""`tf.linalg.LinearOperator` and its basic subclasses (follows TF's
`tf.linalg.LinearOperator*` API: `shape`, `batch_shape`, `domain_dimension`,
`range_dimension`, `to_dense`, `matmul`, `matvec`, `solve`, `solvevec`, `determinant`,
`log_abs_determinant`, `diag_part`, `trace`, `adjoint`, `inverse`, `add_to_tensor`,
`cholesky`, `eigvals`).

Every operator is defined by its dense matrix (`_to_dense`); the other methods use dense
linear algebra unless a subclass has a cheaper form (diagonal, triangular, identity).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array_ops, cwise_ops, matmul_ops, reduction_ops
from tensorweave.ops import linalg_ops as la
from tensorweave.ops.logging_ops import assert_none_equal
from tensorweave.ops.matrix_ops import (
    adjoint,
    matrix_band_part,
    matrix_diag,
    matrix_diag_part,
)


class LinearOperator:
    """Base class: a (batch of) linear operator(s) [..., M, N] (follows
    `tf.linalg.LinearOperator`). Subclasses implement `_to_dense()`.

    Args:
      dtype: element dtype.
      graph_parents: ignored (TF 1.x compatibility).
      is_non_singular, is_self_adjoint, is_positive_definite, is_square: hints.
      name: name scope of the operator's ops.
    """

    def __init__(self, dtype: Any, graph_parents: Any = None, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: str | None = None, parameters: Any = None):
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square = is_square
        self._name = name or type(self).__name__
        self._parameters = parameters or {}

    # ---------------------------------------------------------------- properties
    @property
    def dtype(self) -> Any:
        """The element dtype."""
        return self._dtype

    @property
    def name(self) -> str:
        """The operator's name."""
        return self._name

    @property
    def parameters(self) -> dict[str, Any]:
        """The constructor arguments."""
        return dict(self._parameters)

    @property
    def is_non_singular(self) -> Any:
        """Hint: invertible."""
        return self._is_non_singular

    @property
    def is_self_adjoint(self) -> Any:
        """Hint: equal to its adjoint."""
        return self._is_self_adjoint

    @property
    def is_positive_definite(self) -> Any:
        """Hint: positive definite."""
        return self._is_positive_definite

    @property
    def is_square(self) -> Any:
        """True when M == N (statically), else the hint."""
        m, n = self.shape.as_list()[-2:] if self.shape.ndims else (None, None)
        if m is not None and n is not None:
            return m == n
        return self._is_square

    @property
    def shape(self) -> TensorShape:
        """The static shape [..., M, N]."""
        return self.to_dense().shape

    @property
    def batch_shape(self) -> TensorShape:
        """The static batch shape."""
        return TensorShape(self.shape.as_list()[:-2]) if self.shape.ndims else TensorShape(None)

    @property
    def tensor_rank(self) -> int | None:
        """The static rank of the dense matrix."""
        return self.shape.ndims

    @property
    def range_dimension(self) -> Any:
        """M, the dimension of the output space."""
        return self.shape.dims[-2] if self.shape.ndims else None

    @property
    def domain_dimension(self) -> Any:
        """N, the dimension of the input space."""
        return self.shape.dims[-1] if self.shape.ndims else None

    def shape_tensor(self, name: str = "shape_tensor") -> Tensor:
        """The dynamic shape, int32 [rank]."""
        return array_ops.shape(self.to_dense(), name=name)

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> Tensor:
        """The dynamic batch shape."""
        return self.shape_tensor()[:-2]

    def range_dimension_tensor(self, name: str = "range_dimension_tensor") -> Tensor:
        """M as a tensor."""
        return self.shape_tensor()[-2]

    def domain_dimension_tensor(self, name: str = "domain_dimension_tensor") -> Tensor:
        """N as a tensor."""
        return self.shape_tensor()[-1]

    # -------------------------------------------------------------------- methods
    def _to_dense(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement _to_dense")

    def to_dense(self, name: str = "to_dense") -> Tensor:
        """The dense matrix [..., M, N]."""
        return self._to_dense()

    def matmul(self, x: Any, adjoint: bool = False, adjoint_arg: bool = False,  # noqa: A002
               name: str = "matmul") -> Any:
        """`op @ x` (or `adjoint(op) @ x`); x may be another LinearOperator."""
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            return LinearOperatorComposition([left, right])
        return matmul_ops.matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg,
                                 name=name)

    def matvec(self, x: Any, adjoint: bool = False, name: str = "matvec") -> Tensor:  # noqa: A002
        """`op @ x` for vectors x [..., N]."""
        x = array_ops.expand_dims(convert_to_tensor(x, dtype=self.dtype), -1)
        return array_ops.squeeze(self.matmul(x, adjoint=adjoint), [-1])

    def solve(self, rhs: Any, adjoint: bool = False, adjoint_arg: bool = False,  # noqa: A002
              name: str = "solve") -> Tensor:
        """X with `op @ X = rhs`."""
        rhs = convert_to_tensor(rhs, dtype=self.dtype)
        if adjoint_arg:
            rhs = matrix_adjoint(rhs)
        return la.matrix_solve(self.to_dense(), rhs, adjoint=adjoint)

    def solvevec(self, rhs: Any, adjoint: bool = False, name: str = "solve") -> Tensor:  # noqa: A002
        """X with `op @ x = rhs` for vectors."""
        rhs = array_ops.expand_dims(convert_to_tensor(rhs, dtype=self.dtype), -1)
        return array_ops.squeeze(self.solve(rhs, adjoint=adjoint), [-1])

    def determinant(self, name: str = "det") -> Tensor:
        """Det [...] (square operators)."""
        return la.matrix_determinant(self.to_dense())

    def log_abs_determinant(self, name: str = "log_abs_det") -> Tensor:
        """Log |det| [...]."""
        return la.slogdet(self.to_dense())[1]

    def diag_part(self, name: str = "diag_part") -> Tensor:
        """The main diagonal [..., min(M, N)]."""
        return matrix_diag_part(self.to_dense())

    def trace(self, name: str = "trace") -> Tensor:
        """The sum of the main diagonal."""
        return reduction_ops.reduce_sum(self.diag_part(), axis=-1)

    def add_to_tensor(self, x: Any, name: str = "add_to_tensor") -> Tensor:
        """`to_dense() + x`."""
        return self.to_dense() + convert_to_tensor(x, dtype=self.dtype)

    def adjoint(self, name: str = "adjoint") -> LinearOperator:
        """The adjoint operator."""
        return LinearOperatorAdjoint(self)

    H = property(adjoint)

    def inverse(self, name: str = "inverse") -> LinearOperator:
        """The inverse operator."""
        return LinearOperatorInversion(self)

    def cholesky(self, name: str = "cholesky") -> LinearOperator:
        """The lower Cholesky factor as a LinearOperatorLowerTriangular."""
        return LinearOperatorLowerTriangular(la.cholesky(self.to_dense()))

    def eigvals(self, name: str = "eigvals") -> Tensor:
        """Eigenvalues of a self-adjoint operator."""
        return la.self_adjoint_eigvals(self.to_dense())

    def cond(self, name: str = "cond") -> Tensor:
        """The condition number: largest over smallest singular value."""
        s = la.svd(self.to_dense(), compute_uv=False)
        return reduction_ops.reduce_max(s, -1) / reduction_ops.reduce_min(s, -1)

    def assert_non_singular(self, name: str = "assert_non_singular") -> Any:
        """An op failing at run time if the determinant is 0."""
        return assert_none_equal(self.determinant(), array_ops.zeros_like(self.determinant()))

    def __matmul__(self, other: Any) -> Any:
        return self.matmul(other)


def matrix_adjoint(x: Tensor) -> Tensor:
    """The adjoint of the innermost matrices."""
    return adjoint(x)


class LinearOperatorFullMatrix(LinearOperator):
    """An operator given by a dense `matrix` [..., M, N]."""

    def __init__(self, matrix: Any, is_non_singular: Any = None, is_self_adjoint: Any = None,
                 is_positive_definite: Any = None, is_square: Any = None,
                 name: str = "LinearOperatorFullMatrix"):
        with graph_mod.name_scope(name, values=[matrix]):
            self._matrix = convert_to_tensor(matrix, name="matrix")
        super().__init__(self._matrix.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name, {"matrix": matrix})

    def _to_dense(self) -> Tensor:
        return self._matrix


class LinearOperatorDiag(LinearOperator):
    """A diagonal operator from `diag` [..., N]: cheap matmul, solve and determinant."""

    def __init__(self, diag: Any, is_non_singular: Any = None, is_self_adjoint: Any = None,
                 is_positive_definite: Any = None, is_square: Any = True,
                 name: str = "LinearOperatorDiag"):
        self._diag = convert_to_tensor(diag, name="diag")
        super().__init__(self._diag.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name, {"diag": diag})

    @property
    def diag(self) -> Tensor:
        """The diagonal."""
        return self._diag

    def _to_dense(self) -> Tensor:
        return matrix_diag(self._diag)

    def matmul(self, x: Any, adjoint: bool = False, adjoint_arg: bool = False,  # noqa: A002
               name: str = "matmul") -> Any:
        """Specialized `LinearOperator.matmul`."""
        if isinstance(x, LinearOperator):
            return super().matmul(x, adjoint, adjoint_arg)
        x = convert_to_tensor(x, dtype=self.dtype)
        x = matrix_adjoint(x) if adjoint_arg else x
        d = cwise_ops.conj(self._diag) if adjoint else self._diag
        return array_ops.expand_dims(d, -1) * x

    def solve(self, rhs: Any, adjoint: bool = False, adjoint_arg: bool = False,  # noqa: A002
              name: str = "solve") -> Tensor:
        """Specialized `LinearOperator.solve`."""
        rhs = convert_to_tensor(rhs, dtype=self.dtype)
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        d = cwise_ops.conj(self._diag) if adjoint else self._diag
        return rhs / array_ops.expand_dims(d, -1)

    def determinant(self, name: str = "det") -> Tensor:
        """Specialized `LinearOperator.determinant`."""
        return reduction_ops.reduce_prod(self._diag, axis=-1)

    def log_abs_determinant(self, name: str = "log_abs_det") -> Tensor:
        """Specialized `LinearOperator.log_abs_determinant`."""
        return reduction_ops.reduce_sum(cwise_ops.log(cwise_ops.abs(self._diag)), axis=-1)

    def diag_part(self, name: str = "diag_part") -> Tensor:
        """Specialized `LinearOperator.diag_part`."""
        return self._diag


class LinearOperatorIdentity(LinearOperatorDiag):
    """The identity [*batch_shape, N, N] (follows `tf.linalg.LinearOperatorIdentity`)."""

    def __init__(self, num_rows: Any, batch_shape: Any = None, dtype: Any = None,
                 is_non_singular: Any = True, is_self_adjoint: Any = True,
                 is_positive_definite: Any = True, is_square: Any = True,
                 assert_proper_shapes: bool = False, name: str = "LinearOperatorIdentity"):
        dtype = dtypes.as_dtype(dtype or dtypes.float32)
        shape = [] if batch_shape is None else list(np.asarray(batch_shape).reshape(-1))
        super().__init__(array_ops.ones(shape + [int(num_rows)], dtype=dtype), is_non_singular,
                         is_self_adjoint, is_positive_definite, is_square, name)


class LinearOperatorScaledIdentity(LinearOperatorDiag):
    """`multiplier` [...] times the N x N identity."""

    def __init__(self, num_rows: Any, multiplier: Any, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = True, assert_proper_shapes: bool = False,
                 name: str = "LinearOperatorScaledIdentity"):
        multiplier = convert_to_tensor(multiplier, name="multiplier")
        self.multiplier = multiplier
        ones = array_ops.ones([int(num_rows)], dtype=multiplier.dtype)
        super().__init__(array_ops.expand_dims(multiplier, -1) * ones, is_non_singular,
                         is_self_adjoint, is_positive_definite, is_square, name)


class LinearOperatorZeros(LinearOperator):
    """The zero operator [*batch_shape, num_rows, num_columns]."""

    def __init__(self, num_rows: Any, num_columns: Any = None, batch_shape: Any = None,
                 dtype: Any = None, is_non_singular: Any = False, is_self_adjoint: Any = True,
                 is_positive_definite: Any = False, is_square: Any = True,
                 assert_proper_shapes: bool = False, name: str = "LinearOperatorZeros"):
        cols = num_rows if num_columns is None else num_columns
        shape = [] if batch_shape is None else list(np.asarray(batch_shape).reshape(-1))
        self._zeros = array_ops.zeros(shape + [int(num_rows), int(cols)],
                                      dtype=dtype or dtypes.float32)
        super().__init__(self._zeros.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)

    def _to_dense(self) -> Tensor:
        return self._zeros


class LinearOperatorLowerTriangular(LinearOperator):
    """The lower triangle of `tril` [..., N, N] (the rest is ignored); triangular solves."""

    def __init__(self, tril: Any, is_non_singular: Any = None, is_self_adjoint: Any = None,
                 is_positive_definite: Any = None, is_square: Any = None,
                 name: str = "LinearOperatorLowerTriangular"):
        self._tril = matrix_band_part(convert_to_tensor(tril, name="tril"), -1, 0)
        super().__init__(self._tril.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name, {"tril": tril})

    def _to_dense(self) -> Tensor:
        return self._tril

    def solve(self, rhs: Any, adjoint: bool = False, adjoint_arg: bool = False,  # noqa: A002
              name: str = "solve") -> Tensor:
        """Specialized `LinearOperator.solve`."""
        rhs = convert_to_tensor(rhs, dtype=self.dtype)
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        return la.matrix_triangular_solve(self._tril, rhs, lower=True, adjoint=adjoint)

    def determinant(self, name: str = "det") -> Tensor:
        """Specialized `LinearOperator.determinant`."""
        return reduction_ops.reduce_prod(matrix_diag_part(self._tril), axis=-1)

    def log_abs_determinant(self, name: str = "log_abs_det") -> Tensor:
        """Specialized `LinearOperator.log_abs_determinant`."""
        diag = matrix_diag_part(self._tril)
        return reduction_ops.reduce_sum(cwise_ops.log(cwise_ops.abs(diag)), axis=-1)


class LinearOperatorAdjoint(LinearOperator):
    """The adjoint of `operator`."""

    def __init__(self, operator: LinearOperator, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: str | None = None):
        self.operator = operator
        super().__init__(operator.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name or operator.name + "_adjoint")

    def _to_dense(self) -> Tensor:
        return matrix_adjoint(self.operator.to_dense())


class LinearOperatorInversion(LinearOperator):
    """The inverse of a non-singular `operator`."""

    def __init__(self, operator: LinearOperator, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: str | None = None):
        self.operator = operator
        super().__init__(operator.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name or operator.name + "_inv")

    def _to_dense(self) -> Tensor:
        return la.matrix_inverse(self.operator.to_dense())

    def matmul(self, x: Any, adjoint: bool = False, adjoint_arg: bool = False,  # noqa: A002
               name: str = "matmul") -> Any:
        """Specialized `LinearOperator.matmul`."""
        if isinstance(x, LinearOperator):
            return super().matmul(x, adjoint, adjoint_arg)
        return self.operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def solve(self, rhs: Any, adjoint: bool = False, adjoint_arg: bool = False,  # noqa: A002
              name: str = "solve") -> Tensor:
        """Specialized `LinearOperator.solve`."""
        return self.operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)


class LinearOperatorComposition(LinearOperator):
    """The product `operators[0] @ operators[1] @ ...`."""

    def __init__(self, operators: list[LinearOperator], is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: str | None = None):
        if not operators:
            raise ValueError("Expected a non-empty list of operators.")
        self.operators = list(operators)
        super().__init__(operators[0].dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square,
                         name or "_o_".join(o.name for o in operators))

    def _to_dense(self) -> Tensor:
        dense = self.operators[-1].to_dense()
        for op in reversed(self.operators[:-1]):
            dense = op.matmul(dense)
        return dense


__all__ = [
    "LinearOperator",
    "LinearOperatorAdjoint",
    "LinearOperatorComposition",
    "LinearOperatorDiag",
    "LinearOperatorFullMatrix",
    "LinearOperatorIdentity",
    "LinearOperatorInversion",
    "LinearOperatorLowerTriangular",
    "LinearOperatorScaledIdentity",
    "LinearOperatorZeros",
]
