"""NumPy kernels of `MatMul`, `BatchMatMul` and `BatchMatMulV2`.

`MatMul` uses `np.dot` on (transposed) views, which BLAS handles without copies; shape
errors are diagnosed only after NumPy rejects the inputs, so the common path pays nothing
for them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.tensor_shape import shape_str
from tensorweave.kernels.registry import KernelNode, register_kernel


def _matmul_error(a: Any, b: Any, ta: bool, tb: bool) -> errors.InvalidArgumentError:
    for i, m in enumerate((a, b)):
        if np.ndim(m) != 2:
            return errors.InvalidArgumentError(
                None,
                None,
                f"In[{i}] is not a matrix. Instead it has shape {shape_str(np.shape(m))}",
            )
    return errors.InvalidArgumentError(
        None,
        None,
        f"Matrix size-incompatible: In[0]: {shape_str(np.shape(a))}, "
        f"In[1]: {shape_str(np.shape(b))}",
    )


@register_kernel("MatMul")
def _matmul(node: KernelNode) -> Any:
    ta, tb = node.attrs["transpose_a"], node.attrs["transpose_b"]
    dot = np.dot

    if not ta and not tb:

        def compute(ctx: Any, a: Any, b: Any) -> Any:
            if a.ndim != 2 or b.ndim != 2:
                raise _matmul_error(a, b, ta, tb)
            try:
                return dot(a, b)
            except ValueError:
                raise _matmul_error(a, b, ta, tb) from None

        return compute

    def compute_t(ctx: Any, a: Any, b: Any) -> Any:
        if a.ndim != 2 or b.ndim != 2:
            raise _matmul_error(a, b, ta, tb)
        try:
            return dot(a.T if ta else a, b.T if tb else b)
        except ValueError:
            raise _matmul_error(a, b, ta, tb) from None

    return compute_t


def _batch_error(x: Any, y: Any, adj_x: bool, adj_y: bool) -> errors.InvalidArgumentError:
    sx, sy = np.shape(x), np.shape(y)
    for i, s in enumerate((sx, sy)):
        if len(s) < 2:
            return errors.InvalidArgumentError(None, None, f"In[{i}] ndims must be >= 2: {len(s)}")
    kx = sx[-2] if adj_x else sx[-1]
    ky = sy[-1] if adj_y else sy[-2]
    if kx != ky:
        return errors.InvalidArgumentError(
            None,
            None,
            f"In[0] mismatch In[1] shape: {kx} vs. {ky}: {shape_str(sx)} {shape_str(sy)} "
            f"{int(adj_x)} {int(adj_y)}",
        )
    return errors.InvalidArgumentError(
        None,
        None,
        "In[0] and In[1] must have compatible batch dimensions: "
        f"{shape_str(sx)} vs. {shape_str(sy)}",
    )


def _batch_matmul_builder(broadcast: bool) -> Any:
    def builder(node: KernelNode) -> Any:
        adj_x, adj_y = node.attrs.get("adj_x", False), node.attrs.get("adj_y", False)
        is_complex = node.attrs["T"].is_complex

        def adjoint(m: Any) -> Any:
            m = np.swapaxes(m, -1, -2)
            return np.conj(m) if is_complex else m

        def compute(ctx: Any, x: Any, y: Any) -> Any:
            if np.ndim(x) < 2 or np.ndim(y) < 2:
                raise _batch_error(x, y, adj_x, adj_y)
            if not broadcast and (np.ndim(x) != np.ndim(y) or x.shape[:-2] != y.shape[:-2]):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    "In[0] and In[1] must have the same batch dimensions: "
                    f"{shape_str(np.shape(x))} vs. {shape_str(np.shape(y))}",
                )
            try:
                return np.matmul(adjoint(x) if adj_x else x, adjoint(y) if adj_y else y)
            except ValueError:
                raise _batch_error(x, y, adj_x, adj_y) from None

        return compute

    return builder


register_kernel("BatchMatMul")(_batch_matmul_builder(False))
register_kernel("BatchMatMulV2")(_batch_matmul_builder(True))
