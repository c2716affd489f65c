"""Gradient loops for `while_loop` (TF 1.x `control_flow_state` and the gradient parts
of `WhileContext`).

For each forward loop between xs and ys, `gradients()` builds a gradient loop that runs
as many iterations backwards: a forward counter (`f_count`) counts the iterations, a
backprop counter (`b_count`) counts them down. A forward value the gradient needs is
pushed onto a stack (`StackV2`/`StackPushV2`, named `f_acc`) in each forward iteration and
popped (`StackPopV2`) in the matching gradient iteration; pushes and pops are ordered by
control edges (and the `f_sync`/`b_sync` `ControlTrigger`s). Gradients of loop invariants
are summed across iterations by an accumulator loop (`b_acc`).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes, tensor_util
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops import control_flow_util as util
from tensorweave.ops.constant_op import constant
from tensorweave.ops.control_flow_ctx import CondContext, WhileContext


def _stack_v2(elem_type: Any, name: str) -> Tensor:
    max_size = constant(-1, dtypes.int32)
    return apply_op("StackV2", max_size=max_size, elem_type=elem_type, name=name)


def _stack_push(handle: Tensor, elem: Tensor, swap_memory: bool) -> Tensor:
    return apply_op("StackPushV2", handle=handle, elem=elem, swap_memory=swap_memory)


def _stack_pop(handle: Tensor, elem_type: Any) -> Tensor:
    return apply_op("StackPopV2", handle=handle, elem_type=elem_type)


# ------------------------------------------------------- WhileContext additions
def add_forward_loop_counter(ctx: WhileContext, outer_grad_state: Any):
    """Adds `f_count` to the forward loop; returns (total iterations, the counter's
    NextIteration)."""
    n = constant(0, name="f_count")
    if outer_grad_state is not None:
        n.op._add_control_input(outer_grad_state.forward_index.op.inputs[0].op)
    ctx.Enter()
    ctx.AddName(n.name)
    enter_n = util.enter(n, ctx.name, is_constant=False,
                         parallel_iterations=ctx.parallel_iterations, name="f_count")
    ctx.loop_enters.append(enter_n)
    merge_n = util.merge([enter_n, enter_n])[0]
    switch_n = util.switch(merge_n, ctx.pivot)
    index = math_ops.add(switch_n[1], 1)
    next_n = util.next_iteration(index)
    merge_n.op._update_input(1, next_n)
    total = util.exit(switch_n[0], name="f_count")
    ctx.loop_exits.append(total)
    ctx.ExitResult([total])
    ctx.Exit()
    return total, next_n


def add_backprop_loop_counter(ctx: WhileContext, count: Tensor, outer_grad_state: Any):
    """Adds `b_count` (counting `count` down to 0) to the gradient loop and makes it the
    loop's predicate; returns its NextIteration."""
    one = constant(1, name="b_count")
    ctx.Enter()
    ctx.AddName(count.name)
    enter_count = util.enter(count, ctx.name, is_constant=False,
                             parallel_iterations=ctx.parallel_iterations, name="b_count")
    ctx.loop_enters.append(enter_count)
    merge_count = util.merge([enter_count, enter_count])[0]
    ctx._pivot_for_pred = merge_count
    pred = math_ops.greater_equal(merge_count, one)
    ctx._pivot = util.loop_cond(pred, name="b_count")
    switch_count = util.switch(merge_count, ctx._pivot)
    index = math_ops.subtract(switch_count[1], one)
    ctx._pivot_for_body = index
    next_count = util.next_iteration(index)
    merge_count.op._update_input(1, next_count)
    final_zero = util.exit(switch_count[0], name="b_count")
    ctx.loop_exits.append(final_zero)
    if outer_grad_state is not None:
        outer_grad_state.grad_sync._add_control_input(final_zero.op)
    ctx.ExitResult([final_zero])
    ctx.Exit()
    return next_count


def add_backprop_accumulator(ctx: WhileContext, op: Operation, grad: Tensor) -> Tensor:
    """Sums the gradient of loop invariant `op` (an `Enter`) over the gradient loop's
    iterations (`b_acc`); returns the sum after the loop."""
    ctx.Exit()
    outer = ctx.outer_context
    shape = grad.shape
    if shape.is_fully_defined():
        if outer is not None:
            outer.Enter()
        acc = constant(0, grad.dtype, shape=shape.as_list(), name="b_acc")
        if outer is not None:
            outer.Exit()
    else:
        value = op.inputs[0]
        if isinstance(outer, WhileContext) and outer.grad_state is not None:
            forward_ctx = ctx.grad_state.forward_context
            forward_ctx.outer_context.Enter()
            zeros_shape = array_ops.shape(value)
            forward_ctx.outer_context.Exit()
            outer_grad_state = ctx.grad_state.outer_grad_state
            history = outer_grad_state.AddForwardAccumulator(zeros_shape)
            outer.Enter()
            real_shape = outer_grad_state.AddBackpropAccumulatedValue(history, zeros_shape)
            acc = array_ops.zeros(real_shape, grad.dtype)
            outer.Exit()
        else:
            if outer is not None:
                outer.Enter()
            acc = array_ops.zeros(array_ops.shape(value), grad.dtype)
            if outer is not None:
                outer.Exit()
    ctx.Enter()
    ctx.AddName(acc.name)
    enter_acc = util.enter(acc, ctx.name, is_constant=False,
                           parallel_iterations=ctx.parallel_iterations, name="b_acc")
    ctx.loop_enters.append(enter_acc)
    merge_acc = util.merge([enter_acc, enter_acc], name="b_acc")[0]
    switch_false, switch_true = util.switch(merge_acc, ctx.pivot)
    add_acc = math_ops.add(switch_true, grad)
    next_acc = util.next_iteration(add_acc)
    merge_acc.op._update_input(1, next_acc)
    result = util.exit(switch_false, name="b_acc")
    ctx.loop_exits.append(result)
    ctx.ExitResult([result])
    return result


# --------------------------------------------------------------- _GradLoopState
class GradLoopState:
    """The gradient loop of one forward loop (TF's `_GradLoopState`)."""

    def __init__(self, forward_ctxt: WhileContext, outer_grad_state: GradLoopState | None):
        self.outer_grad_state = outer_grad_state
        self.forward_context = forward_ctxt
        self.history_map: dict[str, Tensor] = {}
        self.switch_map: dict[Operation, Tensor] = {}
        self.unused_exits: list[Tensor] = []
        self.deferred_exits: list[Tensor] = []
        self.forward_loop_exits = list(forward_ctxt.loop_exits)
        self.pending_exits_count = len(forward_ctxt.loop_exits)
        self._forward_sync: Operation | None = None
        self._grad_sync: Operation | None = None
        if outer_grad_state is not None:
            outer_forward_ctxt = outer_grad_state.forward_context
        else:
            outer_forward_ctxt = forward_ctxt.outer_context
        if outer_forward_ctxt is not None:
            outer_forward_ctxt.Enter()
        cnt, self.forward_index = add_forward_loop_counter(forward_ctxt, outer_grad_state)
        if outer_forward_ctxt is not None:
            outer_forward_ctxt.Exit()
        kwargs = dict(maximum_iterations=forward_ctxt.maximum_iterations,
                      parallel_iterations=forward_ctxt.parallel_iterations,
                      back_prop=forward_ctxt.back_prop, swap_memory=forward_ctxt.swap_memory,
                      name=forward_ctxt.name, grad_state=self)
        if outer_grad_state is not None:
            outer_forward_ctxt.AddName(cnt.name)
            history_cnt = outer_grad_state.AddForwardAccumulator(cnt)
            outer_grad_ctxt = outer_grad_state.grad_context
            outer_grad_ctxt.Enter()
            self.grad_context = WhileContext(**kwargs)
            real_cnt = outer_grad_state.AddBackpropAccumulatedValue(history_cnt, cnt)
            self.grad_index = add_backprop_loop_counter(self.grad_context, real_cnt,
                                                        outer_grad_state)
            outer_grad_ctxt.Exit()
        else:
            if outer_forward_ctxt is not None:
                outer_forward_ctxt.Enter()
            self.grad_context = WhileContext(**kwargs)
            self.grad_index = add_backprop_loop_counter(self.grad_context, cnt,
                                                        outer_grad_state)
            if outer_forward_ctxt is not None:
                outer_forward_ctxt.Exit()

    @property
    def forward_sync(self) -> Operation:
        """A `ControlTrigger` keeping the forward stack pushes in iteration order."""
        if self._forward_sync is None:
            g = graph_mod.get_default_graph()
            with g.control_dependencies(None):
                self._forward_sync = util.control_trigger(name="f_sync")
            self._forward_sync._set_control_flow_context(self.forward_context)
            self.forward_index.op._add_control_input(self._forward_sync)
        return self._forward_sync

    @property
    def grad_sync(self) -> Operation:
        """A `ControlTrigger` keeping the gradient stack pops in iteration order."""
        if self._grad_sync is None:
            g = graph_mod.get_default_graph()
            with g.control_dependencies(None):
                self._grad_sync = util.control_trigger(name="b_sync")
            self._grad_sync._set_control_flow_context(self.grad_context)
            self.grad_index.op._add_control_input(self._grad_sync)
        return self._grad_sync

    def AddForwardAccumulator(self, value: Tensor, dead_branch: bool = False) -> Tensor:  # noqa: N802
        """Pushes `value` in every forward iteration; returns the stack handle."""
        g = graph_mod.get_default_graph()
        curr_ctxt = g._get_control_flow_context()
        with g.control_dependencies(None):
            if curr_ctxt is not None:
                curr_ctxt.Enter()
            with g.colocate_with(value):
                acc = _stack_v2(value.dtype.base_dtype, name="f_acc")
            if curr_ctxt is not None:
                curr_ctxt.Exit()
            enter_acc = self.forward_context.AddValue(acc)
            swap = self.forward_context.swap_memory
            value_ctxt = util.get_output_context(value.op)
            if value_ctxt is self.forward_context:
                self.forward_context.Enter()
                push = _stack_push(enter_acc, value, swap)
                self.forward_context.Exit()
                self.forward_index.op._add_control_input(push.op)
            else:
                if not isinstance(value_ctxt, CondContext):
                    raise TypeError(f"value_ctxt is not a CondContext: {value_ctxt}")
                if dead_branch:
                    value_ctxt.outer_context.Enter()
                    push = _stack_push(enter_acc, value, swap)
                    value_ctxt.outer_context.Exit()
                    push.op._set_control_flow_context(value_ctxt)
                else:
                    value_ctxt.Enter()
                    push = _stack_push(enter_acc, value, swap)
                    value_ctxt.Exit()
                self.forward_sync._add_control_input(push.op)
            push.op._add_control_input(self.forward_index.op.inputs[0].op)
            return acc

    def AddBackpropAccumulatedValue(self, history_value: Tensor, value: Tensor,  # noqa: N802
                                    dead_branch: bool = False) -> Tensor:
        """Pops the value pushed in the matching forward iteration (inside the gradient
        loop; guarded by the forward cond's predicate when `value` was in a branch)."""
        history_ctxt = history_value.op._get_control_flow_context()
        cond_ctxt = None
        value_ctxt = value.op._get_control_flow_context()
        while value_ctxt is not None and value_ctxt is not history_ctxt:
            if isinstance(value_ctxt, CondContext):
                cond_ctxt = value_ctxt
                break
            value_ctxt = value_ctxt.outer_context
        g = graph_mod.get_default_graph()
        with g.control_dependencies(None):
            self.grad_context.Enter()
            if cond_ctxt is not None:
                grad_state, pred = self, None
                while pred is None and grad_state is not None:
                    pred = grad_state.history_map.get(cond_ctxt.pred.name)
                    grad_state = grad_state.outer_grad_state
                if pred is None:
                    pred = cond_ctxt.pred
                branch = (1 - cond_ctxt.branch) if dead_branch else cond_ctxt.branch
                history_value = util.switch_ref_or_tensor(history_value, pred)[branch]
            pop = _stack_pop(history_value, value.dtype.base_dtype)
            pop.set_shape(value.shape)
            self.grad_context.Exit()
        if self.grad_context.parallel_iterations > 1:
            self.grad_sync._add_control_input(pop.op)
        return pop

    def GetRealValue(self, value: Tensor) -> Tensor:  # noqa: N802
        """The value of forward tensor `value` for the current gradient iteration."""
        real_value = self.history_map.get(value.name)
        if real_value is not None:
            return real_value
        cur_value, cur_grad_state, history_value = value, self, None
        while True:
            enter_op = _loop_constant_enter(cur_value)
            if enter_op is not None:
                cur_value = enter_op.inputs[0]
                cur_grad_state = cur_grad_state.outer_grad_state
                if cur_grad_state is None:
                    real_value = self.grad_context.AddValue(cur_value)
                    break
            elif cur_value.op.type == "Const":
                real_value = constant(tensor_util.constant_value(cur_value),
                                      dtype=cur_value.dtype)
                break
            else:
                self.grad_context.Exit()
                history_value = cur_grad_state.AddForwardAccumulator(cur_value)
                self.grad_context.Enter()
                break
        if real_value is None:
            real_value = cur_grad_state.AddBackpropAccumulatedValue(history_value, cur_value)
            if cur_grad_state is not self:
                real_value = self.grad_context.AddValue(real_value)
        self.history_map[value.name] = real_value
        return real_value


def _loop_constant_enter(value: Tensor) -> Operation | None:
    """The loop-invariant `Enter` behind `value` (through Identities), or None."""
    op = value.op
    while op.type in ("Identity", "RefIdentity"):
        op = op.inputs[0].op
    return op if util.is_loop_constant_enter(op) else None


# ------------------------------------------------------------ _ControlFlowState
class ControlFlowState:
    """The gradient loops of one `gradients()` call (TF's `_ControlFlowState`)."""

    def __init__(self) -> None:
        self._map: dict[Any, GradLoopState] = {}

    def GetGradState(self, op: Operation, before: bool) -> GradLoopState | None:  # noqa: N802
        """The gradient-loop state `op`'s gradient is built in."""
        if before and util.is_loop_exit(op):
            forward_ctxt = op._get_control_flow_context().outer_context
            forward_ctxt = forward_ctxt.GetWhileContext() if forward_ctxt else None
        else:
            forward_ctxt = util.get_while_context(op)
        return self._map.get(forward_ctxt) if forward_ctxt is not None else None

    def ProcessUnusedLoopExits(self, pending: dict, to_ops_set: set) -> list[Tensor]:  # noqa: N802
        """Exits no y depends on; they get zero gradients once a loop's others do."""
        loop_exits: list[Tensor] = []
        for grad_state in self._map.values():
            for y in grad_state.forward_loop_exits:
                if pending[y.op] == 0:
                    grad_state.pending_exits_count -= 1
                    if y.op not in to_ops_set:
                        grad_state.unused_exits.append(y)
                    if grad_state.pending_exits_count == 0:
                        loop_exits.extend(grad_state.unused_exits)
            for y in grad_state.forward_context.loop_enters:
                if pending[y.op] == 0:
                    pending[y.op] = 1
        return loop_exits

    def EnterGradWhileContext(self, op: Operation, before: bool) -> None:  # noqa: N802
        """Enters the gradient loop of `op`'s loop, if any."""
        grad_state = self.GetGradState(op, before)
        if grad_state is not None:
            grad_state.grad_context.Enter()

    def ExitGradWhileContext(self, op: Operation, before: bool) -> None:  # noqa: N802
        """Leaves what `EnterGradWhileContext` entered."""
        grad_state = self.GetGradState(op, before)
        if grad_state is not None:
            grad_state.grad_context.Exit()

    def AddWhileContext(self, op: Operation, between_op_list: list, between_ops: set) -> None:  # noqa: N802
        """Creates the gradient loop of `op`'s (an Exit's) loop, once."""
        forward_ctxt = util.get_while_context(op)
        if forward_ctxt in self._map:
            return
        outer_forward_ctxt = forward_ctxt.outer_context
        if outer_forward_ctxt is not None:
            outer_forward_ctxt = outer_forward_ctxt.GetWhileContext()
        outer_grad_state = self._map.get(outer_forward_ctxt) if outer_forward_ctxt else None
        grad_state = GradLoopState(forward_ctxt, outer_grad_state)
        self._map[forward_ctxt] = grad_state
        for loop_exit in grad_state.forward_loop_exits:
            if loop_exit.op not in between_ops:
                between_ops.add(loop_exit.op)
                between_op_list.append(loop_exit.op)

    def ZerosLikeForExit(self, val: Tensor) -> Tensor:  # noqa: N802
        """A zero gradient for an exit that no y depends on."""
        forward_ctxt = val.op._get_control_flow_context()
        outer_forward_ctxt = forward_ctxt.outer_context
        if outer_forward_ctxt is not None:
            outer_forward_ctxt = outer_forward_ctxt.GetWhileContext()
        outer_grad_state = self._map.get(outer_forward_ctxt) if outer_forward_ctxt else None
        shape = val.shape
        if outer_grad_state is None:
            if shape.is_fully_defined():
                return array_ops.zeros(shape.as_list(), val.dtype)
            return array_ops.zeros_like(val)
        outer_grad_ctxt = outer_grad_state.grad_context
        if shape.is_fully_defined():
            outer_grad_ctxt.Enter()
            result = array_ops.zeros(shape.as_list(), val.dtype)
            outer_grad_ctxt.Exit()
            return result
        forward_ctxt.outer_context.Enter()
        zeros_shape = array_ops.shape(val)
        forward_ctxt.outer_context.Exit()
        history = outer_grad_state.AddForwardAccumulator(zeros_shape)
        outer_grad_ctxt.Enter()
        real_shape = outer_grad_state.AddBackpropAccumulatedValue(history, zeros_shape)
        result = array_ops.zeros(real_shape, val.dtype)
        outer_grad_ctxt.Exit()
        return result

    def ZerosLike(self, op: Operation, index: int) -> Tensor | None:  # noqa: N802
        """A zero gradient for output `index` of `op` (in its gradient loop context)."""
        if util.is_loop_switch(op):
            return None
        dead_branch = util.is_switch(op)
        forward_ctxt = util.get_while_context(op)
        grad_state = self._map.get(forward_ctxt) if forward_ctxt is not None else None
        if grad_state is None:
            return zeros_like_outside_loop(op, index)
        op_ctxt = op._get_control_flow_context()
        val = convert_to_tensor(op.outputs[index], name="tensor")
        shape = val.shape
        if shape.is_fully_defined():
            result = constant(0, shape=shape.as_list(), dtype=val.dtype)
            if dead_branch:
                pred = grad_state.history_map.get(op_ctxt.pred.name)
                result = util.switch_ref_or_tensor(result, pred)[1 - op_ctxt.branch]
            return result
        if dead_branch:
            pred, branch = op_ctxt.pred, op_ctxt.branch
            op_ctxt.outer_context.Enter()
            val = util.switch_ref_or_tensor(op.inputs[0], pred)[1 - branch]
            zeros_shape = array_ops.shape(val)
            op_ctxt.outer_context.Exit()
            val.op._set_control_flow_context(op_ctxt)
            zeros_shape.op._set_control_flow_context(op_ctxt)
        else:
            op_ctxt.Enter()
            zeros_shape = array_ops.shape(val)
            op_ctxt.Exit()
        grad_state.grad_context.Exit()
        history = grad_state.AddForwardAccumulator(zeros_shape, dead_branch=dead_branch)
        grad_state.grad_context.Enter()
        real_shape = grad_state.AddBackpropAccumulatedValue(history, zeros_shape, dead_branch)
        return array_ops.zeros(real_shape, val.dtype)

    def PostProcessing(self) -> None:  # noqa: N802
        """Gives zero gradients to iterations > 0 of a loop variable whose next value does
        not depend on its previous one."""
        for grad_state in self._map.values():
            for b_merge in grad_state.switch_map.values():
                if b_merge.op.inputs[0] is not b_merge.op.inputs[1]:
                    continue
                dtype = b_merge.op.inputs[0].dtype
                shape = b_merge.op.inputs[0].shape
                if shape.is_fully_defined():
                    grad_state.grad_context.Enter()
                    grad_val = constant(0, dtype=dtype, shape=shape.as_list())
                    next_grad_val = util.next_iteration(grad_val)
                    grad_state.grad_context.Exit()
                else:
                    outer = grad_state.grad_context.outer_context
                    if outer is not None:
                        outer.Enter()
                    enter_grad = b_merge.op.inputs[0].op.inputs[0]
                    grad_val = array_ops.zeros(array_ops.shape(enter_grad), dtype)
                    if outer is not None:
                        outer.Exit()
                    grad_state.grad_context.Enter()
                    next_grad_val = util.next_iteration(grad_val)
                    grad_state.grad_context.Exit()
                b_merge.op._update_input(1, next_grad_val)


def maybe_create_control_flow_state(between_op_list: list, between_ops: set,
                                    colocate: bool) -> ControlFlowState | None:
    """A `ControlFlowState` when loops lie between xs and ys, else None."""
    loop_state = None
    for op in list(between_op_list):
        if util.is_loop_exit(op):
            if loop_state is None:
                loop_state = ControlFlowState()
            if colocate:
                with op.graph.colocate_with(op):
                    loop_state.AddWhileContext(op, between_op_list, between_ops)
            else:
                loop_state.AddWhileContext(op, between_op_list, between_ops)
    return loop_state


def zeros_like_outside_loop(op: Operation, index: int) -> Tensor:
    """Zeros like output `index` of `op`; for a cond `Switch`, built only when the other
    branch is taken."""
    val = op.outputs[index]
    if not util.is_switch(op):
        return array_ops.zeros_like(val)
    op_ctxt = op._get_control_flow_context()
    if op_ctxt is None or not op_ctxt.IsCondContext():
        return array_ops.zeros_like(val)
    switch_val = util.switch(op.inputs[0], op_ctxt.pred)[1 - op_ctxt.branch]
    pivot = array_ops.identity(switch_val)
    zeros_shape = array_ops.shape(switch_val)
    with op.graph.control_dependencies([pivot]):
        return array_ops.zeros(zeros_shape, dtype=val.dtype)
