"""`tf.nn.dynamic_rnn`, `static_rnn`, `bidirectional_dynamic_rnn`, `raw_rnn` (TF 1.x
`ops/rnn.py`).

`dynamic_rnn` runs the cell in a `while_loop` over time with TensorArrays for the inputs
and outputs (`rnn/while/...`, variables `rnn/<cell>/...`); with `sequence_length`, finished
batch entries copy their state through and output zeros (`Select`). `static_rnn` unrolls
the cell in Python, with a `cond` per step when `sequence_length` is given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.framework import dtypes, nest
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array_ops, array_ops_gather, control_flow_ops, math_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.array_ops_more import reverse_sequence
from tensorweave.ops.rnn_cell_impl import RNNCell, infer_state_dtype
from tensorweave.ops.tensor_array_ops import TensorArray


def _transpose_batch_time(x: Tensor) -> Tensor:
    x = convert_to_tensor(x)
    if x.shape.ndims is not None and x.shape.ndims < 2:
        raise ValueError(f"Expected input tensor {x} to have rank at least 2")
    rank = x.shape.ndims
    if rank is None:
        r = array_ops.rank(x)
        perm = array_ops.concat([[1, 0], array_ops_gather.range(2, r)], 0)
    else:
        perm = [1, 0, *range(2, rank)]
    return array_ops.transpose(x, perm)


def _batch_size(flat_input: list[Tensor]) -> Any:
    for x in flat_input:
        if x.shape.ndims is not None and x.shape.ndims >= 2 and x.shape.dims[1].value:
            return x.shape.dims[1].value
    return array_ops.shape(flat_input[0])[1]


def _size_list(size: Any) -> list[Any]:
    return size.as_list() if isinstance(size, TensorShape) else [size]


def _zeros(batch_size: Any, size: Any, dtype: Any) -> Tensor:
    dims = _size_list(size)
    if isinstance(batch_size, Tensor):
        return array_ops.zeros(array_ops.stack([batch_size, *dims]), dtype)
    return array_ops.zeros([batch_size, *dims], dtype)


def _copy_some_through(cond: Tensor, current: list[Any], new: list[Any]) -> list[Any]:
    out = []
    for cur, cand in zip(current, new, strict=True):
        if isinstance(cur, TensorArray) or cur.shape.ndims == 0:
            out.append(cand)
            continue
        with graph_mod.get_default_graph().colocate_with(cand):
            out.append(array_ops.where(cond, cur, cand))
    return out


def _rnn_step(time: Any, sequence_length: Tensor, min_sequence_length: Tensor,
              max_sequence_length: Tensor, zero_output: Any, state: Any,
              call_cell: Callable[[], Any], skip_conditionals: bool = False):
    """One step with `sequence_length` (TF's `_rnn_step`): finished entries keep their
    state and output zeros."""
    flat_state, flat_zero = nest.flatten(state), nest.flatten(zero_output)
    copy_cond = time >= sequence_length

    def copy_through(flat_out: list[Any], flat_st: list[Any]) -> list[Any]:
        return (_copy_some_through(copy_cond, flat_zero, flat_out)
                + _copy_some_through(copy_cond, flat_state, flat_st))

    def run() -> tuple[list[Any], list[Any]]:
        new_output, new_state = call_cell()
        nest.assert_same_structure(zero_output, new_output)
        nest.assert_same_structure(state, new_state)
        return nest.flatten(new_output), nest.flatten(new_state)

    if skip_conditionals:
        result = copy_through(*run())
    else:
        def maybe_copy() -> list[Any]:
            out, st = run()
            return control_flow_ops.cond(time < min_sequence_length,
                                         lambda: out + st, lambda: copy_through(out, st))

        result = control_flow_ops.cond(time >= max_sequence_length,
                                       lambda: flat_zero + flat_state, maybe_copy)
    n = len(flat_zero)
    final_output, final_state = list(result[:n]), list(result[n:])
    for out, zero in zip(final_output, flat_zero, strict=True):
        out.set_shape(zero.shape)
    for sub, old in zip(final_state, flat_state, strict=True):
        if not isinstance(sub, TensorArray):
            sub.set_shape(old.shape)
    return (nest.pack_sequence_as(zero_output, final_output),
            nest.pack_sequence_as(state, final_state))


def _check_sequence_length(sequence_length: Any) -> Tensor:
    sequence_length = math_ops.cast(convert_to_tensor(sequence_length), dtypes.int32)
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError("sequence_length must be a vector of length batch_size, but saw "
                         f"shape: {sequence_length.shape}")
    return array_ops.identity(sequence_length, name="sequence_length")


def dynamic_rnn(cell: RNNCell, inputs: Any, sequence_length: Any = None,
                initial_state: Any = None, dtype: Any = None,
                parallel_iterations: int | None = None, swap_memory: bool = False,
                time_major: bool = False, scope: Any = None) -> tuple[Any, Any]:
    """Runs `cell` over the time dimension of `inputs` in a `while_loop`
    (`tf.nn.dynamic_rnn`).

    Args:
      cell: an `RNNCell`.
      inputs: [batch, time, depth] (or [time, batch, depth] with `time_major`), or a
        nested structure of such tensors.
      sequence_length: int32/int64 [batch]: steps past an entry's length output zeros and
        keep the state.
      initial_state: the first state (default: `cell.zero_state` of `dtype`).
      dtype: the state dtype when `initial_state` is None.
      parallel_iterations: iterations run at once (default 32).
      swap_memory: accepted.
      time_major: inputs and outputs are [time, batch, ...].
      scope: variable scope (default `rnn`).

    Returns:
      (outputs [batch, time, output_size] (or time major), final state).

    Raises:
      ValueError: no `initial_state` and no `dtype`, inputs of unknown depth, or a
        `sequence_length` that is not a vector.
    """
    with vs.variable_scope(scope or "rnn"):
        flat_input = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        if not time_major:
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        parallel_iterations = parallel_iterations or 32
        if sequence_length is not None:
            sequence_length = _check_sequence_length(sequence_length)
        batch_size = _batch_size(flat_input)
        if initial_state is not None:
            state = initial_state
        else:
            if not dtype:
                raise ValueError("If there is no initial_state, you must give a dtype.")
            state = cell.zero_state(batch_size, dtype)
        inputs = nest.pack_sequence_as(inputs, flat_input)
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, state, parallel_iterations,
                                                 swap_memory, sequence_length, dtype)
        if not time_major:
            outputs = nest.map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


def _dynamic_rnn_loop(cell, inputs, initial_state, parallel_iterations, swap_memory,
                      sequence_length, dtype):
    state = initial_state
    flat_input = nest.flatten(inputs)
    flat_output_size = nest.flatten(cell.output_size)
    time_steps = array_ops.shape(flat_input[0])[0]
    batch_size = _batch_size(flat_input)
    shapes = [x.shape for x in flat_input]
    for s in shapes:
        if s.ndims is None or s.ndims < 3 or not TensorShape(s.as_list()[2:]).is_fully_defined():
            raise ValueError("Input size (depth of inputs) must be accessible via shape "
                             f"inference, but saw value None (input shape {s}).")
    const_time_steps, const_batch_size = shapes[0].as_list()[:2]
    state_dtype = infer_state_dtype(dtype, state)
    zero_output = nest.pack_sequence_as(
        cell.output_size, [_zeros(batch_size, s, state_dtype) for s in flat_output_size])
    if sequence_length is not None:
        min_sequence_length = math_ops.reduce_min(sequence_length)
        max_sequence_length = math_ops.reduce_max(sequence_length)
    else:
        max_sequence_length = time_steps
    time = convert_to_tensor(0, dtypes.int32, name="time")
    with graph_mod.name_scope("dynamic_rnn") as base_name:
        pass
    output_ta = tuple(
        TensorArray(state_dtype, size=time_steps, tensor_array_name=f"{base_name}output_{i}",
                    element_shape=TensorShape([const_batch_size, *_size_list(s)]))
        for i, s in enumerate(flat_output_size))
    input_ta = tuple(
        TensorArray(x.dtype, size=time_steps, tensor_array_name=f"{base_name}input_{i}",
                    element_shape=TensorShape(x.shape.as_list()[1:])).unstack(x)
        for i, x in enumerate(flat_input))

    def time_step(time: Tensor, output_ta_t: tuple, state: Any):
        input_t = [ta.read(time) for ta in input_ta]
        for x, shape in zip(input_t, shapes, strict=True):
            x.set_shape(shape.as_list()[1:])
        input_t = nest.pack_sequence_as(inputs, input_t)

        def call_cell():
            return cell(input_t, state)

        if sequence_length is not None:
            output, new_state = _rnn_step(time, sequence_length, min_sequence_length,
                                          max_sequence_length, zero_output, state, call_cell,
                                          skip_conditionals=True)
        else:
            output, new_state = call_cell()
        output = nest.flatten(output)
        output_ta_t = tuple(ta.write(time, out) for ta, out in zip(output_ta_t, output,
                                                                   strict=True))
        return time + 1, output_ta_t, new_state

    loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, max_sequence_length))
    _, output_final_ta, final_state = control_flow_ops.while_loop(
        lambda time, *_: time < loop_bound, time_step, (time, output_ta, state),
        parallel_iterations=parallel_iterations, maximum_iterations=time_steps,
        swap_memory=swap_memory)
    final_outputs = [ta.stack() for ta in output_final_ta]
    for out, size in zip(final_outputs, flat_output_size, strict=True):
        out.set_shape([const_time_steps, const_batch_size, *_size_list(size)])
    return nest.pack_sequence_as(cell.output_size, final_outputs), final_state


def static_rnn(cell: RNNCell, inputs: list[Any], initial_state: Any = None, dtype: Any = None,
               sequence_length: Any = None, scope: Any = None) -> tuple[list[Any], Any]:
    """Unrolls `cell` over a Python list of time steps (`tf.nn.static_rnn`).

    Args:
      cell: an `RNNCell`.
      inputs: a list of [batch, depth] tensors (or nested structures), one per step.
      initial_state: the first state (default: `cell.zero_state` of `dtype`).
      dtype: the state dtype when `initial_state` is None.
      sequence_length: int32/int64 [batch]; steps past an entry's length output zeros and
        keep the state (a `cond` per step).
      scope: variable scope (default `rnn`).

    Returns:
      (list of outputs, final state).

    Raises:
      TypeError: `inputs` is not a list or tuple.
      ValueError: empty inputs, unknown depth, or no `initial_state` and no `dtype`.
    """
    if not isinstance(inputs, list | tuple):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with vs.variable_scope(scope or "rnn") as varscope:
        first = inputs[0]
        while nest.is_sequence(first):
            first = first[0]
        first = convert_to_tensor(first)
        for x in nest.flatten(inputs):
            s = convert_to_tensor(x).shape
            if s.ndims is not None and s.ndims >= 2 and not TensorShape(
                    s.as_list()[1:]).is_fully_defined():
                raise ValueError("Input size (dimension 1 of inputs) must be accessible via "
                                 "shape inference, but saw value None.")
        static_batch = first.shape.dims[0].value if first.shape.ndims else None
        batch_size = static_batch if static_batch else array_ops.shape(first)[0]
        if initial_state is not None:
            state = initial_state
        else:
            if not dtype:
                raise ValueError("If no initial_state is provided, dtype must be specified")
            state = cell.zero_state(batch_size, dtype)
        if sequence_length is not None:
            sequence_length = _check_sequence_length(sequence_length)
            state_dtype = infer_state_dtype(dtype, state)
            flat_zero = []
            for size in nest.flatten(cell.output_size):
                z = _zeros(batch_size, size, state_dtype)
                z.set_shape([static_batch, *_size_list(size)])
                flat_zero.append(z)
            zero_output = nest.pack_sequence_as(cell.output_size, flat_zero)
            min_len = math_ops.reduce_min(sequence_length)
            max_len = math_ops.reduce_max(sequence_length)
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()

            def call_cell(input_=input_, state=state):
                return cell(input_, state)

            if sequence_length is not None:
                output, state = _rnn_step(time, sequence_length, min_len, max_len,
                                          zero_output, state, call_cell)
            else:
                output, state = call_cell()
            outputs.append(output)
        return outputs, state


def bidirectional_dynamic_rnn(cell_fw: RNNCell, cell_bw: RNNCell, inputs: Any,
                              sequence_length: Any = None, initial_state_fw: Any = None,
                              initial_state_bw: Any = None, dtype: Any = None,
                              parallel_iterations: int | None = None,
                              swap_memory: bool = False, time_major: bool = False,
                              scope: Any = None) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """A forward and a backward `dynamic_rnn` over the same inputs
    (`tf.nn.bidirectional_dynamic_rnn`); the backward one reads the inputs reversed (each
    entry within its `sequence_length`) and its outputs are reversed back.

    Args:
      cell_fw: the forward cell (scope `bidirectional_rnn/fw`).
      cell_bw: the backward cell (scope `bidirectional_rnn/bw`).
      inputs: as `dynamic_rnn`.
      sequence_length: as `dynamic_rnn`.
      initial_state_fw: the forward cell's first state.
      initial_state_bw: the backward cell's first state.
      dtype: the state dtype when the initial states are None.
      parallel_iterations: as `dynamic_rnn`.
      swap_memory: accepted.
      time_major: as `dynamic_rnn`.
      scope: variable scope (default `bidirectional_rnn`).

    Returns:
      ((output_fw, output_bw), (output_state_fw, output_state_bw)).
    """
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def reverse(x: Any) -> Any:
        if sequence_length is not None:
            return reverse_sequence(x, sequence_length, seq_axis=time_axis,
                                    batch_axis=batch_axis)
        return array_ops.reverse(x, axis=[time_axis])

    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length, initial_state_fw, dtype,
                parallel_iterations, swap_memory, time_major, scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            tmp, state_bw = dynamic_rnn(
                cell_bw, nest.map_structure(reverse, inputs), sequence_length,
                initial_state_bw, dtype, parallel_iterations, swap_memory, time_major,
                scope=bw_scope)
    output_bw = nest.map_structure(reverse, tmp)
    return (output_fw, output_bw), (state_fw, state_bw)


def _reverse_seq(input_seq: list[Any], lengths: Any) -> list[Any]:
    """The time steps of `input_seq` reversed, each batch entry within its `lengths`."""
    if lengths is None:
        return list(reversed(input_seq))
    flat_steps = [nest.flatten(step) for step in input_seq]
    reversed_flat = []
    for column in zip(*flat_steps, strict=True):
        stacked = array_ops.stack([convert_to_tensor(x) for x in column])
        unstacked = array_ops.unstack(reverse_sequence(stacked, lengths, seq_axis=0,
                                                       batch_axis=1))
        for x, y in zip(column, unstacked, strict=True):
            y.set_shape(convert_to_tensor(x).shape)
        reversed_flat.append(unstacked)
    return [nest.pack_sequence_as(input_seq[0], list(step))
            for step in zip(*reversed_flat, strict=True)]


def static_bidirectional_rnn(cell_fw: RNNCell, cell_bw: RNNCell, inputs: list[Any],
                             initial_state_fw: Any = None, initial_state_bw: Any = None,
                             dtype: Any = None, sequence_length: Any = None,
                             scope: Any = None) -> tuple[list[Any], Any, Any]:
    """A forward and a backward `static_rnn` over a list of time steps
    (`tf.nn.static_bidirectional_rnn`, `tf.contrib.rnn.static_bidirectional_rnn`).

    The backward cell reads the steps reversed (each batch entry within its
    `sequence_length`) and its outputs are reversed back; step t's output is the forward
    and backward outputs concatenated on axis 1.

    Args:
      cell_fw: the forward cell (scope `bidirectional_rnn/fw`).
      cell_bw: the backward cell (scope `bidirectional_rnn/bw`).
      inputs: a non-empty list of [batch, depth] tensors, one per step.
      initial_state_fw: the forward cell's first state.
      initial_state_bw: the backward cell's first state.
      dtype: the state dtype when the initial states are None.
      sequence_length: int32/int64 [batch], as `static_rnn`.
      scope: variable scope (default `bidirectional_rnn`).

    Returns:
      (outputs, output_state_fw, output_state_bw): outputs is a list with one
      [batch, fw_size + bw_size] tensor per step.

    Raises:
      TypeError: a cell is not an `RNNCell`, or `inputs` is not a list or tuple.
      ValueError: `inputs` is empty.
    """
    for name, cell in (("cell_fw", cell_fw), ("cell_bw", cell_bw)):
        if not isinstance(cell, RNNCell):
            raise TypeError(f"{name} must be an instance of RNNCell")
    if not isinstance(inputs, list | tuple):
        raise TypeError("inputs must be a list")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            tmp, state_bw = static_rnn(cell_bw, _reverse_seq(inputs, sequence_length),
                                       initial_state_bw, dtype, sequence_length,
                                       scope=bw_scope)
    output_bw = _reverse_seq(tmp, sequence_length)
    flat_fw, flat_bw = nest.flatten(output_fw), nest.flatten(output_bw)
    flat_outputs = [array_ops.concat([fw, bw], 1) for fw, bw in zip(flat_fw, flat_bw,
                                                                     strict=True)]
    return nest.pack_sequence_as(output_fw, flat_outputs), state_fw, state_bw


def raw_rnn(cell: RNNCell, loop_fn: Callable[..., Any], parallel_iterations: int | None = None,
            swap_memory: bool = False, scope: Any = None) -> tuple[Any, Any, Any]:
    """An RNN whose inputs, finishing and emits `loop_fn` decides step by step
    (`tf.nn.raw_rnn`).

    `loop_fn(time, cell_output, cell_state, loop_state)` returns
    `(finished, next_input, next_cell_state, emit_output, next_loop_state)`; at time 0
    `cell_output` is None and `next_cell_state` is the initial state.

    Args:
      cell: an `RNNCell`.
      loop_fn: as above.
      parallel_iterations: iterations run at once.
      swap_memory: accepted.
      scope: variable scope (default `rnn`).

    Returns:
      (emit TensorArrays structured like the emits, final state, final loop state).

    Raises:
      TypeError: `loop_fn` is not callable.
    """
    if not callable(loop_fn):
        raise TypeError("loop_fn must be a callable")
    parallel_iterations = parallel_iterations or 32
    with vs.variable_scope(scope or "rnn"):
        time = convert_to_tensor(0, dtypes.int32)
        finished, next_input, initial_state, emit_structure, init_loop_state = loop_fn(
            time, None, None, None)
        loop_state = init_loop_state if init_loop_state is not None else convert_to_tensor(0)
        flat_input = nest.flatten(next_input)
        const_batch = flat_input[0].shape.dims[0].value if flat_input[0].shape.ndims else None
        batch_size = const_batch if const_batch else array_ops.shape(flat_input[0])[0]
        nest.assert_same_structure(initial_state, cell.state_size)
        state = nest.map_structure(convert_to_tensor, initial_state)
        if emit_structure is not None:
            flat_emit = nest.flatten(emit_structure)
            flat_emit_size = [e.shape.as_list()[1:] if e.shape.is_fully_defined()
                              else array_ops.shape(e)[1:] for e in flat_emit]
            flat_emit_dtypes = [e.dtype for e in flat_emit]
        else:
            emit_structure = cell.output_size
            flat_emit_size = [_size_list(s) for s in nest.flatten(emit_structure)]
            flat_emit_dtypes = [nest.flatten(state)[0].dtype] * len(flat_emit_size)
        emit_ta = nest.pack_sequence_as(emit_structure, [
            TensorArray(dt, dynamic_size=True, size=0, name=f"rnn_output_{i}",
                        element_shape=TensorShape([const_batch, *s])
                        if isinstance(s, list) else None)
            for i, (dt, s) in enumerate(zip(flat_emit_dtypes, flat_emit_size, strict=True))])
        zero_emit = nest.pack_sequence_as(emit_structure, [
            array_ops.zeros(array_ops.concat([[batch_size], s], 0) if isinstance(s, Tensor)
                            else _batch_dims(batch_size, s), dt)
            for s, dt in zip(flat_emit_size, flat_emit_dtypes, strict=True)])

        def condition(unused_time, elements_finished, *_):
            return math_ops.logical_not(math_ops.reduce_all(elements_finished))

        def body(time, elements_finished, current_input, emit_ta, state, loop_state):
            next_output, cell_state = cell(current_input, state)
            nest.assert_same_structure(state, cell_state)
            next_time = time + 1
            (next_finished, next_input, next_state, emit_output,
             next_loop_state) = loop_fn(next_time, next_output, cell_state, loop_state)
            nest.assert_same_structure(state, next_state)
            nest.assert_same_structure(current_input, next_input)
            nest.assert_same_structure(emit_ta, emit_output)
            loop_state = loop_state if next_loop_state is None else next_loop_state
            emit_output = nest.pack_sequence_as(emit_output, _copy_some_through(
                elements_finished, nest.flatten(zero_emit), nest.flatten(emit_output)))
            next_state = nest.pack_sequence_as(next_state, _copy_some_through(
                elements_finished, nest.flatten(state), nest.flatten(next_state)))
            emit_ta = nest.map_structure(lambda ta, emit: ta.write(time, emit), emit_ta,
                                         emit_output)
            elements_finished = math_ops.logical_or(elements_finished, next_finished)
            return next_time, elements_finished, next_input, emit_ta, next_state, loop_state

        returned = control_flow_ops.while_loop(
            condition, body, [time, finished, next_input, emit_ta, state, loop_state],
            parallel_iterations=parallel_iterations, swap_memory=swap_memory)
        emit_ta, final_state, final_loop_state = returned[-3:]
        if init_loop_state is None:
            final_loop_state = None
        return emit_ta, final_state, final_loop_state


def _batch_dims(batch_size: Any, size: list[Any]) -> Any:
    if isinstance(batch_size, Tensor):
        return array_ops.stack([batch_size, *size])
    return [batch_size, *size]


__all__ = [
    "bidirectional_dynamic_rnn", "dynamic_rnn", "raw_rnn", "static_bidirectional_rnn",
    "static_rnn",
]
