"""Building the save/restore subgraph of a `Saver`.

Follows TF 1.x `BaseSaverBuilder`, `BulkSaverBuilder` and `saveable_object_util`.

Unsharded, the graph is TensorFlow's::

    save/filename (PlaceholderWithDefault "model"), save/Const (PlaceholderWithDefault)
    save/SaveV2 -> save/control_dependency (Identity of save/Const)   = save tensor
    save/RestoreV2 -> save/Assign, save/Assign_1, ... -> save/restore_all (NoOp)

Sharded, one `SaveV2` per variable device runs on that device's CPU and writes
`<prefix>_temp_<uuid>/part-0000K-of-0000N` (`StringJoin` + `ShardedFilename`);
`MergeV2Checkpoints` (on the device scope in force when the Saver is built) then moves the
parts into `<prefix>.data-0000K-of-0000N` and writes the merged index; one `RestoreV2` per
device (`save/restore_shard*`) feeds that device's assigns.

The parts of a partitioned variable are saved as slices of one checkpoint key, the full
variable's name, with TensorFlow's `shape_and_slices` specs (`"10 4 0,5:0,4"`), and each
part restores its own slice (from any partitioning the checkpoint was saved with).

Deviation from TensorFlow: for a variable whose static shape is fully defined (rank >= 1)
and `reshape=False`, the restore uses the shape-and-slice spec `"d0 .. dk -:..:-"` (the
whole tensor) instead of `""`. TensorFlow's `RestoreV2` accepts both; with the spec the
kernel itself rejects a checkpoint tensor of another shape with an `InvalidArgumentError`
naming the key and both shapes, before any variable is assigned.
"""

from __future__ import annotations

import uuid
from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.device_spec import DeviceSpec, canonical_name
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import (
    array_ops,
    constant_op,
    control_flow_ops,
    io_ops,
    resource_variable_ops,
    state_ops,
)
from tensorweave.protos import saver_pb2

_VARIABLE_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "VarHandleOp")


class SaveSpec:
    """One tensor a `SaveableObject` saves (follows `saveable_object.SaveSpec`).

    Args:
      tensor: the Tensor to save (a variable's ref tensor is read when saved).
      slice_spec: `""` for a whole tensor.
      name: the checkpoint key.
      dtype: the saved dtype (default: the tensor's base dtype).
      device: where the tensor lives (default: the tensor's device).
    """

    def __init__(
        self,
        tensor: Tensor,
        slice_spec: str,
        name: str,
        dtype: Any = None,
        device: str | None = None,
    ):
        self.tensor = tensor
        self.slice_spec = slice_spec
        self.name = name
        self.dtype = dtype if dtype is not None else tensor.dtype.base_dtype
        self.device = device if device is not None else tensor.device


class SaveableObject:
    """Something a Saver can save and restore (follows `saveable_object.SaveableObject`).

    Subclasses implement `restore`; instances may be added to the `SAVEABLE_OBJECTS`
    collection to be saved by default Savers.

    Args:
      op: the object's identity (e.g. a variable's ref tensor), used to detect duplicates.
      specs: the `SaveSpec`s of its tensors.
      name: its name in error messages (usually the checkpoint key of its tensor).
    """

    def __init__(self, op: Any, specs: list[SaveSpec], name: str):
        self.op = op
        self.specs = specs
        self.name = name

    @property
    def device(self) -> str:
        """The device of the first spec."""
        return self.specs[0].device

    def restore(self, restored_tensors: list[Tensor], restored_shapes: Any) -> Operation:
        """Returns an op assigning `restored_tensors` (one per spec) to the object.

        Raises:
          NotImplementedError: in this base class.
        """
        raise NotImplementedError


class ReferenceVariableSaveable(SaveableObject):
    """A TF 1.x reference variable (`VariableV2`), saved under `name`."""

    def __init__(self, var: Tensor, slice_spec: str, name: str):
        spec = SaveSpec(var, slice_spec, name, dtype=var.dtype.base_dtype, device=var.device)
        super().__init__(var, [spec], name)

    def restore(self, restored_tensors: list[Tensor], restored_shapes: Any) -> Operation:
        """An `Assign` of the restored value (reshaped first when `restored_shapes`)."""
        restored = restored_tensors[0]
        if restored_shapes is not None:
            restored = array_ops.reshape(restored, restored_shapes[0])
        validate = restored_shapes is None and self.op.shape.is_fully_defined()
        return state_ops.assign(self.op, restored, validate_shape=validate)


class ResourceVariableSaveable(SaveableObject):
    """A resource variable (`VarHandleOp`), saved under `name`: read with `ReadVariableOp`,
    restored with `AssignVariableOp` on the variable's device (TF's
    `ResourceVariableSaveable`)."""

    def __init__(self, handle: Tensor, slice_spec: str, name: str):
        dtype = dtypes.as_dtype(handle.op.get_attr("dtype"))
        with graph_mod.get_default_graph().device(handle.device):
            value = resource_variable_ops.read_variable_op(handle, dtype)
        spec = SaveSpec(value, slice_spec, name, dtype=dtype, device=handle.device)
        super().__init__(handle, [spec], name)

    def restore(self, restored_tensors: list[Tensor], restored_shapes: Any) -> Operation:
        """An `AssignVariableOp` of the restored value (reshaped when `restored_shapes`)."""
        restored = restored_tensors[0]
        if restored_shapes is not None:
            restored = array_ops.reshape(restored, restored_shapes[0])
        with graph_mod.get_default_graph().device(self.op.device):
            return resource_variable_ops.assign_variable_op(self.op, restored)


def _variable_saveable(tensor: Tensor, slice_spec: str, name: str) -> SaveableObject:
    if tensor.op.type == "VarHandleOp":
        return ResourceVariableSaveable(tensor, slice_spec, name)
    return ReferenceVariableSaveable(tensor, slice_spec, name)


# ------------------------------------------------------------ var_list handling
def _as_variable_tensor(var: Any) -> Tensor:
    if hasattr(var, "_ref"):
        var = var._ref()
    elif not isinstance(var, Tensor) and hasattr(var, "_as_graph_element"):
        var = var._as_graph_element()
    return var


def _is_variable_tensor(t: Any) -> bool:
    return isinstance(t, Tensor) and t.op.type in _VARIABLE_OPS


def op_list_to_dict(op_list: Any, convert_variable_to_tensor: bool = True) -> dict[str, Any]:
    """Maps checkpoint keys (variable op names) to variables (TF's `op_list_to_dict`).

    The parts of a partitioned variable (variables with a `SaveSliceInfo`) are grouped
    into a list under the full variable's name; a `PartitionedVariable` is kept whole
    under its name.

    Raises:
      TypeError: if `op_list` is not a list/tuple/set, or holds something that is not a
        variable or `SaveableObject`.
      ValueError: "At least two variables have the same name: ...", or "Mixing slices
        and non-slices with the same name: ...".
    """
    if not isinstance(op_list, list | tuple | set):
        raise TypeError(f"Variables to save should be passed in a dict or a list: {op_list}")
    names_to_saveables: dict[str, Any] = {}
    for var in sorted(op_list, key=lambda x: x.name):
        if isinstance(var, SaveableObject):
            names_to_saveables[var.name] = var
            continue
        if _is_partitioned(var) or _slice_info(var) is not None:
            _add_sliced(names_to_saveables, var)
            continue
        if convert_variable_to_tensor:
            var = _as_variable_tensor(var)
            if not _is_variable_tensor(var):
                raise TypeError(f"Variable to save is not a Variable: {var}")
        name = var.op.name
        if name in names_to_saveables:
            raise ValueError(f"At least two variables have the same name: {name}")
        names_to_saveables[name] = var
    return names_to_saveables


def _is_partitioned(var: Any) -> bool:
    return hasattr(var, "_get_variable_list") and hasattr(var, "_get_partitions")


def _slice_info(var: Any) -> Any:
    return getattr(var, "_save_slice_info", None)


def _add_sliced(names_to_saveables: dict[str, Any], var: Any) -> None:
    if _is_partitioned(var):
        if var.name in names_to_saveables:
            raise ValueError(f"At least two variables have the same name: {var.name}")
        names_to_saveables[var.name] = var
        return
    name = _slice_info(var).full_name
    if name not in names_to_saveables:
        names_to_saveables[name] = [var]
    elif not isinstance(names_to_saveables[name], list):
        raise ValueError(f"Mixing slices and non-slices with the same name: {name}")
    else:
        names_to_saveables[name].append(var)


def _slice_saveables(op: Any, name: str) -> list[SaveableObject]:
    """One saveable per part of a partitioned variable, each saving its slice of `name`.

    Raises:
      ValueError: if an item is not a variable with slice info, or the slices come from
        different full variables.
    """
    out: list[SaveableObject] = []
    slice_name = None
    for variable in list(op):
        if isinstance(variable, SaveableObject):
            out.append(variable)
            continue
        info = _slice_info(variable)
        tensor = _as_variable_tensor(variable)
        if not _is_variable_tensor(tensor):
            raise ValueError(f"Slices must all be Variables: {variable}")
        if info is None:
            raise ValueError(f"Slices must all be slices: {variable}")
        if slice_name is None:
            slice_name = info.full_name
        elif slice_name != info.full_name:
            raise ValueError(
                f"Slices must all be from the same tensor: {slice_name} != {info.full_name}"
            )
        out.append(_variable_saveable(tensor, info.spec, name))
    return out


def saveable_objects_for_op(op: Any, name: Any) -> list[SaveableObject]:
    """The `SaveableObject`s saving `op` under `name` (TF's `saveable_objects_for_op`).

    Raises:
      TypeError: if `name` is not a string or `op` is not a variable or saveable.
    """
    if not isinstance(name, str):
        raise TypeError(
            "names_to_saveables must be a dict mapping string names to trackable operations. "
            f"Name is not a string: {name}"
        )
    if isinstance(op, SaveableObject):
        return [op]
    if isinstance(op, list | tuple) or _is_partitioned(op):
        return _slice_saveables(op, name)
    variable = _as_variable_tensor(op)
    if not _is_variable_tensor(variable):
        raise TypeError(
            "names_to_saveables must be a dict mapping string names to Tensors/Variables. "
            f"Not a variable: {variable}"
        )
    return [_variable_saveable(variable, "", name)]


def validate_and_slice_inputs(names_to_saveables: Any) -> list[SaveableObject]:
    """The `SaveableObject`s of a var_list (TF's `validate_and_slice_inputs`).

    `names_to_saveables` is a list or dict; the result is sorted by checkpoint key.

    Raises:
      TypeError, ValueError: as `op_list_to_dict` and `saveable_objects_for_op`; also
        "The same saveable will be restored with two names: ...".
    """
    if not isinstance(names_to_saveables, dict):
        names_to_saveables = op_list_to_dict(names_to_saveables)
    saveables: list[SaveableObject] = []
    seen: set[int] = set()
    for name, op in sorted(names_to_saveables.items(), key=lambda x: x[0]):
        for saveable in saveable_objects_for_op(op, name):
            if saveable.op is not None and id(saveable.op) in seen:
                raise ValueError(
                    f"The same saveable will be restored with two names: {saveable.name}"
                )
            saveables.append(saveable)
            seen.add(id(saveable.op))
    return saveables


# ------------------------------------------------------------------ graph helpers
def _with_dependencies(deps: list[Any], tensor: Tensor) -> Tensor:
    """`tensor` through an Identity colocated with it that runs after `deps`.

    The Identity is named `control_dependency`; TensorFlow's `with_dependencies`
    colocates it too.
    """
    with tensor.graph.colocate_with(tensor.op):
        return control_flow_ops.with_dependencies(deps, tensor)


def set_cpu0(device: str) -> str:
    """`device` with its device type and index replaced by `CPU:0` (TF `_set_cpu0`)."""
    return DeviceSpec.from_string(device).replace(device_type="CPU", device_index=0).to_string()


def _full_slice_spec(shape: TensorShape) -> str:
    dims = shape.as_list()
    return " ".join(str(d) for d in dims) + " " + ":".join("-" for _ in dims)


class BaseSaverBuilder:
    """Builds the save and restore ops of a `Saver` (follows TF 1.x `BaseSaverBuilder`).

    One `RestoreV2` reads all tensors of a shard, as `BulkSaverBuilder` does.

    Args:
      write_version: `SaverDef.V2` (the only format tensorweave writes).

    Raises:
      ValueError: for another `write_version`.
    """

    SaveSpec = SaveSpec
    SaveableObject = SaveableObject
    VariableSaveable = ReferenceVariableSaveable

    def __init__(self, write_version: int = saver_pb2.SaverDef.V2):
        if write_version != saver_pb2.SaverDef.V2:
            raise ValueError(
                f"tensorweave writes V2 checkpoints only; got write_version={write_version}"
            )
        self._write_version = write_version
        self._check_restore_shapes = True

    # ---------------------------------------------------- overridable pieces
    def save_op(self, filename_tensor: Tensor, saveables: list[SaveableObject]) -> Operation:
        """One `SaveV2` op writing every spec of `saveables` to `filename_tensor`."""
        names, tensors, slices = [], [], []
        for saveable in saveables:
            for spec in saveable.specs:
                names.append(spec.name)
                tensors.append(spec.tensor)
                slices.append(spec.slice_spec)
        return io_ops.save_v2(filename_tensor, names, slices, tensors)

    def bulk_restore(
        self,
        filename_tensor: Tensor,
        saveables: list[SaveableObject],
        preferred_shard: int,
        restore_sequentially: bool,
    ) -> list[Tensor]:
        """One `RestoreV2` (on CPU:0 of the current device scope) reading every spec."""
        del preferred_shard, restore_sequentially  # NOTE: unused in V2, as in TensorFlow.
        names, slices, dtypes = [], [], []
        for saveable in saveables:
            for spec in saveable.specs:
                names.append(spec.name)
                slices.append(self._restore_slice_spec(spec))
                dtypes.append(spec.dtype)
        with graph_mod.get_default_graph().device("/device:CPU:0"):
            return io_ops.restore_v2(filename_tensor, names, slices, dtypes)

    def _restore_slice_spec(self, spec: SaveSpec) -> str:
        if spec.slice_spec or not self._check_restore_shapes:
            return spec.slice_spec
        shape = spec.tensor.shape if isinstance(spec.tensor, Tensor) else TensorShape(None)
        if shape.ndims and shape.is_fully_defined():
            return _full_slice_spec(shape)
        return ""

    def sharded_filename(self, filename_tensor: Tensor, shard: int, num_shards: Tensor):
        """`ShardedFilename(filename_tensor, shard, num_shards)`."""
        return io_ops.sharded_filename(filename_tensor, shard, num_shards)

    # ------------------------------------------------------------- building
    def _add_save_ops(self, filename_tensor: Tensor, saveables: list[SaveableObject]):
        save = self.save_op(filename_tensor, saveables)
        return _with_dependencies([save], filename_tensor)

    def _add_sharded_save_ops(self, checkpoint_prefix: Tensor, per_device: list) -> Tensor:
        g = checkpoint_prefix.graph
        suffix = f"_temp_{uuid.uuid4().hex}/part"
        tmp_prefix = io_ops.string_join([checkpoint_prefix, suffix])
        num_shards = constant_op.constant(len(per_device), name="num_shards")
        saves, prefixes = [], []
        for shard, (device, saveables) in enumerate(per_device):
            with g.device(set_cpu0(device)):
                filename = self.sharded_filename(tmp_prefix, shard, num_shards)
                prefixes.append(filename)
                saves.append(self._add_save_ops(filename, saveables))
        with g.control_dependencies([x.op for x in saves]):
            # NOTE: the list of part prefixes is packed (`Pack`) when converted to a tensor.
            merge = io_ops.merge_v2_checkpoints(prefixes, checkpoint_prefix, delete_old_dirs=True)
            with g.control_dependencies([merge]):
                return array_ops.identity(checkpoint_prefix)

    def _add_restore_ops(
        self,
        filename_tensor: Tensor,
        saveables: list[SaveableObject],
        restore_sequentially: bool,
        reshape: bool,
        preferred_shard: int = -1,
        name: str = "restore_all",
    ) -> Operation:
        tensors = self.bulk_restore(
            filename_tensor, saveables, preferred_shard, restore_sequentially
        )
        assigns = []
        idx = 0
        for saveable in saveables:
            shapes = None
            if reshape:
                shapes = [_shape_of(spec.tensor) for spec in saveable.specs]
            n = len(saveable.specs)
            assigns.append(saveable.restore(tensors[idx : idx + n], shapes))
            idx += n
        return control_flow_ops.group(*assigns, name=name)

    def _add_sharded_restore_ops(
        self, filename_tensor: Tensor, per_device: list, restore_sequentially: bool, reshape: bool
    ) -> Operation:
        g = filename_tensor.graph
        restores = []
        for shard, (device, saveables) in enumerate(per_device):
            with g.device(device):
                restores.append(
                    self._add_restore_ops(
                        filename_tensor,
                        saveables,
                        restore_sequentially,
                        reshape,
                        preferred_shard=shard,
                        name="restore_shard",
                    )
                )
        return control_flow_ops.group(*restores, name="restore_all")

    @staticmethod
    def _group_by_devices(saveables: list[SaveableObject]) -> list[tuple[str, list]]:
        per_device: dict[str, list[SaveableObject]] = {}
        for saveable in saveables:
            devices = {canonical_name(spec.device) for spec in saveable.specs}
            if len(devices) != 1:
                raise ValueError(
                    f"All tensors of a saveable object must be on the same device: {saveable.name}"
                )
            per_device.setdefault(devices.pop(), []).append(saveable)
        return sorted(per_device.items(), key=lambda t: t[0])

    def build(
        self,
        names_to_saveables: Any,
        reshape: bool = False,
        sharded: bool = False,
        max_to_keep: int | None = 5,
        keep_checkpoint_every_n_hours: float = 10000.0,
        name: str | None = None,
        restore_sequentially: bool = False,
        filename: str = "model",
    ) -> Any:
        """Builds the save and restore ops; returns their `SaverDef` (TF's `build`).

        Raises:
          TypeError, ValueError: for an invalid `names_to_saveables`.
        """
        return self._build_internal(
            names_to_saveables,
            reshape=reshape,
            sharded=sharded,
            max_to_keep=max_to_keep,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            name=name,
            restore_sequentially=restore_sequentially,
            filename=filename,
        )

    def _build_internal(
        self,
        names_to_saveables: Any,
        reshape: bool = False,
        sharded: bool = False,
        max_to_keep: int | None = 5,
        keep_checkpoint_every_n_hours: float = 10000.0,
        name: str | None = None,
        restore_sequentially: bool = False,
        filename: str = "model",
        build_save: bool = True,
        build_restore: bool = True,
    ) -> Any:
        if not build_save or not build_restore:
            raise ValueError(
                "save and restore operations need to be built together when "
                "eager execution is not enabled."
            )
        saveables = validate_and_slice_inputs(names_to_saveables)
        self._check_restore_shapes = not reshape
        values = [s.op for s in saveables if isinstance(s.op, Tensor)]
        with graph_mod.name_scope(name, "save", values) as scope:
            default = apply_op(
                "PlaceholderWithDefault",
                input=filename or "model",
                shape=TensorShape([]),
                name="filename",
            )
            filename_tensor = apply_op(
                "PlaceholderWithDefault", input=default, shape=TensorShape([]), name="Const"
            )
            if sharded:
                per_device = self._group_by_devices(saveables)
                save_tensor = self._add_sharded_save_ops(filename_tensor, per_device)
                restore_op = self._add_sharded_restore_ops(
                    filename_tensor, per_device, restore_sequentially, reshape
                )
            else:
                save_tensor = self._add_save_ops(filename_tensor, saveables)
                restore_op = self._add_restore_ops(
                    filename_tensor, saveables, restore_sequentially, reshape
                )
        del scope
        return saver_pb2.SaverDef(
            filename_tensor_name=filename_tensor.name,
            save_tensor_name=save_tensor.name,
            restore_op_name=restore_op.name,
            max_to_keep=max_to_keep or 0,
            sharded=sharded,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            version=self._write_version,
        )


def _shape_of(tensor: Tensor) -> Any:
    if tensor.shape.is_fully_defined():
        return tensor.shape.as_list()
    return array_ops.shape(tensor)


BulkSaverBuilder = BaseSaverBuilder
