"""Resource variables: `tf.Variable(..., use_resource=True)` (follows TF 1.x's
`resource_variable_ops.ResourceVariable`).

A `VarHandleOp` named like the variable outputs its handle; `v/Assign` (`AssignVariableOp`)
initializes it, `v/IsInitialized/VarIsInitializedOp` reports it, and every read is a fresh
`ReadVariableOp` (`v/Read/ReadVariableOp` is the cached graph element). Because each read is
its own op, a read created under `tf.control_dependencies` runs after them: resource
variables have TF's well-defined read-after-write semantics. Updates (`assign*`, `scatter_*`,
`ResourceApply*` from optimizers) take the handle.

`tf.enable_resource_variables()` makes `tf.Variable` and `tf.get_variable` create them by
default, as TF 2.x's `compat.v1` does.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.ops import array_ops, variables
from tensorweave.ops.gradient_registry import RegisterGradient, no_gradient
from tensorweave.protos import variable_pb2

for _op in (
    "VarHandleOp", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
    "VarIsInitializedOp", "VariableShape", "DestroyResourceOp", "ResourceScatterAdd",
    "ResourceScatterSub", "ResourceScatterMul", "ResourceScatterDiv", "ResourceScatterMin",
    "ResourceScatterMax", "ResourceScatterUpdate",
):
    no_gradient(_op)


# ------------------------------------------------------------------ raw op wrappers
def var_handle_op(
    dtype: Any, shape: Any, container: str = "", shared_name: str = "", name: str | None = None
) -> Tensor:
    """A `VarHandleOp`: resource scalar naming the variable `shared_name` (TF's
    `gen_resource_variable_ops.var_handle_op`)."""
    return apply_op(
        "VarHandleOp", dtype=dtypes.as_dtype(dtype), shape=as_shape(shape),
        container=container, shared_name=shared_name, name=name,
    )


def read_variable_op(resource: Tensor, dtype: Any, name: str | None = None) -> Tensor:
    """The variable's current value, `dtype` with the variable's shape.

    Raises:
      errors.FailedPreconditionError: at run time, if the variable is uninitialized.
      errors.InvalidArgumentError: at run time, if it holds another dtype.
    """
    return apply_op("ReadVariableOp", resource=resource, dtype=dtypes.as_dtype(dtype), name=name)


def assign_variable_op(resource: Tensor, value: Any, name: str | None = None) -> Operation:
    """Sets the variable to `value` (an op without outputs)."""
    return apply_op("AssignVariableOp", resource=resource, value=value, name=name)


def assign_add_variable_op(resource: Tensor, value: Any, name: str | None = None) -> Operation:
    """Adds `value` to the variable atomically (an op without outputs)."""
    return apply_op("AssignAddVariableOp", resource=resource, value=value, name=name)


def assign_sub_variable_op(resource: Tensor, value: Any, name: str | None = None) -> Operation:
    """Subtracts `value` from the variable atomically (an op without outputs)."""
    return apply_op("AssignSubVariableOp", resource=resource, value=value, name=name)


def var_is_initialized_op(resource: Tensor, name: str | None = None) -> Tensor:
    """Bool scalar: whether the variable has been assigned."""
    return apply_op("VarIsInitializedOp", resource=resource, name=name)


def variable_shape(resource: Tensor, out_type: Any = dtypes.int32, name: str | None = None):
    """int32/int64 vector: the variable's current shape."""
    return apply_op("VariableShape", input=resource, out_type=out_type, name=name)


def resource_gather(resource: Tensor, indices: Any, dtype: Any, name: str | None = None):
    """Rows `indices` of the variable (`ResourceGather`, batch_dims 0)."""
    return apply_op("ResourceGather", resource=resource, indices=indices,
                    dtype=dtypes.as_dtype(dtype), name=name)


def resource_scatter(kind: str, resource: Tensor, indices: Any, updates: Any,
                     name: str | None = None) -> Operation:
    """`ResourceScatter<kind>` (Add, Sub, Mul, Div, Min, Max, Update) of `updates` rows."""
    return apply_op(f"ResourceScatter{kind}", resource=resource, indices=indices,
                    updates=updates, name=name)


def destroy_resource_op(resource: Tensor, ignore_lookup_error: bool = True,
                        name: str | None = None) -> Operation:
    """Deletes the variable from its resource manager."""
    return apply_op("DestroyResourceOp", resource=resource,
                    ignore_lookup_error=ignore_lookup_error, name=name)


@RegisterGradient("ReadVariableOp")
def _read_grad(op: Operation, grad: Any) -> Any:
    return grad


@RegisterGradient("ResourceGather")
def _gather_grad(op: Operation, grad: Any) -> Any:
    handle, indices = op.inputs
    params_shape = variable_shape(handle)
    size = array_ops.expand_dims(array_ops.size(indices), 0)
    values_shape = array_ops.concat([size, params_shape[1:]], 0)
    values = array_ops.reshape(grad, values_shape)
    flat = array_ops.reshape(indices, size)
    return [IndexedSlices(values, flat, params_shape), None]


# ------------------------------------------------------------------ the variable
@variables.register_resource_variable_class
class ResourceVariable(variables.Variable):
    """A variable whose state is named by a resource handle (TF's `ResourceVariable`).

    Args: as `tf.Variable` (`initial_value`, `trainable`, `collections`, `validate_shape`,
      `caching_device`, `name`, `dtype`, `constraint`, `variable_def`, `import_scope`);
      `use_resource` is accepted (always True here).

    Raises:
      ValueError: as `tf.Variable`.
    """

    _is_resource_variable = True

    def _build(
        self, g: Any, scope: str, initial_value: Any, dtype: Any, validate_shape: bool,
        caching_device: Any,
    ) -> None:
        """Adds `VarHandleOp`, `IsInitialized`, `Assign` and `Read` under name scope `scope`."""
        handle_name = scope[:-1]
        with g._attr_scope({"_class": [f"loc:@{handle_name}"]}):
            self._initial_value = variables._initializer_tensor(g, initial_value, dtype)
            variables._check_initial_shape(self._initial_value, validate_shape)
            self._dtype = self._initial_value.dtype.base_dtype
            self._shape = self._initial_value.shape if validate_shape else TensorShape(None)
            self._handle = var_handle_op(
                self._dtype, self._shape, shared_name=handle_name, name=scope
            )
        with g.name_scope("IsInitialized"):
            self._is_initialized_op = var_is_initialized_op(self._handle)
        with g.name_scope("Assign") as assign_scope, g.device(self._handle.device):
            self._initializer_op = assign_variable_op(
                self._handle, self._initial_value, name=assign_scope
            )
        with g.name_scope("Read"), g.device(self._handle.device):
            self._graph_element = read_variable_op(self._handle, self._dtype)

    def _init_from_proto(self, variable_def: Any, import_scope: str | None) -> None:
        g = graph_mod.get_default_graph()

        def el(name: str) -> Any:
            return g.as_graph_element(variables._prefix(import_scope, name))

        self._handle = el(variable_def.variable_name)
        self._initializer_op = el(variable_def.initializer_name)
        self._graph_element = el(variable_def.snapshot_name)
        self._initial_value = (
            el(variable_def.initial_value_name) if variable_def.initial_value_name else None
        )
        self._dtype = dtypes.as_dtype(self._handle.op.get_attr("dtype"))
        self._shape = self._handle.op.get_attr("shape")
        self._trainable = variable_def.trainable
        self._is_initialized_op = None

    # ------------------------------------------------------------ properties
    @property
    def handle(self) -> Tensor:
        """The `resource` scalar output of the `VarHandleOp`."""
        return self._handle

    @property
    def name(self) -> str:
        """The handle's name, e.g. `"v:0"`."""
        return self._handle.name

    @property
    def op(self) -> Operation:
        """The `VarHandleOp`."""
        return self._handle.op

    @property
    def dtype(self) -> Any:
        """The value dtype (not a reference dtype)."""
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        """The static shape."""
        return self._shape

    def get_shape(self) -> TensorShape:
        """Alias of `shape`."""
        return self._shape

    @property
    def device(self) -> str:
        """The device of the `VarHandleOp`."""
        return self._handle.device

    @property
    def graph(self) -> Any:
        """The graph of the variable."""
        return self._handle.graph

    # --------------------------------------------------------------- reading
    def _read_variable_op(self) -> Tensor:
        with graph_mod.get_default_graph().device(self._handle.device):
            return read_variable_op(self._handle, self._dtype)

    def value(self) -> Tensor:
        """A fresh `ReadVariableOp` of the current value (on the variable's device)."""
        with graph_mod.colocate_with(None, ignore_existing=True):
            return self._read_variable_op()

    def read_value(self) -> Tensor:
        """An Identity of a fresh read, under `Read` (TF's `read_value`)."""
        with graph_mod.name_scope("Read"):
            value = self._read_variable_op()
        return array_ops.identity(value)

    def initialized_value(self) -> Tensor:
        """The value read after running the initializer (each time it is evaluated)."""
        with graph_mod.control_dependencies([self._initializer_op]):
            return self._read_variable_op()

    def is_initialized(self, name: str | None = None) -> Tensor:
        """Bool scalar: whether the variable has been initialized."""
        return var_is_initialized_op(self._handle, name=name)

    def _ref(self) -> Tensor:
        # NOTE: a resource variable is updated through its handle where a reference
        # variable is updated through its ref tensor.
        return self._handle

    def _as_graph_element(self) -> Tensor:
        return self._graph_element

    def eval(self, session: Any = None) -> Any:
        """The current value computed in `session` (default session if None)."""
        return self._graph_element.eval(session=session)

    def sparse_read(self, indices: Any, name: str | None = None) -> Tensor:
        """Rows `indices` of the value (`ResourceGather`)."""
        with graph_mod.name_scope("Gather" if name is None else name):
            return resource_gather(self._handle, indices, self._dtype)

    # -------------------------------------------------------------- updating
    def _update(self, op: Operation, read_value: bool) -> Any:
        if not read_value:
            return op
        with graph_mod.control_dependencies([op]):
            return self.read_value()

    def assign(self, value: Any, use_locking: bool = False, name: str | None = None,
               read_value: bool = True) -> Any:
        """`AssignVariableOp`; with `read_value`, a read ordered after it."""
        value = convert_to_tensor(value, dtype=self._dtype)
        self._shape.assert_is_compatible_with(value.shape)
        return self._update(assign_variable_op(self._handle, value, name=name), read_value)

    def assign_add(self, delta: Any, use_locking: bool = False, name: str | None = None,
                   read_value: bool = True) -> Any:
        """`AssignAddVariableOp`; with `read_value`, a read ordered after it."""
        delta = convert_to_tensor(delta, dtype=self._dtype)
        return self._update(assign_add_variable_op(self._handle, delta, name=name), read_value)

    def assign_sub(self, delta: Any, use_locking: bool = False, name: str | None = None,
                   read_value: bool = True) -> Any:
        """`AssignSubVariableOp`; with `read_value`, a read ordered after it."""
        delta = convert_to_tensor(delta, dtype=self._dtype)
        return self._update(assign_sub_variable_op(self._handle, delta, name=name), read_value)

    def _scatter(self, kind: str, indices: Any, updates: Any, name: str | None) -> Any:
        """`ResourceScatter<kind>` of rows `indices`; returns the value after it."""
        updates = convert_to_tensor(updates, dtype=self._dtype)
        return self._update(resource_scatter(kind, self._handle, indices, updates, name), True)

    def scatter_sub(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None):
        """`ResourceScatterSub` of an `IndexedSlices` delta; returns the value after it."""
        return self._scatter("Sub", sparse_delta.indices, sparse_delta.values, name)

    def scatter_add(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None):
        """`ResourceScatterAdd` of an `IndexedSlices` delta; returns the value after it."""
        return self._scatter("Add", sparse_delta.indices, sparse_delta.values, name)

    def scatter_update(self, sparse_delta: Any, use_locking: bool = False,
                       name: str | None = None):
        """`ResourceScatterUpdate` of an `IndexedSlices` delta; returns the value after it."""
        return self._scatter("Update", sparse_delta.indices, sparse_delta.values, name)

    # ----------------------------------------------------------- serialization
    def to_proto(self, export_scope: str | None = None) -> Any:
        """A `VariableDef` proto (`is_resource: true`) naming this variable's ops."""
        if export_scope is not None and not self._handle.name.startswith(export_scope):
            return None
        strip = variables._strip
        vd = variable_pb2.VariableDef(
            variable_name=strip(export_scope, self._handle.name),
            initializer_name=strip(export_scope, self._initializer_op.name),
            snapshot_name=strip(export_scope, self._graph_element.name),
            trainable=self._trainable,
            is_resource=True,
        )
        if self._initial_value is not None:
            vd.initial_value_name = strip(export_scope, self._initial_value.name)
        return vd

    def __repr__(self) -> str:
        return (
            f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"
        )


def _conversion(v: ResourceVariable, dtype: Any = None, name: Any = None, as_ref: bool = False):
    if as_ref:
        return v.handle
    t = v.value()
    if dtype is not None and not dtype.is_compatible_with(t.dtype):
        raise ValueError(
            f"Incompatible type conversion requested to type '{dtype.name}' for variable of "
            f"type '{t.dtype.name}'"
        )
    return t


register_tensor_conversion_function(ResourceVariable, _conversion, priority=5)


def is_resource_variable(var: Any) -> bool:
    """True for a `ResourceVariable` (TF's `resource_variable_ops.is_resource_variable`)."""
    return getattr(var, "_is_resource_variable", False)


__all__ = ["ResourceVariable", "is_resource_variable"]
