"""Partitioned variables: partitioners, `PartitionedVariable` and `SaveSliceInfo`.

Follows TF 1.x `python/ops/partitioned_variables.py` (the partitioners and
`create_partitioned_variables`) and `python/ops/variables.py` (`PartitionedVariable`,
`Variable.SaveSliceInfo`).

A variable made by `tf.get_variable(name, shape, partitioner=p)` is cut along one axis into
parts `<name>/part_0`, `<name>/part_1`, ...: ordinary `Variable`s (each its own `VariableV2`
op, so `replica_device_setter` spreads them over the ps tasks) that carry a `SaveSliceInfo`
telling the Saver where they sit in the full tensor. When the axis size `d` is not a
multiple of the number of parts `n`, the first `d % n` parts get one extra row.

A partitioner is `fn(shape: TensorShape, dtype: DType) -> list[int]`, the number of parts
per axis (at most one entry > 1).
"""

from __future__ import annotations

import math
from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import register_tensor_conversion_function
from tensorweave.framework.tensor_shape import TensorShape, dimension_value
from tensorweave.ops import array_ops
from tensorweave.protos import variable_pb2


# ------------------------------------------------------------------------ partitioners
def _element_size(dtype: Any, bytes_per_string_element: int) -> int:
    dtype = dtypes.as_dtype(dtype)
    if dtype.base_dtype == dtypes.string:
        return bytes_per_string_element
    return dtype.size


def variable_axis_size_partitioner(
    max_shard_bytes: int,
    axis: int = 0,
    bytes_per_string_element: int = 16,
    max_shards: int | None = None,
) -> Any:
    """A partitioner keeping shards below `max_shard_bytes` (`tf.variable_axis_size_partitioner`).

    Shards along `axis` only: each shard holds `max(1, floor(max_shard_bytes /
    bytes_per_slice))` slices of that axis, so a single slice larger than the limit still
    gets its own shard. `max_shards` (if set) caps the count and takes precedence.

    Args:
      max_shard_bytes: int, the target maximum bytes per shard (e.g. `(64 << 20) - 1`).
      axis: int, the axis to shard.
      bytes_per_string_element: int, the assumed size of one string element.
      max_shards: int or None, the maximum number of shards.

    Returns:
      `fn(shape, dtype) -> list[int]`.

    Raises:
      ValueError: if a byte count or `max_shards` is not positive; when called, if `shape`
        is not a fully defined `TensorShape` or `dtype` is not a `DType`.
    """
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive.")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape: Any, dtype: Any) -> list[int]:
        if not isinstance(shape, TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        if not isinstance(dtype, dtypes.DType):
            raise ValueError(f"dtype is not a DType: {dtype}")
        element_size = _element_size(dtype, bytes_per_string_element)
        partitions = [1] * shape.ndims
        axis_len = dimension_value(shape[axis])
        bytes_per_slice = 1.0 * (shape.num_elements() / axis_len) * element_size
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        axis_shards = int(math.ceil(1.0 * axis_len / slices_per_shard))
        if max_shards:
            axis_shards = min(max_shards, axis_shards)
        partitions[axis] = axis_shards
        return partitions

    return _partitioner


def min_max_variable_partitioner(
    max_partitions: int = 1,
    axis: int = 0,
    min_slice_size: int = 256 << 10,
    bytes_per_string_element: int = 16,
) -> Any:
    """A partitioner giving parts >= `min_slice_size` bytes (`tf.min_max_variable_partitioner`).

    The number of parts along `axis` is `max(1, min(shape[axis], max_partitions,
    ceil(total_bytes / min_slice_size)))`: a float32 `[1024, 1024]` variable (4 MiB) with
    the default 256 KiB gives 16 parts when `max_partitions >= 16`.

    Args:
      max_partitions: int, the upper bound on the number of parts.
      axis: int, the axis to partition.
      min_slice_size: int, the minimum bytes per part.
      bytes_per_string_element: int, the assumed size of one string element.

    Returns:
      `fn(shape, dtype) -> list[int]`.

    Raises:
      ValueError: when called, if `axis` is not an axis of `shape`.
    """

    def _partitioner(shape: Any, dtype: Any) -> list[int]:
        if axis >= len(shape):
            raise ValueError(
                f"Can not partition variable along axis {axis} when shape is only {shape}"
            )
        total_size_bytes = shape.num_elements() * _element_size(dtype, bytes_per_string_element)
        partitions = total_size_bytes / min_slice_size
        partitions_list = [1] * len(shape)
        partitions_list[axis] = max(
            1, min(dimension_value(shape[axis]), max_partitions, int(math.ceil(partitions)))
        )
        return partitions_list

    return _partitioner


def fixed_size_partitioner(num_shards: int, axis: int = 0) -> Any:
    """A partitioner cutting `axis` into `num_shards` parts (`tf.fixed_size_partitioner`).

    A dimension smaller than `num_shards` gives one part per row: `min(num_shards, dim)`.

    Args:
      num_shards: int, the number of parts.
      axis: int, the axis to partition.

    Returns:
      `fn(shape, **unused) -> list[int]`.
    """

    def _partitioner(shape: Any, **unused_args: Any) -> list[int]:
        partitions_list = [1] * len(shape)
        partitions_list[axis] = min(num_shards, dimension_value(shape[axis]))
        return partitions_list

    return _partitioner


# ------------------------------------------------------------------------ slicing rules
def _get_slice_dim_and_num_slices(slicing: list[int]) -> tuple[int, int]:
    """(axis, number of parts) of a validated partition list; (0, 1) if unpartitioned."""
    for slice_dim, num_slices in enumerate(slicing):
        if num_slices > 1:
            return slice_dim, num_slices
    return 0, 1


def _iter_slices(full_shape: list[int], num_slices: int, slice_dim: int):
    """Yields (offset, shape) of each part; the first `d % n` parts get one extra row."""
    num_slices_with_excess = full_shape[slice_dim] % num_slices
    offset = [0] * len(full_shape)
    min_slice_len = full_shape[slice_dim] // num_slices
    for i in range(num_slices):
        shape = list(full_shape)
        shape[slice_dim] = min_slice_len + int(i < num_slices_with_excess)
        yield list(offset), shape
        offset[slice_dim] += shape[slice_dim]


# ----------------------------------------------------------------------- SaveSliceInfo
class SaveSliceInfo:
    """Where a part sits in its full variable, for the Saver (TF's `Variable.SaveSliceInfo`).

    Attributes:
      full_name: str, the full variable's name (the checkpoint key of every part).
      full_shape: list of int, the full variable's shape.
      var_offset: list of int, the part's offset in each dimension.
      var_shape: list of int, the part's shape.

    Args:
      full_name, full_shape, var_offset, var_shape: as the attributes.
      save_slice_info_def: a `SaveSliceInfoDef` proto to read them from instead.
      import_scope: str, a name scope prepended to the proto's `full_name`.
    """

    def __init__(
        self,
        full_name: str | None = None,
        full_shape: Any = None,
        var_offset: Any = None,
        var_shape: Any = None,
        save_slice_info_def: Any = None,
        import_scope: str | None = None,
    ):
        if save_slice_info_def is not None:
            name = save_slice_info_def.full_name
            self.full_name = f"{import_scope}/{name}" if import_scope else name
            self.full_shape = list(save_slice_info_def.full_shape)
            self.var_offset = list(save_slice_info_def.var_offset)
            self.var_shape = list(save_slice_info_def.var_shape)
        else:
            self.full_name = full_name
            self.full_shape = full_shape
            self.var_offset = var_offset
            self.var_shape = var_shape

    @property
    def spec(self) -> str:
        """The `shape_and_slices` entry, e.g. `"10 4 0,5:0,4"` (str)."""
        full = " ".join(str(int(d)) for d in self.full_shape)
        slices = ":".join(f"{int(o)},{int(s)}" for o, s in zip(self.var_offset, self.var_shape))
        return f"{full} {slices}"

    def to_proto(self, export_scope: str | None = None) -> Any:
        """A `SaveSliceInfoDef` proto, or None when `full_name` is outside `export_scope`."""
        if export_scope is not None and not self.full_name.startswith(export_scope):
            return None
        name = self.full_name
        if export_scope and name.startswith(export_scope + "/"):
            name = name[len(export_scope) + 1 :]
        return variable_pb2.SaveSliceInfoDef(
            full_name=name,
            full_shape=self.full_shape,
            var_offset=self.var_offset,
            var_shape=self.var_shape,
        )

    def __repr__(self) -> str:
        return f"SaveSliceInfo({self.full_name!r}, spec={self.spec!r})"


# ----------------------------------------------------------------- PartitionedVariable
class PartitionedVariable:
    """A variable stored as parts cut along one axis (follows TF 1.x `PartitionedVariable`).

    Iterating (and `len`) gives the part `Variable`s in offset order, so it can be passed
    wherever a list of variables is accepted (`tf.nn.embedding_lookup`, optimizers'
    `var_list`). Used as a tensor it is the concatenation of the parts (`as_tensor()`);
    it cannot be used as a reference or fetched directly.

    Args:
      name: str, the full variable's name (parts are `<name>/part_<i>`).
      shape: the full shape (fully defined).
      dtype: the (non-reference) element dtype.
      variable_list: the part `Variable`s, each with a `SaveSliceInfo` of this shape.
      partitions: list of int, the number of parts per axis.

    Raises:
      TypeError: if `variable_list` or `partitions` is not a list or tuple.
      ValueError: if `variable_list` is empty, a part has no slice info or another full
        shape, or `partitions` has values < 1 or another length than `shape`.
    """

    def __init__(self, name: str, shape: Any, dtype: Any, variable_list: Any, partitions: Any):
        if not isinstance(variable_list, list | tuple):
            raise TypeError(f"variable_list is not a list or tuple: {variable_list}")
        if not isinstance(partitions, list | tuple):
            raise TypeError(f"partitions is not a list or tuple: {partitions}")
        if not all(p >= 1 for p in partitions):
            raise ValueError(f"partition values must be positive: {partitions}")
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        shape = TensorShape(shape)
        _check_parts(variable_list, shape, partitions)
        self._variable_list = sorted(
            variable_list, key=lambda v: v._get_save_slice_info().var_offset
        )
        self._name = name
        self._shape = shape
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._partitions = list(partitions)

    def __iter__(self):
        """An iterator over the part `Variable`s, in offset order."""
        return iter(list(self._variable_list))

    def __len__(self) -> int:
        """The number of parts.

        Raises:
          ValueError: if the variable is partitioned along more than one axis.
        """
        num_partition_axes = len(self._partition_axes())
        if num_partition_axes > 1:
            raise ValueError(f"Cannot get a length for {num_partition_axes} > 1 partition axes")
        return len(self._variable_list)

    def _partition_axes(self) -> list[int]:
        if all(p == 1 for p in self._partitions):
            return [0]
        return [i for i, p in enumerate(self._partitions) if p > 1]

    def _concat(self) -> Any:
        """The concatenated value as a new `Tensor` named after the variable."""
        if len(self._variable_list) == 1:
            with graph_mod.name_scope(None):
                return array_ops.identity(self._variable_list[0], name=self._name)
        partition_axes = self._partition_axes()
        if len(partition_axes) > 1:
            raise NotImplementedError(
                f"Cannot concatenate along more than one dimension: {partition_axes}.  "
                "Multi-axis partition concat is not supported"
            )
        with graph_mod.name_scope(self._name + "/ConcatPartitions/"):
            concatenated = array_ops.concat(list(self._variable_list), partition_axes[0])
        with graph_mod.name_scope(None):
            return array_ops.identity(concatenated, name=self._name)

    def as_tensor(self) -> Any:
        """The full value: a `ConcatV2` of the parts along the partition axis.

        Built outside any control-dependency scope, like reading a `Variable`.

        Raises:
          NotImplementedError: for variables partitioned along several axes.
        """
        graph = self._variable_list[0].graph
        with graph.as_default(), graph.control_dependencies(None):
            return self._concat()

    @property
    def name(self) -> str:
        """The full variable's name (no `:0` suffix), as in TensorFlow."""
        return self._name

    @property
    def dtype(self) -> Any:
        """The element dtype (not a reference dtype)."""
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        """The full shape."""
        return self._shape

    def get_shape(self) -> TensorShape:
        """The full shape."""
        return self._shape

    @property
    def graph(self) -> Any:
        """The graph of the parts."""
        return self._variable_list[0].graph

    def _get_variable_list(self) -> list[Any]:
        return list(self._variable_list)

    def _get_partitions(self) -> list[int]:
        return list(self._partitions)

    def _apply_assign_fn(self, assign_fn: Any, value: Any) -> list[Any]:
        partition_axes = self._partition_axes()
        if len(partition_axes) > 1:
            raise NotImplementedError(
                f"Cannot do assign action along more than one dimension: {partition_axes}.  "
                "Multi-axis partition assign action is not supported "
            )
        if isinstance(value, list):
            if len(value) != len(self._variable_list):
                raise ValueError(
                    f"Expected {len(self._variable_list)} values, one per part, got {len(value)}"
                )
            value_list = value
        elif isinstance(value, PartitionedVariable):
            value_list = list(value)
        else:
            axis = partition_axes[0]
            sizes = [dimension_value(v.shape[axis]) for v in self._variable_list]
            value_list = array_ops.split(value, sizes, axis=axis)
        return [assign_fn(var, value_list[i]) for i, var in enumerate(self._variable_list)]

    def assign(
        self,
        value: Any,
        use_locking: bool = False,
        name: str | None = None,
        read_value: bool = True,
    ) -> list[Any]:
        """Assigns `value` part by part (follows `PartitionedVariable.assign`).

        `value` is a full-shape value (`Split` along the axis), a list with one value per
        part, or another `PartitionedVariable`.

        Returns:
          One `Assign` result per part (tensors, or ops when `read_value=False`).
        """
        return self._apply_assign_fn(
            lambda var, v: var.assign(v, use_locking=use_locking, name=name, read_value=read_value),
            value,
        )

    def assign_add(
        self,
        value: Any,
        use_locking: bool = False,
        name: str | None = None,
        read_value: bool = True,
    ) -> list[Any]:
        """`assign`, adding: one `AssignAdd` per part."""
        return self._apply_assign_fn(
            lambda var, v: var.assign_add(
                v, use_locking=use_locking, name=name, read_value=read_value
            ),
            value,
        )

    def assign_sub(
        self,
        value: Any,
        use_locking: bool = False,
        name: str | None = None,
        read_value: bool = True,
    ) -> list[Any]:
        """`assign`, subtracting: one `AssignSub` per part."""
        return self._apply_assign_fn(
            lambda var, v: var.assign_sub(
                v, use_locking=use_locking, name=name, read_value=read_value
            ),
            value,
        )

    def __repr__(self) -> str:
        return (
            f"<PartitionedVariable '{self._name}' shape={self._shape} "
            f"dtype={self._dtype.name} partitions={self._partitions}>"
        )


def _check_parts(variable_list: Any, shape: TensorShape, partitions: Any) -> None:
    if any(v._get_save_slice_info() is None for v in variable_list):
        raise ValueError(
            "All variables must have a save_slice_info available: "
            f"{[v.name for v in variable_list]}"
        )
    if len(shape) != len(partitions):
        raise ValueError(f"len(shape) != len(partitions): {shape} vs. {partitions}")
    full_shapes = [list(v._get_save_slice_info().full_shape) for v in variable_list]
    if any(fs != shape.as_list() for fs in full_shapes):
        raise ValueError(
            f"All variables' full shapes must match shape: {shape}; but full shapes were: "
            f"{full_shapes}"
        )


def _partitioned_variable_conversion(
    v: PartitionedVariable, dtype: Any = None, name: Any = None, as_ref: bool = False
) -> Any:
    del name
    if dtype is not None and not dtype.is_compatible_with(v.dtype):
        raise ValueError(
            f"Incompatible type conversion requested to type '{dtype.name}' for variable "
            f"of type '{v.dtype.name}'"
        )
    if as_ref:
        raise NotImplementedError("PartitionedVariable doesn't support being used as a reference.")
    return v.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _partitioned_variable_conversion)


# ------------------------------------------------------------------------- legacy API
__all__ = [
    "fixed_size_partitioner",
    "min_max_variable_partitioner",
    "variable_axis_size_partitioner",
]
