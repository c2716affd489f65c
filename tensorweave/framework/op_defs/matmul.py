"""Matrix multiplication op definitions: MatMul, BatchMatMul, BatchMatMulV2.

Follows TensorFlow's `core/ops/math_ops.cc`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import COMPLEX, FLOATS, register_op
from tensorweave.framework.shape_inference import broadcast_shapes, op_error
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape

_MATMUL_TYPES = f"{{{FLOATS}, int32, int64, {COMPLEX}}}"


def _merge_dims(op: Any, a: int | None, b: int | None) -> None:
    if a is not None and b is not None and a != b:
        raise op_error(op, f"Dimensions must be equal, but are {a} and {b}")


def _matmul_shape(op: Any) -> list[TensorShape]:
    sa, sb = op.inputs[0].shape, op.inputs[1].shape
    for s in (sa, sb):
        if s.ndims is not None and s.ndims != 2:
            raise op_error(op, f"Shape must be rank 2 but is rank {s.ndims}")
    a = sa.as_list() if sa.ndims is not None else [None, None]
    b = sb.as_list() if sb.ndims is not None else [None, None]
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    _merge_dims(op, a[0] if ta else a[1], b[1] if tb else b[0])
    return [TensorShape([a[1] if ta else a[0], b[0] if tb else b[1]])]


def _batch_matmul_shape(broadcast: bool) -> Any:
    def shape_fn(op: Any) -> list[TensorShape]:
        sx, sy = op.inputs[0].shape, op.inputs[1].shape
        for s in (sx, sy):
            if s.ndims is not None and s.ndims < 2:
                raise op_error(op, f"Shape must be at least rank 2 but is rank {s.ndims}")
        adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
        if sx.ndims is None or sy.ndims is None:
            return [unknown_shape()]
        x, y = sx.as_list(), sy.as_list()
        _merge_dims(op, x[-2] if adj_x else x[-1], y[-1] if adj_y else y[-2])
        rows, cols = (x[-1] if adj_x else x[-2]), (y[-2] if adj_y else y[-1])
        if broadcast:
            batch = broadcast_shapes(op, TensorShape(x[:-2]), TensorShape(y[:-2]))
        else:
            try:
                batch = TensorShape(x[:-2]).merge_with(TensorShape(y[:-2]))
            except ValueError as e:
                raise op_error(op, str(e)) from None
        return [batch.concatenate([rows, cols])]

    return shape_fn


register_op(
    "MatMul",
    inputs=["a: T", "b: T"],
    outputs=["product: T"],
    attrs=["transpose_a: bool = false", "transpose_b: bool = false", f"T: {_MATMUL_TYPES}"],
    shape_fn=_matmul_shape,
)
register_op(
    "BatchMatMul",
    inputs=["x: T", "y: T"],
    outputs=["output: T"],
    attrs=[f"T: {_MATMUL_TYPES}", "adj_x: bool = false", "adj_y: bool = false"],
    shape_fn=_batch_matmul_shape(broadcast=False),
)
register_op(
    "BatchMatMulV2",
    inputs=["x: T", "y: T"],
    outputs=["output: T"],
    attrs=[f"T: {_MATMUL_TYPES}", "adj_x: bool = false", "adj_y: bool = false"],
    shape_fn=_batch_matmul_shape(broadcast=True),
)
