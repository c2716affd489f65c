"""`Graph`: the container of operations, following TensorFlow 1.x's `tf.Graph`.

Provides naming, device, colocation and control-dependency scopes, collections, and the
thread-local default-graph stack. The scopes other than name scopes live in `graph_scopes`
(`GraphScopes`, a base class of `Graph`).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

from tensorweave.framework import dtypes, graph_export
from tensorweave.framework import op_defs as _op_defs  # noqa: F401  (registers every op)
from tensorweave.framework.graph_scopes import GraphScopes
from tensorweave.framework.op_def import OpDef, op_def_registry
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.protos import versions_pb2

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/>]*$")


class Graph(GraphScopes):
    """A TensorFlow computation: operations and the tensors between them (follows `tf.Graph`).

    Building is thread-safe; a finalized graph rejects new ops with RuntimeError.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._ops: list[Operation] = []
        self._by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._collections: dict[str, list[Any]] = {}
        self._finalized = False
        self._seed: int | None = None
        self._init_scopes()
        self._unfeedable: set[int] = set()
        self._unfetchable: set[int] = set()
        self._functions: dict[str, Any] = {}
        # NOTE: the holders of the Python callables its PyFunc / PyGeneratorDataset nodes
        # name by token (`framework.py_funcs`): registered while the graph lives.
        self._py_funcs_used_in_graph: list[Any] = []
        # NOTE: the innermost cond/while context being built (`ops/control_flow_ctx`).
        self._control_flow_context: Any = None

    # ----------------------------------------------------------------- contents
    @property
    def version(self) -> int:
        """The number of ops added so far (grows monotonically)."""
        return len(self._ops)

    @property
    def finalized(self) -> bool:
        """True after `finalize()`."""
        return self._finalized

    @property
    def seed(self) -> int | None:
        """The graph-level random seed (`tf.set_random_seed`)."""
        return self._seed

    @seed.setter
    def seed(self, value: int | None) -> None:
        self._seed = value

    @property
    def _last_id(self) -> int:
        return len(self._ops)

    @property
    def building_function(self) -> bool:
        """Always False: function graphs are not supported."""
        return False

    @property
    def graph_def_versions(self) -> Any:
        """A `VersionDef` (producer 27, as TF 1.15 writes)."""
        return versions_pb2.VersionDef(producer=27)

    def get_operations(self) -> list[Operation]:
        """All ops, in creation order."""
        with self._lock:
            return list(self._ops)

    def _ops_since(self, version: int) -> list[Operation]:
        with self._lock:
            return self._ops[version:]

    def get_operation_by_name(self, name: str) -> Operation:
        """The op named `name`.

        Raises:
          TypeError: if `name` is not a string.
          KeyError: if there is no such op.
        """
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        op = self.as_graph_element(name, allow_tensor=False, allow_operation=True)
        return op

    def get_tensor_by_name(self, name: str) -> Tensor:
        """The tensor named `name` (`"op:0"`).

        Raises:
          TypeError: if `name` is not a string.
          KeyError/ValueError: if there is no such tensor.
        """
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(
        self, obj: Any, allow_tensor: bool = True, allow_operation: bool = True
    ) -> Any:
        """Resolves a Tensor, Operation, Variable or name to an element of this graph.

        Raises:
          TypeError: for objects that cannot be graph elements.
          ValueError: for elements of another graph, or a name of the wrong kind.
          KeyError: for names that do not exist in this graph.
        """
        if hasattr(obj, "_as_graph_element") and not isinstance(obj, str):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            return self._element_by_name(obj, allow_tensor, allow_operation)
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj} is not an element of this graph.")
            return obj
        kinds = " or ".join(
            k for k, ok in (("Tensor", allow_tensor), ("Operation", allow_operation)) if ok
        )
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {kinds}.")

    def _element_by_name(self, name: str, allow_tensor: bool, allow_operation: bool) -> Any:
        if ":" in name and allow_tensor:
            op_name, _, index = name.rpartition(":")
            try:
                idx = int(index)
            except ValueError:
                raise ValueError(
                    f"The name {name!r} looks a like a Tensor name, but is not a "
                    "valid one. Tensor names must be of the form "
                    '"<op_name>:<output_index>".'
                ) from None
            op = self._by_name.get(op_name)
            if op is None:
                raise KeyError(
                    f"The name {name!r} refers to a Tensor which does not exist. The "
                    f"operation, {op_name!r}, does not exist in the graph."
                )
            if idx >= len(op._outputs):
                raise KeyError(
                    f"The name {name!r} refers to a Tensor which does not exist. The "
                    f"operation, {op_name!r}, exists but only has "
                    f"{len(op._outputs)} outputs."
                )
            return op._outputs[idx]
        if ":" in name:
            raise ValueError(f"Name {name!r} appears to refer to a Tensor, not a Operation.")
        if not allow_operation:
            raise ValueError(
                f"The name {name!r} refers to an Operation, not a Tensor. Tensor "
                'names must be of the form "<op_name>:<output_index>".'
            )
        op = self._by_name.get(name)
        if op is None:
            raise KeyError(f"The name {name!r} refers to an Operation not in the graph.")
        return op

    # ------------------------------------------------------------------- naming
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """Returns `name` under the current name scope, made unique in this graph.

        Uniqueness is case-insensitive, as in TensorFlow: repeated names get `_1`, `_2`...
        suffixes.

        Args:
          name: the base name.
          mark_as_used: record the result so later calls do not return it again.

        Returns:
          The scoped, unique name.
        """
        if self._scopes.name_stack:
            name = self._scopes.name_stack + "/" + name
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    def get_name_scope(self) -> str:
        """The current name scope without a trailing slash."""
        return self._scopes.name_stack

    @contextlib.contextmanager
    def name_scope(self, name: str | None) -> Iterator[str]:
        """Opens a name scope; yields its prefix ending in `/` (follows `Graph.name_scope`).

        `name` ending in `/` re-enters that exact scope; None or "" resets to the root.

        Raises:
          ValueError: for names that are not valid TensorFlow scope names.
        """
        if name:
            regex = _VALID_SCOPE_NAME if self._scopes.name_stack else _VALID_OP_NAME
            if not regex.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
        old = self._scopes.name_stack
        if not name:
            new = ""
        elif name[-1] == "/":
            new = name[:-1]
        else:
            new = self.unique_name(name)
        self._scopes.name_stack = new
        try:
            yield new + "/" if new else ""
        finally:
            self._scopes.name_stack = old

    # ------------------------------------------------------------- collections
    def add_to_collection(self, name: str, value: Any) -> None:
        """Appends `value` to collection `name`."""
        self._check_not_finalized()
        with self._lock:
            self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names: Any, value: Any) -> None:
        """Adds `value` to each collection in `names` (a string or list), once each."""
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, name: str) -> list[Any]:
        """The live list of collection `name` (created if missing)."""
        with self._lock:
            return self._collections.setdefault(name, [])

    def get_collection(self, name: str, scope: str | None = None) -> list[Any]:
        """Returns a copy of collection `name` (follows `tf.get_collection`).

        Args:
          name: the collection key.
          scope: optional regex; only items whose `.name` matches it at the start are kept.

        Returns:
          A new list of the collected items.
        """
        with self._lock:
            items = list(self._collections.get(name, []))
        if scope is None:
            return items
        regex = re.compile(scope)
        return [x for x in items if hasattr(x, "name") and regex.match(x.name)]

    def get_all_collection_keys(self) -> list[str]:
        """Names of the non-empty collections whose keys are strings.

        As TensorFlow's `Graph.get_all_collection_keys`, keys of other types (the variable
        scope stores kept under tuple keys) are left out, so `export_meta_graph` does not
        warn about them.
        """
        with self._lock:
            return [k for k, v in self._collections.items() if v and isinstance(k, str)]

    def clear_collection(self, name: str) -> None:
        """Removes collection `name`."""
        self._check_not_finalized()
        with self._lock:
            self._collections.pop(name, None)

    # -------------------------------------------------------- feeding/fetching
    def prevent_feeding(self, tensor: Tensor) -> None:
        """Marks `tensor` as not feedable."""
        self._unfeedable.add(id(tensor))

    def is_feedable(self, tensor: Tensor) -> bool:
        """False for tensors marked with `prevent_feeding`."""
        return id(tensor) not in self._unfeedable

    def prevent_fetching(self, op: Operation) -> None:
        """Marks `op` as not fetchable."""
        self._unfetchable.add(id(op))

    def is_fetchable(self, tensor_or_op: Any) -> bool:
        """False for ops (or outputs of ops) marked with `prevent_fetching`."""
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return id(op) not in self._unfetchable

    # ------------------------------------------------------------- lifecycle
    def finalize(self) -> None:
        """Makes the graph read-only: adding ops raises RuntimeError afterwards."""
        self._finalized = True

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    def _check_not_finalized(self) -> None:
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    def _get_control_flow_context(self) -> Any:
        return self._control_flow_context

    def _set_control_flow_context(self, ctx: Any) -> None:
        self._control_flow_context = ctx

    def as_default(self) -> Any:
        """Context manager making this the default graph of the current thread."""
        return _default_graph(self)

    def as_graph_def(self, from_version: int | None = None, add_shapes: bool = False) -> Any:
        """This graph (or the ops added since `from_version`) as a `GraphDef` proto."""
        return graph_export.graph_to_graph_def(
            self, from_version=from_version, add_shapes=add_shapes
        )

    # ------------------------------------------------------------- op creation
    def create_op(
        self,
        op_type: str,
        inputs: list[Tensor],
        dtypes: list[Any] | None = None,
        input_types: list[Any] | None = None,
        name: str | None = None,
        attrs: dict[str, Any] | None = None,
        op_def: OpDef | None = None,
        compute_shapes: bool = True,
        compute_device: bool = True,
    ) -> Operation:
        """Adds an op (follows `Graph.create_op`). Prefer the op functions (`tf.add`...).

        `name` is made unique under the current name scope, unless it ends with `/`, in
        which case it is used as-is without the slash (the op's own name scope).

        Raises:
          RuntimeError: if the graph is finalized.
          ValueError: for invalid names, or from the op's shape function.
          TypeError: for inputs from another graph.
        """
        self._check_not_finalized()
        for t in inputs:
            if not isinstance(t, Tensor):
                raise TypeError(f"Input must be a Tensor, got {t!r}")
            if t.graph is not self:
                raise ValueError(f"Tensor {t.name} must be from the same graph as the new op.")
        if op_def is None:
            op_def = op_def_registry.get(op_type)
        attrs = dict(attrs or {})
        if dtypes is None:
            dtypes = op_def.output_dtypes(attrs) if op_def is not None else []
        with self._lock:
            name = self._new_op_name(name, op_type)
            control = self._control_inputs_for(inputs)
            op = Operation(
                self,
                name,
                op_type,
                op_def,
                list(inputs),
                [_as_dtype(d) for d in dtypes],
                attrs,
                control,
                len(self._ops),
            )
            self._finish_op(op, compute_device)
            self._ops.append(op)
            self._by_name[name] = op
        if self._control_flow_context is not None:
            # NOTE: as TensorFlow's `_control_flow_post_processing`: the context may route
            # inputs through Switch/Enter ops and add a pivot control input.
            op._control_flow_context = self._control_flow_context
            self._control_flow_context.AddOp(op)
        if compute_shapes:
            _set_shapes_for_outputs(op)
        return op

    def _new_op_name(self, name: str | None, op_type: str) -> str:
        """The name of a new op, as `create_op` describes it; the caller holds the lock.

        Raises:
          ValueError: for an invalid or duplicate name.
        """
        if name is None:
            name = self.unique_name(op_type)
        elif name.endswith("/"):
            name = name[:-1]
            self._names_in_use.setdefault(name.lower(), 1)
        else:
            name = self.unique_name(name)
        if not _VALID_OP_NAME.match(name):
            raise ValueError(f"'{name}' is not a valid node name")
        if name in self._by_name:
            raise ValueError(f"Duplicate node name in graph: '{name}'")
        return name


def _as_dtype(d: Any) -> dtypes.DType:
    return dtypes.as_dtype(d)


def _set_shapes_for_outputs(op: Operation) -> None:
    fn = op.op_def.shape_fn if op.op_def is not None else None
    if fn is None:
        return
    shapes = fn(op)
    if shapes is None:
        return
    if len(shapes) != len(op._outputs):
        raise ValueError(
            f"Shape function for op {op.type} returned {len(shapes)} shapes for "
            f"{len(op._outputs)} outputs"
        )
    for t, s in zip(op._outputs, shapes):
        if s is not None:
            t._shape = s if isinstance(s, TensorShape) else TensorShape(s)


# ------------------------------------------------------------ default graph
class _GraphStack(threading.local):
    def __init__(self) -> None:
        self.stack: list[Graph] = []


class _ProcessDefaults:
    """What TensorFlow keeps process-wide beside the per-thread graph stack: the global
    default graph (`reset_default_graph` replaces it) and the default of `use_resource`
    for new variables (`tf.enable_resource_variables`, which a new graph does not reset)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.graph: Graph | None = None
        self.use_resource = False


# NOTE: the default-graph stack is TensorFlow API state (`tf.get_default_graph`): the one
# process-wide object of this module (docs/internals.md, "Process state").
_GRAPH_STACK = _GraphStack()
_DEFAULTS = _ProcessDefaults()


@contextlib.contextmanager
def _default_graph(graph: Graph) -> Iterator[Graph]:
    _GRAPH_STACK.stack.append(graph)
    try:
        yield graph
    finally:
        _GRAPH_STACK.stack.pop()


def get_default_graph() -> Graph:
    """Returns the default graph (follows `tf.get_default_graph`).

    That is the innermost graph entered with `as_default()` in this thread, else the global
    default graph.
    """
    if _GRAPH_STACK.stack:
        return _GRAPH_STACK.stack[-1]
    with _DEFAULTS.lock:
        if _DEFAULTS.graph is None:
            _DEFAULTS.graph = Graph()
        return _DEFAULTS.graph


def reset_default_graph() -> None:
    """Replaces the global default graph with a new empty one.

    Raises:
      AssertionError: if called inside a `with graph.as_default():` block (TensorFlow's
        behaviour).
    """
    if _GRAPH_STACK.stack:
        raise AssertionError(
            "Do not use tf.reset_default_graph() to clear nested graphs. If you need a cleared "
            "graph, exit the nesting and create a new graph."
        )
    with _DEFAULTS.lock:
        _DEFAULTS.graph = Graph()


def set_resource_variables_default(enabled: bool) -> None:
    """Sets the process-wide default of `use_resource` (`tf.enable_resource_variables`;
    kept across `reset_default_graph`, as in TensorFlow)."""
    _DEFAULTS.use_resource = bool(enabled)


def resource_variables_default() -> bool:
    """The process-wide default of `use_resource` for new variables."""
    return _DEFAULTS.use_resource


def has_default_graph() -> bool:
    """True inside a `with graph.as_default():` block."""
    return bool(_GRAPH_STACK.stack)


def name_scope(name: str | None, default_name: str | None = None, values: Any = None) -> Any:
    """`tf.name_scope(name, default_name=None, values=None)`: enters a name scope.

    The scope is opened in the graph of `values` (or the default graph).

    Raises:
      ValueError: if both `name` and `default_name` are None while `values` is given.
    """
    n = default_name if name is None else name
    if n is None and values is not None:
        raise ValueError(
            f"At least one of name ({name}) and default_name ({default_name}) must be provided."
        )
    graph = _graph_from_values(values)
    return _NameScope(graph, n)


class _NameScope:
    def __init__(self, graph: Graph, name: str | None):
        self._graph = graph
        self._name = name
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> str:
        self._stack.enter_context(self._graph.as_default())
        return self._stack.enter_context(self._graph.name_scope(self._name))

    def __exit__(self, *exc: Any) -> None:
        self._stack.close()


def _graph_from_values(values: Any) -> Graph:
    if values:
        for v in values:
            g = getattr(v, "graph", None)
            if isinstance(g, Graph):
                return g
    return get_default_graph()


def _default_graph_callable(fn_name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(get_default_graph(), fn_name)(*args, **kwargs)

    call.__name__ = fn_name
    call.__doc__ = f"`Graph.{fn_name}` on the default graph (follows `tf.{fn_name}`)."
    return call


device = _default_graph_callable("device")
colocate_with = _default_graph_callable("colocate_with")
control_dependencies = _default_graph_callable("control_dependencies")
container = _default_graph_callable("container")
add_to_collection = _default_graph_callable("add_to_collection")
add_to_collections = _default_graph_callable("add_to_collections")
get_collection = _default_graph_callable("get_collection")
get_collection_ref = _default_graph_callable("get_collection_ref")


def get_name_scope() -> str:
    """The default graph's current name scope."""
    return get_default_graph().get_name_scope()


def set_random_seed(seed: int | None) -> None:
    """Sets the default graph's graph-level seed (follows `tf.set_random_seed`)."""
    get_default_graph().seed = seed
