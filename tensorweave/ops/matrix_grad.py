"""Gradients of the matrix-shaped array ops, `Einsum` and `Cross` (follows TensorFlow's
`array_grad.py`, `math_grad.py` and `special_math_ops.py`)."""

from __future__ import annotations

from typing import Any

from tensorweave.ops import array_ops, cwise_ops, reduction_ops
from tensorweave.ops.gradients_impl import RegisterGradient
from tensorweave.ops.matrix_ops import (
    cross,
    diag,
    diag_part,
    einsum,
    matrix_band_part,
    matrix_diag_part,
    matrix_set_diag,
)


@RegisterGradient("MatrixBandPart")
def _band_part_grad(op: Any, grad: Any) -> Any:
    return matrix_band_part(grad, op.inputs[1], op.inputs[2]), None, None


@RegisterGradient("MatrixDiag")
def _matrix_diag_grad(op: Any, grad: Any) -> Any:
    return matrix_diag_part(grad)


@RegisterGradient("MatrixDiagPart")
def _matrix_diag_part_grad(op: Any, grad: Any) -> Any:
    return matrix_set_diag(array_ops.zeros_like(op.inputs[0]), grad)


@RegisterGradient("MatrixSetDiag")
def _matrix_set_diag_grad(op: Any, grad: Any) -> Any:
    return (
        matrix_set_diag(grad, array_ops.zeros_like(op.inputs[1])),
        matrix_diag_part(grad),
    )


@RegisterGradient("Diag")
def _diag_grad(op: Any, grad: Any) -> Any:
    return diag_part(grad)


@RegisterGradient("DiagPart")
def _diag_part_grad(op: Any, grad: Any) -> Any:
    return diag(grad)


@RegisterGradient("Cross")
def _cross_grad(op: Any, grad: Any) -> Any:
    u, v = op.inputs
    return cross(v, grad), cross(grad, u)


def _unbroadcast(grad: Any, x: Any, term: str) -> Any:
    """`grad` (labels `term`, `...` broadcast) summed back to `x`'s shape: over the
    broadcast dims `x` lacks (leading in the `...` block) and those it has as 1."""
    if grad.shape.ndims is None or x.shape.ndims is None:
        raise NotImplementedError("the gradient of tf.einsum with '...' needs known ranks")
    extra = grad.shape.ndims - x.shape.ndims
    if extra:
        start = term.index("...")
        grad = reduction_ops.reduce_sum(grad, axis=list(range(start, start + extra)))
    shape_x = array_ops.shape(x)
    rx, _ = cwise_ops.broadcast_gradient_args(shape_x, array_ops.shape(grad))
    return array_ops.reshape(reduction_ops.reduce_sum(grad, rx), shape_x)


@RegisterGradient("Einsum")
def _einsum_grad(op: Any, grad: Any) -> Any:
    # d out / d x_i contracts the output gradient with the other operands back onto x_i's
    # labels. A ones tensor shaped like x_i supplies the sizes of labels only x_i has (sums)
    # and, with repeated labels, writes the gradient onto x_i's generalized diagonal.
    equation = op.get_attr("equation")
    equation = equation.decode() if isinstance(equation, bytes) else equation
    lhs, out = equation.split("->")
    terms = lhs.split(",")
    grads = []
    for i, (term, x) in enumerate(zip(terms, op.inputs)):
        others = [t for j, t in enumerate(terms) if j != i]
        tensors = [t for j, t in enumerate(op.inputs) if j != i]
        ones = array_ops.ones_like(x)
        # numpy needs `...` in the output to sum over broadcast dims x_i does not have.
        target = "..." + term if "..." in lhs and "..." not in term else term
        g = einsum(",".join([out, *others, term]) + "->" + target, grad, *tensors, ones)
        grads.append(_unbroadcast(g, x, target) if "..." in target else g)
    return grads
