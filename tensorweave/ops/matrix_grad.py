"""Gradients of the matrix-shaped array ops, `Einsum` and `Cross` (follows TensorFlow's
`array_grad.py`, `math_grad.py` and `special_math_ops.py`)."""

from __future__ import annotations

from typing import Any

from tensorweave.ops import array_ops
from tensorweave.ops.array_ops_more import broadcast_to
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


def _explicit_labels(equation: str, inputs: Any) -> tuple[list[str], str]:
    """Operand and output labels with `...` spelled out as upper-case letters."""
    lhs, out = equation.split("->")
    terms = lhs.split(",")
    if "..." not in equation:
        return terms, out
    width = 0
    for term, t in zip(terms, inputs):
        if "..." in term:
            if t.shape.ndims is None:
                raise NotImplementedError(
                    "the gradient of tf.einsum with '...' needs operands of known rank"
                )
            width = max(width, t.shape.ndims - (len(term) - 3))
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:width]
    explicit = []
    for term, t in zip(terms, inputs):
        if "..." in term:
            n = t.shape.ndims - (len(term) - 3)
            term = term.replace("...", letters[width - n :])
        explicit.append(term)
    return explicit, out.replace("...", letters)


@RegisterGradient("Einsum")
def _einsum_grad(op: Any, grad: Any) -> Any:
    equation = op.get_attr("equation")
    equation = equation.decode() if isinstance(equation, bytes) else equation
    terms, out = _explicit_labels(equation, op.inputs)
    grads = []
    for i, (term, x) in enumerate(zip(terms, op.inputs)):
        if len(set(term)) != len(term):
            raise NotImplementedError(
                f"the gradient of tf.einsum with a repeated label in an operand ({term!r})"
            )
        others = [t for j, t in enumerate(terms) if j != i]
        seen = set(out).union(*others) if others else set(out)
        kept = "".join(c for c in term if c in seen)
        g = einsum(",".join([out, *others]) + "->" + kept, grad,
                   *[t for j, t in enumerate(op.inputs) if j != i])
        if kept != term:
            for k, c in enumerate(term):
                if c not in seen:
                    g = array_ops.expand_dims(g, k)
            g = broadcast_to(g, array_ops.shape(x))
        grads.append(g)
    return grads
