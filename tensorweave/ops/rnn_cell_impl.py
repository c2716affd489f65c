"""RNN cells (TF 1.x `tf.nn.rnn_cell`, `rnn_cell_impl`): `RNNCell`, `BasicRNNCell`,
`BasicLSTMCell`, `LSTMCell`, `GRUCell`, `MultiRNNCell` and `LSTMStateTuple` (the
wrappers are in `rnn_cell_wrappers`).

Variables are TensorFlow's: a cell's first call opens a variable scope named after it
(`basic_lstm_cell`, `lstm_cell`, `gru_cell`, `basic_rnn_cell`, `multi_rnn_cell` + `cell_<i>`)
under the caller's scope and creates `kernel` and `bias` there (`gates/` and `candidate/`
for GRU; `w_f_diag`, `w_i_diag`, `w_o_diag` and `projection/kernel` for LSTMCell); later
calls reuse them. So `dynamic_rnn(BasicLSTMCell(n), ...)` has `rnn/basic_lstm_cell/kernel`.
"""

from __future__ import annotations

import collections
import re
from typing import Any

from tensorweave.framework import dtypes, nest
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array_ops, clip_ops, init_ops, math_ops, nn_ops
from tensorweave.ops import variable_scope as vs

_BIAS = "bias"
_WEIGHTS = "kernel"


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """The (c, h) state of an LSTM cell (`tf.nn.rnn_cell.LSTMStateTuple`)."""

    __slots__ = ()

    @property
    def dtype(self) -> Any:
        """The dtype of both tensors.

        Raises:
          TypeError: when c and h differ in dtype.
        """
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def _snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def _zero_state(state_size: Any, batch_size: Any, dtype: Any) -> Any:
    def zeros(size: Any) -> Tensor:
        dims = size.as_list() if isinstance(size, TensorShape) else [size]
        return array_ops.zeros(array_ops.stack([batch_size, *dims]) if isinstance(
            batch_size, Tensor) else [batch_size, *dims], dtype)

    return nest.map_structure(zeros, state_size)


class RNNCell:
    """The abstract RNN cell (TF 1.x `tf.nn.rnn_cell.RNNCell`): `cell(inputs, state)`
    returns `(output, new_state)`; subclasses define `state_size`, `output_size`,
    `build(inputs_shape)` and `call(inputs, state)`.

    Args:
      reuse: reuse the variables of an existing scope of the same name.
      name: the scope name (default: the class name in snake case).
      dtype: the variables' dtype (default: the inputs').
    """

    def __init__(self, reuse: Any = None, name: str | None = None, dtype: Any = None):
        self._reuse = reuse
        self._base_name = name or _snake(type(self).__name__)
        self._dtype = dtype
        self._scope: Any = None
        self.built = False

    @property
    def state_size(self) -> Any:
        """The state's size(s): an int, a TensorShape, or a nested structure of them."""
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self) -> Any:
        """The output's size(s)."""
        raise NotImplementedError("Abstract method")

    def build(self, inputs_shape: TensorShape) -> None:
        """Creates the variables for inputs of `inputs_shape` ([batch, depth])."""
        self.built = True

    def call(self, inputs: Any, state: Any) -> Any:
        """One step: (output, new_state)."""
        raise NotImplementedError("Abstract method")

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> Any:
        """Runs one step in the cell's variable scope (created on the first call).

        Args:
          inputs: [batch, input_size] tensor (or nested structure).
          state: tensor(s) shaped as `state_size` with a batch dimension.
          scope: a variable scope to use instead of the cell's own.
        """
        if scope is not None:
            with vs.variable_scope(scope, reuse=True if self.built else self._reuse) as sc:
                return self._call_in_scope(inputs, state, sc)
        if self._scope is None:
            with vs.variable_scope(None, default_name=self._base_name,
                                   reuse=self._reuse) as sc:
                self._scope = sc
                return self._call_in_scope(inputs, state, sc)
        with vs.variable_scope(self._scope, reuse=True):
            return self._call_in_scope(inputs, state, self._scope)

    def _call_in_scope(self, inputs: Any, state: Any, scope: Any) -> Any:
        if not self.built:
            flat = [convert_to_tensor(x) for x in nest.flatten(inputs)]
            if self._dtype is None:
                self._dtype = flat[0].dtype.base_dtype
            self.build(flat[0].shape)
            self.built = True
        return self.call(inputs, state)

    def add_variable(self, name: str, shape: Any, initializer: Any = None,
                     dtype: Any = None) -> Any:
        """A variable of this cell (`tf.get_variable` in the cell's scope)."""
        return vs.get_variable(name, shape=shape, dtype=dtype or self._dtype,
                               initializer=initializer)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """Zeros shaped `[batch_size, s]` for each size `s` in `state_size`."""
        with graph_mod.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            return _zero_state(self.state_size, batch_size, dtype)

    def get_initial_state(self, inputs: Any = None, batch_size: Any = None,
                          dtype: Any = None) -> Any:
        """`zero_state` for the batch size and dtype of `inputs` (or those given)."""
        if inputs is not None:
            inputs = convert_to_tensor(inputs)
            batch_size = (inputs.shape.dims[0].value if inputs.shape.ndims else None)
            if batch_size is None:
                batch_size = array_ops.shape(inputs)[0]
            dtype = inputs.dtype
        return self.zero_state(batch_size, dtype)

    @property
    def trainable_variables(self) -> list[Any]:
        """The variables created in the cell's scope."""
        if self._scope is None:
            return []
        return graph_mod.get_default_graph().get_collection(
            "trainable_variables", self._scope.name + "/")

    @property
    def variables(self) -> list[Any]:
        """Alias of `trainable_variables`."""
        return self.trainable_variables

    weights = variables


def _depth(inputs_shape: TensorShape, cell: str) -> int:
    if inputs_shape.ndims is None or inputs_shape.dims[-1].value is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {inputs_shape} "
                         f"(in {cell})")
    return inputs_shape.dims[-1].value


def _activation(activation: Any) -> Any:
    return activation or math_ops.tanh


class BasicRNNCell(RNNCell):
    """`output = new_state = act(W [inputs, state] + b)` (`tf.nn.rnn_cell.BasicRNNCell`).

    Args:
      num_units: the state size.
      activation: default `tanh`.
      reuse, name, dtype: as `RNNCell`.
    """

    def __init__(self, num_units: int, activation: Any = None, reuse: Any = None,
                 name: str | None = None, dtype: Any = None):
        super().__init__(reuse=reuse, name=name, dtype=dtype)
        self._num_units, self._activation = num_units, _activation(activation)

    @property
    def state_size(self) -> int:
        """See `RNNCell.state_size`."""
        return self._num_units

    @property
    def output_size(self) -> int:
        """See `RNNCell.output_size`."""
        return self._num_units

    def build(self, inputs_shape: TensorShape) -> None:
        """See `RNNCell.build`."""
        depth = _depth(inputs_shape, type(self).__name__)
        self._kernel = self.add_variable(_WEIGHTS, [depth + self._num_units, self._num_units])
        self._bias = self.add_variable(_BIAS, [self._num_units],
                                       initializer=init_ops.zeros_initializer())

    def call(self, inputs: Any, state: Any) -> Any:
        """See `RNNCell.call`."""
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._kernel)
        output = self._activation(nn_ops.bias_add(gate_inputs, self._bias))
        return output, output


class GRUCell(RNNCell):
    """Gated recurrent unit (`tf.nn.rnn_cell.GRUCell`, Cho et al. 2014).

    Args:
      num_units: the state size.
      activation: default `tanh`.
      reuse, name, dtype: as `RNNCell`.
      kernel_initializer: initializer of both kernels.
      bias_initializer: initializer of both biases (default: 1.0 for the gates, 0 for
        the candidate).
    """

    def __init__(self, num_units: int, activation: Any = None, reuse: Any = None,
                 kernel_initializer: Any = None, bias_initializer: Any = None,
                 name: str | None = None, dtype: Any = None):
        super().__init__(reuse=reuse, name=name, dtype=dtype)
        self._num_units, self._activation = num_units, _activation(activation)
        self._kernel_initializer, self._bias_initializer = kernel_initializer, bias_initializer

    @property
    def state_size(self) -> int:
        """See `RNNCell.state_size`."""
        return self._num_units

    @property
    def output_size(self) -> int:
        """See `RNNCell.output_size`."""
        return self._num_units

    def build(self, inputs_shape: TensorShape) -> None:
        """See `RNNCell.build`."""
        depth, n = _depth(inputs_shape, "GRUCell"), self._num_units
        with vs.variable_scope("gates"):
            self._gate_kernel = self.add_variable(_WEIGHTS, [depth + n, 2 * n],
                                                  initializer=self._kernel_initializer)
            self._gate_bias = self.add_variable(
                _BIAS, [2 * n], initializer=self._bias_initializer
                or init_ops.constant_initializer(1.0, dtype=self._dtype))
        with vs.variable_scope("candidate"):
            self._candidate_kernel = self.add_variable(_WEIGHTS, [depth + n, n],
                                                       initializer=self._kernel_initializer)
            self._candidate_bias = self.add_variable(
                _BIAS, [n], initializer=self._bias_initializer or init_ops.zeros_initializer())

    def call(self, inputs: Any, state: Any) -> Any:
        """See `RNNCell.call`."""
        gate_inputs = nn_ops.bias_add(
            math_ops.matmul(array_ops.concat([inputs, state], 1), self._gate_kernel),
            self._gate_bias)
        r, u = array_ops.split(math_ops.sigmoid(gate_inputs), 2, axis=1)
        candidate = nn_ops.bias_add(
            math_ops.matmul(array_ops.concat([inputs, r * state], 1), self._candidate_kernel),
            self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class BasicLSTMCell(RNNCell):
    """LSTM without peepholes or projection (`tf.nn.rnn_cell.BasicLSTMCell`).

    Args:
      num_units: the cell size.
      forget_bias: added to the forget gate's pre-activation.
      state_is_tuple: state as `LSTMStateTuple(c, h)` (else c and h concatenated).
      activation: default `tanh`.
      reuse, name, dtype: as `RNNCell`.
    """

    def __init__(self, num_units: int, forget_bias: float = 1.0, state_is_tuple: bool = True,
                 activation: Any = None, reuse: Any = None, name: str | None = None,
                 dtype: Any = None):
        super().__init__(reuse=reuse, name=name, dtype=dtype)
        self._num_units, self._forget_bias = num_units, forget_bias
        self._state_is_tuple, self._activation = state_is_tuple, _activation(activation)

    @property
    def state_size(self) -> Any:
        """See `RNNCell.state_size`."""
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self) -> int:
        """See `RNNCell.output_size`."""
        return self._num_units

    def build(self, inputs_shape: TensorShape) -> None:
        """See `RNNCell.build`."""
        depth, n = _depth(inputs_shape, "BasicLSTMCell"), self._num_units
        self._kernel = self.add_variable(_WEIGHTS, [depth + n, 4 * n])
        self._bias = self.add_variable(_BIAS, [4 * n], initializer=init_ops.zeros_initializer())

    def call(self, inputs: Any, state: Any) -> Any:
        """See `RNNCell.call`."""
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(state, 2, axis=1)
        gate_inputs = nn_ops.bias_add(
            math_ops.matmul(array_ops.concat([inputs, h], 1), self._kernel), self._bias)
        i, j, f, o = array_ops.split(gate_inputs, 4, axis=1)
        forget_bias = convert_to_tensor(self._forget_bias, dtype=f.dtype)
        new_c = (c * math_ops.sigmoid(f + forget_bias)
                 + math_ops.sigmoid(i) * self._activation(j))
        new_h = self._activation(new_c) * math_ops.sigmoid(o)
        if self._state_is_tuple:
            return new_h, LSTMStateTuple(new_c, new_h)
        return new_h, array_ops.concat([new_c, new_h], 1)


class LSTMCell(RNNCell):
    """LSTM with optional peepholes, cell clipping and projection
    (`tf.nn.rnn_cell.LSTMCell`, Hochreiter & Schmidhuber 1997; Sak et al. 2014).

    Args:
      num_units: the cell size.
      use_peepholes: add diagonal peephole connections (`w_f_diag`, `w_i_diag`,
        `w_o_diag`).
      cell_clip: clip the cell state to [-cell_clip, cell_clip].
      initializer: initializer of the kernel, peepholes and projection.
      num_proj: project the output to this size (`projection/kernel`).
      proj_clip: clip the projected output.
      num_unit_shards, num_proj_shards: accepted (deprecated in TensorFlow); must be None.
      forget_bias: added to the forget gate's pre-activation.
      state_is_tuple: state as `LSTMStateTuple(c, m)`.
      activation: default `tanh`.
      reuse, name, dtype: as `RNNCell`.
    """

    def __init__(self, num_units: int, use_peepholes: bool = False, cell_clip: Any = None,
                 initializer: Any = None, num_proj: int | None = None, proj_clip: Any = None,
                 num_unit_shards: Any = None, num_proj_shards: Any = None,
                 forget_bias: float = 1.0, state_is_tuple: bool = True, activation: Any = None,
                 reuse: Any = None, name: str | None = None, dtype: Any = None):
        super().__init__(reuse=reuse, name=name, dtype=dtype)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise ValueError("num_unit_shards and num_proj_shards are not supported")
        self._num_units, self._use_peepholes = num_units, use_peepholes
        self._cell_clip, self._initializer = cell_clip, initializer
        self._num_proj, self._proj_clip = num_proj, proj_clip
        self._forget_bias, self._state_is_tuple = forget_bias, state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self) -> Any:
        """See `RNNCell.state_size`."""
        m = self._num_proj or self._num_units
        if self._state_is_tuple:
            return LSTMStateTuple(self._num_units, m)
        return self._num_units + m

    @property
    def output_size(self) -> int:
        """See `RNNCell.output_size`."""
        return self._num_proj or self._num_units

    def build(self, inputs_shape: TensorShape) -> None:
        """See `RNNCell.build`."""
        depth, n = _depth(inputs_shape, "LSTMCell"), self._num_units
        h_depth = self._num_proj or n
        init = self._initializer
        self._kernel = self.add_variable(_WEIGHTS, [depth + h_depth, 4 * n], initializer=init)
        self._bias = self.add_variable(_BIAS, [4 * n], initializer=init_ops.zeros_initializer())
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("w_f_diag", [n], initializer=init)
            self._w_i_diag = self.add_variable("w_i_diag", [n], initializer=init)
            self._w_o_diag = self.add_variable("w_o_diag", [n], initializer=init)
        if self._num_proj is not None:
            with vs.variable_scope("projection"):
                self._proj_kernel = self.add_variable(_WEIGHTS, [n, self._num_proj],
                                                      initializer=init)

    def call(self, inputs: Any, state: Any) -> Any:
        """See `RNNCell.call`."""
        n, m_size = self._num_units, self._num_proj or self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = array_ops.slice(state, [0, 0], [-1, n])
            m_prev = array_ops.slice(state, [0, n], [-1, m_size])
        lstm_matrix = nn_ops.bias_add(
            math_ops.matmul(array_ops.concat([inputs, m_prev], 1), self._kernel), self._bias)
        i, j, f, o = array_ops.split(lstm_matrix, 4, axis=1)
        sig, act, fb = math_ops.sigmoid, self._activation, self._forget_bias
        if self._use_peepholes:
            c = (sig(f + fb + self._w_f_diag * c_prev) * c_prev
                 + sig(i + self._w_i_diag * c_prev) * act(j))
        else:
            c = sig(f + fb) * c_prev + sig(i) * act(j)
        if self._cell_clip is not None:
            c = clip_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sig(o + self._w_o_diag * c) * act(c)
        else:
            m = sig(o) * act(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        if self._state_is_tuple:
            return m, LSTMStateTuple(c, m)
        return m, array_ops.concat([c, m], 1)


class MultiRNNCell(RNNCell):
    """Cells stacked: each one's output is the next one's input
    (`tf.nn.rnn_cell.MultiRNNCell`); sub-cell variables live under `cell_<i>/`.

    Args:
      cells: the cells, bottom first.
      state_is_tuple: state as a tuple of the cells' states (else concatenated).

    Raises:
      ValueError: no cells.
    """

    def __init__(self, cells: list[RNNCell], state_is_tuple: bool = True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        self._cells, self._state_is_tuple = list(cells), state_is_tuple

    @property
    def state_size(self) -> Any:
        """See `RNNCell.state_size`."""
        if self._state_is_tuple:
            return tuple(c.state_size for c in self._cells)
        return sum(c.state_size for c in self._cells)

    @property
    def output_size(self) -> Any:
        """See `RNNCell.output_size`."""
        return self._cells[-1].output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """The cells' zero states (a tuple, or concatenated)."""
        with graph_mod.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            if self._state_is_tuple:
                return tuple(c.zero_state(batch_size, dtype) for c in self._cells)
            return _zero_state(self.state_size, batch_size, dtype)

    def call(self, inputs: Any, state: Any) -> Any:
        """See `RNNCell.call`."""
        cur_inp, new_states, start = inputs, [], 0
        for i, cell in enumerate(self._cells):
            with vs.variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    cur_state = state[i]
                else:
                    size = cell.state_size
                    cur_state = array_ops.slice(state, [0, start], [-1, size])
                    start += size
                cur_inp, new_state = cell(cur_inp, cur_state)
                new_states.append(new_state)
        if self._state_is_tuple:
            return cur_inp, tuple(new_states)
        return cur_inp, array_ops.concat(new_states, 1)


def infer_state_dtype(explicit_dtype: Any, state: Any) -> Any:
    """`explicit_dtype`, else the (single) dtype of `state`'s tensors.

    Raises:
      ValueError: the state mixes dtypes and no dtype is given.
    """
    if explicit_dtype is not None:
        return dtypes.as_dtype(explicit_dtype)
    flat = nest.flatten(state)
    kinds = {t.dtype.base_dtype for t in flat}
    if len(kinds) != 1:
        raise ValueError(f"State has tensors of different inferred_dtypes. Unable to infer a "
                         f"single representative dtype. Dtypes received: {sorted(map(str, kinds))}")
    return flat[0].dtype.base_dtype


__all__ = [
    "BasicLSTMCell", "BasicRNNCell", "GRUCell", "LSTMCell", "LSTMStateTuple", "MultiRNNCell",
    "RNNCell",
]
