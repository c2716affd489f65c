"""`tf.train.AdagradOptimizer` (follows TF 1.x `training/adagrad.py`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, constant_op, init_ops, math_ops, training_ops
from tensorweave.training.optimizer import Optimizer


class AdagradOptimizer(Optimizer):
    """Adagrad: `accum += grad ** 2; var -= learning_rate * grad / sqrt(accum)`.

    One slot per variable, `"accumulator"` (`<var>/Adagrad`), filled with
    `initial_accumulator_value`.

    Args:
      learning_rate: float, scalar Tensor, or a callable returning either.
      initial_accumulator_value: starting value of the accumulators; must be positive.
      use_locking: passed to the update ops.
      name: name scope of the update ops and slot suffix (default "Adagrad").

    Raises:
      ValueError: if `initial_accumulator_value` is not positive.
    """

    def __init__(
        self,
        learning_rate: Any,
        initial_accumulator_value: float = 0.1,
        use_locking: bool = False,
        name: str = "Adagrad",
    ):
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._learning_rate_tensor: Any = None

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            dtype = v.dtype.base_dtype
            if v.get_shape().is_fully_defined():
                init: Any = init_ops.constant_initializer(
                    self._initial_accumulator_value, dtype=dtype
                )
            else:
                init = self._init_constant_op(v, dtype)
            self._get_or_make_slot_with_initializer(
                v, init, v.get_shape(), dtype, "accumulator", self._name
            )

    def _init_constant_op(self, v: Any, dtype: Any) -> Any:
        # NOTE: the shape of the initial value (see slot_creator on initialized_value()).
        shape = array_ops.shape(v.initial_value)
        value = constant_op.constant(self._initial_accumulator_value, dtype=dtype)
        return array_ops.fill(shape, value)

    def _prepare(self) -> None:
        lr = self._call_if_callable(self._learning_rate)
        self._learning_rate_tensor = convert_to_tensor(lr, name="learning_rate")

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        lr = math_ops.cast(self._learning_rate_tensor, var.dtype.base_dtype)
        acc = self.get_slot(var, "accumulator")
        return training_ops.apply_adagrad(var, acc, lr, grad, use_locking=self._use_locking)

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        lr = math_ops.cast(self._learning_rate_tensor, var.dtype.base_dtype)
        acc = self.get_slot(var, "accumulator")
        return training_ops.sparse_apply_adagrad(
            var, acc, lr, grad.values, grad.indices, use_locking=self._use_locking
        )


__all__ = ["AdagradOptimizer"]
