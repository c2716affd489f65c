"""Matrix-shaped array functions: bands, diagonals, transposes, traces, `eye`, `einsum`
and `cross` (follows TF 1.x `tf.matrix_band_part`, `tf.matrix_diag`, `tf.diag`,
`tf.trace`, `tf.eye`, `tf.einsum`, ...). All act on the last two dimensions of batches."""

from __future__ import annotations

from typing import Any

import numpy as np

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, cwise_ops, reduction_ops


def matrix_band_part(input: Any, num_lower: Any, num_upper: Any, name: str | None = None):  # noqa: A002
    """Zeroes everything outside a band of each innermost matrix (follows
    `tf.linalg.band_part`, op `MatrixBandPart`).

    Args:
      input: `Tensor` [..., M, N].
      num_lower: int64 scalar, the number of sub-diagonals kept (negative: all).
      num_upper: int64 scalar, the number of super-diagonals kept (negative: all).
      name: op name.

    Returns:
      `Tensor` of `input`'s shape and dtype.
    """
    return apply_op(
        "MatrixBandPart", input=input, num_lower=num_lower, num_upper=num_upper, name=name
    )


def matrix_diag(diagonal: Any, name: str = "diag", **unsupported: Any) -> Tensor:
    """Batched diagonal matrices [..., N, N] from `diagonal` [..., N] (follows
    `tf.linalg.diag` with k = 0, op `MatrixDiag`).

    Raises:
      NotImplementedError: for the `k`/`num_rows`/`num_cols`/`padding_value` arguments.
    """
    if any(v is not None for v in unsupported.values()):
        raise NotImplementedError(
            f"tf.linalg.diag arguments {sorted(unsupported)} (off-diagonals) are not "
            "implemented"
        )
    return apply_op("MatrixDiag", diagonal=diagonal, name=name)


def matrix_diag_part(input: Any, name: str = "diag_part", **unsupported: Any) -> Tensor:  # noqa: A002
    """The main diagonals [..., min(M, N)] of `input` [..., M, N] (follows
    `tf.linalg.diag_part` with k = 0, op `MatrixDiagPart`)."""
    if any(v is not None for v in unsupported.values()):
        raise NotImplementedError("tf.linalg.diag_part with k != 0 is not implemented")
    return apply_op("MatrixDiagPart", input=input, name=name)


def matrix_set_diag(input: Any, diagonal: Any, name: str = "set_diag", **unsupported: Any):  # noqa: A002
    """`input` [..., M, N] with its main diagonals replaced by `diagonal`
    [..., min(M, N)] (follows `tf.linalg.set_diag` with k = 0, op `MatrixSetDiag`)."""
    if any(v is not None for v in unsupported.values()):
        raise NotImplementedError("tf.linalg.set_diag with k != 0 is not implemented")
    return apply_op("MatrixSetDiag", input=input, diagonal=diagonal, name=name)


def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False):
    """Transposes the last two dimensions of `a` (follows `tf.linalg.matrix_transpose`).

    Raises:
      ValueError: if `a` has static rank < 2.
    """
    with graph_mod.name_scope(name, "matrix_transpose", [a]):
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        if ndims is not None:
            if ndims < 2:
                raise ValueError(
                    f"Argument 'a' should be a (batch) matrix, with rank >= 2.  Found: {a.shape}"
                )
            perm = list(range(ndims - 2)) + [ndims - 1, ndims - 2]
        else:
            rank = array_ops.rank(a)
            perm = array_ops.concat(
                [array_ops.range(rank - 2), array_ops.stack([rank - 1, rank - 2])], 0
            )
        out = array_ops.transpose(a, perm)
        return cwise_ops.conj(out) if conjugate and a.dtype.is_complex else out


def adjoint(matrix: Any, name: str | None = None) -> Tensor:
    """The conjugate transpose of the innermost matrices (follows `tf.linalg.adjoint`)."""
    with graph_mod.name_scope(name, "adjoint", [matrix]):
        return matrix_transpose(matrix, conjugate=True)


def trace(x: Any, name: str | None = None) -> Tensor:
    """Sums of the main diagonals of `x` [..., M, N] (follows `tf.linalg.trace`)."""
    with graph_mod.name_scope(name, "Trace", [x]):
        return reduction_ops.reduce_sum(matrix_diag_part(x), axis=[-1])


def diag(diagonal: Any, name: str | None = None) -> Tensor:
    """The rank-2k tensor with `diagonal` [D1..Dk] on its diagonal (follows `tf.diag`)."""
    return apply_op("Diag", diagonal=diagonal, name=name)


def diag_part(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The diagonal [D1..Dk] of a tensor [D1..Dk, D1..Dk] (follows `tf.diag_part`)."""
    return apply_op("DiagPart", input=input, name=name)


def eye(
    num_rows: Any,
    num_columns: Any = None,
    batch_shape: Any = None,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """Identity matrices [*batch_shape, num_rows, num_columns] (follows `tf.eye`).

    Args:
      num_rows: int scalar.
      num_columns: int scalar (default num_rows).
      batch_shape: optional list or 1-D int32 `Tensor` of leading dimensions.
      dtype: element type.
      name: op name.
    """
    with graph_mod.name_scope(name, "eye", [num_rows, num_columns, batch_shape]):
        dtype = dtypes.as_dtype(dtype)
        rows = convert_to_tensor(num_rows, dtypes.int32)
        cols = rows if num_columns is None else convert_to_tensor(num_columns, dtypes.int32)
        if batch_shape is None or isinstance(batch_shape, list | tuple):
            batch = np.asarray(batch_shape or [], np.int32).reshape(-1)
        else:
            batch = convert_to_tensor(batch_shape, dtypes.int32)
        size = rows if num_columns is None else cwise_ops.minimum(rows, cols)
        ones = array_ops.ones(
            array_ops.concat([batch, array_ops.reshape(size, [1])], 0), dtype=dtype
        )
        if num_columns is None:
            return matrix_diag(ones)
        shape = array_ops.concat([batch, array_ops.stack([rows, cols])], 0)
        return matrix_set_diag(array_ops.zeros(shape, dtype=dtype), ones)


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> Tensor:
    """A tensor contraction in Einstein notation (follows `tf.einsum`, op `Einsum`).

    Args:
      equation: e.g. `"ij,jk->ik"`; `...` for broadcast dimensions; an implicit output
        (no `->`) lists the labels used once, in alphabetical order (NumPy's rule).
      *inputs: the operand `Tensor`s, one dtype.
      **kwargs: `name` (op name); `optimize` is accepted and ignored.

    Raises:
      ValueError: for a wrong number of inputs or inconsistent dimensions.
    """
    name = kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"invalid keyword arguments for this function: {sorted(kwargs)}")
    equation = equation.replace(" ", "")
    if "->" not in equation:
        lhs = equation
        labels = [c for c in lhs if c.isalpha()]
        once = sorted(c for c in set(labels) if labels.count(c) == 1)
        equation = f"{lhs}->{'...' if '...' in lhs else ''}{''.join(once)}"
    if equation.split("->")[0].count(",") + 1 != len(inputs):
        raise ValueError(
            f"Expected {equation.split('->')[0].count(',') + 1} inputs for equation "
            f"{equation!r}, got {len(inputs)}"
        )
    return apply_op("Einsum", inputs=list(inputs), equation=equation, name=name)


def cross(a: Any, b: Any, name: str | None = None) -> Tensor:
    """Pairwise cross products of 3-vectors [..., 3] (follows `tf.linalg.cross`)."""
    return apply_op("Cross", a=a, b=b, name=name)


__all__ = [
    "cross",
    "diag",
    "diag_part",
    "einsum",
    "eye",
    "matrix_band_part",
    "matrix_diag",
    "matrix_diag_part",
    "matrix_set_diag",
    "matrix_transpose",
    "trace",
]
