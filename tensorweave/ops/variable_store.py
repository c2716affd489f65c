"""The variable store behind `tf.get_variable` (TF 1.x `variable_scope._VariableStore`).

One store per graph maps full names to `Variable`s and `PartitionedVariable`s. Private to
`variable_scope`, which owns the public API; split out only to keep modules small.

Partitioned variables (`<name>/part_<i>`, each an ordinary variable of this store) are made
by the methods `_VariableStore` inherits from `variable_store_partitioned`, which also holds
`_PartitionInfo` (re-exported here).
"""

from __future__ import annotations

import enum
import functools
import inspect
import os
import traceback
from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.ops import init_ops
from tensorweave.ops.variable_store_partitioned import (  # noqa: F401  (_PartitionInfo re-exported)
    _PartitionedStoreMixin,
    _PartitionInfo,
)
from tensorweave.ops.variables import GraphKeys, Variable

# Frames under this directory are left out of "Originally defined at" stacks.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class VariableSynchronization(enum.Enum):
    """When a distributed variable is aggregated (follows `tf.VariableSynchronization`)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How a distributed variable is aggregated (follows `tf.VariableAggregation`)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


def _needs_no_arguments(fn: Any) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not inspect.Parameter.empty
        or p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        for p in params
    )


def _accepts(fn: Any, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _user_stack() -> list[traceback.FrameSummary]:
    """The innermost five caller frames outside this package, innermost first (as TF).

    Source lines are looked up only if the stack is ever printed.
    """
    frames = traceback.StackSummary.extract(traceback.walk_stack(None), lookup_lines=False)
    mine = [f for f in frames if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR)]
    return mine[:5]


def _validate_sync(
    synchronization: Any, aggregation: Any, trainable: Any, name: str
) -> tuple[VariableSynchronization, VariableAggregation, bool]:
    """(synchronization, aggregation, trainable) with TensorFlow's defaults.

    Variables are trainable unless synchronized ON_READ.

    Raises:
      ValueError: for values that are not modes.
    """
    try:
        sync = VariableSynchronization(synchronization if synchronization is not None else 0)
    except ValueError:
        raise ValueError(
            f"Invalid variable synchronization mode: {synchronization} for variable: {name}"
        ) from None
    try:
        agg = VariableAggregation(aggregation if aggregation is not None else 0)
    except ValueError:
        raise ValueError(
            f"Invalid variable aggregation mode: {aggregation} for variable: {name}"
        ) from None
    if trainable is None:
        trainable = sync is not VariableSynchronization.ON_READ
    return sync, agg, trainable


class _VariableStore(_PartitionedStoreMixin):
    """The variables made by `get_variable` in one graph, by full name."""

    def __init__(self) -> None:
        self._vars: dict[str, Variable] = {}
        self._partitioned_vars: dict[str, Any] = {}
        self._stacks: dict[str, list[traceback.FrameSummary]] = {}

    def get_variable(
        self,
        name: str,
        shape: Any = None,
        dtype: Any = dtypes.float32,
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
    ) -> Variable:
        """Returns the existing variable `name` or creates it.

        Follows TensorFlow's `_VariableStore.get_variable`; `reuse` is True, False (must
        not exist), None (either, when called directly) or AUTO_REUSE.

        Raises:
          ValueError: for reuse violations, shape/dtype mismatches, missing shapes or
            unusable initializers.
        """
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
        try:
            dtype = dtypes.as_dtype(dtype).base_dtype
        except TypeError:
            pass
        synchronization, aggregation, trainable = _validate_sync(
            synchronization, aggregation, trainable, name
        )
        kwargs = {
            "name": name,
            "shape": shape,
            "dtype": dtype,
            "initializer": initializer,
            "regularizer": regularizer,
            "reuse": reuse,
            "trainable": trainable,
            "collections": collections,
            "caching_device": caching_device,
            "partitioner": partitioner,
            "validate_shape": validate_shape,
            "use_resource": use_resource,
            "synchronization": synchronization,
            "aggregation": aggregation,
        }
        if custom_getter is None:
            return self._true_getter(constraint=constraint, **kwargs)
        if _accepts(custom_getter, "constraint"):
            kwargs["constraint"] = constraint
        return custom_getter(getter=self._true_getter, **kwargs)

    def _true_getter(
        self,
        name: str,
        shape: Any = None,
        dtype: Any = dtypes.float32,
        initializer: Any = None,
        regularizer: Any = None,
        reuse: Any = None,
        trainable: Any = None,
        collections: Any = None,
        caching_device: Any = None,
        partitioner: Any = None,
        validate_shape: bool = True,
        use_resource: Any = None,
        constraint: Any = None,
        synchronization: Any = None,
        aggregation: Any = None,
    ) -> Any:
        single = {
            "name": name,
            "shape": shape,
            "dtype": dtype,
            "initializer": initializer,
            "regularizer": regularizer,
            "reuse": reuse,
            "trainable": trainable,
            "collections": collections,
            "caching_device": caching_device,
            "validate_shape": validate_shape,
            "constraint": constraint,
            "use_resource": use_resource,
        }
        is_scalar = isinstance(shape, list | tuple) and not shape
        if partitioner is not None and not is_scalar:
            if not callable(partitioner):
                raise ValueError(f"Partitioner must be callable, but received: {partitioner}")
            with graph_mod.name_scope(None):
                return self._get_partitioned_variable(partitioner=partitioner, **single)
        if reuse is True and name in self._partitioned_vars:
            return self._get_partitioned_variable(partitioner=None, **single)
        if f"{name}/part_0" in self._vars:
            raise ValueError(
                f"No partitioner was provided, but a partitioned version of the variable was "
                f"found: {name}/part_0. Perhaps a variable of the same name was already "
                "created with partitioning?"
            )
        return self._get_single_variable(**single)

    def _get_single_variable(
        self,
        name: str,
        shape: Any = None,
        dtype: Any = dtypes.float32,
        initializer: Any = None,
        regularizer: Any = None,
        partition_info: Any = None,
        reuse: Any = None,
        trainable: Any = None,
        collections: Any = None,
        caching_device: Any = None,
        validate_shape: bool = True,
        use_resource: Any = None,
        constraint: Any = None,
    ) -> Variable:
        """Gets or creates one (unpartitioned) variable; see `get_variable`."""
        from_value = initializer is not None and not callable(initializer)
        if shape is not None and from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = dtypes.as_dtype(dtype)
        shape = as_shape(shape)
        if name in self._vars:
            return self._existing(name, shape, dtype, reuse)
        if reuse is True:
            raise ValueError(
                f"Variable {name} does not exist, or was not created with tf.get_variable(). "
                "Did you mean to set reuse=tf.AUTO_REUSE in VarScope?"
            )
        if initializer is None:
            initializer, from_value = self._get_default_initializer(name, shape, dtype)
        init_val, variable_dtype = self._initial_value(
            initializer, from_value, shape, dtype, partition_info
        )
        graph = graph_mod.get_default_graph()
        # As TensorFlow's init_scope: variables never depend on the creator's control scope.
        with graph.control_dependencies(None):
            v = Variable(
                initial_value=init_val,
                name=name,
                trainable=trainable,
                collections=collections,
                caching_device=caching_device,
                dtype=variable_dtype,
                validate_shape=validate_shape,
                constraint=constraint,
                use_resource=use_resource,
            )
            self._vars[name] = v
            self._stacks[name] = _user_stack()
            if regularizer:
                with graph.colocate_with(v.op), graph.name_scope(name + "/Regularizer/"):
                    loss = regularizer(v)
                if loss is not None:
                    graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return v

    def _existing(self, name: str, shape: TensorShape, dtype: Any, reuse: Any) -> Variable:
        if reuse is False:
            stack = "".join(traceback.format_list(self._stacks.get(name, [])))
            raise ValueError(
                f"Variable {name} already exists, disallowed. Did you mean to set reuse=True "
                f"or reuse=tf.AUTO_REUSE in VarScope? Originally defined at:\n\n{stack}"
            )
        found = self._vars[name]
        if not shape.is_compatible_with(found.get_shape()):
            raise ValueError(
                f"Trying to share variable {name}, but specified shape {shape} and found "
                f"shape {found.get_shape()}."
            )
        if not dtype.is_compatible_with(found.dtype):
            raise ValueError(
                f"Trying to share variable {name}, but specified dtype {dtype.name} and found "
                f"dtype {found.dtype.name}."
            )
        return found

    @staticmethod
    def _initial_value(
        initializer: Any, from_value: bool, shape: TensorShape, dtype: Any, partition_info: Any
    ) -> tuple[Any, Any]:
        """(initial value or thunk, dtype for `Variable`) for a new variable."""
        if from_value:
            return initializer, None
        if inspect.isclass(initializer):
            initializer = initializer()
        if shape.is_fully_defined():
            dims = shape.as_list()
            if _accepts(initializer, "partition_info"):
                fn = functools.partial(
                    initializer, dims, dtype=dtype, partition_info=partition_info
                )
            else:
                fn = functools.partial(initializer, dims, dtype=dtype)
            return fn, dtype.base_dtype
        if _needs_no_arguments(initializer):
            return initializer, None
        raise ValueError(
            "The initializer passed is not valid. It should be a callable with no arguments "
            "and the shape should not be provided or an instance of "
            "`tf.keras.initializers.*' and `shape` should be fully defined."
        )

    @staticmethod
    def _get_default_initializer(name: str, shape: Any, dtype: Any) -> tuple[Any, bool]:
        """glorot_uniform for floats, zeros for ints, bools and strings.

        Raises:
          ValueError: for other dtypes (complex, ...).
        """
        if dtype.is_floating:
            return init_ops.glorot_uniform_initializer(), False
        if dtype.is_integer or dtype.is_unsigned or dtype.is_bool or dtype == dtypes.string:
            return init_ops.zeros_initializer(), False
        raise ValueError(f"An initializer for variable {name} of {dtype.base_dtype} is required")
