"""The `VariableScope` object: the `get_variable` defaults of a `tf.variable_scope`.

Split out of `variable_scope` (which re-exports it) to keep modules small; follows TF 1.x
`tf.VariableScope`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.variable_store import _VariableStore
from tensorweave.ops.variables import GraphKeys


class VariableScope:
    """Defaults for `get_variable` inside a `variable_scope` (follows `tf.VariableScope`).

    Attributes:
      name: the scope name, the prefix of variable names (`"foo/bar"`; `""` at the root).
      original_name_scope: the name scope opened when the scope was first entered
        (`"foo/bar/"`), to re-enter with `tf.name_scope`.
      reuse: False, True or `AUTO_REUSE`.
      initializer, regularizer, caching_device, partitioner, custom_getter, dtype,
      use_resource, constraint: defaults passed to `get_variable`.
    """

    def __init__(
        self,
        reuse: Any,
        name: str = "",
        initializer: Any = None,
        regularizer: Any = None,
        caching_device: Any = None,
        partitioner: Any = None,
        custom_getter: Any = None,
        name_scope: str = "",
        dtype: Any = dtypes.float32,
        use_resource: Any = None,
        constraint: Any = None,
    ):
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._reuse = reuse
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name, doc="The scope name.")
    original_name_scope = property(lambda self: self._name_scope, doc="Its first name scope.")
    reuse = property(lambda self: self._reuse, doc="False, True or AUTO_REUSE.")
    initializer = property(lambda self: self._initializer, doc="Default initializer.")
    dtype = property(lambda self: self._dtype, doc="Default dtype.")
    use_resource = property(lambda self: self._use_resource, doc="Default of `get_variable`.")
    regularizer = property(lambda self: self._regularizer, doc="Default regularizer.")
    caching_device = property(lambda self: self._caching_device, doc="Default caching device.")
    partitioner = property(lambda self: self._partitioner, doc="Default partitioner.")
    custom_getter = property(lambda self: self._custom_getter, doc="Default custom getter.")
    constraint = property(lambda self: self._constraint, doc="Default constraint.")

    def reuse_variables(self) -> None:
        """Makes `get_variable` in this scope return existing variables."""
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        """Sets the default initializer."""
        self._initializer = initializer

    def set_dtype(self, dtype: Any) -> None:
        """Sets the default dtype."""
        self._dtype = dtype

    def set_use_resource(self, use_resource: Any) -> None:
        """Sets the default `use_resource` of `get_variable` in this scope."""
        self._use_resource = use_resource

    def set_regularizer(self, regularizer: Any) -> None:
        """Sets the default regularizer."""
        self._regularizer = regularizer

    def set_caching_device(self, caching_device: Any) -> None:
        """Sets the default caching device."""
        self._caching_device = caching_device

    def set_partitioner(self, partitioner: Any) -> None:
        """Sets the default partitioner."""
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter: Any) -> None:
        """Sets the default custom getter."""
        self._custom_getter = custom_getter

    def get_collection(self, name: str) -> list[Any]:
        """The items of collection `name` whose names start with this scope's name + "/"."""
        return graph_mod.get_collection(name, self._name + "/" if self._name else "")

    def trainable_variables(self) -> list[Any]:
        """This scope's trainable variables."""
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self) -> list[Any]:
        """This scope's global variables."""
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self) -> list[Any]:
        """This scope's local variables."""
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(
        self,
        var_store: _VariableStore,
        name: str,
        shape: Any = None,
        dtype: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        reuse: Any = None,
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
        """`var_store.get_variable` for `<scope name>/<name>` with this scope's defaults.

        Runs outside any name scope: variable names depend only on variable scopes.

        Raises:
          ValueError: if a value `initializer`'s dtype differs from an explicit `dtype`, and
            for the store's errors.
        """
        regularizer = self._regularizer if regularizer is None else regularizer
        caching_device = self._caching_device if caching_device is None else caching_device
        partitioner = self._partitioner if partitioner is None else partitioner
        custom_getter = self._custom_getter if custom_getter is None else custom_getter
        reuse = self._reuse if reuse is None else reuse
        full_name = f"{self._name}/{name}" if self._name else name
        with graph_mod.name_scope(None):
            if dtype is not None and initializer is not None and not callable(initializer):
                init_dtype = convert_to_tensor(initializer).dtype.base_dtype
                if init_dtype != dtypes.as_dtype(dtype).base_dtype:
                    raise ValueError(
                        f"Initializer type '{init_dtype}' and explicit dtype '{dtype}' don't match."
                    )
            return var_store.get_variable(
                full_name,
                shape=shape,
                dtype=self._dtype if dtype is None else dtype,
                initializer=self._initializer if initializer is None else initializer,
                regularizer=regularizer,
                reuse=reuse,
                trainable=trainable,
                collections=collections,
                caching_device=caching_device,
                partitioner=partitioner,
                validate_shape=validate_shape,
                use_resource=self._use_resource if use_resource is None else use_resource,
                custom_getter=custom_getter,
                constraint=self._constraint if constraint is None else constraint,
                synchronization=synchronization,
                aggregation=aggregation,
            )

    def _get_partitioned_variable(
        self, var_store: _VariableStore, name: str | None, partitioner: Any = None, **kwargs: Any
    ) -> Any:
        """`var_store._get_partitioned_variable` for `<scope name>/<name>` (TF's private).

        An empty `name` names the variable after the scope itself (used by
        `create_partitioned_variables`).

        Raises:
          ValueError: if a custom getter is set or no partitioner is given.
        """
        if self._custom_getter is not None:
            raise ValueError(
                "Private access to _get_partitioned_variable is not allowed when a custom "
                f"getter is set.  Current custom getter: {self._custom_getter}.  It is likely "
                "that you're using create_partitioned_variables.  If so, consider instead "
                "using get_variable with a non-empty partitioner parameter instead."
            )
        partitioner = self._partitioner if partitioner is None else partitioner
        if partitioner is None:
            raise ValueError("No partitioner was specified")
        defaults = {
            "initializer": self._initializer,
            "regularizer": self._regularizer,
            "constraint": self._constraint,
            "caching_device": self._caching_device,
            "dtype": self._dtype,
        }
        for key, default in defaults.items():
            if kwargs.get(key) is None:
                kwargs[key] = default
        full_name = "/".join(n for n in (self._name, name) if n)
        with graph_mod.name_scope(None):
            return var_store._get_partitioned_variable(
                full_name, partitioner=partitioner, reuse=self._reuse, **kwargs
            )
