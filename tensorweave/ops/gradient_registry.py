"""The gradient registry: `RegisterGradient`, `no_gradient` and the lookup `tf.gradients` uses.

Imports only `framework`, so any op module can declare its ops' gradients (or their
absence) without depending on the differentiation machinery in `gradients_impl`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.framework.registry import Registry

gradient_registry = Registry("gradient functions")


class RegisterGradient:
    """Decorator registering the gradient function of an op type.

    Follows `tf.RegisterGradient`.

    Raises:
      TypeError: if `op_type` is not a string.
      KeyError: if the op type already has a gradient.
    """

    def __init__(self, op_type: str):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f: Callable[..., Any]) -> Callable[..., Any]:
        """Registers `f` and returns it unchanged."""
        gradient_registry.register(f, self._op_type)
        return f


def no_gradient(op_type: str) -> None:
    """Declares that `op_type` has no gradient: its inputs get None (`tf.no_gradient`).

    Raises:
      TypeError: if `op_type` is not a string.
    """
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    gradient_registry.register(None, op_type)


NoGradient = no_gradient
NotDifferentiable = no_gradient


def get_gradient_function(op: Any) -> Callable[..., Any] | None:
    """The gradient function for `op` (honouring `gradient_override_map`).

    Raises:
      LookupError: if no gradient is registered for the op type, with TensorFlow's message.
    """
    op_type = op._attrs.get("_gradient_op_type") or op.type
    if op_type not in gradient_registry:
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op_type})")
    return gradient_registry.lookup(op_type)
