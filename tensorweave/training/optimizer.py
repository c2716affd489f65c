"""`tf.train.Optimizer`, the base class of the optimizers (follows TF 1.x `optimizer.py`).

`minimize()` = `compute_gradients()` + `apply_gradients()`. Subclasses implement
`_create_slots`, `_prepare`, `_apply_dense`, `_apply_sparse` (and optionally `_finish`).
`apply_gradients` builds, under the name scope of the optimizer's name (`GradientDescent`,
then `GradientDescent_1`...), one `update_<var op name>` scope per variable, colocated with
the variable, e.g. `GradientDescent/update_v/ApplyGradientDescent`; the returned op is named
after that scope (`GradientDescent`) and, with a `global_step`, is the `AssignAdd` of the
step that runs after every update.

Sparse gradients (`IndexedSlices`, e.g. from `tf.gather` on a variable) have their
duplicate indices summed before `_apply_sparse` (TF's `_apply_sparse_duplicate_indices`).
Only reference variables (`tf.Variable`) exist in tensorweave; a plain Tensor in `var_list`
gets a gradient but cannot be updated (as in TensorFlow).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, control_flow_ops, gradients_impl, math_ops, state_ops
from tensorweave.ops.variables import GraphKeys, Variable, trainable_variables
from tensorweave.training import slot_creator


def _deduplicate_indexed_slices(values: Tensor, indices: Tensor) -> tuple[Tensor, Tensor]:
    """Sums the rows of `values` that share an index; returns `(summed, unique_indices)`."""
    unique_indices, positions = array_ops.unique(indices)
    summed = math_ops.unsorted_segment_sum(values, positions, array_ops.shape(unique_indices)[0])
    return summed, unique_indices


def _var_key(var: Any) -> tuple[Any, str]:
    return (var.op.graph, var.op.name)


class _RefVariableProcessor:
    """Updates a `tf.Variable` through the optimizer's `_apply_dense` / `_apply_sparse`."""

    def __init__(self, v: Variable):
        self._v = v

    def target(self) -> Tensor:
        return self._v._ref()

    def update_op(self, optimizer: Optimizer, g: Any) -> Any:
        if isinstance(g, Tensor):
            update_op = optimizer._apply_dense(g, self._v)
            if self._v.constraint is not None:
                with graph_mod.control_dependencies([update_op]):
                    # NOTE: a fresh read: the `read` snapshot may predate the update (values
                    # are copy-on-write here, where TensorFlow shares the buffer).
                    return self._v.assign(self._v.constraint(self._v.read_value()))
            return update_op
        if self._v.constraint is not None:
            raise RuntimeError("Cannot use a constraint function on a sparse variable.")
        return optimizer._apply_sparse_duplicate_indices(g, self._v)


class _TensorProcessor:
    """A Tensor in `var_list`: differentiable, but it cannot be updated."""

    def __init__(self, v: Tensor):
        self._v = v

    def target(self) -> Tensor:
        return self._v

    def update_op(self, optimizer: Optimizer, g: Any) -> Any:
        raise NotImplementedError("Trying to update a Tensor ", self._v)


class _ResourceVariableProcessor(_RefVariableProcessor):
    """Updates a `ResourceVariable`: gradients are taken w.r.t. its handle, and the update
    ops (`_apply_dense` / `_apply_sparse`) take the handle, so their `Resource*` variant runs."""

    def target(self) -> Tensor:
        return self._v.handle


def _get_processor(v: Any) -> Any:
    if getattr(v, "_is_resource_variable", False):
        return _ResourceVariableProcessor(v)
    if isinstance(v, Variable):
        return _RefVariableProcessor(v)
    if isinstance(v, Tensor):
        return _TensorProcessor(v)
    raise NotImplementedError("Trying to optimize unsupported type ", v)


def _flatten_var_list(var_list: Any) -> list[Any]:
    out: list[Any] = []
    for v in var_list:
        if hasattr(v, "_get_variable_list"):  # a PartitionedVariable: its parts
            out.extend(v._get_variable_list())
        elif isinstance(v, list | tuple):
            out.extend(_flatten_var_list(v))
        else:
            out.append(v)
    return out


def _gate_all(grads: list[Any]) -> list[Any]:
    """Every gradient behind an Identity that runs once all are computed (`tf.tuple`)."""
    deps: list[Operation] = []
    for g in grads:
        if isinstance(g, IndexedSlices):
            deps.extend([g.values.op, g.indices.op])
        elif g is not None:
            deps.append(g.op)
    if not deps:
        return grads
    graph = deps[0].graph
    with graph.name_scope("tuple"):
        gate = control_flow_ops.group(*deps)

        def gated(t: Tensor) -> Tensor:
            with graph.control_dependencies([gate]):
                return array_ops.identity(t, name="control_dependency")

        return [
            IndexedSlices(gated(g.values), g.indices, g.dense_shape)
            if isinstance(g, IndexedSlices)
            else (None if g is None else gated(g))
            for g in grads
        ]


def _as_gradient(g: Any) -> Any:
    if isinstance(g, IndexedSlices):
        return g
    try:
        g = convert_to_tensor(g)
    except (TypeError, ValueError):
        raise TypeError(
            f"Gradient must be convertible to a Tensor or IndexedSlices, or None: {g}"
        ) from None
    if not isinstance(g, Tensor):
        raise TypeError(f"Gradient must be a Tensor, IndexedSlices, or None: {g}")
    return g


class Optimizer:
    """Base class for optimizers (follows TF 1.x `tf.train.Optimizer`).

    Args:
      use_locking: passed to the update ops (updates are always atomic in tensorweave).
      name: the name of the optimizer: the name scope of its update ops and the suffix of
        its slot variables.

    Raises:
      ValueError: if `name` is empty ("Must specify the optimizer name").
    """

    # Values of `gate_gradients`.
    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        # slot name -> {(graph, var op name): slot variable}
        self._slots: dict[str, dict[tuple[Any, str], Variable]] = {}
        # (name, graph) -> non-slot variable (e.g. Adam's beta1_power)
        self._non_slot_dict: dict[tuple[str, Any], Variable] = {}

    def get_name(self) -> str:
        """The optimizer's name."""
        return self._name

    def minimize(
        self,
        loss: Any,
        global_step: Any = None,
        var_list: Any = None,
        gate_gradients: int = GATE_OP,
        aggregation_method: int | None = None,
        colocate_gradients_with_ops: bool = False,
        name: str | None = None,
        grad_loss: Any = None,
    ) -> Operation:
        """Adds ops that minimize `loss` by updating `var_list` (follows `Optimizer.minimize`).

        Args:
          loss: float scalar Tensor (or a callable returning one) to minimize.
          global_step: optional integer variable incremented by one after the updates.
          var_list: variables to update; default the trainable variables.
          gate_gradients: `GATE_NONE`, `GATE_OP` or `GATE_GRAPH`.
          aggregation_method: an `AggregationMethod` value.
          colocate_gradients_with_ops: place gradient ops with their forward ops.
          name: name of the returned op (default: the optimizer's name).
          grad_loss: optional gradient of `loss`.

        Returns:
          The training `Operation`.

        Raises:
          ValueError: "No variables to optimize.", "No gradients provided for any variable,
            check your graph for ops that do not support gradients, between variables [...]
            and loss ...", or for invalid dtypes.
        """
        grads_and_vars = self.compute_gradients(
            loss,
            var_list=var_list,
            gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
            grad_loss=grad_loss,
        )
        if not [v for g, v in grads_and_vars if g is not None]:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                f"support gradients, between variables {[str(v) for _, v in grads_and_vars]} "
                f"and loss {loss}."
            )
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(
        self,
        loss: Any,
        var_list: Any = None,
        gate_gradients: int = GATE_OP,
        aggregation_method: int | None = None,
        colocate_gradients_with_ops: bool = False,
        grad_loss: Any = None,
    ) -> list[tuple[Any, Any]]:
        """Gradients of `loss` for `var_list` (follows `Optimizer.compute_gradients`).

        Args:
          loss: float Tensor to minimize, or a callable returning it.
          var_list: variables (or Tensors); default `TRAINABLE_VARIABLES` +
            `TRAINABLE_RESOURCE_VARIABLES` of the default graph.
          gate_gradients: `GATE_NONE`, `GATE_OP` (each op's input gradients are made
            available together) or `GATE_GRAPH` (all gradients before any is used).
          aggregation_method: an `AggregationMethod` value.
          colocate_gradients_with_ops: place gradient ops with their forward ops.
          grad_loss: optional gradient of `loss`.

        Returns:
          A list of `(gradient, variable)`; the gradient is a Tensor, an `IndexedSlices`, or
          None when `loss` does not depend on the variable.

        Raises:
          ValueError: for an invalid `gate_gradients`, non-float loss or variables, or
            "No variables to optimize.".
          NotImplementedError: for entries of `var_list` that are neither variables nor
            Tensors.
        """
        if callable(loss):
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError(
                "gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                f"Optimizer.GATE_GRAPH.  Not {gate_gradients}"
            )
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            self._assert_valid_dtypes([grad_loss])
        if var_list is None:
            var_list = trainable_variables() + graph_mod.get_collection(
                GraphKeys.TRAINABLE_RESOURCE_VARIABLES
            )
        else:
            var_list = _flatten_var_list(var_list)
        processors = [_get_processor(v) for v in var_list]
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients_impl.gradients(
            loss,
            [p.target() for p in processors],
            grad_ys=grad_loss,
            gate_gradients=(gate_gradients == Optimizer.GATE_OP),
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
        )
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = _gate_all(grads)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(
        self, grads_and_vars: Any, global_step: Any = None, name: str | None = None
    ) -> Operation:
        """Adds the ops that apply the gradients (follows `Optimizer.apply_gradients`).

        Pairs whose gradient is None are skipped. Slots are created first (outside any
        control-dependency scope), then every update under `<name>/update_<var op name>`
        colocated with its variable.

        Args:
          grads_and_vars: `(gradient, variable)` pairs, as from `compute_gradients`.
          global_step: optional integer variable incremented by one after all updates.
          name: name of the returned op (default: the optimizer's name, made unique).

        Returns:
          The `Operation` that applies the gradients (and increments `global_step`); also
          added to the `TRAIN_OP` collection.

        Raises:
          TypeError: for gradients that are not Tensors, IndexedSlices or None.
          ValueError: "No variables provided." or "No gradients provided for any variable:
            [...]".
        """
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None:
                g = _as_gradient(g)
            converted.append((g, v, _get_processor(v)))
        var_list = [v for g, v, _ in converted if g is not None]
        if not var_list:
            raise ValueError(
                f"No gradients provided for any variable: {[str(v) for _, v, _ in converted]}."
            )
        graph = var_list[0].graph
        with graph.as_default():
            with graph.control_dependencies(None):
                self._create_slots(var_list)
            return self._apply_all(graph, converted, global_step, name)

    def _apply_all(self, graph: Any, converted: list[Any], global_step: Any, name: Any) -> Any:
        update_ops = []
        with graph_mod.name_scope(name, self._name) as name:
            self._prepare()
            for grad, var, processor in converted:
                if grad is None:
                    continue
                scope_name = var.op.name if hasattr(var, "op") else ""
                with graph.name_scope("update_" + scope_name), graph.colocate_with(var):
                    update_ops.append(processor.update_op(self, grad))
            if global_step is None:
                apply_updates = self._finish(update_ops, name)
            else:
                with graph.control_dependencies([self._finish(update_ops, "update")]):
                    with graph.colocate_with(global_step):
                        apply_updates = state_ops.assign_add(global_step, 1, name=name)
            if isinstance(apply_updates, Tensor):
                apply_updates = apply_updates.op
            train_op = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if not any(op is apply_updates for op in train_op):
                train_op.append(apply_updates)
            return apply_updates

    # ---------------------------------------------------------------- slots and state
    def get_slot(self, var: Any, name: str) -> Variable | None:
        """The slot `name` created for `var`, or None (follows `Optimizer.get_slot`)."""
        named_slots = self._slots.get(name)
        if not named_slots:
            return None
        return named_slots.get(_var_key(var))

    def get_slot_names(self) -> list[str]:
        """The sorted names of the slots this optimizer created (e.g. `["m", "v"]`)."""
        return sorted(self._slots)

    def variables(self) -> list[Variable]:
        """The optimizer's slot and non-slot variables in the default graph, sorted by name.

        Follows `Optimizer.variables`.
        """
        current = graph_mod.get_default_graph()
        found = [v for v in self._non_slot_dict.values() if v.graph is current]
        for slots in self._slots.values():
            found.extend(v for v in slots.values() if v.graph is current)
        return sorted(found, key=lambda v: v.name)

    def _create_non_slot_variable(self, initial_value: Any, name: str, colocate_with: Any):
        """A non-trainable variable colocated with `colocate_with`, once per graph.

        It is named `name` in the current name scope (TensorFlow's `beta1_power`).
        """
        graph = colocate_with.graph
        key = (name, graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            with graph.as_default(), graph.colocate_with(colocate_with):
                v = Variable(initial_value, name=name, trainable=False)
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name: str, graph: Any = None) -> Variable | None:
        return self._non_slot_dict.get((name, graph))

    def _non_slot_variables(self) -> list[Variable]:
        return list(self._non_slot_dict.values())

    def _assert_valid_dtypes(self, tensors: list[Any]) -> None:
        """Checks that every tensor's dtype is in `_valid_dtypes()`.

        Raises:
          ValueError: "Invalid type tf.int32 for x:0, expected: [...]."
        """
        valid = self._valid_dtypes()
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in valid:
                expected = sorted(valid, key=lambda d: d.name)
                raise ValueError(f"Invalid type {dtype!r} for {t.name}, expected: {expected}.")

    def _valid_dtypes(self) -> set[dtypes.DType]:
        return {dtypes.float16, dtypes.float32, dtypes.float64}

    # ---------------------------------------------------------------- subclass hooks
    def _create_slots(self, var_list: list[Variable]) -> None:
        """Creates the slots of the variables (none by default)."""

    def _prepare(self) -> None:
        """Creates the hyper-parameter tensors, in the update name scope."""

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        """The op applying a dense gradient to `var`."""
        raise NotImplementedError()

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var: Variable) -> Any:
        """Sums duplicate indices of `grad`, then `_apply_sparse`."""
        summed, unique = _deduplicate_indexed_slices(grad.values, grad.indices)
        return self._apply_sparse(IndexedSlices(summed, unique, grad.dense_shape), var)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        """The op applying an `IndexedSlices` gradient with unique indices to `var`."""
        raise NotImplementedError()

    def _finish(self, update_ops: list[Any], name_scope: str) -> Operation:
        """The op grouping the updates, named `name_scope`."""
        return control_flow_ops.group(*update_ops, name=name_scope)

    # ---------------------------------------------------------------- slot helpers
    def _slot_dict(self, slot_name: str) -> dict[tuple[Any, str], Variable]:
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot(self, var: Any, val: Tensor, slot_name: str, op_name: str):
        named_slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named_slots:
            named_slots[key] = slot_creator.create_slot(var, val, op_name)
        return named_slots[key]

    def _get_or_make_slot_with_initializer(
        self, var: Any, initializer: Any, shape: Any, dtype: Any, slot_name: str, op_name: str
    ) -> Variable:
        named_slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named_slots:
            named_slots[key] = slot_creator.create_slot_with_initializer(
                var, initializer, shape, dtype, op_name
            )
        return named_slots[key]

    def _zeros_slot(self, var: Any, slot_name: str, op_name: str) -> Variable:
        named_slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named_slots:
            named_slots[key] = slot_creator.create_zeros_slot(var, op_name)
        return named_slots[key]

    @staticmethod
    def _call_if_callable(param: Any) -> Any:
        return param() if callable(param) else param


__all__ = ["Optimizer"]
