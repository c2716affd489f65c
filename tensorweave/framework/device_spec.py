"""Device specifications: `/job:J/replica:R/task:T/device:TYPE:IDX`, parsed, printed, merged.

Follows TensorFlow's `tensorflow/python/framework/device_spec.py` (`DeviceSpecV1`, the
mutable variant exported as `tf.DeviceSpec` in TF 1.x) and `device.py` (`canonical_name`,
`check_valid`, `merge_device`). This module is pure: it imports nothing from tensorweave.

A spec is partial: every field may be unset (`None`). Unset fields are left out of the
string form, except that an unset index is written `*` when a device type is set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_LEGACY_DEVICE_TYPES = ("CPU", "GPU")

# The `memory_limit` every CPU device reports in its DeviceAttributes (TF's CPU default).
CPU_MEMORY_LIMIT_BYTES = 256 << 20


def _as_str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _as_int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def _as_device_type_or_none(value: Any) -> str | None:
    # Lower-case `cpu` and `gpu` are accepted for backwards compatibility, as in TF.
    if value in ("cpu", "gpu"):
        return value.upper()
    return _as_str_or_none(value)


_Components = tuple[str | None, int | None, int | None, str | None, int | None]


def _parse_index(text: str) -> int | None:
    return None if text == "*" else int(text)


def _string_to_components(spec: str | None) -> _Components:
    """Parses `spec` into (job, replica, task, device_type, device_index).

    Raises:
      ValueError: unknown attribute, two device types, or a non-integer replica, task or
        device index.
    """
    spec = spec or ""
    job = replica = task = device_type = device_index = None
    for part in spec.split("/"):
        fields = part.split(":")
        key, n = fields[0], len(fields)
        if n == 2 and key == "job":
            job = fields[1]
        elif n == 2 and key == "replica":
            replica = fields[1]
        elif n == 2 and key == "task":
            task = fields[1]
        elif n in (1, 2) and key.upper() in _LEGACY_DEVICE_TYPES:
            if device_type is not None:
                raise ValueError(f"Cannot specify multiple device types: {spec}")
            device_type = key.upper()
            if n == 2:
                device_index = _parse_index(fields[1])
        elif n == 3 and key == "device":
            if device_type is not None:
                raise ValueError(f"Cannot specify multiple device types: {spec}")
            device_type = fields[1]
            device_index = _parse_index(fields[2])
        elif key != "":
            raise ValueError(f"Unknown attribute: '{key}' in '{spec}'")
    # As in TF, replica and task are converted after the whole string has been scanned.
    return job, _as_int_or_none(replica), _as_int_or_none(task), device_type, device_index


def _components_to_string(components: _Components) -> str:
    job, replica, task, device_type, device_index = components
    out = []
    if job is not None:
        out.append(f"/job:{job}")
    if replica is not None:
        out.append(f"/replica:{replica}")
    if task is not None:
        out.append(f"/task:{task}")
    if device_type is not None:
        index = "*" if device_index is None else str(device_index)
        out.append(f"/device:{device_type}:{index}")
    return "".join(out)


class DeviceSpec:
    """A (possibly partial) device specification; mutable, like TF's `DeviceSpecV1`.

    Attributes (each `None` when unset; assignments are coerced like the constructor's):
      job: str, the job name.
      replica: int, the replica index.
      task: int, the task index within the job.
      device_type: str, e.g. "CPU", "GPU" or any custom type; "cpu"/"gpu" become upper case.
      device_index: int, the device index; `None` means any (`*`).

    Equality and hashing use `to_string()`, as in TensorFlow. The hash changes when the
    spec is mutated, so do not mutate a spec that is a dict key.
    """

    def __init__(
        self,
        job: str | None = None,
        replica: int | None = None,
        task: int | None = None,
        device_type: str | None = None,
        device_index: int | None = None,
    ):
        """Builds a spec from components.

        Raises:
          ValueError: if `replica`, `task` or `device_index` is not convertible to int.
        """
        self.job = job
        self.replica = replica
        self.task = task
        self.device_type = device_type
        self.device_index = device_index

    # Properties coerce on assignment, so that `spec.task = "3"` stores 3 (TF behaviour).
    @property
    def job(self) -> str | None:
        """The job name (str or None)."""
        return self._job

    @job.setter
    def job(self, value: Any) -> None:
        self._job = _as_str_or_none(value)

    @property
    def replica(self) -> int | None:
        """The replica index (int or None)."""
        return self._replica

    @replica.setter
    def replica(self, value: Any) -> None:
        self._replica = _as_int_or_none(value)

    @property
    def task(self) -> int | None:
        """The task index (int or None)."""
        return self._task

    @task.setter
    def task(self, value: Any) -> None:
        self._task = _as_int_or_none(value)

    @property
    def device_type(self) -> str | None:
        """The device type (str or None): "CPU", "GPU", ..."""
        return self._device_type

    @device_type.setter
    def device_type(self, value: Any) -> None:
        self._device_type = _as_device_type_or_none(value)

    @property
    def device_index(self) -> int | None:
        """The device index (int or None); None means any."""
        return self._device_index

    @device_index.setter
    def device_index(self, value: Any) -> None:
        self._device_index = _as_int_or_none(value)

    def _components(self) -> _Components:
        return self.job, self.replica, self.task, self.device_type, self.device_index

    def parse_from_string(self, spec: str | None) -> DeviceSpec:
        """Replaces every field with those parsed from `spec`, in place (TF `DeviceSpecV1`).

        Fields absent from `spec` become unset. On error the spec is left unchanged.

        Args:
          spec: str or None, e.g. "/job:ps/task:0/cpu:0" or "/device:GPU:*".

        Returns:
          DeviceSpec: `self`.

        Raises:
          ValueError: on an unknown attribute ("Unknown attribute: ..."), two device types
            ("Cannot specify multiple device types: ..."), or a non-integer replica, task or
            index ("invalid literal for int() ...").
        """
        (self.job, self.replica, self.task, self.device_type, self.device_index) = (
            _string_to_components(spec)
        )
        return self

    @classmethod
    def from_string(cls, spec: str | None) -> DeviceSpec:
        """Builds a spec from its string form (TF `DeviceSpec.from_string`).

        Raises:
          ValueError: as `parse_from_string`.
        """
        return cls(*_string_to_components(spec))

    def to_string(self) -> str:
        """Returns the canonical string `/job:J/replica:R/task:T/device:TYPE:IDX`.

        Unset fields are left out; an unset index is `*` when the type is set.
        """
        return _components_to_string(self._components())

    def _merged_components(self, dev: DeviceSpec) -> _Components:
        return tuple(
            mine if theirs is None else theirs
            for mine, theirs in zip(self._components(), dev._components())
        )  # type: ignore[return-value]

    def make_merged_spec(self, dev: DeviceSpec | str) -> DeviceSpec:
        """Returns a new spec: each field from `dev` if set there, else from `self`.

        Follows TF `DeviceSpec.make_merged_spec`. Fields merge independently, so merging
        "/device:GPU:2" with "/cpu:*" gives "/device:CPU:2".

        Args:
          dev: DeviceSpec or str (parsed with `from_string`, a tensorweave convenience).

        Raises:
          ValueError: if `dev` is a string that does not parse.
        """
        dev = _as_spec(dev)
        return self.__class__(*self._merged_components(dev))

    def merge_from(self, dev: DeviceSpec | str) -> None:
        """Merges `dev` into `self` in place; fields set in `dev` win (TF `DeviceSpecV1`).

        Raises:
          ValueError: if `dev` is a string that does not parse.
        """
        dev = _as_spec(dev)
        (self.job, self.replica, self.task, self.device_type, self.device_index) = (
            self._merged_components(dev)
        )

    def replace(self, **kwargs: Any) -> DeviceSpec:
        """Returns a copy with the given fields replaced (TF `DeviceSpec.replace`).

        Args:
          **kwargs: any of job, replica, task, device_type, device_index; `None` unsets.

        Raises:
          TypeError: on an unknown keyword.
        """
        fields = dict(
            job=self.job,
            replica=self.replica,
            task=self.task,
            device_type=self.device_type,
            device_index=self.device_index,
        )
        fields.update(kwargs)
        return self.__class__(**fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __repr__(self) -> str:
        return (
            f"<DeviceSpec(job={self.job}, replica={self.replica}, task={self.task}, "
            f"device_type={self.device_type}, device_index={self.device_index})>"
        )


def _as_spec(dev: DeviceSpec | str | None) -> DeviceSpec:
    return dev if isinstance(dev, DeviceSpec) else DeviceSpec.from_string(dev)


def canonical_name(device: DeviceSpec | str | None) -> str:
    """Returns the canonical string form of `device` (TF `device.canonical_name`).

    Args:
      device: DeviceSpec, str or None; None gives "".

    Raises:
      ValueError: if `device` is a string that does not parse.
    """
    if device is None:
        return ""
    return _as_spec(device).to_string()


def check_valid(spec: str) -> None:
    """Raises if `spec` is not a valid device string (TF `device.check_valid`).

    Raises:
      ValueError: as `DeviceSpec.from_string`.
    """
    DeviceSpec.from_string(spec)


class MergeDevice:
    """A device function merging a fixed spec under an op's own device (TF `MergeDevice`).

    Calling it on an operation or NodeDef (anything with a `device` string attribute, or a
    plain string) returns a new `DeviceSpec`: the op's set fields win, the fixed spec fills
    the rest. Graphs apply device functions innermost scope first, so outer scopes only fill
    fields that inner scopes left unset.
    """

    __slots__ = ("_spec",)

    def __init__(self, spec: DeviceSpec | str | None):
        """Copies `spec` so later mutation of the caller's spec has no effect.

        Raises:
          ValueError: if `spec` is a string that does not parse.
        """
        self._spec = DeviceSpec.from_string(canonical_name(spec))

    @property
    def spec(self) -> DeviceSpec:
        """A copy (DeviceSpec) of the spec this function merges in."""
        return self._spec.replace()

    @property
    def is_null_merge(self) -> bool:
        """True (bool) when the spec is empty, so merging changes nothing."""
        return not self._spec.to_string()

    def __call__(self, node_def_or_op: Any) -> DeviceSpec:
        """Returns the spec merged with `node_def_or_op`'s device; the op's fields win.

        Raises:
          ValueError: if the op's device string does not parse.
        """
        if isinstance(node_def_or_op, (str, DeviceSpec)) or node_def_or_op is None:
            current = node_def_or_op
        else:
            current = node_def_or_op.device
        return self._spec.make_merged_spec(_as_spec(current or ""))

    def __repr__(self) -> str:
        return f"MergeDevice({self._spec.to_string()!r})"


def merge_device(spec: DeviceSpec | str | MergeDevice | None) -> Callable[[Any], DeviceSpec]:
    """Returns a device function that merges `spec` under an op's device (TF `merge_device`).

    Args:
      spec: DeviceSpec, str, None (the empty spec) or an existing `MergeDevice`
        (returned as is).

    Returns:
      MergeDevice: callable `f(node_def_or_op) -> DeviceSpec`.

    Raises:
      ValueError: if `spec` is a string that does not parse.
    """
    if isinstance(spec, MergeDevice):
        return spec
    return MergeDevice(spec)


def is_compatible(a: DeviceSpec | str | None, b: DeviceSpec | str | None) -> bool:
    """Returns True if every field set in both `a` and `b` is equal.

    An unset field, including an unset (`*`) device index, matches anything. This is the
    relation the placer uses between a requested partial spec and a concrete device.

    Raises:
      ValueError: if a string argument does not parse.
    """
    spec_a, spec_b = _as_spec(a or ""), _as_spec(b or "")
    return all(
        x is None or y is None or x == y for x, y in zip(spec_a._components(), spec_b._components())
    )


def full_device_name(
    job: str, replica: int, task: int, device_type: str = "CPU", index: int = 0
) -> str:
    """Returns a fully specified device name, e.g. "/job:ps/replica:0/task:1/device:CPU:0".

    Raises:
      ValueError: if `replica`, `task` or `index` is not convertible to int.
    """
    return DeviceSpec(job, replica, task, device_type, index).to_string()
