"""`tf.train.GradientDescentOptimizer` (follows TF 1.x `training/gradient_descent.py`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import math_ops, training_ops
from tensorweave.training.optimizer import Optimizer


class GradientDescentOptimizer(Optimizer):
    """Plain gradient descent: `var -= learning_rate * grad`.

    Dense gradients use `ApplyGradientDescent`; sparse ones (`IndexedSlices`) a `ScatterSub`
    of `learning_rate * values`, where duplicate indices accumulate.

    Args:
      learning_rate: float, scalar Tensor, or a callable returning either.
      use_locking: passed to the update ops.
      name: name scope of the update ops (default "GradientDescent").
    """

    def __init__(
        self, learning_rate: Any, use_locking: bool = False, name: str = "GradientDescent"
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor: Any = None

    def _prepare(self) -> None:
        lr = self._call_if_callable(self._learning_rate)
        self._learning_rate_tensor = convert_to_tensor(lr, name="learning_rate")

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        lr = math_ops.cast(self._learning_rate_tensor, var.dtype.base_dtype)
        return training_ops.apply_gradient_descent(var, lr, grad, use_locking=self._use_locking)

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var: Any) -> Any:
        lr = math_ops.cast(self._learning_rate_tensor, var.dtype.base_dtype)
        delta = IndexedSlices(grad.values * lr, grad.indices, grad.dense_shape)
        return var.scatter_sub(delta, use_locking=self._use_locking)

    def _apply_sparse(self, grad: IndexedSlices, var: Any) -> Any:
        return self._apply_sparse_duplicate_indices(grad, var)


__all__ = ["GradientDescentOptimizer"]
