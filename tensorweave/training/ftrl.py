"""`tf.train.FtrlOptimizer` (follows TF 1.x `training/ftrl.py`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import init_ops, math_ops
from tensorweave.ops import training_ops_extra as ops
from tensorweave.training.optimizer import Optimizer


def _non_negative(name: str, value: float) -> None:
    if value < 0.0:
        raise ValueError(f"{name} {value:f} needs to be positive or zero")


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal (McMahan et al., "Ad Click Prediction", 2013).

    Slots `accum` (`initial_accumulator_value`, named `<var>/<accum_name or name>`) and
    `linear` (zeros, `<var>/<linear_name or name>`, `_1` suffixed when the names clash).
    With `l2_shrinkage_regularization_strength > 0` the updates are `ApplyFtrlV2`, otherwise
    `ApplyFtrl`; `beta` adds `beta / (2 * learning_rate)` to the L2 strength.

    Args:
      learning_rate: float or scalar Tensor.
      learning_rate_power: <= 0; -0.5 is Adagrad-like.
      initial_accumulator_value: >= 0.
      l1_regularization_strength: >= 0.
      l2_regularization_strength: >= 0.
      use_locking: passed to the update ops.
      name: name scope and default slot suffix (default "Ftrl").
      accum_name: the accumulator slot's suffix.
      linear_name: the linear slot's suffix.
      l2_shrinkage_regularization_strength: >= 0, a magnitude penalty on the weights.
      beta: float, default 0.

    Raises:
      ValueError: for out-of-range hyper-parameters (TensorFlow's messages).
    """

    def __init__(
        self,
        learning_rate,
        learning_rate_power=-0.5,
        initial_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        use_locking=False,
        name="Ftrl",
        accum_name=None,
        linear_name=None,
        l2_shrinkage_regularization_strength=0.0,
        beta=None,
    ):
        super().__init__(use_locking, name)
        if initial_accumulator_value < 0.0:
            raise ValueError(
                f"initial_accumulator_value {initial_accumulator_value:f} needs to be positive "
                "or zero"
            )
        if learning_rate_power > 0.0:
            raise ValueError(
                f"learning_rate_power {learning_rate_power:f} needs to be negative or zero"
            )
        _non_negative("l1_regularization_strength", l1_regularization_strength)
        _non_negative("l2_regularization_strength", l2_regularization_strength)
        _non_negative("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength)
        self._lr = learning_rate
        self._lr_power = learning_rate_power
        self._initial = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._beta = 0.0 if beta is None else beta
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._accum_name = accum_name
        self._linear_name = linear_name
        self._tensors: dict[str, Any] = {}

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            dtype = v.dtype.base_dtype
            init = init_ops.constant_initializer(self._initial, dtype=dtype)
            self._get_or_make_slot_with_initializer(
                v, init, v.get_shape(), dtype, "accum", self._accum_name or self._name
            )
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self) -> None:
        lr = convert_to_tensor(self._call_if_callable(self._lr), name="learning_rate")
        self._tensors = {
            "lr": lr,
            "l1": convert_to_tensor(self._l1, name="l1_regularization_strength"),
            "l2": convert_to_tensor(self._l2, name="l2_regularization_strength")
            + self._beta / (2.0 * lr),
            "l2_shrinkage": convert_to_tensor(
                self._l2_shrinkage, name="l2_shrinkage_regularization_strength"
            ),
            "lr_power": convert_to_tensor(self._lr_power, name="learning_rate_power"),
        }

    def _apply(self, grad: Any, var: Any, indices: Any = None) -> Any:
        t = {k: math_ops.cast(v, var.dtype.base_dtype) for k, v in self._tensors.items()}
        refs = [var, self.get_slot(var, "accum"), self.get_slot(var, "linear")]
        head = [grad] if indices is None else [grad, indices]
        if self._l2_shrinkage <= 0.0:
            fn = ops.apply_ftrl if indices is None else ops.sparse_apply_ftrl
            scalars = [t["lr"], t["l1"], t["l2"], t["lr_power"]]
        else:
            fn = ops.apply_ftrl_v2 if indices is None else ops.sparse_apply_ftrl_v2
            scalars = [t["lr"], t["l1"], t["l2"], t["l2_shrinkage"], t["lr_power"]]
        return fn(*refs, *head, *scalars, use_locking=self._use_locking)

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return self._apply(grad, var)

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        return self._apply(grad.values, var, grad.indices)


__all__ = ["FtrlOptimizer"]
