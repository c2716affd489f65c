"""RNN cell wrappers (TF 1.x `rnn_cell_impl`): `DropoutWrapper`, `ResidualWrapper`,
`DeviceWrapper`. A wrapper runs its cell in the cell's own variable scope (it adds no
scope of its own), so wrapped and bare cells have the same variable names."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework import nest
from tensorweave.ops import nn_impl
from tensorweave.ops.rnn_cell_impl import LSTMStateTuple, RNNCell


class _Wrapper(RNNCell):
    """A cell around another cell, in the wrapped cell's scope (no scope of its own)."""

    def __init__(self, cell: RNNCell):
        super().__init__()
        self._cell = cell

    @property
    def wrapped_cell(self) -> RNNCell:
        """The wrapped cell."""
        return self._cell

    @property
    def state_size(self) -> Any:
        return self._cell.state_size

    @property
    def output_size(self) -> Any:
        return self._cell.output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """The wrapped cell's zero state."""
        with graph_mod.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            return self._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> Any:
        """Runs the wrapped cell (with `scope` if given) through this wrapper's `call`."""
        return self.call(inputs, state, scope)


def _should_dropout(p: Any) -> bool:
    return not isinstance(p, float | int) or p < 1


class DropoutWrapper(_Wrapper):
    """Dropout on a cell's inputs, outputs and state (`tf.nn.rnn_cell.DropoutWrapper`);
    a new mask every step (`variational_recurrent=False`).

    Args:
      cell: the wrapped cell.
      input_keep_prob, output_keep_prob, state_keep_prob: keep probabilities (floats in
        (0, 1] or float scalar tensors).
      variational_recurrent: must be False (one mask per sequence is not supported).
      input_size, dtype: accepted.
      seed: the dropout seed.
      dropout_state_filter_visitor: callable(state tensor) -> bool, which parts of the
        state get dropout (default: all but an LSTM's c).

    Raises:
      ValueError: a keep probability outside (0, 1], or `variational_recurrent`.
    """

    def __init__(self, cell: RNNCell, input_keep_prob: Any = 1.0, output_keep_prob: Any = 1.0,
                 state_keep_prob: Any = 1.0, variational_recurrent: bool = False,
                 input_size: Any = None, dtype: Any = None, seed: int | None = None,
                 dropout_state_filter_visitor: Any = None):
        super().__init__(cell)
        if variational_recurrent:
            raise ValueError("DropoutWrapper: variational_recurrent=True is not supported")
        for name, p in (("input", input_keep_prob), ("output", output_keep_prob),
                        ("state", state_keep_prob)):
            if isinstance(p, float | int) and not 0 < p <= 1:
                raise ValueError(f"Parameter {name}_keep_prob must be between 0 and 1: {p}")
        self._input_keep_prob, self._output_keep_prob = input_keep_prob, output_keep_prob
        self._state_keep_prob, self._seed = state_keep_prob, seed
        self._filter = dropout_state_filter_visitor

    def _dropout(self, values: Any, keep: Any, salt: int, filtered: bool = False) -> Any:
        seed = None if self._seed is None else self._seed + salt
        if not filtered:
            return nest.map_structure(lambda v: nn_impl.dropout(v, keep, seed=seed), values)
        if isinstance(values, LSTMStateTuple) and self._filter is None:
            return LSTMStateTuple(values.c, nn_impl.dropout(values.h, keep, seed=seed))
        keep_fn = self._filter or (lambda v: True)
        return nest.map_structure(
            lambda v: nn_impl.dropout(v, keep, seed=seed) if keep_fn(v) else v, values)

    def call(self, inputs: Any, state: Any, scope: Any = None) -> Any:
        """See `RNNCell.call`."""
        if _should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, self._input_keep_prob, 0)
        output, new_state = self._cell(inputs, state, scope=scope)
        if _should_dropout(self._state_keep_prob):
            new_state = self._dropout(new_state, self._state_keep_prob, 1, filtered=True)
        if _should_dropout(self._output_keep_prob):
            output = self._dropout(output, self._output_keep_prob, 2)
        return output, new_state


class ResidualWrapper(_Wrapper):
    """Adds the cell's inputs to its outputs (`tf.nn.rnn_cell.ResidualWrapper`).

    Args:
      cell: the wrapped cell.
      residual_fn: callable (inputs, outputs) -> outputs; default: their sum.
    """

    def __init__(self, cell: RNNCell, residual_fn: Any = None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def call(self, inputs: Any, state: Any, scope: Any = None) -> Any:
        """See `RNNCell.call`."""
        outputs, new_state = self._cell(inputs, state, scope=scope)

        def default(i: Any, o: Any) -> Any:
            nest.assert_same_structure(i, o)
            return nest.map_structure(lambda a, b: a + b, i, o)

        return (self._residual_fn or default)(inputs, outputs), new_state


class DeviceWrapper(_Wrapper):
    """Runs the cell on a device (`tf.nn.rnn_cell.DeviceWrapper`).

    Args:
      cell: the wrapped cell.
      device: a device string.
    """

    def __init__(self, cell: RNNCell, device: str):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """The wrapped cell's zero state, on the device."""
        with graph_mod.get_default_graph().device(self._device):
            return super().zero_state(batch_size, dtype)

    def call(self, inputs: Any, state: Any, scope: Any = None) -> Any:
        """See `RNNCell.call`."""
        with graph_mod.get_default_graph().device(self._device):
            return self._cell(inputs, state, scope=scope)


__all__ = ["DeviceWrapper", "DropoutWrapper", "ResidualWrapper"]
