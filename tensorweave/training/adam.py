"""`tf.train.AdamOptimizer` (follows TF 1.x `training/adam.py`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_ops, math_ops, state_ops, training_ops
from tensorweave.training.optimizer import Optimizer


class AdamOptimizer(Optimizer):
    """Adam (Kingma and Ba, 2015), with TensorFlow's update::

        lr_t = learning_rate * sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        m = beta1 * m + (1 - beta1) * grad;  v = beta2 * v + (1 - beta2) * grad ** 2
        var -= lr_t * m / (sqrt(v) + epsilon)

    Slots `"m"` and `"v"` (`<var>/Adam`, `<var>/Adam_1`), zeros. The powers `beta1 ** t`
    and `beta2 ** t` are the non-slot variables `beta1_power` and `beta2_power` (named in
    the name scope current at the first `apply_gradients`, as TensorFlow does), colocated
    with the variable whose name sorts first, and multiplied by the betas after every step.
    Sparse gradients update `m` and `v` densely (decay) plus a `ScatterAdd` of the new
    rows, and `var` densely, as TensorFlow's `_apply_sparse`.

    Args:
      learning_rate: float, scalar Tensor, or a callable returning either.
      beta1: exponential decay of the first moments.
      beta2: exponential decay of the second moments.
      epsilon: the "epsilon hat" added to `sqrt(v)`.
      use_locking: passed to the update ops.
      name: name scope of the update ops and slot suffix (default "Adam").
    """

    def __init__(
        self,
        learning_rate: Any = 0.001,
        beta1: Any = 0.9,
        beta2: Any = 0.999,
        epsilon: Any = 1e-08,
        use_locking: bool = False,
        name: str = "Adam",
    ):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon
        self._lr_t: Any = None
        self._beta1_t: Any = None
        self._beta2_t: Any = None
        self._epsilon_t: Any = None

    def _get_beta_accumulators(self) -> tuple[Any, Any]:
        graph = graph_mod.get_default_graph()
        return (
            self._get_non_slot_variable("beta1_power", graph=graph),
            self._get_non_slot_variable("beta2_power", graph=graph),
        )

    def _create_slots(self, var_list: list[Any]) -> None:
        first_var = min(var_list, key=lambda x: x.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first_var)
        self._create_non_slot_variable(self._beta2, "beta2_power", first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self) -> None:
        call = self._call_if_callable
        self._lr_t = convert_to_tensor(call(self._lr), name="learning_rate")
        self._beta1_t = convert_to_tensor(call(self._beta1), name="beta1")
        self._beta2_t = convert_to_tensor(call(self._beta2), name="beta2")
        self._epsilon_t = convert_to_tensor(call(self._epsilon), name="epsilon")

    def _hyper(self, var: Any) -> list[Any]:
        dtype = var.dtype.base_dtype
        beta1_power, beta2_power = self._get_beta_accumulators()
        return [
            math_ops.cast(t, dtype)
            for t in (
                beta1_power,
                beta2_power,
                self._lr_t,
                self._beta1_t,
                self._beta2_t,
                self._epsilon_t,
            )
        ]

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        m = self.get_slot(var, "m")
        v = self.get_slot(var, "v")
        return training_ops.apply_adam(
            var, m, v, *self._hyper(var), grad, use_locking=self._use_locking
        )

    def _apply_sparse_shared(self, grad: Any, var: Any, indices: Any, scatter_add: Any) -> Any:
        beta1_power, beta2_power, lr_t, beta1_t, beta2_t, epsilon_t = self._hyper(var)
        lr = lr_t * math_ops.sqrt(1 - beta2_power) / (1 - beta1_power)
        # m_t = beta1 * m + (1 - beta1) * g_t
        m = self.get_slot(var, "m")
        m_t = state_ops.assign(m, m * beta1_t, use_locking=self._use_locking)
        with graph_mod.control_dependencies([m_t]):
            m_t = scatter_add(m, indices, grad * (1 - beta1_t))
        # v_t = beta2 * v + (1 - beta2) * (g_t * g_t)
        v = self.get_slot(var, "v")
        v_t = state_ops.assign(v, v * beta2_t, use_locking=self._use_locking)
        with graph_mod.control_dependencies([v_t]):
            v_t = scatter_add(v, indices, (grad * grad) * (1 - beta2_t))
        v_sqrt = math_ops.sqrt(v_t)
        var_update = state_ops.assign_sub(
            var, lr * m_t / (v_sqrt + epsilon_t), use_locking=self._use_locking
        )
        return control_flow_ops.group(var_update, m_t, v_t)

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        def scatter_add(x: Any, i: Any, v: Any) -> Any:
            return state_ops.scatter_add(x, i, v, use_locking=self._use_locking)

        return self._apply_sparse_shared(grad.values, var, grad.indices, scatter_add)

    def _finish(self, update_ops: list[Any], name_scope: str) -> Any:
        with graph_mod.control_dependencies(update_ops):
            beta1_power, beta2_power = self._get_beta_accumulators()
            with graph_mod.colocate_with(beta1_power):
                update_beta1 = beta1_power.assign(
                    beta1_power * self._beta1_t, use_locking=self._use_locking
                )
                update_beta2 = beta2_power.assign(
                    beta2_power * self._beta2_t, use_locking=self._use_locking
                )
        return control_flow_ops.group(*update_ops, update_beta1, update_beta2, name=name_scope)


__all__ = ["AdamOptimizer"]
