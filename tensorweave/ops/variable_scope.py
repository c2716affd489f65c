"""Variable sharing: `tf.variable_scope`, `tf.get_variable` (TF 1.x `variable_scope.py`).

State lives in the graph, as in TensorFlow, so independent graphs never interfere:
* the `_VariableStore` (full variable name -> `Variable`) is the single item of the graph
  collection `("__variable_store",)`;
* the current `VariableScope` and the `default_name` counters are thread-local, in a
  `_VariableScopeStore` kept in the collection `("__varscope",)`.

Variable names depend only on the variable scope; op names inside a `variable_scope` come
from the name scope it opens (`foo`, then `foo_1` when re-entered). Variables are reference
variables (`tensorweave.ops.variables.Variable`), or resource variables with `use_resource`.
With a `partitioner`, `get_variable` returns a `PartitionedVariable` (see
`tensorweave.ops.partitioned_variables`).
"""

from __future__ import annotations

import copy
import enum
import functools
import logging
import threading
from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.ops.variable_scope_object import VariableScope
from tensorweave.ops.variable_store import (  # noqa: F401  (_PartitionInfo: TF's home)
    VariableAggregation,
    VariableSynchronization,
    _PartitionInfo,
    _VariableStore,
)
from tensorweave.ops.variables import GraphKeys

_log = logging.getLogger(__name__)


class _ReuseMode(enum.Enum):
    """Reuse modes beyond True/None."""

    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE
"""`reuse=AUTO_REUSE`: `get_variable` creates missing variables and returns existing ones."""


_VARSTORE_KEY = ("__variable_store",)
_VARSCOPESTORE_KEY = ("__varscope",)


class _NameScope:
    """A re-enterable `graph.name_scope(name)`: each entry opens the scope afresh."""

    def __init__(self, graph: Any, name: str | None):
        self._graph = graph
        self._name = name
        self._stack: list[Any] = []

    def __enter__(self) -> str:
        cm = self._graph.name_scope(self._name)
        entered = cm.__enter__()
        self._stack.append(cm)
        return entered

    def __exit__(self, *exc: Any) -> None:
        if self._stack:  # a second exit after an improper-nesting error is a no-op
            self._stack.pop().__exit__(*exc)


def no_regularizer(_: Any) -> None:
    """A regularizer that disables regularization (follows `tf.no_regularizer`)."""
    return None


class _VariableScopeStore(threading.local):
    """The current variable scope and the `default_name` counters of one thread."""

    def __init__(self) -> None:
        super().__init__()
        self.current_scope = VariableScope(False)
        self.variable_scopes_count: dict[str, int] = {}

    def open_variable_scope(self, scope_name: str) -> None:
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name: str | None) -> None:
        for k in self.variable_scopes_count:
            if scope_name is None or k.startswith(scope_name + "/"):
                self.variable_scopes_count[k] = 0

    def variable_scope_count(self, scope_name: str) -> int:
        return self.variable_scopes_count.get(scope_name, 0)


def _graph_singleton(key: tuple[str], factory: Any) -> Any:
    graph = graph_mod.get_default_graph()
    with graph._lock:
        ref = graph.get_collection_ref(key)
        if not ref:
            ref.append(factory())
        return ref[0]


def _get_default_variable_store() -> _VariableStore:
    """The default graph's variable store (created on first use)."""
    return _graph_singleton(_VARSTORE_KEY, _VariableStore)


def get_variable_scope_store() -> _VariableScopeStore:
    """The default graph's variable-scope store (its state is per thread)."""
    return _graph_singleton(_VARSCOPESTORE_KEY, _VariableScopeStore)


def get_variable_scope() -> VariableScope:
    """This thread's current variable scope in the default graph (`tf.get_variable_scope`)."""
    return get_variable_scope_store().current_scope


def get_variable(
    name: str,
    shape: Any = None,
    dtype: Any = None,
    initializer: Any = None,
    regularizer: Any = None,
    trainable: Any = None,
    collections: Any = None,
    caching_device: Any = None,
    partitioner: Any = None,
    validate_shape: bool = True,
    use_resource: Any = None,
    custom_getter: Any = None,
    constraint: Any = None,
    synchronization: Any = None,
    aggregation: Any = None,
) -> Any:
    """Gets the variable `<scope>/<name>` or creates it (follows TF 1.x `tf.get_variable`).

    Reuse follows the current scope: with `reuse=False` (the default) the variable must
    not exist yet, with `reuse=True` it must exist, with `AUTO_REUSE` either.

    Args:
      name: variable name, prefixed with the current variable scope's name.
      shape: shape of a new variable (must be fully defined unless the initializer is a
        value); checked for compatibility when reusing.
      dtype: dtype (default: the scope's, float32); checked when reusing.
      initializer: an initializer object/class, a callable `(shape, dtype, ...)`, or a value
        (Tensor, Python or NumPy) giving the shape. Default: the scope's, else
        glorot_uniform for floats and zeros for integers, bools and strings.
      regularizer: `fn(variable) -> loss or None`; losses go to `REGULARIZATION_LOSSES`.
      trainable: add to `TRAINABLE_VARIABLES` (default True unless ON_READ synchronized).
      collections: collections to add to (default `[GLOBAL_VARIABLES]`).
      caching_device: device of the `read` snapshot.
      partitioner: `fn(shape=, dtype=) -> partitions` (e.g. `fixed_size_partitioner(4)`):
        the number of parts per axis, at most one > 1. Ignored for scalars. The variable
        is then created as parts `<name>/part_<i>` (see `PartitionedVariable`); when
        reusing, a partitioner's result must match the existing partitioning.
      validate_shape: if False, the initial value's shape may be unknown.
      use_resource: create a `ResourceVariable` (default: the scope's, else
        `tf.resource_variables_enabled()`).
      custom_getter: `fn(getter, name, *args, **kwargs)` wrapping the real getter.
      constraint: projection applied by optimizers after updates.
      synchronization: a `VariableSynchronization`.
      aggregation: a `VariableAggregation`.

    Returns:
      The `Variable`, or a `PartitionedVariable` when a partitioner applies.

    Raises:
      ValueError: "Variable foo/v already exists, disallowed. ...", "Variable foo/v does
        not exist, or was not created with tf.get_variable(). ...", "Trying to share
        variable foo/v, but specified shape (2,) and found shape (3,).", the dtype mismatch,
        a shape given with a value initializer, an unusable initializer or default dtype;
        for partitioned variables, a partitioner that is not callable or returns a bad
        list, a shape that is not fully defined, partition or shape mismatches on reuse,
        and mixing partitioned and unpartitioned variables of one name.
    """
    return get_variable_scope().get_variable(
        _get_default_variable_store(),
        name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        trainable=trainable,
        collections=collections,
        caching_device=caching_device,
        partitioner=partitioner,
        validate_shape=validate_shape,
        use_resource=use_resource,
        custom_getter=custom_getter,
        constraint=constraint,
        synchronization=synchronization,
        aggregation=aggregation,
    )


def _get_partitioned_variable(name: str | None, partitioner: Any = None, **kwargs: Any) -> Any:
    """A `PartitionedVariable` in the current scope, with its reuse (TF's private helper).

    Args:
      name: the variable's name under the scope (None: the scope's own name).
      partitioner: the partitioner (default: the scope's).
      **kwargs: shape, dtype, initializer, regularizer, trainable, collections,
        caching_device, validate_shape, constraint.

    Raises:
      ValueError: as `VariableScope._get_partitioned_variable` and `get_variable`.
    """
    kwargs.setdefault("trainable", True)
    return get_variable_scope()._get_partitioned_variable(
        _get_default_variable_store(), name, partitioner=partitioner, **kwargs
    )


def get_local_variable(
    name: str,
    shape: Any = None,
    dtype: Any = None,
    initializer: Any = None,
    regularizer: Any = None,
    trainable: Any = False,
    collections: Any = None,
    caching_device: Any = None,
    partitioner: Any = None,
    validate_shape: bool = True,
    use_resource: Any = None,
    custom_getter: Any = None,
    constraint: Any = None,
    synchronization: Any = None,
    aggregation: Any = None,
) -> Any:
    """`get_variable` for a local variable (follows `tf.get_local_variable`).

    The variable goes to `LOCAL_VARIABLES` and is not trainable (`trainable` is ignored).
    """
    collections = [*(collections or []), GraphKeys.LOCAL_VARIABLES]
    return get_variable(
        name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        trainable=False,
        collections=collections,
        caching_device=caching_device,
        partitioner=partitioner,
        validate_shape=validate_shape,
        use_resource=use_resource,
        custom_getter=custom_getter,
        constraint=constraint,
        synchronization=synchronization,
        aggregation=aggregation,
    )


def _maybe_wrap_custom_getter(custom_getter: Any, old_getter: Any) -> Any:
    """`custom_getter` calling through `old_getter` (nested scopes' getters compose)."""
    if old_getter is None:
        return custom_getter

    def wrapped(getter: Any, *args: Any, **kwargs: Any) -> Any:
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)

    return wrapped


_OVERRIDES = (
    "initializer",
    "regularizer",
    "caching_device",
    "partitioner",
    "dtype",
    "use_resource",
)


class _pure_variable_scope:  # noqa: N801  (TensorFlow's name)
    """Enters a variable scope without opening a name scope (TensorFlow's helper)."""

    def __init__(
        self,
        name_or_scope: Any,
        reuse: Any = None,
        old_name_scope: Any = None,
        constraint: Any = None,
        custom_getter: Any = None,
        **overrides: Any,
    ):
        self._name_or_scope = name_or_scope
        self._reuse = reuse
        self._old_name_scope = old_name_scope
        self._constraint = constraint
        self._custom_getter = custom_getter
        self._overrides = overrides
        self._store = get_variable_scope_store()
        self._last = None
        if isinstance(name_or_scope, VariableScope):
            self._new_name = name_or_scope.name
            self._cached = self._derive(
                name_or_scope, reuse or name_or_scope.reuse, name_or_scope.original_name_scope
            )

    def _derive(self, base: VariableScope, reuse: Any, name_scope: str) -> VariableScope:
        scope = VariableScope(
            reuse,
            name=self._new_name,
            initializer=base.initializer,
            regularizer=base.regularizer,
            caching_device=base.caching_device,
            partitioner=base.partitioner,
            custom_getter=base.custom_getter,
            name_scope=name_scope,
            dtype=base.dtype,
            use_resource=base.use_resource,
            constraint=self._constraint,
        )
        for attr in _OVERRIDES:
            if self._overrides.get(attr) is not None:
                getattr(scope, "set_" + attr)(self._overrides[attr])
        if self._custom_getter is not None:
            scope.set_custom_getter(
                _maybe_wrap_custom_getter(self._custom_getter, base.custom_getter)
            )
        return scope

    def __enter__(self) -> VariableScope:
        self._old = self._store.current_scope
        if isinstance(self._name_or_scope, VariableScope):
            self._store.open_variable_scope(self._new_name)
            self._old_subscopes = copy.copy(self._store.variable_scopes_count)
            scope = self._cached
        else:
            old = self._old
            self._new_name = (
                f"{old.name}/{self._name_or_scope}" if old.name else self._name_or_scope
            )
            reuse = self._reuse or old.reuse  # reuse is inherited by sub-scopes
            name_scope = (
                self._name_or_scope if self._old_name_scope is None else self._old_name_scope
            )
            scope = self._derive(old, reuse, name_scope)
            self._store.open_variable_scope(self._new_name)
        self._store.current_scope = scope
        self._last = scope
        return scope

    def __exit__(self, *exc: Any) -> None:
        if self._store.current_scope is not self._last:
            raise RuntimeError("Improper nesting of variable_scope.")
        if isinstance(self._name_or_scope, VariableScope):
            self._store.variable_scopes_count = self._old_subscopes
        else:
            self._store.close_variable_subscopes(self._new_name)
        self._store.current_scope = self._old


def _get_unique_variable_scope(prefix: str) -> str:
    """`prefix`, or `prefix_N`, unused among the current scope's sub-scopes."""
    store = get_variable_scope_store()
    current = store.current_scope
    name = f"{current.name}/{prefix}" if current.name else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    idx = 1
    while store.variable_scope_count(f"{name}_{idx}") > 0:
        idx += 1
    return f"{prefix}_{idx}"


class variable_scope:  # noqa: N801  (TensorFlow's name)
    """Opens a variable scope and its name scope (follows TF 1.x `tf.variable_scope`).

    `with variable_scope("foo"):` prefixes variable names with `foo/` and op names with the
    name scope `foo/` (`foo_1/` when `foo` is already taken). Passing a `VariableScope`
    re-enters it: same variable names, a fresh name scope named after its last component.
    With `name_or_scope=None`, `default_name` is made unique (`layer`, `layer_1`, ...)
    among the current scope's sub-scopes.

    Args:
      name_or_scope: a string or `VariableScope`.
      default_name: the name to uniquify when `name_or_scope` is None.
      values: tensors the ops will use; selects their graph as the default graph.
      initializer, regularizer, caching_device, partitioner, dtype, use_resource,
        constraint: defaults for `get_variable` in this scope and its sub-scopes
        (`constraint` only in this scope, as in TensorFlow).
      custom_getter: a getter wrapping the enclosing scope's getter.
      reuse: True (reuse, inherited by sub-scopes and irrevocable), None/False (inherit),
        or `AUTO_REUSE`.
      auxiliary_name_scope: if False, do not open a name scope (re-enter the current one).

    Raises:
      TypeError: if both names are None, `name_or_scope` has the wrong type, or
        `auxiliary_name_scope` is not a bool.
      ValueError: for an invalid `reuse`, or `reuse=True` with a `default_name` scope.
    """

    def __init__(
        self,
        name_or_scope: Any,
        default_name: str | None = None,
        values: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        caching_device: Any = None,
        partitioner: Any = None,
        custom_getter: Any = None,
        reuse: Any = None,
        dtype: Any = None,
        use_resource: Any = None,
        constraint: Any = None,
        auxiliary_name_scope: bool = True,
    ):
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if reuse is False:
            reuse = None  # False means "inherit", exactly like None
        if not (reuse is True or reuse is None or reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError(
                "The auxiliary_name_scope must be `True` or `False`, while get "
                f"{auxiliary_name_scope}"
            )
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._reuse = reuse
        self._scope_args = {
            "initializer": initializer,
            "regularizer": regularizer,
            "caching_device": caching_device,
            "partitioner": partitioner,
            "custom_getter": custom_getter,
            "dtype": dtype,
            "use_resource": use_resource,
            "constraint": constraint,
        }
        self._graph = graph_mod._graph_from_values(list(values or []))
        self._auxiliary_name_scope = auxiliary_name_scope
        self._cached_pure_scope: _pure_variable_scope | None = None
        self._current_name_scope: Any = None

    def __enter__(self) -> VariableScope:
        self._graph_context = self._graph.as_default()
        self._graph_context.__enter__()
        try:
            if self._cached_pure_scope is not None:
                if self._current_name_scope is not None:
                    self._current_name_scope.__enter__()
                return self._cached_pure_scope.__enter__()
            return self._enter_uncached()
        except BaseException:
            self._graph_context.__exit__(None, None, None)
            raise

    def _enter_uncached(self) -> VariableScope:
        graph = self._graph
        name_scope_cm = None
        if not self._auxiliary_name_scope:
            current = graph.get_name_scope()
            name_scope_cm = _NameScope(graph, current + "/" if current else "")
        scope = self._name_or_scope
        if scope is None:
            if self._reuse:
                raise ValueError("reuse=True cannot be used without a name_or_scope")
            name_scope_cm = name_scope_cm or _NameScope(graph, self._default_name)
            entered = name_scope_cm.__enter__()
            self._current_name_scope = name_scope_cm
            pure = _pure_variable_scope(
                _get_unique_variable_scope(self._default_name),
                old_name_scope=entered,
                **self._scope_args,
            )
            return self._enter_pure(pure)
        if not isinstance(scope, VariableScope | str):
            raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
        short = scope if isinstance(scope, str) else scope.name.split("/")[-1]
        old_name_scope = None
        if short or name_scope_cm is not None:
            name_scope_cm = name_scope_cm or _NameScope(graph, short)
            entered = name_scope_cm.__enter__()
            self._current_name_scope = name_scope_cm
            old_name_scope = entered if isinstance(scope, str) else scope.original_name_scope
        pure = _pure_variable_scope(
            scope, reuse=self._reuse, old_name_scope=old_name_scope, **self._scope_args
        )
        return self._enter_pure(pure)

    def _enter_pure(self, pure: _pure_variable_scope) -> VariableScope:
        try:
            entered = pure.__enter__()
        except BaseException:
            if self._current_name_scope is not None:
                self._current_name_scope.__exit__(None, None, None)
            raise
        self._cached_pure_scope = pure
        return entered

    def __exit__(self, *exc: Any) -> None:
        try:
            self._cached_pure_scope.__exit__(*exc)
        finally:
            try:
                if self._current_name_scope is not None:
                    self._current_name_scope.__exit__(*exc)
            finally:
                self._graph_context.__exit__(*exc)


def variable_op_scope(
    values: Any, name_or_scope: Any, default_name: str | None = None, **kwargs: Any
) -> variable_scope:
    """Deprecated argument order of `variable_scope` (follows `tf.variable_op_scope`)."""
    return variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs)


def create_partitioned_variables(
    shape: Any,
    slicing: Any,
    initializer: Any,
    dtype: Any = dtypes.float32,
    trainable: bool = True,
    collections: Any = None,
    name: str | None = None,
    reuse: Any = None,
) -> list[Any]:
    """The parts of a new partitioned variable (deprecated `tf.create_partitioned_variables`).

    Args:
      shape: list of int, the full shape.
      slicing: list of int, the number of parts per axis (at most one > 1).
      initializer: a full-shape `Tensor`/value (sliced per part) or an initializer called
        once per part with the part's shape and `partition_info`.
      dtype: the dtype (ignored for a Tensor initializer).
      trainable: also add the parts to `TRAINABLE_VARIABLES`.
      collections: collections of the parts (default `[GLOBAL_VARIABLES]`).
      name: the variable scope / full name (default "PartitionedVariable", uniquified).
      reuse: True to reuse existing parts, None to inherit the scope's reuse.

    Returns:
      list of `Variable`, in offset order.

    Raises:
      ValueError: if `shape` and `slicing` differ in length, `shape` is a scalar, or for
        the errors of `tf.get_variable` with a partitioner.
    """
    _log.warning(
        "create_partitioned_variables is deprecated.  Use tf.get_variable with a "
        "partitioner set, or tf.get_partitioned_variable_list, instead."
    )
    if len(shape) != len(slicing):
        raise ValueError(
            "The 'shape' and 'slicing' of a partitioned Variable must have the length: "
            f"shape: {shape}, slicing: {slicing}"
        )
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")

    def partitioner(**unused_kwargs: Any) -> list[int]:
        return list(slicing)

    with variable_scope(name, "PartitionedVariable", reuse=reuse):
        partitioned_var = _get_partitioned_variable(
            name=None,
            shape=shape,
            dtype=dtype,
            initializer=initializer,
            trainable=trainable,
            partitioner=partitioner,
            collections=collections,
        )
        return list(partitioned_var)


__all__ = [
    "AUTO_REUSE",
    "VariableAggregation",
    "VariableScope",
    "VariableSynchronization",
    "create_partitioned_variables",
    "get_local_variable",
    "get_variable",
    "get_variable_scope",
    "no_regularizer",
    "variable_op_scope",
    "variable_scope",
]
