"""Graph builders of the control-flow primitives and helpers about them (TF 1.x
`control_flow_ops` `switch`/`merge`/`_Enter`/`exit`/`_NextIteration`/`loop_cond` and
`control_flow_util`).

The primitives are defined in `framework/op_defs/control_flow.py`; `control_flow_ctx`
builds conds and loops from them.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework import op_defs  # noqa: F401  (registers the primitives)
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import unknown_shape
from tensorweave.ops import array_ops


def _is_ref(t: Tensor) -> bool:
    return t.dtype._is_ref_dtype


def switch(data: Any, pred: Any, dtype: Any = None, name: str | None = None):
    """`Switch`: (output_false, output_true); only the output selected by `pred` is live
    (follows `tf.raw_ops.Switch` / TF 1.x `control_flow_ops.switch`).

    Args:
      data: any tensor.
      pred: bool scalar.
      dtype: dtype to convert `data` to.
      name: name scope.
    """
    with graph_mod.name_scope(name, "Switch", [data, pred]) as scope:
        data = convert_to_tensor(data, dtype=dtype, name="data")
        pred = convert_to_tensor(pred, name="pred")
        return tuple(apply_op("Switch", data=data, pred=pred, name=scope))


def ref_switch(data: Tensor, pred: Any, name: str | None = None):
    """`RefSwitch`: `switch` of a reference tensor (a variable), keeping the reference."""
    return tuple(apply_op("RefSwitch", data=data, pred=pred, name=name))


def switch_ref_or_tensor(data: Tensor, pred: Tensor, name: str = "Switch"):
    """`RefSwitch` for reference tensors, else `Switch` (TF's `_SwitchRefOrTensor`)."""
    data = convert_to_tensor(data)
    with graph_mod.get_default_graph().colocate_with(data):
        if _is_ref(data):
            return ref_switch(data, pred, name=name)
        return switch(data, pred, name=name)


def merge(inputs: list[Any], name: str | None = None):
    """`Merge`: (output, value_index) from the first live input (follows TF 1.x
    `control_flow_ops.merge`).

    Raises:
      ValueError: if the inputs are not all of one dtype.
    """
    with graph_mod.name_scope(name, "Merge", inputs) as scope:
        inputs = [convert_to_tensor(x) for x in inputs]
        if len({x.dtype.base_dtype for x in inputs}) > 1:
            raise ValueError(f"Merge inputs must all have the same dtype: {inputs}")
        op = "RefMerge" if all(_is_ref(x) for x in inputs) else "Merge"
        if op == "Merge":
            inputs = [array_ops.identity(x) if _is_ref(x) else x for x in inputs]
        out, index = apply_op(op, inputs=inputs, name=scope)
        return out, index


def enter(data: Tensor, frame_name: str, is_constant: bool = False,
          parallel_iterations: int = 10, use_ref: bool = True,
          use_input_shape: bool = True, name: str | None = None) -> Tensor:
    """`Enter`/`RefEnter`: makes `data` available to the loop frame `frame_name`."""
    data = convert_to_tensor(data)
    op = "RefEnter" if (_is_ref(data) and use_ref) else "Enter"
    out = apply_op(op, data=data, frame_name=frame_name, is_constant=is_constant,
                   parallel_iterations=parallel_iterations, name=name or "Enter")
    if not use_input_shape:
        out._shape = unknown_shape()
    return out


def exit(data: Tensor, name: str | None = None) -> Tensor:  # noqa: A001
    """`Exit`/`RefExit`: makes a loop value available to the parent frame."""
    data = convert_to_tensor(data)
    op = "RefExit" if _is_ref(data) else "Exit"
    return apply_op(op, data=data, name=name or "Exit")


def next_iteration(data: Tensor, name: str | None = None) -> Tensor:
    """`NextIteration`/`RefNextIteration`: passes a value to the next iteration."""
    data = convert_to_tensor(data)
    op = "RefNextIteration" if _is_ref(data) else "NextIteration"
    return apply_op(op, data=data, name=name or "NextIteration")


def loop_cond(pred: Tensor, name: str | None = None) -> Tensor:
    """`LoopCond`: the loop-termination predicate (a bool scalar)."""
    return apply_op("LoopCond", input=pred, name=name or "LoopCond")


def control_trigger(name: str | None = None) -> Operation:
    """`ControlTrigger`: a no-op that runs even when its control inputs are dead."""
    return apply_op("ControlTrigger", name=name)


# ----------------------------------------------------------------- predicates
def is_switch(op: Operation) -> bool:
    """True for `Switch`/`RefSwitch`."""
    return op.type in ("Switch", "RefSwitch")


def is_merge(op: Operation) -> bool:
    """True for `Merge`/`RefMerge`."""
    return op.type in ("Merge", "RefMerge")


def is_loop_enter(op: Operation) -> bool:
    """True for `Enter`/`RefEnter`."""
    return op.type in ("Enter", "RefEnter")


def is_loop_exit(op: Operation) -> bool:
    """True for `Exit`/`RefExit`."""
    return op.type in ("Exit", "RefExit")


def is_next_iteration(op: Operation) -> bool:
    """True for `NextIteration`/`RefNextIteration`."""
    return op.type in ("NextIteration", "RefNextIteration")


def is_loop_constant_enter(op: Operation) -> bool:
    """True for an `Enter` of a loop invariant."""
    return is_loop_enter(op) and bool(op.get_attr("is_constant"))


def is_loop_switch(op: Operation) -> bool:
    """True for the `Switch` of a loop variable (fed by a loop `Merge`)."""
    if not is_switch(op):
        return False
    ctx = op._get_control_flow_context()
    return ctx is not None and ctx.IsWhileContext() and not is_cond_switch(op)


def is_cond_switch(op: Operation) -> bool:
    """True for a `Switch` built by `cond` (its consumers are in cond contexts)."""
    if not is_switch(op) or not op.outputs:
        return False
    consumers = [c for t in op.outputs for c in t.consumers()]
    ctxs = [get_output_context(c) if is_loop_exit(c) else c._get_control_flow_context()
            for c in consumers]
    return any(c is not None and c.IsCondContext() for c in ctxs)


def get_output_context(op: Operation) -> Any:
    """The context of `op`'s outputs: the outer one for an `Exit`."""
    ctx = op._get_control_flow_context()
    if ctx is not None and is_loop_exit(op):
        ctx = ctx.outer_context
    return ctx


def get_while_context(op: Operation) -> Any:
    """The innermost while context of `op`, or None."""
    ctx = op._get_control_flow_context()
    return ctx.GetWhileContext() if ctx is not None else None


def get_containing_while_context(ctx: Any, stop_ctx: Any = None) -> Any:
    """The innermost while context enclosing `ctx` (itself included), None past
    `stop_ctx`."""
    while ctx is not None:
        if ctx.IsWhileContext() or ctx is stop_ctx:
            return ctx
        ctx = ctx.outer_context
    return None


def is_in_while_loop(op: Operation) -> bool:
    """True when `op` is built inside a while loop."""
    return get_while_context(op) is not None


def is_in_cond(op: Operation) -> bool:
    """True when `op` is built inside a cond branch."""
    ctx = op._get_control_flow_context()
    return ctx is not None and ctx.GetCondContext() is not None


def is_container_of(outer: Any, inner: Any) -> bool:
    """True when context `outer` encloses (or is) `inner`; None encloses everything."""
    if outer is None:
        return True
    while inner is not None:
        if inner is outer:
            return True
        inner = inner.outer_context
    return False
