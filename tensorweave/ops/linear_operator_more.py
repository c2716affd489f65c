"""Structured `tf.linalg.LinearOperator`s: Kronecker, block-diagonal, block lower
triangular, permutation, Householder, low-rank update, Toeplitz, circulant (1-3 D) and
tridiagonal (follows the constructors of TF's `tf.linalg.LinearOperator*`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, cwise_ops, matmul_ops
from tensorweave.ops.complex_ops import complex as make_complex
from tensorweave.ops.complex_ops import fftnd, ifftnd, real
from tensorweave.ops.linalg_tridiagonal import tridiagonal_matmul, tridiagonal_solve
from tensorweave.ops.linear_operator import LinearOperator, matrix_adjoint
from tensorweave.ops.matrix_ops import eye


def _hints(kwargs: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(kwargs.get(k) for k in ("is_non_singular", "is_self_adjoint",
                                         "is_positive_definite", "is_square"))


class LinearOperatorKronecker(LinearOperator):
    """The Kronecker product `operators[0] (x) operators[1] (x) ...` (2-D operators)."""

    def __init__(self, operators: list[LinearOperator], name: str | None = None, **hints: Any):
        self.operators = list(operators)
        super().__init__(operators[0].dtype, None, *_hints(hints),
                         name=name or "_x_".join(o.name for o in operators))

    def _to_dense(self) -> Tensor:
        dense = self.operators[0].to_dense()
        for op in self.operators[1:]:
            b = op.to_dense()
            (m, n), (p, q) = dense.shape.as_list(), b.shape.as_list()
            prod = array_ops.reshape(dense, [m, 1, n, 1]) * array_ops.reshape(b, [1, p, 1, q])
            dense = array_ops.reshape(prod, [m * p, n * q])
        return dense


class LinearOperatorBlockDiag(LinearOperator):
    """The block-diagonal operator of square 2-D `operators`."""

    def __init__(self, operators: list[LinearOperator], name: str | None = None, **hints: Any):
        self.operators = list(operators)
        super().__init__(operators[0].dtype, None, *_hints(hints),
                         name=name or "_ds_".join(o.name for o in operators))

    def _to_dense(self) -> Tensor:
        sizes = [op.shape.as_list()[-1] for op in self.operators]
        total, rows, start = sum(sizes), [], 0
        for op, n in zip(self.operators, sizes):
            rows.append(array_ops.pad(op.to_dense(), [[0, 0], [start, total - start - n]]))
            start += n
        return array_ops.concat(rows, 0)


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """A block lower-triangular operator: `operators[i][j]` is block (i, j), j <= i."""

    def __init__(self, operators: list[list[LinearOperator]], name: str | None = None,
                 **hints: Any):
        self.operators = [list(row) for row in operators]
        super().__init__(operators[0][0].dtype, None, *_hints(hints),
                         name=name or "LinearOperatorBlockLowerTriangular")

    def _to_dense(self) -> Tensor:
        sizes = [row[-1].shape.as_list()[-1] for row in self.operators]
        rows = []
        for i, row in enumerate(self.operators):
            blocks = [op.to_dense() for op in row]
            blocks += [array_ops.zeros([sizes[i], n], dtype=self.dtype)
                       for n in sizes[len(row):]]
            rows.append(array_ops.concat(blocks, 1))
        return array_ops.concat(rows, 0)


class LinearOperatorPermutation(LinearOperator):
    """The permutation matrix with ones at `(i, perm[i])`: `(P x)[i] = x[perm[i]]`."""

    def __init__(self, perm: Any, dtype: Any = dtypes.float32, name: str | None = None,
                 **hints: Any):
        self.perm = convert_to_tensor(perm, name="perm")
        super().__init__(dtype, None, *_hints(hints), name=name or "LinearOperatorPermutation")

    def _to_dense(self) -> Tensor:
        n = self.perm.shape.as_list()[-1]
        return array_ops.one_hot(self.perm, n, dtype=self.dtype)


class LinearOperatorHouseholder(LinearOperator):
    """The reflection `I - 2 v v^H / (v^H v)` about the hyperplane normal to
    `reflection_axis` [N]."""

    def __init__(self, reflection_axis: Any, name: str | None = None, **hints: Any):
        self.reflection_axis = convert_to_tensor(reflection_axis, name="reflection_axis")
        super().__init__(self.reflection_axis.dtype, None, *_hints(hints),
                         name=name or "LinearOperatorHouseholder")

    def _to_dense(self) -> Tensor:
        v = array_ops.expand_dims(self.reflection_axis, -1)
        n = self.reflection_axis.shape.as_list()[-1]
        outer = matmul_ops.matmul(v, v, adjoint_b=True)
        norm = matmul_ops.matmul(v, v, adjoint_a=True)
        return eye(n, dtype=self.dtype) - 2.0 * outer / norm


class LinearOperatorLowRankUpdate(LinearOperator):
    """`base_operator + u diag(diag_update) v^H` (v defaults to u, diag_update to ones)."""

    def __init__(self, base_operator: LinearOperator, u: Any, diag_update: Any = None,
                 v: Any = None, is_diag_update_positive: Any = None, name: str | None = None,
                 **hints: Any):
        self.base_operator = base_operator
        self.u = convert_to_tensor(u, dtype=base_operator.dtype, name="u")
        self.v = self.u if v is None else convert_to_tensor(v, dtype=base_operator.dtype)
        self.diag_update = None if diag_update is None else convert_to_tensor(
            diag_update, dtype=base_operator.dtype)
        super().__init__(base_operator.dtype, None, *_hints(hints),
                         name=name or "LinearOperatorLowRankUpdate")

    def _to_dense(self) -> Tensor:
        u = self.u if self.diag_update is None else self.u * array_ops.expand_dims(
            self.diag_update, -2)
        return self.base_operator.to_dense() + matmul_ops.matmul(u, self.v, adjoint_b=True)


class LinearOperatorToeplitz(LinearOperator):
    """The Toeplitz matrix with first column `col` and first row `row` [N] (`row[0]` is
    ignored in favor of `col[0]`)."""

    def __init__(self, col: Any, row: Any, name: str | None = None, **hints: Any):
        self.col = convert_to_tensor(col, name="col")
        self.row = convert_to_tensor(row, dtype=self.col.dtype, name="row")
        super().__init__(self.col.dtype, None, *_hints(hints),
                         name=name or "LinearOperatorToeplitz")

    def _to_dense(self) -> Tensor:
        n = self.col.shape.as_list()[-1]
        values = array_ops.concat([self.row[..., ::-1][..., :-1], self.col], -1)
        i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        index = (n - 1 + i - j).astype(np.int32)
        return array_ops.gather(values, index, axis=-1)


class _CirculantBase(LinearOperator):
    def __init__(self, spectrum: Any, rank: int, input_output_dtype: Any, name: str,
                 **hints: Any):
        self.spectrum = convert_to_tensor(spectrum, name="spectrum")
        self._rank = rank
        super().__init__(input_output_dtype, None, *_hints(hints), name=name)

    def _to_dense(self) -> Tensor:
        dims = self.spectrum.shape.as_list()[-self._rank:]
        n = int(np.prod(dims))
        spectrum = self.spectrum
        if not spectrum.dtype.is_complex:
            spectrum = make_complex(spectrum, array_ops.zeros_like(spectrum))
        basis = np.eye(n).reshape([n] + dims).astype(spectrum.dtype.as_numpy_dtype)
        axes = list(range(1, self._rank + 1))
        columns = ifftnd(spectrum * fftnd(basis, axes=axes), axes=axes)
        dense = matrix_adjoint(cwise_ops.conj(array_ops.reshape(columns, [n, n])))
        return dense if self.dtype.is_complex else cwise_ops.cast(real(dense), self.dtype)


class LinearOperatorCirculant(_CirculantBase):
    """The circulant operator with eigenvalues `spectrum` [N]: `ifft(spectrum * fft(x))`."""

    def __init__(self, spectrum: Any, input_output_dtype: Any = dtypes.complex64,
                 name: str = "LinearOperatorCirculant", **hints: Any):
        super().__init__(spectrum, 1, input_output_dtype, name, **hints)


class LinearOperatorCirculant2D(_CirculantBase):
    """The block-circulant operator with 2-D `spectrum` [N0, N1]."""

    def __init__(self, spectrum: Any, input_output_dtype: Any = dtypes.complex64,
                 name: str = "LinearOperatorCirculant2D", **hints: Any):
        super().__init__(spectrum, 2, input_output_dtype, name, **hints)


class LinearOperatorCirculant3D(_CirculantBase):
    """The block-circulant operator with 3-D `spectrum` [N0, N1, N2]."""

    def __init__(self, spectrum: Any, input_output_dtype: Any = dtypes.complex64,
                 name: str = "LinearOperatorCirculant3D", **hints: Any):
        super().__init__(spectrum, 3, input_output_dtype, name, **hints)


class LinearOperatorTridiag(LinearOperator):
    """A tridiagonal operator from `diagonals` ('compact', 'sequence' or 'matrix')."""

    def __init__(self, diagonals: Any, diagonals_format: str = "compact",
                 name: str = "LinearOperatorTridiag", **hints: Any):
        self.diagonals = diagonals
        self.diagonals_format = diagonals_format
        first = diagonals[0] if diagonals_format == "sequence" else diagonals
        super().__init__(convert_to_tensor(first).dtype, None, *_hints(hints), name=name)

    def _to_dense(self) -> Tensor:
        if self.diagonals_format == "matrix":
            return convert_to_tensor(self.diagonals)
        n = (convert_to_tensor(self.diagonals[0]) if self.diagonals_format == "sequence"
             else convert_to_tensor(self.diagonals)).shape.as_list()[-1]
        return self.matmul(eye(n, dtype=self.dtype))

    def matmul(self, x: Any, adjoint: bool = False, adjoint_arg: bool = False,  # noqa: A002
               name: str = "matmul") -> Any:
        """Specialized `LinearOperator.matmul`."""
        if isinstance(x, LinearOperator) or adjoint:
            return LinearOperator.matmul(self, x, adjoint, adjoint_arg)
        x = convert_to_tensor(x, dtype=self.dtype)
        x = matrix_adjoint(x) if adjoint_arg else x
        return tridiagonal_matmul(self.diagonals, x, diagonals_format=self.diagonals_format)

    def solve(self, rhs: Any, adjoint: bool = False, adjoint_arg: bool = False,  # noqa: A002
              name: str = "solve") -> Tensor:
        """Specialized `LinearOperator.solve`."""
        if adjoint:
            return LinearOperator.solve(self, rhs, adjoint, adjoint_arg)
        rhs = convert_to_tensor(rhs, dtype=self.dtype)
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        return tridiagonal_solve(self.diagonals, rhs, diagonals_format=self.diagonals_format)


__all__ = [
    "LinearOperatorBlockDiag",
    "LinearOperatorBlockLowerTriangular",
    "LinearOperatorCirculant",
    "LinearOperatorCirculant2D",
    "LinearOperatorCirculant3D",
    "LinearOperatorHouseholder",
    "LinearOperatorKronecker",
    "LinearOperatorLowRankUpdate",
    "LinearOperatorPermutation",
    "LinearOperatorTridiag",
    "LinearOperatorToeplitz",
]
