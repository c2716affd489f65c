"""Matrix products: `MatMul`, `BatchMatMul`, `BatchMatMulV2` and `tf.matmul`.

Follows TF 1.x `math_ops.matmul`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import array_ops, constant_op, cwise_ops, reduction_ops


def matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    adjoint_a: bool = False,
    adjoint_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Tensor:
    """Matrix product `a @ b` (follows TF 1.x `tf.matmul`).

    Rank-2 inputs build a `MatMul`; inputs of higher or unknown rank build a
    `BatchMatMulV2` over the leading (broadcast) batch dimensions, with transposes turned
    into adjoints. `a_is_sparse`/`b_is_sparse` are accepted and ignored (no `SparseMatMul`).

    Args:
      a: `T [..., M, K]` (or `[..., K, M]` when transposed/adjointed).
      b: `T [..., K, N]` (or `[..., N, K]`).
      transpose_a: transpose the last two dimensions of `a` first.
      transpose_b: transpose the last two dimensions of `b` first.
      adjoint_a: conjugate-transpose the last two dimensions of `a` first.
      adjoint_b: conjugate-transpose the last two dimensions of `b` first.
      a_is_sparse: ignored.
      b_is_sparse: ignored.
      name: op name.

    Returns:
      `T [..., M, N]`.

    Raises:
      ValueError: if both transpose and adjoint are set for one input, or the static
        shapes are incompatible ("Dimensions must be equal, but are 3 and 4 ...").
      TypeError: if `a` and `b` have different dtypes.
    """
    with graph_mod.name_scope(name, "MatMul", [a, b]) as scope:
        if transpose_a and adjoint_a:
            raise ValueError("Only one of transpose_a and adjoint_a can be True.")
        if transpose_b and adjoint_b:
            raise ValueError("Only one of transpose_b and adjoint_b can be True.")
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        ra, rb = a.shape.ndims, b.shape.ndims
        if ra is None or ra > 2 or rb is None or rb > 2:
            # Transposing is conjugating then adjointing (conj is a no-op for reals).
            if transpose_a:
                a = cwise_ops.conj(a)
            if transpose_b:
                b = cwise_ops.conj(b)
            return apply_op(
                "BatchMatMulV2",
                x=a,
                y=b,
                adj_x=bool(adjoint_a or transpose_a),
                adj_y=bool(adjoint_b or transpose_b),
                name=scope,
            )
        if adjoint_a:
            a = cwise_ops.conj(a)
            transpose_a = True
        if adjoint_b:
            b = cwise_ops.conj(b)
            transpose_b = True
        return apply_op(
            "MatMul",
            a=a,
            b=b,
            transpose_a=bool(transpose_a),
            transpose_b=bool(transpose_b),
            name=scope,
        )


def batch_matmul(
    x: Any, y: Any, adj_x: bool = False, adj_y: bool = False, name: str | None = None
) -> Tensor:
    """`BatchMatMulV2`: batched matrix products with broadcast batch dimensions.

    Follows `tf.linalg.matmul` on rank > 2 inputs; `adj_*` conjugate-transposes an operand.
    """
    return apply_op("BatchMatMulV2", x=x, y=y, adj_x=adj_x, adj_y=adj_y, name=name)


def _tensordot_axes(a: Tensor, b: Tensor, axes: Any) -> tuple[list[int], list[int]]:
    ra, rb = a.shape.ndims, b.shape.ndims
    if isinstance(axes, Tensor):
        value = constant_value(axes)
        if value is None:
            raise ValueError("tensordot needs constant axes")
        axes = value.tolist()
    if isinstance(axes, int) or (hasattr(axes, "ndim") and np.ndim(axes) == 0):
        n = int(axes)
        if n < 0:
            raise ValueError(f"'axes' must be at least 0, got {n}")
        if ra is None or rb is None:
            raise ValueError("tensordot with an integer 'axes' needs inputs of known rank")
        if n > ra or n > rb:
            raise ValueError(f"'axes' must not be larger than the ranks, got {n}")
        return list(range(ra - n, ra)), list(range(n))
    if len(axes) != 2:
        raise ValueError(f"'axes' must be an integer or have length 2, got {axes!r}")
    a_axes, b_axes = ([int(i) for i in np.reshape(ax, -1)] for ax in axes)
    if len(a_axes) != len(b_axes):
        raise ValueError(
            f"Different number of contraction axes 'a' and 'b', {len(a_axes)} != {len(b_axes)}."
        )
    if ra is None or rb is None:
        raise ValueError("tensordot needs inputs of known rank")
    return [i % ra for i in a_axes], [i % rb for i in b_axes]


def _tensordot_reshape(t: Tensor, axes: list[int], flipped: bool) -> tuple[Tensor, Any]:
    """`t` as a matrix contracting `axes`, and the sizes of its free dimensions.

    The `axes` become the rows when `flipped`, else the columns; the free sizes are a list
    when static, else an int32 Tensor.
    """
    rank = t.shape.ndims
    free = [i for i in range(rank) if i not in axes]
    perm = axes + free if flipped else free + axes
    dims = t.shape.as_list()
    if perm != list(range(rank)):
        t_perm = array_ops.transpose(t, perm)
    else:
        t_perm = t
    free_dims = [dims[i] for i in free]
    axes_dims = [dims[i] for i in axes]
    if None not in dims:
        prod_free, prod_axes = int(np.prod(free_dims)), int(np.prod(axes_dims))
        new_shape: Any = [prod_axes, prod_free] if flipped else [prod_free, prod_axes]
        return array_ops.reshape(t_perm, new_shape), free_dims
    shape = array_ops.shape(t)
    free_t = array_ops.gather(shape, free) if free else constant_op.constant([], dtypes.int32)
    axes_t = array_ops.gather(shape, axes) if axes else constant_op.constant([], dtypes.int32)
    prod_free_t = reduction_ops.reduce_prod(free_t)
    prod_axes_t = reduction_ops.reduce_prod(axes_t)
    pair = [prod_axes_t, prod_free_t] if flipped else [prod_free_t, prod_axes_t]
    new_shape = array_ops.stack(pair)
    free_out: Any = free_dims if None not in free_dims else free_t
    return array_ops.reshape(t_perm, new_shape), free_out


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """Sums the products of `a` and `b` over the given axes (follows `tf.tensordot`).

    Built as a transpose + reshape of each input, one `MatMul` and a final reshape.

    Args:
      a: a Tensor of known rank.
      b: a Tensor of the same dtype and known rank.
      axes: an int N (the last N axes of `a` with the first N of `b`), or a pair of lists
        `[a_axes, b_axes]` of equal length.
      name: name scope of the ops.

    Returns:
      The free dimensions of `a` followed by those of `b`.

    Raises:
      ValueError: for malformed `axes` or inputs of unknown rank.
    """
    with graph_mod.name_scope(name, "Tensordot", [a, b]) as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        a_axes, b_axes = _tensordot_axes(a, b, axes)
        a_matrix, a_free = _tensordot_reshape(a, a_axes, flipped=False)
        b_matrix, b_free = _tensordot_reshape(b, b_axes, flipped=True)
        product = matmul(a_matrix, b_matrix)
        if isinstance(a_free, list) and isinstance(b_free, list):
            return array_ops.reshape(product, a_free + b_free, name=scope)
        parts = [
            f if not isinstance(f, list) else constant_op.constant(f, dtypes.int32)
            for f in (a_free, b_free)
        ]
        return array_ops.reshape(product, array_ops.concat(parts, 0), name=scope)


__all__ = ["matmul", "tensordot"]
