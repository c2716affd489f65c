"""The gradient registry and `tf.gradients` (reverse-mode differentiation over a Graph).

Gradient functions are registered per op type with `@RegisterGradient("OpType")` (in
`gradient_registry`, re-exported here); a function `grad_fn(op, *output_grads)` returns one
gradient per op input (a Tensor, an `IndexedSlices`, or None). `no_gradient("OpType")`
declares an op not differentiable.

`gradients()` follows TensorFlow 1.x's `gradients_util._GradientsHelper`: it visits the ops
between `xs` and `ys` in reverse, each once all of its consumers have been visited, sums
the gradients that fan-out produces, and calls each op's gradient function under
`<gradients scope>/<op name>_grad`. Through a `while_loop` it builds a gradient loop
(`control_flow_state`); function-call ops are not supported.

Deviation from TensorFlow: when one tensor receives both dense and `IndexedSlices`
gradients, they are summed as a dense tensor (TensorFlow turns the dense ones into
`IndexedSlices` over every row, which costs more and is rarely what the consumer wants).
Gradients flowing into integer (or other non-float) tensors are dropped, so those `xs`
always get None.

Summing the gradients of one tensor (`AggregationMethod`) and densifying `IndexedSlices`
live in `gradient_aggregation`.
"""

from __future__ import annotations

import collections
import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, control_flow_ops, control_flow_state, control_flow_util
from tensorweave.ops.constant_op import constant
from tensorweave.ops.gradient_aggregation import (
    AGGREGATION_METHODS,
    AggregationMethod,
    aggregate_gradients,
)
from tensorweave.ops.gradient_registry import (  # noqa: F401  (re-exported: tf.RegisterGradient, ...)
    NoGradient,
    NotDifferentiable,
    RegisterGradient,
    get_gradient_function,
    gradient_registry,
    no_gradient,
)

_LOG = logging.getLogger(__name__)

# Element types whose tensors carry gradients (TF's `IsTrainable`).
_TRAINABLE = frozenset(
    (
        dtypes.float16,
        dtypes.float32,
        dtypes.float64,
        dtypes.complex64,
        dtypes.complex128,
        dtypes.resource,
        dtypes.variant,
    )
)


# ------------------------------------------------------------------- small helpers
def _as_list(x: Any) -> list[Any]:
    return list(x) if isinstance(x, list | tuple) else [x]


def _is_trainable(t: Any) -> bool:
    return t.dtype.base_dtype in _TRAINABLE


@contextlib.contextmanager
def _maybe_colocate_with(op: Operation, colocate: bool) -> Iterator[None]:
    if colocate:
        with op.graph.colocate_with(op):
            yield
    else:
        yield


def _to_tensor(value: Any, name: str, as_ref: bool = False) -> Tensor:
    if isinstance(value, IndexedSlices):
        raise TypeError(f"gradients() does not accept IndexedSlices as {name}: {value!r}")
    return convert_to_tensor(value, name=name, as_ref=as_ref)


def _graph_element_op(value: Any) -> Operation:
    if hasattr(value, "_as_graph_element"):
        value = value._as_graph_element()
    if isinstance(value, Tensor):
        return value.op
    if isinstance(value, Operation):
        return value
    raise TypeError(f"stop_gradients must hold Tensors or Variables, got {value!r}")


# ------------------------------------------------------------- the ops in between
def _mark_reached_ops(from_ops: list[Operation]) -> set[Operation]:
    """Ops reachable from `from_ops` through tensors that can carry a gradient."""
    reached: set[Operation] = set()
    queue = collections.deque(from_ops)
    while queue:
        op = queue.popleft()
        if op in reached:
            continue
        reached.add(op)
        for out in op.outputs:
            if _is_trainable(out):
                queue.extend(out.consumers())
    return reached


def _pending_count(
    to_ops: list[Operation], from_ops: list[Operation], colocate: bool
) -> tuple[set[Operation], dict[Operation, int], Any]:
    """Reachable to_ops, per op between from_ops and to_ops its consumers in between, and
    the gradient-loop state when while loops lie in between (else None).

    Follows TF's `_PendingCount`.
    """
    reached = _mark_reached_ops(from_ops)
    reachable_to_ops = {op for op in to_ops if op in reached}
    between: list[Operation] = []
    queue = collections.deque(to_ops)
    while queue:
        op = queue.popleft()
        if op in reached:
            between.append(op)
            reached.remove(op)
            queue.extend(t.op for t in op.inputs)
    between_set = set(between)
    loop_state = control_flow_state.maybe_create_control_flow_state(
        between, between_set, colocate)
    pending: dict[Operation, int] = collections.defaultdict(int)
    for op in between:
        for t in op.inputs:
            if t.op in between_set:
                pending[t.op] += 1
    return reachable_to_ops, pending, loop_state


def _stop_ops(
    from_ops: list[Operation], stop_gradient_ops: list[Operation], pending: dict[Operation, int]
) -> set[Operation]:
    """Ops never differentiated: from_ops without a predecessor in between, and stop ops.

    Follows TF's `_StopOps`; `StopGradient` ops are skipped by `_Backprop` itself.
    """
    stop = {op for op in from_ops if all(pending[t.op] == 0 for t in op.inputs)}
    stop.update(stop_gradient_ops)
    return stop


# ------------------------------------------------------------------------ grad_ys
def _default_grad_ys(grad_ys: list[Any], ys: list[Tensor], colocate: bool) -> list[Any]:
    """Fills in ones for missing `grad_ys` and validates the given ones.

    Follows TF's `_DefaultGradYs`.

    Raises:
      ValueError: if the lengths differ, or a grad_y's dtype or static shape does not fit
        its y.
      TypeError: for ys that are not numeric, or complex ys without a grad_y.
    """
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    result: list[Any] = []
    for i, (y, grad_y) in enumerate(zip(ys, grad_ys)):
        dtype = y.dtype.base_dtype
        if not (dtype.is_floating or dtype.is_complex or dtype.is_integer):
            raise TypeError(
                f"Tensor {y} with type {dtype.name} must be numeric to obtain a default gradient"
            )
        with _maybe_colocate_with(y.op, colocate):
            if grad_y is None:
                if dtype.is_complex:
                    raise TypeError(
                        f"Gradients of complex tensors must set grad_ys (y.dtype = {dtype.name})"
                    )
                ones = constant(1, dtype=dtype, name=f"grad_ys_{i}")
                result.append(array_ops.fill(array_ops.shape(y), ones))
            elif isinstance(grad_y, IndexedSlices):
                result.append(_identity_slices(grad_y, i))
            else:
                grad_y = convert_to_tensor(grad_y, name="grad_y", preferred_dtype=dtype)
                _check_grad_y(i, y, grad_y)
                result.append(array_ops.identity(grad_y, name=f"grad_ys_{i}"))
    return result


def _check_grad_y(i: int, y: Tensor, grad_y: Tensor) -> None:
    y_type, g_type = y.dtype.base_dtype, grad_y.dtype.base_dtype
    if y_type.is_complex != g_type.is_complex or not (
        g_type.is_floating or g_type.is_integer or g_type.is_complex
    ):
        kind = "complex" if y_type.is_complex else "real or integer"
        raise TypeError(
            f"Gradient type {g_type.name} generated for {kind}-valued tensor {y} with type "
            f"{y_type.name} must be {kind}"
        )
    if g_type != y_type:
        raise ValueError(
            f"grad_ys[{i}] has dtype {g_type.name} but ys[{i}] ({y.name}) has dtype {y_type.name}"
        )
    if not y.shape.is_compatible_with(grad_y.shape):
        raise ValueError(
            f"grad_ys[{i}] has shape {grad_y.shape} which is incompatible with the shape "
            f"{y.shape} of ys[{i}] ({y.name})"
        )


def _identity_slices(grad_y: IndexedSlices, i: int) -> IndexedSlices:

    def ident(t: Any, suffix: str) -> Any:
        if not isinstance(t, Tensor):
            return t
        return array_ops.identity(t, name=f"grad_ys_{i}_{suffix}")

    return IndexedSlices(
        ident(grad_y.values, "values"),
        ident(grad_y.indices, "indices"),
        ident(grad_y.dense_shape, "shape"),
    )


# ------------------------------------------------------------------- back-propagation
class _Backprop:
    """The state of one `gradients()` call.

    Holds the gradients received per op output, the pending consumer counts, and the queue
    of ops whose gradients are complete.
    """

    def __init__(
        self,
        xs: list[Tensor],
        ys: list[Tensor],
        stop_gradient_ops: list[Operation],
        colocate: bool,
        gate: bool,
        aggregation_method: int,
    ):
        self.colocate = colocate
        self.gate = gate
        self.method = aggregation_method
        self.grads: dict[Operation, list[Any]] = {}
        to_ops = [y.op for y in ys]
        from_ops = [x.op for x in xs]
        reachable_to_ops, self.pending, self.loop_state = _pending_count(
            to_ops, from_ops, colocate)
        self.stop = _stop_ops(from_ops, stop_gradient_ops, self.pending)
        self.queue: collections.deque[Operation] = collections.deque()
        self.to_ops_set: set[Operation] = set()
        for op in to_ops:
            if self.pending[op] == 0 and op not in self.to_ops_set and op in reachable_to_ops:
                self.to_ops_set.add(op)
                self.queue.append(op)

    def set_grad(self, t: Tensor, grad: Any) -> None:
        """Records one more gradient received by `t`."""
        op_grads = self.grads.get(t.op)
        if op_grads is None:
            op_grads = self.grads[t.op] = [[] for _ in t.op.outputs]
        if isinstance(op_grads[t.value_index], list):
            op_grads[t.value_index].append(grad)
        else:
            # NOTE: a loop Switch visited twice (TF's `_SetGrad`): the body's gradient.
            op_grads[t.value_index] = grad

    def get_grad(self, t: Tensor) -> Any:
        """The summed gradient of `t`, or None when `t` does not reach the ys."""
        op_grads = self.grads.get(t.op)
        if op_grads is None:
            return None
        grad = op_grads[t.value_index]
        if isinstance(grad, list):
            grad = op_grads[t.value_index] = aggregate_gradients(grad, t.op, self.method)
        return grad

    def run(self) -> None:
        """Differentiates the queued ops, enqueueing each op once its consumers are done."""
        loop_state = self.loop_state
        if loop_state is not None:
            for y in loop_state.ProcessUnusedLoopExits(self.pending, self.to_ops_set):
                if _is_trainable(y):
                    self.set_grad(y, loop_state.ZerosLikeForExit(y))
                    self.queue.append(y.op)
        while self.queue:
            op = self.queue.popleft()
            with _maybe_colocate_with(op, self.colocate):
                if loop_state is not None:
                    loop_state.EnterGradWhileContext(op, before=True)
                out_grads = [self.get_grad(t) for t in op.outputs]
                if loop_state is not None:
                    loop_state.ExitGradWhileContext(op, before=True)
                    loop_state.EnterGradWhileContext(op, before=False)
                in_grads = self._input_grads(op, out_grads)
                for i, (t_in, grad) in enumerate(zip(op.inputs, in_grads)):
                    if grad is not None and _is_trainable(t_in):
                        _check_grad_shape(op, i, t_in, grad)
                        self.set_grad(t_in, grad)
                if loop_state is not None:
                    loop_state.ExitGradWhileContext(op, before=False)
            self._update_pending(op)
        if loop_state is not None:
            loop_state.PostProcessing()

    def _update_pending(self, op: Operation) -> None:
        """Enqueues the inputs of `op` that are ready (TF's `_UpdatePendingAndEnqueueReady`:
        a loop Switch is ready at its first visit; a loop's exits wait for each other)."""
        for t in op.inputs:
            x = t.op
            self.pending[x] -= 1
            ready = self.pending[x] == 0
            if self.loop_state is not None and not ready:
                ready = self.pending[x] > 0 and control_flow_util.is_loop_switch(x)
            if not ready:
                continue
            if not control_flow_util.is_loop_exit(x):
                self.queue.append(x)
                continue
            grad_state = self.loop_state.GetGradState(x, before=False)
            grad_state.deferred_exits.append(t)
            grad_state.pending_exits_count -= 1
            if grad_state.pending_exits_count:
                continue
            used = False
            for y in grad_state.deferred_exits:
                if self._has_any_grad(y.op):
                    used = True
                    self.queue.append(y.op)
                else:
                    grad_state.unused_exits.append(y)
            for y in grad_state.unused_exits:
                if used and _is_trainable(y):
                    self.set_grad(y, self.loop_state.ZerosLikeForExit(y))
                self.queue.append(y.op)

    def _has_any_grad(self, op: Operation) -> bool:
        for g in self.grads.get(op, ()):
            if isinstance(g, list):
                if any(x is not None for x in g):
                    return True
            elif g is not None:
                return True
        return False

    def _input_grads(self, op: Operation, out_grads: list[Any]) -> list[Any]:
        """The gradients for op's inputs: from its gradient function, or all None."""
        if op in self.stop or op.type == "StopGradient":
            return [None] * len(op.inputs)
        if all(g is None for g in out_grads):
            return [None] * len(op.inputs)
        grad_fn = get_gradient_function(op)
        if grad_fn is None:
            return [None] * len(op.inputs)

        for i, t in enumerate(op.outputs):
            # The ys do not depend on this output: its gradient is zero.
            if out_grads[i] is None and _is_trainable(t):
                if self.loop_state is not None:
                    out_grads[i] = self.loop_state.ZerosLike(op, i)
                elif control_flow_util.is_switch(op):
                    out_grads[i] = control_flow_state.zeros_like_outside_loop(op, i)
                else:
                    out_grads[i] = array_ops.zeros_like(t)
                self.grads[op][i] = out_grads[i]
        with op.graph.name_scope(op.name + "_grad"):
            in_grads = _as_list(grad_fn(op, *out_grads))
            if len(in_grads) != len(op.inputs):
                raise ValueError(
                    f"Num gradients {len(in_grads)} generated for op {op.name} (op type: "
                    f"{op.type}) do not match num inputs {len(op.inputs)}"
                )
            if self.gate and sum(g is not None for g in in_grads) > 1:
                in_grads = _gate(op.graph, in_grads)
        _LOG.debug("Gradient for '%s'", op.name)
        return in_grads


def _check_grad_shape(op: Operation, i: int, t_in: Tensor, grad: Any) -> None:
    if not isinstance(grad, Tensor) or t_in.dtype.base_dtype == dtypes.resource:
        return
    try:
        grad.set_shape(t_in.shape)
    except ValueError:
        raise ValueError(
            "Incompatible shapes between op input and calculated input gradient.  Forward "
            f"operation: {op.name}.  Input index: {i}. Original input shape: {t_in.shape}.  "
            f"Calculated input gradient shape: {grad.shape}"
        ) from None


def _gate(graph: graph_mod.Graph, grads: list[Any]) -> list[Any]:
    """Each gradient behind an Identity that runs after all of them are computed.

    Follows `tf.tuple` as used by `gate_gradients=True`: a `group_deps` NoOp created in the
    current device scope and one `control_dependency` Identity per gradient, colocated with
    that gradient (so gating never moves a gradient to another task).
    """
    deps: list[Operation] = []
    for g in grads:
        if isinstance(g, IndexedSlices):
            deps.extend([g.values.op, g.indices.op])
        elif g is not None:
            deps.append(g.op)

    def gated(t: Tensor) -> Tensor:
        with graph.colocate_with(t.op), graph.control_dependencies([gate_op]):
            return array_ops.identity(t, name="control_dependency")

    with graph.name_scope("tuple"):
        with graph.control_dependencies(deps):
            gate_op = control_flow_ops.no_op(name="group_deps")
        result: list[Any] = []
        for g in grads:
            if isinstance(g, IndexedSlices):
                result.append(IndexedSlices(gated(g.values), g.indices, g.dense_shape))
            else:
                result.append(None if g is None else gated(g))
    return result


def gradients(
    ys: Any,
    xs: Any,
    grad_ys: Any = None,
    name: str | None = "gradients",
    colocate_gradients_with_ops: bool = False,
    gate_gradients: bool = False,
    aggregation_method: int | None = None,
    stop_gradients: Any = None,
    unconnected_gradients: Any = "none",
) -> list[Any]:
    """Symbolic partial derivatives of `sum(ys)` with respect to each of `xs`.

    Follows TF 1.x `tf.gradients`. Adds the gradient ops to the graph of `ys`, under the
    name scope `name` (made unique: `gradients`, `gradients_1`...); op `foo`'s gradient ops
    are named `<scope>/foo_grad/...`.

    Args:
      ys: a Tensor or list of Tensors to differentiate (float, complex or integer).
      xs: a Tensor, Variable, or list of them.
      grad_ys: optional list, one per y, of the gradients received by `ys`: a Tensor of the
        y's dtype and shape, an IndexedSlices, or None for ones (`gradients/Fill`).
      name: name scope of the gradient ops.
      colocate_gradients_with_ops: place each op's gradient ops with that op.
      gate_gradients: make the gradients of each op's inputs available together
        (through `tf.tuple`) to avoid races.
      aggregation_method: an `AggregationMethod` value; None for `ADD_N`.
      stop_gradients: Tensors (or Variables) not differentiated through: the gradient
        stops at them, as if they were constants.
      unconnected_gradients: "none" (or `UnconnectedGradients.NONE`): None for an x the
        ys do not depend on; "zero": zeros of x's shape instead.

    Returns:
      A list with one entry per x: a Tensor, an IndexedSlices (sparse gradients, e.g.
      from `gather`), or None when the ys do not depend on x, or x is not float/complex.

    Raises:
      LookupError: if an op between xs and ys has no registered gradient, with the
        message `No gradient defined for operation 'name' (op type: Type)`.
      TypeError: for ys that are not numeric, complex ys without grad_ys, or grad_ys of
        the wrong kind of type.
      ValueError: for grad_ys of another length, dtype, or static shape than the ys, an
        unknown `aggregation_method`, or a gradient function returning the wrong number of
        gradients or one of an incompatible shape.
    """
    method = AggregationMethod.DEFAULT if aggregation_method is None else aggregation_method
    if method not in AGGREGATION_METHODS:
        raise ValueError(f"Invalid aggregation_method specified {aggregation_method}.")
    ys, xs = _as_list(ys), _as_list(xs)
    stop_gradients = [] if stop_gradients is None else _as_list(stop_gradients)
    grad_ys = [None] * len(ys) if grad_ys is None else _as_list(grad_ys)
    values = ys + xs + stop_gradients + grad_ys
    with graph_mod.name_scope(name, "gradients", values):
        ys = [_to_tensor(y, "y") for y in ys]
        xs = [_to_tensor(x, "x", as_ref=True) for x in xs]
        stop_ops = [_graph_element_op(s) for s in stop_gradients]
        grad_ys = _default_grad_ys(grad_ys, ys, colocate_gradients_with_ops)
        state = _Backprop(xs, ys, stop_ops, colocate_gradients_with_ops, gate_gradients, method)
        for y, grad_y in zip(ys, grad_ys):
            state.set_grad(y, grad_y)
        state.run()
        result = [state.get_grad(x) for x in xs]
        mode = getattr(unconnected_gradients, "value", unconnected_gradients)
        if mode not in ("none", "zero"):
            raise ValueError(f"Unknown value for unconnected_gradients: {mode!r}")
        if mode == "zero":
            result = [array_ops.zeros_like(x) if g is None else g for g, x in zip(result, xs)]
        return result


__all__ = [
    "AggregationMethod",
    "NoGradient",
    "NotDifferentiable",
    "RegisterGradient",
    "gradients",
    "no_gradient",
]
