"""Control-flow contexts: `CondContext` and `WhileContext` (TF 1.x `control_flow_ops`).

While a branch or a loop body is built, its context is the graph's current control-flow
context, and `Graph.create_op` hands every new op to `AddOp`: tensors from outside reach a
branch through a `Switch` on the predicate and a loop through an `Enter` (a loop
invariant), ops without inputs get a control input from the context's pivot (so they run
only in the taken branch, or once per iteration), and control inputs from outside a loop
are pulled in as data through an `Identity` (they would otherwise cross the frame).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework import nest
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tensorweave.ops import array_ops
from tensorweave.ops import control_flow_util as util
from tensorweave.ops.control_dependency_ops import with_dependencies
from tensorweave.ops.tensor_array_ops import TensorArray, build_ta_with_new_flow


class ControlFlowContext:
    """The base of cond and while contexts: the values known inside, and the outer one."""

    def __init__(self) -> None:
        self._outer_context = graph_mod.get_default_graph()._get_control_flow_context()
        self._context_stack: list[Any] = []
        self._values: set[str] = set()
        self._external_values: dict[str, Tensor] = {}

    @property
    def outer_context(self) -> Any:
        """The enclosing context, or None."""
        return self._outer_context

    @property
    def grad_state(self) -> Any:
        """The gradient-loop state of a gradient while context (None otherwise)."""
        return None

    @property
    def back_prop(self) -> bool:
        """Whether gradients may flow through this context."""
        return True

    def IsCondContext(self) -> bool:  # noqa: N802
        """True for a cond branch context."""
        return False

    def IsWhileContext(self) -> bool:  # noqa: N802
        """True for a while context."""
        return False

    def GetWhileContext(self) -> Any:  # noqa: N802
        """The innermost enclosing while context (itself included), or None."""
        return self._outer_context.GetWhileContext() if self._outer_context else None

    def GetCondContext(self) -> Any:  # noqa: N802
        """The innermost enclosing cond context (itself included), or None."""
        return self._outer_context.GetCondContext() if self._outer_context else None

    def GetControlPivot(self) -> Any:  # noqa: N802
        """The tensor ops without inputs are pinned to, or None."""
        return None

    def AddName(self, name: str) -> None:  # noqa: N802
        """Records a tensor name as known in this context."""
        self._values.add(name)

    def Enter(self) -> None:  # noqa: N802
        """Makes this the graph's current context."""
        g = graph_mod.get_default_graph()
        self._context_stack.append(g._get_control_flow_context())
        g._set_control_flow_context(self)

    def Exit(self) -> None:  # noqa: N802
        """Restores the context that was current before `Enter`."""
        graph_mod.get_default_graph()._set_control_flow_context(self._context_stack.pop())

    def ExitResult(self, result: Any) -> None:  # noqa: N802
        """Makes `result` (tensors) known to the outer context."""
        if self._outer_context is not None:
            for x in nest.flatten(result):
                if isinstance(x, Tensor):
                    self._outer_context.AddName(x.name)

    def AddInnerOp(self, op: Operation) -> None:  # noqa: N802
        """Notes an op built in an inner context (passed outward)."""
        if self._outer_context is not None:
            self._outer_context.AddInnerOp(op)

    def _RemoveExternalControlEdges(self, op: Operation):  # noqa: N802
        """Drops control inputs from outside the enclosing while loop; returns
        (internal, external)."""
        while_ctx = self.GetWhileContext()
        if while_ctx is None:
            return list(op.control_inputs), []
        internal, external = [], []
        for x in op.control_inputs:
            ctx = util.get_output_context(x)
            if ctx is not None and ctx.GetWhileContext() is while_ctx:
                internal.append(x)
            else:
                external.append(x)
        if len(internal) != len(op.control_inputs):
            op._remove_all_control_inputs()
            op._add_control_inputs(internal)
        return internal, external


class CondContext(ControlFlowContext):
    """The context of one branch of a `cond` (TF 1.x `CondContext`).

    Args:
      pred: the bool scalar predicate (`cond/pred_id`).
      pivot: the branch's pivot (`cond/switch_t` or `cond/switch_f`).
      branch: 1 for the true branch, 0 for the false one.
    """

    def __init__(self, pred: Tensor, pivot: Tensor, branch: int):
        super().__init__()
        self._pred, self._pivot, self._branch = pred, pivot, branch
        self._values.add(pred.name)
        self._external_values[pred.name] = pred
        self._values.add(pivot.name)
        pivot.op._set_control_flow_context(self)

    @property
    def pred(self) -> Tensor:
        """The predicate (`cond/pred_id`)."""
        return self._pred

    @property
    def pivot(self) -> Tensor:
        """The pivot tensor."""
        return self._pivot

    @property
    def branch(self) -> int:
        """1 for the true branch, 0 for the false one."""
        return self._branch

    def IsCondContext(self) -> bool:  # noqa: N802
        """True for a cond branch context."""
        return True

    def GetCondContext(self) -> Any:  # noqa: N802
        """Itself."""
        return self

    def GetControlPivot(self) -> Any:  # noqa: N802
        """The tensor ops without inputs are pinned to, or None."""
        return self._pivot

    def AddValue(self, val: Tensor) -> Tensor:  # noqa: N802
        """`val` as seen inside this branch: through a `Switch` when it comes from outside."""
        if val.name in self._values:
            return self._external_values.get(val.name, val)
        result = val
        self._values.add(val.name)
        if self._outer_context is not None:
            result = self._outer_context.AddValue(val)
            self._values.add(result.name)
            self._external_values[result.name] = result
        g = graph_mod.get_default_graph()
        with g.control_dependencies(None):
            result = util.switch_ref_or_tensor(result, self._pred)[self._branch]
            if self._outer_context is not None:
                self._outer_context.AddInnerOp(result.op)
        result.op._set_control_flow_context(self)
        ctx = self
        while ctx is not None:
            ctx._values.add(result.name)
            ctx = ctx._outer_context
        self._external_values[val.name] = result
        return result

    def AddOp(self, op: Operation) -> None:  # noqa: N802
        """Routes `op`'s outside inputs through Switches (or pins it to the pivot)."""
        if not op.inputs:
            self._RemoveExternalControlEdges(op)
            if not any(util.get_output_context(c) is self or
                       (c._get_control_flow_context() is self) for c in op.control_inputs):
                op._add_control_input(self._pivot.op)
        else:
            for index, x in enumerate(op.inputs):
                if util.is_merge(op) and util.is_next_iteration(x.op):
                    continue
                real_x = self.AddValue(x)
                if real_x is not x:
                    op._update_input(index, real_x)
            self._RemoveExternalControlEdges(op)
        ctx = self
        while ctx is not None:
            ctx._values.update(t.name for t in op.outputs)
            ctx = ctx._outer_context
        if self._outer_context is not None:
            self._outer_context.AddInnerOp(op)

    def _ProcessOutputTensor(self, val: Tensor) -> Tensor:  # noqa: N802
        real_val = val
        if val.name not in self._values:
            # NOTE: a branch that returns an outside tensor as it is (`lambda: x`).
            self._values.add(val.name)
            if self._outer_context is not None:
                real_val = self._outer_context.AddValue(val)
                self._values.add(real_val.name)
                self._external_values[real_val.name] = real_val
            real_val = util.switch_ref_or_tensor(real_val, self._pred)[self._branch]
            self._external_values[val.name] = real_val
        else:
            real_val = self._external_values.get(val.name, val)
        return real_val

    def BuildCondBranch(self, fn: Any):  # noqa: N802
        """Calls `fn` inside this context; returns (its result, the flat branch tensors)."""
        original = fn()
        if original is None:
            return None, None

        def build(v: Any) -> Tensor:
            if isinstance(v, Operation):
                return with_dependencies([v], self._pivot)
            if isinstance(v, TensorArray):
                v = v.flow
            return self._ProcessOutputTensor(convert_to_tensor(v))

        result = nest.map_structure(build, original)
        if not isinstance(result, list | tuple):
            result = [result]
        return original, result


def shape_less_than_or_equal(a: TensorShape, b: TensorShape) -> bool:
    """True when `a` is at least as specific as `b` everywhere (TF's
    `_ShapeLessThanOrEqual`)."""
    if b.dims is None:
        return True
    if a.ndims != b.ndims:
        return False
    return all(y.value is None or x.value == y.value
               for x, y in zip(a.dims, b.dims, strict=True))


class WhileContext(ControlFlowContext):
    """The context of one `while_loop` (TF 1.x `WhileContext`); its name is the frame name
    of the loop's `Enter` ops (`while/while_context`)."""

    def __init__(self, maximum_iterations: Any = None, parallel_iterations: int = 10,
                 back_prop: bool = True, swap_memory: bool = False,
                 name: str = "while_context", grad_state: Any = None):
        super().__init__()
        self._name = graph_mod.get_default_graph().unique_name(name)
        self._maximum_iterations = maximum_iterations
        self._parallel_iterations = parallel_iterations
        self._back_prop = back_prop
        self._swap_memory = swap_memory
        self._pivot_for_pred: Tensor | None = None
        self._pivot_for_body: Tensor | None = None
        self._pivot: Tensor | None = None
        self._loop_exits: list[Tensor] = []
        self._loop_enters: list[Tensor] = []
        self._grad_state = grad_state

    @property
    def name(self) -> str:
        """The frame name of the loop."""
        return self._name

    @property
    def maximum_iterations(self) -> Any:
        """The iteration limit tensor, or None."""
        return self._maximum_iterations

    @property
    def parallel_iterations(self) -> int:
        """How many iterations may run at once."""
        return self._parallel_iterations

    @property
    def back_prop(self) -> bool:
        """Whether gradients flow through the loop."""
        return self._back_prop

    @property
    def swap_memory(self) -> bool:
        """Accepted for TensorFlow compatibility."""
        return self._swap_memory

    @property
    def pivot(self) -> Tensor | None:
        """The `LoopCond` output (the loop predicate)."""
        return self._pivot

    @property
    def loop_enters(self) -> list[Tensor]:
        """The `Enter` tensors of the loop variables."""
        return self._loop_enters

    @property
    def loop_exits(self) -> list[Tensor]:
        """The `Exit` tensors of the loop variables."""
        return self._loop_exits

    @property
    def grad_state(self) -> Any:
        """The gradient-loop state (gradient loops only)."""
        return self._grad_state

    def IsWhileContext(self) -> bool:  # noqa: N802
        """True for a while context."""
        return True

    def GetWhileContext(self) -> Any:  # noqa: N802
        """Itself."""
        return self

    def GetControlPivot(self) -> Any:  # noqa: N802
        """The tensor ops without inputs are pinned to, or None."""
        return self._pivot_for_body if self._pivot_for_body is not None else self._pivot_for_pred

    def AddValue(self, val: Tensor) -> Tensor:  # noqa: N802
        """`val` as seen inside the loop: through an `Enter` (a loop invariant) when it
        comes from outside; in a gradient loop, a forward value is popped from its stack."""
        result = val
        new_value = val.name not in self._values and val.op._control_flow_context is not self
        if new_value:
            self._values.add(val.name)
            grad_ctx = graph_mod.get_default_graph()._get_control_flow_context()
            grad_ctx = grad_ctx.GetWhileContext() if grad_ctx is not None else None
            if grad_ctx is not None and grad_ctx.grad_state is not None:
                forward_ctx = util.get_while_context(val.op)
                if util.is_loop_exit(val.op) and forward_ctx is not None:
                    forward_ctx = forward_ctx.outer_context
                    forward_ctx = forward_ctx.GetWhileContext() if forward_ctx else None
                if forward_ctx is grad_ctx.grad_state.forward_context:
                    real_val = grad_ctx.grad_state.GetRealValue(val)
                    self._external_values[val.name] = real_val
                    return real_val
            if self._outer_context is not None:
                result = self._outer_context.AddValue(val)
            g = graph_mod.get_default_graph()
            with g.control_dependencies(None):
                result = util.enter(result, self._name, is_constant=True,
                                    parallel_iterations=self._parallel_iterations)
                g.prevent_feeding(result)
                if self._outer_context is not None:
                    self._outer_context.AddInnerOp(result.op)
            self._fix_control_inputs_and_context([result])
            self._values.add(result.name)
            self._external_values[val.name] = result
        else:
            result = self._external_values.get(val.name, val)
        return result

    def AddOp(self, op: Operation) -> None:  # noqa: N802
        """Routes `op`'s outside inputs through `Enter`s and ties it to the iteration."""
        if not op.inputs:
            control_inputs, external = self._RemoveExternalControlEdges(op)
            if not control_inputs:
                op._add_control_input(self.GetControlPivot().op)
        else:
            for index, x in enumerate(op.inputs):
                real_x = self.AddValue(x)
                if real_x is not x:
                    op._update_input(index, real_x)
            _, external = self._RemoveExternalControlEdges(op)
            self._MaybeAddControlDependency(op)
        if external:
            g = graph_mod.get_default_graph()
            with g.control_dependencies(None):
                self.Enter()
                idents = [array_ops.identity(x.outputs[0]).op for x in external if x.outputs]
                self.Exit()
            op._add_control_inputs(idents)
        self._values.update(t.name for t in op.outputs)
        if self._outer_context is not None or not util.is_loop_exit(op):
            op.graph.prevent_fetching(op)
            for t in op.outputs:
                op.graph.prevent_feeding(t)
        if self._outer_context is not None:
            self._outer_context.AddInnerOp(op)

    def _fix_control_inputs_and_context(self, enters: list[Tensor]) -> None:
        """Gives each `Enter` the control inputs active where the loop is built that belong
        to an enclosing context up to the enclosing loop (TF's
        `_FixControlInputsAndContext`), and this context."""
        g = graph_mod.get_default_graph()
        outer_while = self._outer_context.GetWhileContext() if self._outer_context else None
        for e in enters:
            keep = []
            for c in g._control_inputs_for([e.op.inputs[0]]):
                op_ctx, ctx = util.get_output_context(c), self._outer_context
                while ctx is not op_ctx:
                    if ctx is None or ctx is outer_while:
                        break
                    ctx = ctx.outer_context
                else:
                    keep.append(c)
            e.op._set_control_flow_context(self)
            e.op._add_control_inputs(keep)

    def _MaybeAddControlDependency(self, op: Operation) -> None:  # noqa: N802
        """Ties an op whose only inputs are loop invariants to the iteration (else it would
        run once, in iteration 0)."""
        if op.control_inputs or self.GetControlPivot() is None:
            return
        if all(util.is_loop_constant_enter(x.op) for x in op.inputs):
            op._add_control_input(self.GetControlPivot().op)

    # ------------------------------------------------------------------ building
    def BuildLoop(self, pred: Any, body: Any, loop_vars: Any, shape_invariants: Any,  # noqa: N802
                  return_same_structure: bool = False) -> Any:
        """Adds the loop to the graph; returns the loop's results (`Exit` tensors) shaped
        like `loop_vars`."""
        original_loop_vars = loop_vars
        flat = [v.flow if isinstance(v, TensorArray) else convert_to_tensor(v)
                for v in nest.flatten(loop_vars)]
        if shape_invariants is None:
            invariants = [None] * len(flat)
        else:
            nest.assert_same_structure(original_loop_vars, shape_invariants, check_types=False)
            invariants = [None if s is None else as_shape(s)
                          for s in nest.flatten(shape_invariants)]
            flat_orig = nest.flatten(original_loop_vars)
            invariants = [unknown_shape() if isinstance(o, TensorArray) else s
                          for o, s in zip(flat_orig, invariants, strict=True)]
        try:
            self.Enter()
            original_body_result, exit_vars = self._BuildLoop(
                pred, body, original_loop_vars, flat, invariants)
        finally:
            self.Exit()
        flat_result = nest.flatten(original_body_result)
        packed = nest.pack_sequence_as(
            original_body_result, _convert_flows_to_tensorarrays(flat_result, exit_vars))
        if return_same_structure:
            return packed
        return packed[0] if len(exit_vars) == 1 else packed

    def _BuildLoop(self, pred, body, original_loop_vars, loop_vars, invariants):  # noqa: N802
        flat_loop_vars = nest.flatten(original_loop_vars)
        self._values = {x.name for x in loop_vars}
        real_vars = loop_vars
        if self._outer_context is not None:
            real_vars = [self._outer_context.AddValue(x) for x in loop_vars]
        g = graph_mod.get_default_graph()
        with g.control_dependencies(None):
            enter_vars = [util.enter(x, self._name, is_constant=False,
                                     parallel_iterations=self._parallel_iterations,
                                     use_input_shape=True) for x in real_vars]
            for x in enter_vars:
                g.prevent_feeding(x)
                if self._outer_context is not None:
                    self._outer_context.AddInnerOp(x.op)
        outer, control_pivot = self._outer_context, None
        while outer is not None and control_pivot is None:
            control_pivot = outer.GetControlPivot()
            outer = outer.outer_context
        if control_pivot is not None:
            for var in enter_vars:
                if util.is_loop_constant_enter(var.op.inputs[0].op):
                    var.op._add_control_input(control_pivot.op)
        for inp, var, shape in zip(real_vars, enter_vars, invariants, strict=True):
            if shape is None:
                continue
            if not shape_less_than_or_equal(inp.shape, shape):
                raise ValueError(
                    f"The shape invariant specified for {inp.name} is not compatible with the "
                    f"initial shape of the loop variable. It enters the loop with shape "
                    f"{inp.shape}, but the specified shape invariant is {shape}.")
            var._shape = shape
        self._fix_control_inputs_and_context(enter_vars)
        self._values = {x.name for x in enter_vars}
        self._loop_enters = enter_vars
        merge_vars = [util.merge([x, x])[0] for x in enter_vars]
        self._pivot_for_pred = merge_vars[0]
        packed_vars = nest.pack_sequence_as(
            original_loop_vars, _convert_flows_to_tensorarrays(flat_loop_vars, merge_vars))
        c = convert_to_tensor(pred(*packed_vars))
        self._pivot = util.loop_cond(c, name="LoopCond")
        switch_vars = [util.switch_ref_or_tensor(x, self._pivot) for x in merge_vars]
        vars_for_body = [array_ops.identity(x[1]) for x in switch_vars]
        self._pivot_for_body = vars_for_body[0]
        packed_for_body = nest.pack_sequence_as(
            original_loop_vars, _convert_flows_to_tensorarrays(flat_loop_vars, vars_for_body))
        body_result = body(*packed_for_body)
        if not nest.is_sequence(body_result):
            body_result = [body_result]
        nest.assert_same_structure(list(packed_for_body), list(body_result), check_types=False)
        original_body_result = body_result
        result = [v.flow if isinstance(v, TensorArray) else convert_to_tensor(v)
                  for v in nest.flatten(body_result)]
        if len(merge_vars) != len(result):
            raise ValueError("Number of inputs and outputs of body must match loop_vars: "
                             f"{len(merge_vars)}, {len(result)}")
        for m, v in zip(merge_vars, result, strict=True):
            _add_next_and_back_edge(m, v)
        exit_vars = [util.exit(x[0]) for x in switch_vars]
        self._loop_exits = exit_vars
        self.ExitResult(exit_vars)
        return original_body_result, exit_vars


def _add_next_and_back_edge(m: Tensor, v: Tensor, enforce_shape: bool = True) -> Tensor:
    if v.dtype.base_dtype != m.dtype.base_dtype:
        raise TypeError(
            f"Loop variable {m.op.inputs[0].op.inputs[0].name} enters the loop as "
            f"{m.dtype.base_dtype.name} but the body returns {v.dtype.base_dtype.name}")
    v = util.next_iteration(v)
    if enforce_shape and not shape_less_than_or_equal(v.shape, m.shape):
        input_t = m.op.inputs[0].op.inputs[0]
        raise ValueError(
            f"Input tensor '{input_t.name}' enters the loop with shape {input_t.shape}, but "
            f"has shape {v.shape} after one iteration. To allow the shape to vary across "
            "iterations, use the `shape_invariants` argument of tf.while_loop to specify a "
            "less-specific shape.")
    m.op._update_input(1, v)
    return v


def _convert_flows_to_tensorarrays(tensors_or_arrays: list[Any], flows: list[Any]) -> list[Any]:
    return [build_ta_with_new_flow(ta, f) if isinstance(ta, TensorArray) else f
            for ta, f in zip(tensors_or_arrays, flows, strict=True)]
