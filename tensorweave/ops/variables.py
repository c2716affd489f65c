"""`tf.Variable` (TensorFlow 1.x reference variables) and the variable collections.

A Variable is four ops: `<name>/initial_value`, the `VariableV2` `<name>`, its initializer
`<name>/Assign` and the snapshot `<name>/read`. Its state lives in the resource manager of
the device the `VariableV2` op is placed on, so every session and graph that names it on
that task shares it (the seeds' "variables with the same name are shared").
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework import session_stack
from tensorweave.framework.graph_keys import GraphKeys
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops import array_ops, constant_op, control_flow_ops, math_ops, state_ops
from tensorweave.protos import variable_pb2

# NOTE: a registry of one entry, filled when `resource_variable_ops` is imported (it builds
# on this module, so it cannot be imported here).
_VARIABLE_CLASSES: dict[str, type] = {}


def enable_resource_variables() -> None:
    """Makes `tf.Variable` / `tf.get_variable` create resource variables by default.

    Follows `tf.compat.v1.enable_resource_variables` (TF 2.x's default); process-wide, as
    in TensorFlow (the default-graph state, `graph.set_resource_variables_default`).
    """
    graph_mod.set_resource_variables_default(True)


def disable_resource_variables() -> None:
    """Makes new variables reference variables again (`tf.disable_resource_variables`)."""
    graph_mod.set_resource_variables_default(False)


def resource_variables_enabled() -> bool:
    """True after `enable_resource_variables()` (`tf.resource_variables_enabled`)."""
    return graph_mod.resource_variables_default()


def register_resource_variable_class(cls: type) -> type:
    """Decorator naming the class `Variable(use_resource=True)` creates."""
    _VARIABLE_CLASSES["resource"] = cls
    return cls


def use_resource_default(use_resource: Any) -> bool:
    """`use_resource` if given, else the process-wide default."""
    return graph_mod.resource_variables_default() if use_resource is None else bool(
        use_resource)


def _initializer_tensor(g: Any, initial_value: Any, dtype: Any) -> Tensor:
    """The initial value (called first when callable) as a tensor in the `Initializer` scope."""
    with g.name_scope("Initializer"), g.device(None):
        value = initial_value() if callable(initial_value) else initial_value
        return convert_to_tensor(value, name="initial_value", dtype=dtype)


def _check_initial_shape(initial_value: Tensor, validate_shape: bool) -> None:
    if validate_shape and not initial_value.shape.is_fully_defined():
        raise ValueError(f"initial_value must have a shape specified: {initial_value}")


class Variable:
    """A mutable tensor whose value persists across `Session.run` calls.

    Follows TF 1.x `tf.Variable` (a reference variable); with `use_resource=True` (or after
    `tf.enable_resource_variables()`) it creates a `ResourceVariable` instead, as TF does.

    Args:
      initial_value: a Tensor or value convertible to one, or a callable returning one;
        defines the dtype and (with `validate_shape`) the shape.
      trainable: also add to `TRAINABLE_VARIABLES` (used by optimizers).
      collections: collections to add to (default `[GLOBAL_VARIABLES]`).
      validate_shape: if False, the variable may take values of any shape.
      caching_device: device on which to place the `read` snapshot.
      name: op name (default "Variable"), unique-ified under the current name scope.
      variable_def: a `VariableDef` proto to rebuild the object from existing graph ops.
      dtype: convert the initial value to this dtype.
      expected_shape: unused (TensorFlow compatibility).
      import_scope: name prefix used with `variable_def`.
      constraint: optional projection applied by optimizers after updates.
      use_resource: create a `ResourceVariable` (default: `resource_variables_enabled()`).

    Raises:
      ValueError: if `initial_value` is missing, or its shape is not fully defined while
        `validate_shape` is True.
    """

    def __new__(cls, *args: Any, use_resource: Any = None, **kwargs: Any) -> Any:
        """`Variable(...)` builds a `ResourceVariable` when resource variables are asked for."""
        resource_class = _VARIABLE_CLASSES.get("resource")
        variable_def = kwargs.get("variable_def")
        if variable_def is not None:
            want = bool(getattr(variable_def, "is_resource", False))
        else:
            want = use_resource_default(use_resource)
        if cls is Variable and resource_class is not None and want:
            cls = resource_class
        return object.__new__(cls)

    def __init__(
        self,
        initial_value: Any = None,
        trainable: bool = True,
        collections: Any = None,
        validate_shape: bool = True,
        caching_device: Any = None,
        name: str | None = None,
        variable_def: Any = None,
        dtype: Any = None,
        expected_shape: Any = None,
        import_scope: str | None = None,
        constraint: Any = None,
        use_resource: Any = None,
    ):
        self._trainable = trainable
        self._constraint = constraint
        self._save_slice_info = None
        self._partition_info = None
        self._caching_device = caching_device
        if variable_def is not None:
            self._init_from_proto(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        collections = _variable_collections(collections, trainable)
        values = [] if callable(initial_value) else [initial_value]
        g = graph_mod._graph_from_values(values)
        with g.as_default(), graph_mod.name_scope(name, "Variable", values) as scope:
            self._build(g, scope, initial_value, dtype, validate_shape, caching_device)
        g.add_to_collections(collections, self)

    def _build(
        self, g: Any, scope: str, initial_value: Any, dtype: Any, validate_shape: bool,
        caching_device: Any,
    ) -> None:
        """Adds the variable's ops under name scope `scope` (the kind-specific part of init)."""
        if callable(initial_value):
            with g._attr_scope({"_class": [f"loc:@{scope[:-1]}"]}):
                self._initial_value = _initializer_tensor(g, initial_value, dtype)
                self._variable = self._make_variable_op(scope, validate_shape)
        else:
            self._initial_value = convert_to_tensor(
                initial_value, name="initial_value", dtype=dtype
            )
            self._variable = self._make_variable_op(scope, validate_shape)
        _check_initial_shape(self._initial_value, validate_shape)
        self._initializer_op = state_ops.assign(
            self._variable, self._initial_value, validate_shape=validate_shape
        ).op
        self._snapshot = self._make_snapshot(g, caching_device)

    def _make_snapshot(self, g: Any, caching_device: Any) -> Tensor:
        """The `read` identity: on `caching_device` when given, else with the variable."""
        if caching_device is not None:
            with g.device(caching_device):
                return array_ops.identity(self._variable, name="read")
        with g.colocate_with(self._variable.op):
            return array_ops.identity(self._variable, name="read")

    def _make_variable_op(self, scope: str, validate_shape: bool) -> Tensor:
        shape = self._initial_value.shape if validate_shape else unknown_shape()
        return state_ops.variable_op_v2(shape, self._initial_value.dtype.base_dtype, name=scope)

    def _init_from_proto(self, variable_def: Any, import_scope: str | None) -> None:
        g = graph_mod.get_default_graph()

        def el(name: str) -> Any:
            return g.as_graph_element(_prefix(import_scope, name))

        self._variable = el(variable_def.variable_name)
        self._initializer_op = el(variable_def.initializer_name)
        self._snapshot = el(variable_def.snapshot_name)
        if variable_def.initial_value_name:
            self._initial_value = el(variable_def.initial_value_name)
        else:
            self._initial_value = None
        self._trainable = variable_def.trainable
        self._caching_device = None

    # ------------------------------------------------------------ properties
    @property
    def name(self) -> str:
        """The ref tensor's name, e.g. `"var:0"`."""
        return self._variable.name

    @property
    def op(self) -> Operation:
        """The `VariableV2` op."""
        return self._variable.op

    @property
    def dtype(self) -> Any:
        """The reference dtype, e.g. `float32_ref` (as TF 1.x reference variables)."""
        return self._variable.dtype

    @property
    def shape(self) -> TensorShape:
        """The static shape."""
        return self._variable.shape

    def get_shape(self) -> TensorShape:
        """Alias of `shape`."""
        return self._variable.shape

    @property
    def device(self) -> str:
        """The device of the `VariableV2` op."""
        return self._variable.device

    @property
    def graph(self) -> Any:
        """The graph of the variable."""
        return self._variable.graph

    @property
    def initializer(self) -> Operation:
        """The `Assign` op that sets the initial value."""
        return self._initializer_op

    @property
    def initial_value(self) -> Tensor:
        """The initial-value tensor."""
        return self._initial_value

    @property
    def trainable(self) -> bool:
        """Whether optimizers train it by default."""
        return self._trainable

    @property
    def constraint(self) -> Any:
        """The optional constraint function."""
        return self._constraint

    # --------------------------------------------------------------- reading
    def value(self) -> Tensor:
        """The `read` snapshot tensor (same each call)."""
        return self._snapshot

    def read_value(self) -> Tensor:
        """A new Identity reading the current value."""
        with graph_mod.name_scope("Read"):
            return array_ops.identity(self._variable, name="read")

    def initialized_value(self) -> Tensor:
        """Returns the value after running the initializer.

        Runs the initializer each time it is evaluated, as TF < 1.5 did; use it for
        initializing other variables from this one.
        """
        return control_flow_ops.with_dependencies([self._initializer_op], self._variable)

    def _ref(self) -> Tensor:
        return self._variable

    def _as_graph_element(self) -> Tensor:
        return self._variable

    def eval(self, session: Any = None) -> Any:
        """The current value computed in `session` (default session if None)."""
        return self._variable.eval(session=session)

    def load(self, value: Any, session: Any = None) -> None:
        """Assigns `value` by feeding the initial value (follows `Variable.load`)."""
        session = session or session_stack.get_default_session()
        if session is None:
            raise ValueError(
                "Either session argument should be provided or default session "
                "should be established"
            )
        session.run(self._initializer_op, {self._initial_value: value})

    # -------------------------------------------------------------- updating
    def _ref_update(self, fn: Any, value: Any, use_locking: bool, name: Any, read_value: bool):
        t = fn(self._variable, value, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def _ref_scatter(self, fn: Any, sparse_delta: Any, use_locking: bool, name: Any) -> Any:
        return fn(self._variable, sparse_delta.indices, sparse_delta.values,
                  use_locking=use_locking, name=name)

    def assign(
        self,
        value: Any,
        use_locking: bool = False,
        name: str | None = None,
        read_value: bool = True,
    ) -> Any:
        """An `Assign` op setting the variable to `value`."""
        return self._ref_update(state_ops.assign, value, use_locking, name, read_value)

    def assign_add(
        self,
        delta: Any,
        use_locking: bool = False,
        name: str | None = None,
        read_value: bool = True,
    ) -> Any:
        """An `AssignAdd` op adding `delta`."""
        return self._ref_update(state_ops.assign_add, delta, use_locking, name, read_value)

    def assign_sub(
        self,
        delta: Any,
        use_locking: bool = False,
        name: str | None = None,
        read_value: bool = True,
    ) -> Any:
        """An `AssignSub` op subtracting `delta`."""
        return self._ref_update(state_ops.assign_sub, delta, use_locking, name, read_value)

    def scatter_sub(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None):
        """`ScatterSub` of an `IndexedSlices` delta."""
        return self._ref_scatter(state_ops.scatter_sub, sparse_delta, use_locking, name)

    def scatter_add(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None):
        """`ScatterAdd` of an `IndexedSlices` delta."""
        return self._ref_scatter(state_ops.scatter_add, sparse_delta, use_locking, name)

    def scatter_update(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None):
        """`ScatterUpdate` of an `IndexedSlices` delta."""
        return self._ref_scatter(state_ops.scatter_update, sparse_delta, use_locking, name)

    # ----------------------------------------------------------- serialization
    def to_proto(self, export_scope: str | None = None) -> Any:
        """A `VariableDef` proto naming this variable's ops."""
        if export_scope is not None and not self._variable.name.startswith(export_scope):
            return None
        vd = variable_pb2.VariableDef(
            variable_name=_strip(export_scope, self._variable.name),
            initializer_name=_strip(export_scope, self._initializer_op.name),
            snapshot_name=_strip(export_scope, self._snapshot.name),
            trainable=self._trainable,
        )
        if self._initial_value is not None:
            vd.initial_value_name = _strip(export_scope, self._initial_value.name)
        return vd

    @staticmethod
    def from_proto(variable_def: Any, import_scope: str | None = None) -> Variable:
        """Rebuilds a Variable object from a `VariableDef` and the ops in the graph."""
        return Variable(variable_def=variable_def, import_scope=import_scope)

    def _set_save_slice_info(self, info: Any) -> None:
        self._save_slice_info = info

    def _get_save_slice_info(self) -> Any:
        return self._save_slice_info

    def __repr__(self) -> str:
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __ne__(self, other: Any) -> bool:
        return self is not other

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    def __bool__(self) -> bool:
        raise TypeError("Using a `tf.Variable` as a Python `bool` is not allowed.")


_OPERATORS = (
    "__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ "
    "__floordiv__ __rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __neg__ __abs__ __lt__ "
    "__le__ __gt__ __ge__ __and__ __rand__ __or__ __ror__ __xor__ __rxor__ __invert__ "
    "__getitem__ __matmul__ __rmatmul__"
).split()


def _make_operator(name: str) -> Any:
    def op(self: Variable, *args: Any) -> Any:
        return getattr(Tensor, name)(self.value(), *args)

    op.__name__ = name
    return op


for _name in _OPERATORS:
    setattr(Variable, _name, _make_operator(_name))
Variable.__array_priority__ = 100  # type: ignore[attr-defined]


def _variable_collections(collections: Any, trainable: bool) -> list[str]:
    """The collections a new variable joins.

    `collections` (default `[GLOBAL_VARIABLES]`), plus `TRAINABLE_VARIABLES` when `trainable`.

    Raises:
      ValueError: if `collections` is not a list, tuple or set.
    """
    if collections is None:
        collections = [GraphKeys.GLOBAL_VARIABLES]
    if not isinstance(collections, list | tuple | set):
        raise ValueError(
            f"collections argument to Variable constructor must be a list, "
            f"tuple, or set. Got {collections} of type {type(collections)}"
        )
    collections = list(collections)
    if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
        collections.append(GraphKeys.TRAINABLE_VARIABLES)
    return collections


def _prefix(scope: str | None, name: str) -> str:
    return f"{scope}/{name}" if scope else name


def _strip(scope: str | None, name: str) -> str:
    return name[len(scope) + 1 :] if scope and name.startswith(scope + "/") else name


def _variable_conversion(v: Variable, dtype: Any = None, name: Any = None, as_ref: bool = False):
    t = v._ref() if as_ref else v.value()
    if dtype is not None and not dtype.is_compatible_with(t.dtype):
        raise ValueError(
            f"Incompatible type conversion requested to type '{dtype.name}' for variable of "
            f"type '{t.dtype.name}'"
        )
    return t


register_tensor_conversion_function(Variable, _variable_conversion, priority=10)


# ---------------------------------------------------------------- collections
def global_variables(scope: str | None = None) -> list[Variable]:
    """Variables in `GLOBAL_VARIABLES` (follows `tf.global_variables`)."""
    return graph_mod.get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def all_variables() -> list[Variable]:
    """Deprecated alias of `global_variables`."""
    return global_variables()


def trainable_variables(scope: str | None = None) -> list[Variable]:
    """Variables in `TRAINABLE_VARIABLES`."""
    return graph_mod.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope: str | None = None) -> list[Variable]:
    """Variables in `LOCAL_VARIABLES` (per-process, not shared on a ps)."""
    return graph_mod.get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope: str | None = None) -> list[Variable]:
    """Variables in `MODEL_VARIABLES`."""
    return graph_mod.get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope: str | None = None) -> list[Variable]:
    """Variables in `MOVING_AVERAGE_VARIABLES`."""
    return graph_mod.get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list: list[Variable], name: str = "init") -> Operation:
    """An op running the initializers of `var_list` (a `NoOp` when empty)."""
    if var_list:
        return control_flow_ops.group(*[v.initializer for v in var_list], name=name)
    return control_flow_ops.no_op(name=name)


def global_variables_initializer() -> Operation:
    """`variables_initializer(global_variables())`, named `init`."""
    return variables_initializer(global_variables())


def local_variables_initializer() -> Operation:
    """`variables_initializer(local_variables())`, named `init`."""
    return variables_initializer(local_variables())


initialize_all_variables = global_variables_initializer
initialize_variables = variables_initializer
initialize_local_variables = local_variables_initializer


def report_uninitialized_variables(
    var_list: list[Any] | None = None, name: str = "report_uninitialized_variables"
) -> Tensor:
    """Returns a 1-D string tensor with the op names of the uninitialized variables.

    Follows `tf.report_uninitialized_variables`.

    One `IsVariableInitialized` per variable runs next to it (e.g. on its ps); the names
    are gathered on `/cpu:0` of the default task. An empty list gives an empty tensor.
    """
    if var_list is None:
        var_list = global_variables() + local_variables()
        if not var_list:
            var_list = [
                op.outputs[0]
                for op in graph_mod.get_default_graph().get_operations()
                if op.type in ("Variable", "VariableV2", "AutoReloadVariable")
            ]
    with graph_mod.name_scope(name):
        init_vars = [state_ops.is_variable_initialized(v) for v in var_list]
        with graph_mod.device("/cpu:0"):
            if not var_list:
                return constant_op.constant([], dtype="string")
            mask = math_ops.logical_not(array_ops.stack(init_vars))
            names = constant_op.constant([v.op.name for v in var_list])
            return array_ops.boolean_mask(names, mask)


__all__ = [
    "GraphKeys",
    "Variable",
    "enable_resource_variables",
    "disable_resource_variables",
    "resource_variables_enabled",
    "global_variables",
    "all_variables",
    "trainable_variables",
    "local_variables",
    "model_variables",
    "moving_average_variables",
    "variables_initializer",
    "global_variables_initializer",
    "local_variables_initializer",
    "initialize_all_variables",
    "initialize_variables",
    "initialize_local_variables",
    "report_uninitialized_variables",
]
