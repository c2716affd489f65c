"""Partitioned variables in the variable store behind `tf.get_variable` (TF 1.x).

Split out of `variable_store` (whose `_VariableStore` inherits `_PartitionedStoreMixin`) to
keep modules small; private to `variable_scope`, which re-exports `_PartitionInfo`.

Partitioned variables follow TensorFlow's `_VariableStore._get_partitioned_variable`: the
parts `<name>/part_<i>` are ordinary variables of this store, each created with a
`_PartitionInfo(full_shape, var_offset)` passed to its initializer (so variance-scaling
initializers use the full shape's fans) and tagged with a `SaveSliceInfo` for the Saver.
A value initializer (Tensor, array) of the full shape is sliced per part.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.ops import array_ops
from tensorweave.ops.partitioned_variables import (
    PartitionedVariable,
    SaveSliceInfo,
    _get_slice_dim_and_num_slices,
    _iter_slices,
)
from tensorweave.ops.variables import Variable


class _PartitionInfo:
    """Where a partition sits in its full variable (TensorFlow's `_PartitionInfo`).

    Args:
      full_shape: shape of the whole variable (list of ints).
      var_offset: offset of this partition in each dimension.

    Raises:
      TypeError: if either is not a sequence.
      ValueError: if their lengths differ or an offset is outside the shape.
    """

    def __init__(self, full_shape: Any, var_offset: Any):
        for what, value in (("full_shape", full_shape), ("var_offset", var_offset)):
            if not isinstance(value, list | tuple):
                raise TypeError(
                    f"`{what}` must be a sequence (like tuple or list) instead of "
                    f"{type(value).__name__}"
                )
        if len(var_offset) != len(full_shape):
            raise ValueError(
                f"Expected equal length, but `var_offset` is of length {len(var_offset)} while "
                f"full_shape is of length {len(full_shape)}."
            )
        for offset, size in zip(var_offset, full_shape):
            if offset < 0 or offset >= size:
                raise ValueError(
                    f"Expected 0 <= offset < shape but found offset={offset}, shape={size} for "
                    f"var_offset={var_offset}, full_shape={full_shape}"
                )
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)

    def single_slice_dim(self, shape: Any) -> int | None:
        """The one dimension in which a partition of `shape` differs from the full shape.

        Raises:
          ValueError: for a partition exceeding the full shape or cut along several dims.
        """
        if len(shape) != len(self.full_shape):
            raise ValueError(
                f"Expected equal length, but received shape={shape} of length {len(shape)} "
                f"while self.full_shape={self.full_shape} is of length {len(self.full_shape)}."
            )
        slice_dim = None
        for i, (offset, size, full) in enumerate(zip(self.var_offset, shape, self.full_shape)):
            if offset + size > full:
                raise ValueError(
                    f"With self.var_offset={self.var_offset}, a partition of shape={shape} "
                    f"would exceed self.full_shape={self.full_shape} in dimension {i}."
                )
            if size != full:
                if slice_dim is not None:
                    raise ValueError(
                        f"Cannot use single_slice_dim() with shape={shape} and "
                        f"self.full_shape={self.full_shape} since slice dim could be either "
                        f"dimension {i} or {slice_dim}."
                    )
                slice_dim = i
        return slice_dim

    def single_offset(self, shape: Any) -> int:
        """The offset along the partitioned dimension (0 when not partitioned)."""
        dim = self.single_slice_dim(shape)
        return 0 if dim is None else self.var_offset[dim]


def _call_partitioner(partitioner: Any, shape: TensorShape, dtype: Any) -> list[int]:
    """The validated partition list of `partitioner(shape=, dtype=)` (TensorFlow's rules).

    Raises:
      ValueError: for shapes that are not fully defined or scalar, or a bad partition list.
    """
    if not shape.is_fully_defined():
        raise ValueError(
            f"Shape of a new partitioned variable must be fully defined, but instead was {shape}."
        )
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, list | tuple):
        raise ValueError(f"Partitioner must return a sequence, but saw: {slicing}")
    if len(slicing) != shape.ndims:
        raise ValueError(
            "Partitioner returned a partition list that does not match the Variable's rank: "
            f"{slicing} vs. {shape}"
        )
    if any(p < 1 for p in slicing):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {slicing}")
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError(
            f"Can only slice a variable along one dimension: shape: {shape}, partitioning: "
            f"{slicing}"
        )
    return list(slicing)


class _PartitionedStoreMixin:
    """The partitioned-variable methods of `_VariableStore`.

    Uses the store's `_vars`, `_partitioned_vars`, `_get_single_variable` and
    `_get_default_initializer`.
    """

    def _get_partitioned_variable(
        self,
        name: str,
        partitioner: Any,
        shape: Any = None,
        dtype: Any = dtypes.float32,
        initializer: Any = None,
        regularizer: Any = None,
        reuse: Any = None,
        trainable: Any = None,
        collections: Any = None,
        caching_device: Any = None,
        validate_shape: bool = True,
        constraint: Any = None,
        use_resource: Any = None,
    ) -> PartitionedVariable:
        """Gets or creates the partitioned variable `name` (TF's `_get_partitioned_variable`).

        `partitioner` may be None only when reusing (`reuse=True`): the partitioning is
        then not checked. A callable initializer is called once per part with the part's
        shape and `partition_info`; a value initializer must have the full shape.

        Raises:
          ValueError: for a name taken by an unpartitioned variable, reuse violations,
            shape/dtype/partition mismatches with the existing variable, stale parts of an
            earlier partitioning, or a bad partitioner result.
        """
        if name in self._vars:
            raise ValueError(
                "A partitioner was provided, but an unpartitioned version of the variable was "
                f"found: {name}.  Perhaps a variable of the same name was already created "
                "without partitioning?"
            )
        dtype = dtypes.as_dtype(dtype).base_dtype
        shape = as_shape(shape)
        if isinstance(initializer, Tensor):
            shape = shape.merge_with(initializer.shape)
        partitions = None
        if not reuse or partitioner:
            partitions = _call_partitioner(partitioner, shape, dtype)
        if name in self._partitioned_vars:
            return self._existing_partitioned(name, shape, dtype, reuse, partitions)
        if reuse is True:
            raise ValueError(
                f"PartitionedVariable {name} does not exist, or was not created with "
                "tf.get_variable(). Did you mean to set reuse=False or reuse=tf.AUTO_REUSE "
                "in VarScope?"
            )
        single = {
            "regularizer": regularizer,
            "reuse": reuse,
            "trainable": trainable,
            "collections": collections,
            "caching_device": caching_device,
            "validate_shape": validate_shape,
            "constraint": constraint,
            "use_resource": use_resource,
        }
        parts, dtype = self._make_parts(name, shape, dtype, initializer, partitions, single)
        pv = PartitionedVariable(
            name=name, shape=shape, dtype=dtype, variable_list=parts, partitions=partitions
        )
        self._partitioned_vars[name] = pv
        return pv

    def _make_parts(
        self,
        name: str,
        shape: TensorShape,
        dtype: Any,
        initializer: Any,
        partitions: Any,
        single: dict[str, Any],
    ) -> tuple[list[Any], Any]:
        """Creates the parts of a new partitioned variable; returns them and their dtype.

        Raises:
          ValueError: for stale parts of an earlier partitioning, or from `_make_part`.
        """
        slice_dim, num_slices = _get_slice_dim_and_num_slices(partitions)
        self._check_part_names(name, num_slices)
        parts = []
        for i, (var_offset, var_shape) in enumerate(
            _iter_slices(shape.as_list(), num_slices, slice_dim)
        ):
            part, dtype = self._make_part(
                name, i, shape, var_offset, var_shape, dtype, initializer, single
            )
            parts.append(part)
        return parts, dtype

    def _existing_partitioned(
        self, name: str, shape: TensorShape, dtype: Any, reuse: Any, partitions: Any
    ) -> PartitionedVariable:
        if reuse is False:
            raise ValueError(
                f"Partitioned variable with name {name} already exists. Did you mean to set "
                "reuse=True or reuse=tf.AUTO_REUSE in VarScope?"
            )
        existing = self._partitioned_vars[name]
        if not shape.is_compatible_with(existing.get_shape()):
            raise ValueError(
                f"Trying to reuse partitioned variable {name}, but specified shape {shape} "
                f"and found shape {existing.get_shape()}."
            )
        if not dtypes.as_dtype(dtype).is_compatible_with(existing.dtype):
            raise ValueError(
                f"Trying to reuse partitioned variable {name}, but specified dtype "
                f"{dtypes.as_dtype(dtype).name} and found dtype {existing.dtype.name}."
            )
        if partitions is not None and existing._get_partitions() != list(partitions):
            raise ValueError(
                f"Trying to reuse partitioned variable {name}, but specified partitions "
                f"{list(partitions)} and found partitions {existing._get_partitions()}."
            )
        return existing

    def _check_part_names(self, name: str, num_slices: int) -> None:
        """Rejects parts left by another partitioning of `name` in this store."""
        if f"{name}/part_0" not in self._vars:
            return
        if f"{name}/part_{num_slices - 1}" not in self._vars:
            raise ValueError(
                "Partitioner returned a different partitioning than what was already found.  "
                f"Partitioner returned {num_slices} shards, and shard {name}/part_0 was "
                f"found, but {name}/part_{num_slices - 1} was not."
            )
        if f"{name}/part_{num_slices}" in self._vars:
            raise ValueError(
                "Partitioner returned a different partitioning than what was already found.  "
                f"Partitioner returned {num_slices} shards, and shard {name}/part_0 was "
                f"found, but so was the extra shard {name}/part_{num_slices}."
            )

    def _make_part(
        self,
        name: str,
        index: int,
        full_shape: TensorShape,
        var_offset: list[int],
        var_shape: list[int],
        dtype: Any,
        initializer: Any,
        single: dict[str, Any],
    ) -> tuple[Variable, Any]:
        """(part variable `<name>/part_<index>`, its dtype); see `_get_partitioned_variable`."""
        partition_info = _PartitionInfo(full_shape=full_shape.as_list(), var_offset=var_offset)
        part_name = f"{name}/part_{index}"
        with graph_mod.name_scope(part_name + "/PartitionedInitializer"):
            if initializer is None:
                init, from_value = self._get_default_initializer(name, full_shape, dtype)
                init_shape = None if from_value else var_shape
            elif callable(initializer):
                init, init_shape = initializer, var_shape
            elif isinstance(initializer, Tensor):
                init = array_ops.slice(initializer, var_offset, var_shape)
                dtype = init.dtype.base_dtype
                init_shape = None
            else:
                init = convert_to_tensor(initializer, dtype=dtype)
                init = array_ops.slice(init, var_offset, var_shape)
                init_shape = None
        with graph_mod.name_scope(None):
            var = self._get_single_variable(
                name=part_name,
                shape=init_shape,
                dtype=dtype,
                initializer=init,
                partition_info=partition_info,
                **single,
            )
        var._set_save_slice_info(SaveSliceInfo(name, full_shape.as_list(), var_offset, var_shape))
        return var, dtype
