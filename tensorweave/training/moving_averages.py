"""`tf.train.ExponentialMovingAverage` and `assign_moving_average` (follows TF 1.x
`training/moving_averages.py`).

`apply()` creates one shadow variable per averaged variable, `<var>/ExponentialMovingAverage`
(a slot colocated with the variable, initialised to the variable's initial value; tensors get
a zeros slot), adds the variable to `MOVING_AVERAGE_VARIABLES` and returns one op that moves
every shadow: `shadow -= (1 - decay) * (shadow - value)`. With `num_updates` the decay is
`min(decay, (1 + num_updates) / (10 + num_updates))`. `variables_to_restore()` maps the
shadow names to the variables, so a `Saver` can load averages into the model.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_ops, init_ops, math_ops, state_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.variables import GraphKeys, Variable, global_variables
from tensorweave.ops.variables import moving_average_variables as _ma_variables
from tensorweave.ops.variables import trainable_variables as _trainable_variables
from tensorweave.training import slot_creator

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)


def _zero_debias(unbiased: Variable, value: Tensor, one_minus_decay: Tensor) -> Tensor:
    """The delta that makes `unbiased` the bias-corrected average (Adam's correction)."""
    with vs.variable_scope(unbiased.op.name, values=[unbiased, value, one_minus_decay]):
        biased = vs.get_variable(
            "biased",
            initializer=init_ops.zeros_initializer(),
            shape=unbiased.get_shape(),
            dtype=unbiased.dtype.base_dtype,
            trainable=False,
        )
        local_step = vs.get_variable(
            "local_step",
            shape=[],
            dtype=unbiased.dtype.base_dtype,
            initializer=init_ops.zeros_initializer(),
            trainable=False,
        )
        update_biased = state_ops.assign_sub(biased, (biased - value) * one_minus_decay)
        update_step = state_ops.assign_add(local_step, 1)
        bias_factor = 1 - math_ops.pow(1.0 - one_minus_decay, update_step)
        return unbiased - update_biased / bias_factor


def assign_moving_average(
    variable: Any, value: Any, decay: Any, zero_debias: bool = True, name: str | None = None
) -> Tensor:
    """`variable -= (1 - decay) * (variable - value)` (follows `assign_moving_average`).

    Args:
      variable: a float `Variable`.
      value: a Tensor of the variable's shape.
      decay: float scalar, typically close to 1.
      zero_debias: correct the bias towards the initial value (with the variables
        `<variable>/biased` and `<variable>/local_step`).
      name: name scope (default "AssignMovingAvg").

    Returns:
      The variable's value after the update.
    """
    with graph_mod.name_scope(name, "AssignMovingAvg", [variable, value, decay]) as scope:
        one_minus_decay = convert_to_tensor(1.0 - decay, name="decay")
        if one_minus_decay.dtype != variable.dtype.base_dtype:
            one_minus_decay = math_ops.cast(one_minus_decay, variable.dtype.base_dtype)
        if zero_debias:
            delta = _zero_debias(variable, value, one_minus_decay)
        else:
            delta = (variable - value) * one_minus_decay
        return state_ops.assign_sub(variable, delta, name=scope)


class ExponentialMovingAverage:
    """Shadow variables that track exponential moving averages of variables.

    Follows `tf.train.ExponentialMovingAverage`.

    Args:
      decay: float, the decay (e.g. 0.999).
      num_updates: optional step count (Tensor or variable) that lowers the decay early on.
      zero_debias: debias the averages of tensors (not variables).
      name: the shadow variables' suffix and the update op's name scope.
    """

    def __init__(
        self,
        decay: Any,
        num_updates: Any = None,
        zero_debias: bool = False,
        name: str = "ExponentialMovingAverage",
    ):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict[Any, Variable] = {}
        self._debiased: set[Any] = set()

    @property
    def name(self) -> str:
        """The name passed to the constructor."""
        return self._name

    def _create_average(self, var: Any) -> Variable:
        if isinstance(var, Variable):
            with graph_mod.device(var.device):
                initial = var.initialized_value()
            avg = slot_creator.create_slot(var, initial, self._name, colocate_with_primary=True)
            graph_mod.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
            return avg
        colocate = var.op.type in ("Variable", "VariableV2", "VarHandleOp")
        avg = slot_creator.create_zeros_slot(var, self._name, colocate_with_primary=colocate)
        if self._zero_debias:
            self._debiased.add(avg)
        return avg

    def apply(self, var_list: Any = None) -> Any:
        """Creates the shadow variables and returns the op that updates them all.

        Args:
          var_list: float Variables or Tensors (default: the trainable variables).

        Returns:
          An op (named after `name`) running every update.

        Raises:
          TypeError: for a variable that is not half, float or double.
        """
        var_list = _trainable_variables() if var_list is None else list(var_list)
        for var in var_list:
            if var.dtype.base_dtype not in _FLOATS:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var not in self._averages:
                self._averages[var] = self._create_average(var)
        with graph_mod.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, name="decay")
            if self._num_updates is not None:
                num_updates = math_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = [
                assign_moving_average(
                    self._averages[var],
                    var,
                    decay,
                    zero_debias=self._averages[var] in self._debiased,
                )
                for var in var_list
            ]
            return control_flow_ops.group(*updates, name=scope)

    def average(self, var: Any) -> Variable | None:
        """The shadow variable of `var`, or None."""
        return self._averages.get(var)

    def average_name(self, var: Any) -> str:
        """The name of `var`'s shadow variable (also before `apply`), for a `Saver`."""
        if var in self._averages:
            return self._averages[var].op.name
        return var.op.name + "/" + self._name

    def variables_to_restore(self, moving_avg_variables: Any = None) -> dict[str, Any]:
        """`{shadow name: variable}` for the averaged variables, `{name: variable}` for the
        other global variables (follows `variables_to_restore`)."""
        if moving_avg_variables is None:
            moving_avg_variables = _trainable_variables() + _ma_variables()
        averaged = list(dict.fromkeys(moving_avg_variables))
        name_map = {self.average_name(v): v for v in averaged}
        averaged_names = {v.name for v in averaged}
        for v in global_variables():
            if v.name not in averaged_names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map


__all__ = ["ExponentialMovingAverage", "assign_moving_average"]
