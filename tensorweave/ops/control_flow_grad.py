"""Gradients of the control-flow primitives (TF 1.x `control_flow_grad`).

In a cond, a `Switch`'s gradient is a `Merge` and a `Merge`'s gradient is a `Switch` on
the same predicate. In a loop, an `Exit`'s gradient is an `Enter` into the gradient loop,
a `Switch`'s gradient the gradient loop's `Merge` (its back edge added when the `Switch`
is visited the second time), a `Merge`'s gradient a `Switch` on the gradient loop's
predicate, `NextIteration`'s an identity, and an `Enter`'s an `Exit` (loop variables) or
an accumulator loop (loop invariants).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_state, math_ops
from tensorweave.ops import control_flow_util as util
from tensorweave.ops.control_flow_ctx import CondContext, WhileContext, _add_next_and_back_edge
from tensorweave.ops.gradient_registry import RegisterGradient, no_gradient


def _dense(grad: Any) -> Any:
    if isinstance(grad, IndexedSlices):
        return convert_to_tensor(grad)
    return grad


@RegisterGradient("Switch")
def _switch_grad(op: Operation, *grad: Any) -> tuple[Any, None]:
    graph = graph_mod.get_default_graph()
    op_ctxt = op._get_control_flow_context()
    grad_ctxt = graph._get_control_flow_context()
    grad = [_dense(g) for g in grad]
    if isinstance(op_ctxt, WhileContext):
        merge_grad = grad_ctxt.grad_state.switch_map.get(op)
        if merge_grad is not None:
            # NOTE: the second visit comes from the body's Identity: close the back edge.
            if grad[1] is not None:
                _add_next_and_back_edge(merge_grad, grad[1], enforce_shape=False)
            return None, None
        if grad[0] is not None:
            merge_grad = util.merge([grad[0], grad[0]], name="b_switch")[0]
            grad_ctxt.grad_state.switch_map[op] = merge_grad
            return merge_grad, None
        return None, None
    if isinstance(op_ctxt, CondContext):
        zero_grad = grad[1 - op_ctxt.branch]
        if zero_grad is None:
            return None, None
        return util.merge(grad, name="cond_grad")[0], None
    false_grad = util.switch(grad[0], op.inputs[1])[0]
    true_grad = util.switch(grad[1], op.inputs[1])[1]
    return util.merge([false_grad, true_grad])[0], None


RegisterGradient("RefSwitch")(_switch_grad)


@RegisterGradient("Merge")
def _merge_grad(op: Operation, grad: Any, _: Any) -> Any:
    graph = graph_mod.get_default_graph()
    op_ctxt = util.get_output_context(op.inputs[0].op)
    grad_ctxt = graph._get_control_flow_context()
    grad = _dense(grad)
    if isinstance(op_ctxt, WhileContext):
        return util.switch_ref_or_tensor(grad, grad_ctxt.pivot)
    if isinstance(op_ctxt, CondContext):
        pred = op_ctxt.pred
        if grad_ctxt is not None and grad_ctxt.grad_state is not None:
            # NOTE: a cond inside a loop: the predicate of each forward iteration is kept
            # on a stack for the matching gradient iteration.
            grad_state = grad_ctxt.grad_state
            real_pred = grad_state.history_map.get(pred.name)
            if real_pred is None:
                grad_ctxt = grad_state.grad_context
                grad_ctxt.Exit()
                history_pred = grad_state.AddForwardAccumulator(pred)
                grad_ctxt.Enter()
                real_pred = grad_state.AddBackpropAccumulatedValue(history_pred, pred)
                grad_state.history_map[pred.name] = real_pred
            pred = real_pred
        return util.switch_ref_or_tensor(grad, pred, name="cond_grad")
    n = len(op.inputs)
    conds = [math_ops.equal(op.outputs[1], i) for i in range(n)]
    return [util.switch_ref_or_tensor(grad, conds[i])[1] for i in range(n)]


RegisterGradient("RefMerge")(_merge_grad)


@RegisterGradient("Exit")
def _exit_grad(op: Operation, grad: Any) -> Any:
    graph = graph_mod.get_default_graph()
    op_ctxt = op._get_control_flow_context()
    grad_ctxt = graph._get_control_flow_context()
    if not grad_ctxt.back_prop:
        return None
    if op_ctxt.grad_state is not None:
        raise TypeError("Second-order gradient for while loops not supported.")
    grad = _dense(grad)
    grad_ctxt.AddName(grad.name)
    grad_ctxt.Enter()
    result = util.enter(grad, grad_ctxt.name, is_constant=False,
                        parallel_iterations=grad_ctxt.parallel_iterations, name="b_exit")
    grad_ctxt.loop_enters.append(result)
    grad_ctxt.Exit()
    return result


RegisterGradient("RefExit")(_exit_grad)


@RegisterGradient("NextIteration")
def _next_iteration_grad(op: Operation, grad: Any) -> Any:
    return grad


RegisterGradient("RefNextIteration")(_next_iteration_grad)


@RegisterGradient("Enter")
def _enter_grad(op: Operation, grad: Any) -> Any:
    graph = graph_mod.get_default_graph()
    grad_ctxt = graph._get_control_flow_context()
    if grad_ctxt is None or not grad_ctxt.back_prop or grad_ctxt.grad_state is None:
        return grad
    if op.get_attr("is_constant"):
        grad = _dense(grad)
        if not isinstance(grad, Tensor):
            raise TypeError(f"Type {type(grad)} not supported, must be Tensor or IndexedSlices")
        return control_flow_state.add_backprop_accumulator(grad_ctxt, op, grad)
    result = util.exit(_dense(grad))
    grad_ctxt.loop_exits.append(result)
    grad_ctxt.ExitResult([result])
    return result


RegisterGradient("RefEnter")(_enter_grad)
no_gradient("LoopCond")
no_gradient("ControlTrigger")
no_gradient("StackV2")
no_gradient("StackPushV2")
no_gradient("StackPopV2")
no_gradient("StackCloseV2")
