"""`tf.train.MomentumOptimizer` (follows TF 1.x `training/momentum.py`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import math_ops, training_ops
from tensorweave.training.optimizer import Optimizer


class MomentumOptimizer(Optimizer):
    """Gradient descent with momentum: `accum = momentum * accum + grad; var -= lr * accum`.

    One slot per variable, `"momentum"` (the variable `<var>/Momentum`), zeros. With
    `use_nesterov`, the variable moves by `lr * (grad + momentum * accum)`.

    Args:
      learning_rate: float, scalar Tensor, or a callable returning either.
      momentum: float, scalar Tensor, or a callable returning either.
      use_locking: passed to the update ops.
      name: name scope of the update ops and slot suffix (default "Momentum").
      use_nesterov: use Nesterov momentum.
    """

    def __init__(
        self,
        learning_rate: Any,
        momentum: Any,
        use_locking: bool = False,
        name: str = "Momentum",
        use_nesterov: bool = False,
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov
        self._learning_rate_tensor: Any = None
        self._momentum_tensor: Any = None

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self) -> None:
        lr = self._call_if_callable(self._learning_rate)
        momentum = self._call_if_callable(self._momentum)
        self._learning_rate_tensor = convert_to_tensor(lr, name="learning_rate")
        self._momentum_tensor = convert_to_tensor(momentum, name="momentum")

    def _hyper(self, var: Any) -> tuple[Any, Any]:
        dtype = var.dtype.base_dtype
        return (
            math_ops.cast(self._learning_rate_tensor, dtype),
            math_ops.cast(self._momentum_tensor, dtype),
        )

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        lr, momentum = self._hyper(var)
        return training_ops.apply_momentum(
            var,
            self.get_slot(var, "momentum"),
            lr,
            grad,
            momentum,
            use_locking=self._use_locking,
            use_nesterov=self._use_nesterov,
        )

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        lr, momentum = self._hyper(var)
        return training_ops.sparse_apply_momentum(
            var,
            self.get_slot(var, "momentum"),
            lr,
            grad.values,
            grad.indices,
            momentum,
            use_locking=self._use_locking,
            use_nesterov=self._use_nesterov,
        )


__all__ = ["MomentumOptimizer"]
