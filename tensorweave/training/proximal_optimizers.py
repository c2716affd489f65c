"""`tf.train.AdadeltaOptimizer`, `ProximalGradientDescentOptimizer`,
`ProximalAdagradOptimizer` and `AdagradDAOptimizer` (follow TF 1.x `training/adadelta.py`,
`proximal_gradient_descent.py`, `proximal_adagrad.py`, `adagrad_da.py`): the same slots
(`<var>/<name>`, `<var>/<name>_1`), hyper-parameters and `Apply*`/`SparseApply*` ops."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, init_ops, math_ops
from tensorweave.ops import training_ops_extra as ops
from tensorweave.training.optimizer import Optimizer


def _cast(value: Any, var: Any) -> Any:
    return math_ops.cast(value, var.dtype.base_dtype)


def _constant_slot(opt: Optimizer, var: Any, value: float, slot: str) -> None:
    dtype = var.dtype.base_dtype
    init = init_ops.constant_initializer(value, dtype=dtype)
    opt._get_or_make_slot_with_initializer(var, init, var.get_shape(), dtype, slot, opt._name)


class AdadeltaOptimizer(Optimizer):
    """Adadelta (Zeiler 2012); slots `accum` and `accum_update` (zeros).

    Args:
      learning_rate: float or scalar Tensor (callables are called).
      rho: decay rate.
      epsilon: constant added for numerical stability.
      use_locking: passed to the update ops.
      name: name scope and slot suffix (default "Adadelta").
    """

    def __init__(
        self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False, name="Adadelta"
    ):
        super().__init__(use_locking, name)
        self._lr, self._rho, self._epsilon = learning_rate, rho, epsilon
        self._tensors: tuple[Any, ...] = ()

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self) -> None:
        values = (self._lr, self._rho, self._epsilon)
        names = ("lr", "rho", "epsilon")
        self._tensors = tuple(
            convert_to_tensor(self._call_if_callable(v), name=n) for v, n in zip(values, names)
        )

    def _args(self, var: Any) -> list[Any]:
        slots = [self.get_slot(var, "accum"), self.get_slot(var, "accum_update")]
        return [var, *slots, *(_cast(t, var) for t in self._tensors)]

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return ops.apply_adadelta(*self._args(var), grad, use_locking=self._use_locking)

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        return ops.sparse_apply_adadelta(
            *self._args(var), grad.values, grad.indices, use_locking=self._use_locking
        )


class _Proximal(Optimizer):
    def __init__(self, learning_rate, l1, l2, use_locking, name):
        super().__init__(use_locking, name)
        self._lr, self._l1, self._l2 = learning_rate, l1, l2
        self._tensors: tuple[Any, ...] = ()

    def _prepare(self) -> None:
        names = ("learning_rate", "l1_regularization_strength", "l2_regularization_strength")
        values = (self._lr, self._l1, self._l2)
        self._tensors = tuple(
            convert_to_tensor(self._call_if_callable(v), name=n) for v, n in zip(values, names)
        )

    def _scalars(self, var: Any) -> list[Any]:
        return [_cast(t, var) for t in self._tensors]


class ProximalGradientDescentOptimizer(_Proximal):
    """Gradient descent followed by the L1/L2 proximal step (FOBOS); no slots.

    Args:
      learning_rate: float or scalar Tensor.
      l1_regularization_strength: float >= 0.
      l2_regularization_strength: float >= 0.
      use_locking: passed to the update ops.
      name: name scope (default "ProximalGradientDescent").
    """

    def __init__(
        self,
        learning_rate,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        use_locking=False,
        name="ProximalGradientDescent",
    ):
        super().__init__(
            learning_rate,
            l1_regularization_strength,
            l2_regularization_strength,
            use_locking,
            name,
        )

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return ops.apply_proximal_gradient_descent(
            var, *self._scalars(var), grad, use_locking=self._use_locking
        )

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        return ops.sparse_apply_proximal_gradient_descent(
            var, *self._scalars(var), grad.values, grad.indices, use_locking=self._use_locking
        )


class ProximalAdagradOptimizer(_Proximal):
    """Adagrad followed by the L1/L2 proximal step; slot `accumulator`.

    Args:
      learning_rate: float or scalar Tensor.
      initial_accumulator_value: positive starting value of the accumulators.
      l1_regularization_strength: float >= 0.
      l2_regularization_strength: float >= 0.
      use_locking: passed to the update ops.
      name: name scope and slot suffix (default "ProximalAdagrad").
    """

    def __init__(
        self,
        learning_rate,
        initial_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        use_locking=False,
        name="ProximalAdagrad",
    ):
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(
            learning_rate,
            l1_regularization_strength,
            l2_regularization_strength,
            use_locking,
            name,
        )
        self._initial = initial_accumulator_value

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            _constant_slot(self, v, self._initial, "accumulator")

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        acc = self.get_slot(var, "accumulator")
        return ops.apply_proximal_adagrad(
            var, acc, *self._scalars(var), grad, use_locking=self._use_locking
        )

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        acc = self.get_slot(var, "accumulator")
        return ops.sparse_apply_proximal_adagrad(
            var,
            acc,
            *self._scalars(var),
            grad.values,
            grad.indices,
            use_locking=self._use_locking,
        )


class AdagradDAOptimizer(_Proximal):
    """Adagrad dual averaging (Duchi et al. 2011) for sparse linear models.

    Slots `gradient_accumulator` (zeros) and `gradient_squared_accumulator`
    (`initial_gradient_squared_accumulator_value`); the update uses `global_step + 1`.

    Args:
      learning_rate: float or scalar Tensor.
      global_step: the int64 global step variable (required).
      initial_gradient_squared_accumulator_value: positive starting value.
      l1_regularization_strength: float >= 0.
      l2_regularization_strength: float >= 0.
      use_locking: passed to the update ops.
      name: name scope and slot suffix (default "AdagradDA").

    Raises:
      ValueError: for a non-positive initial value.
    """

    def __init__(
        self,
        learning_rate,
        global_step,
        initial_gradient_squared_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        use_locking=False,
        name="AdagradDA",
    ):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError(
                "initial_gradient_squared_accumulator_value must be positive: "
                f"{initial_gradient_squared_accumulator_value}"
            )
        super().__init__(
            learning_rate,
            l1_regularization_strength,
            l2_regularization_strength,
            use_locking,
            name,
        )
        self._initial = initial_gradient_squared_accumulator_value
        self._global_step = global_step
        self._global_step_on_worker: Any = None

    def _prepare(self) -> None:
        super()._prepare()
        # As TensorFlow: the update sees the step it completes (global_step + 1), read once
        # next to the learning rate so workers do not each read the ps for every variable.
        with graph_mod.colocate_with(self._tensors[0]):
            step = array_ops.identity(self._global_step) + 1
        self._global_step_on_worker = math_ops.cast(step, dtypes.int64)

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            self._zeros_slot(v, "gradient_accumulator", self._name)
            _constant_slot(self, v, self._initial, "gradient_squared_accumulator")

    def _da_args(self, var: Any) -> tuple[list[Any], Any]:
        slots = [
            self.get_slot(var, "gradient_accumulator"),
            self.get_slot(var, "gradient_squared_accumulator"),
        ]
        return [var, *slots], self._global_step_on_worker

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        refs, step = self._da_args(var)
        return ops.apply_adagrad_da(
            *refs, grad, *self._scalars(var), step, use_locking=self._use_locking
        )

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        refs, step = self._da_args(var)
        return ops.sparse_apply_adagrad_da(
            *refs,
            grad.values,
            grad.indices,
            *self._scalars(var),
            step,
            use_locking=self._use_locking,
        )


__all__ = [
    "AdadeltaOptimizer",
    "AdagradDAOptimizer",
    "ProximalAdagradOptimizer",
    "ProximalGradientDescentOptimizer",
]
