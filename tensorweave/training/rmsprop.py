"""`tf.train.RMSPropOptimizer` (follows TF 1.x `training/rmsprop.py`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, init_ops, math_ops, training_ops
from tensorweave.training.optimizer import Optimizer


class RMSPropOptimizer(Optimizer):
    """RMSProp (Hinton's lecture 6e), with TensorFlow's update::

        ms = decay * ms + (1 - decay) * grad ** 2
        mom = momentum * mom + learning_rate * grad / sqrt(ms + epsilon)
        var -= mom

    Slots `"rms"` (ones), `"mg"` (zeros, only when `centered`) and `"momentum"` (zeros),
    named `<var>/RMSProp`, `<var>/RMSProp_1`... in that order. Centered RMSProp divides by
    `sqrt(ms - mg ** 2 + epsilon)` with `mg` the moving mean of the gradient. Sparse
    updates touch only the rows of the gradient.

    Args:
      learning_rate: float, scalar Tensor, or a callable returning either.
      decay: discounting factor of the history (`rho`).
      momentum: momentum factor.
      epsilon: small value added to the mean square.
      use_locking: passed to the update ops.
      centered: normalize by the estimated variance instead of the second moment.
      name: name scope of the update ops and slot suffix (default "RMSProp").
    """

    def __init__(
        self,
        learning_rate: Any,
        decay: Any = 0.9,
        momentum: Any = 0.0,
        epsilon: Any = 1e-10,
        use_locking: bool = False,
        centered: bool = False,
        name: str = "RMSProp",
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered
        self._tensors: list[Any] = []

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            if v.get_shape().is_fully_defined():
                init_rms: Any = init_ops.ones_initializer(dtype=v.dtype.base_dtype)
            else:
                init_rms = array_ops.ones_like(v.initial_value)
            self._get_or_make_slot_with_initializer(
                v, init_rms, v.get_shape(), v.dtype.base_dtype, "rms", self._name
            )
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self) -> None:
        call = self._call_if_callable
        self._tensors = [
            convert_to_tensor(call(value), name=name)
            for value, name in (
                (self._learning_rate, "learning_rate"),
                (self._decay, "decay"),
                (self._momentum, "momentum"),
                (self._epsilon, "epsilon"),
            )
        ]

    def _slots_and_hyper(self, var: Any) -> tuple[list[Any], list[Any]]:
        names = ["mg", "rms", "momentum"] if self._centered else ["rms", "momentum"]
        slots = [self.get_slot(var, n) for n in names]
        dtype = var.dtype.base_dtype
        return slots, [math_ops.cast(t, dtype) for t in self._tensors]

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        slots, hyper = self._slots_and_hyper(var)
        apply = (
            training_ops.apply_centered_rms_prop if self._centered else training_ops.apply_rms_prop
        )
        return apply(var, *slots, *hyper, grad, use_locking=self._use_locking)

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        slots, hyper = self._slots_and_hyper(var)
        apply = (
            training_ops.sparse_apply_centered_rms_prop
            if self._centered
            else training_ops.sparse_apply_rms_prop
        )
        return apply(
            var, *slots, *hyper, grad.values, grad.indices, use_locking=self._use_locking
        )


__all__ = ["RMSPropOptimizer"]
