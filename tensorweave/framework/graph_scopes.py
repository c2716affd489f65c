"""The per-thread scopes of a `Graph`: device, colocation, control dependencies, container.

`GraphScopes` is the part of `Graph` that enters these scopes (`Graph.device`,
`Graph.colocate_with`, `Graph.control_dependencies`, `Graph.container`, ...) and applies
them to each new op; `Graph` inherits it. Name scopes stay in `graph`, with op naming.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.framework.operation import Operation, Tensor


class _DeviceEntry:
    """One `with graph.device(...)` scope: a merged spec, a device function, or a stop."""

    __slots__ = ("spec", "function", "is_stop")

    def __init__(self, device: Any):
        self.spec = None
        self.function = None
        self.is_stop = device is None
        if callable(device) and not isinstance(device, DeviceSpec):
            self.function = device
        elif device is not None:
            text = device.to_string() if isinstance(device, DeviceSpec) else str(device)
            self.spec = DeviceSpec.from_string(text) if text else None

    def apply(self, op: Operation) -> str:
        """The device `op` gets from this scope (the op's current fields win a merge)."""
        if self.function is not None:
            return _device_string(self.function(op))
        return self.spec.make_merged_spec(DeviceSpec.from_string(op.device)).to_string()


def _device_string(device: Any) -> str:
    if device is None:
        return ""
    if isinstance(device, DeviceSpec):
        return device.to_string()
    return DeviceSpec.from_string(device).to_string() if device else ""


class _ControlDependencies:
    """One `control_dependencies` scope: its control inputs and the ops created inside."""

    def __init__(self, control_inputs: list[Operation] | None):
        self.control_inputs = control_inputs or []
        self.clears = control_inputs is None
        self.seen: set[int] = set()


class ScopeState(threading.local):
    """Per-thread scope stacks of a graph (TensorFlow keeps these thread-local too)."""

    def __init__(self) -> None:
        self.name_stack = ""
        self.device_stack: list[_DeviceEntry] = []
        self.colocation_stack: list[Operation] = []
        self.control_stack: list[_ControlDependencies] = []
        self.container = ""
        self.attr_scope: dict[str, Any] = {}


class GraphScopes:
    """The scope methods of `Graph` (a mixin; `Graph` is the only class that uses it).

    The state lives in `self._scopes` (a `ScopeState`, per thread) and
    `self._gradient_override_map`, both set up by `_init_scopes`.
    """

    def _init_scopes(self) -> None:
        self._scopes = ScopeState()
        self._gradient_override_map: dict[str, str] = {}

    # ------------------------------------------------------------------ scopes
    @contextlib.contextmanager
    def device(self, device_name_or_function: Any) -> Iterator[None]:
        """Context manager setting the device of ops created inside (follows `Graph.device`).

        `device_name_or_function` is a string or `DeviceSpec` (merged innermost-first), a
        function of the op whose result replaces its device, or None to ignore all outer
        scopes.

        Raises:
          ValueError: for device strings that do not parse.
        """
        self._scopes.device_stack.append(_DeviceEntry(device_name_or_function))
        try:
            yield
        finally:
            self._scopes.device_stack.pop()

    @contextlib.contextmanager
    def colocate_with(self, op: Any, ignore_existing: bool = False) -> Iterator[None]:
        """Places ops created inside on the same device as `op`.

        Follows `Graph.colocate_with`; device scopes are suspended inside.

        Raises:
          ValueError: if `op` is None and `ignore_existing` is False.
        """
        if op is None and not ignore_existing:
            raise ValueError(
                "Trying to reset colocation (op is None) but ignore_existing is not True"
            )
        if op is not None:
            if hasattr(op, "_as_graph_element") or isinstance(op, Tensor):
                op = op._as_graph_element() if not isinstance(op, Tensor) else op
            if isinstance(op, Tensor):
                op = op.op
            if not isinstance(op, Operation):
                raise TypeError(f"Can not colocate with {op!r}")
        scopes = self._scopes
        saved_devices, saved_coloc = scopes.device_stack, scopes.colocation_stack
        scopes.device_stack = []
        if ignore_existing:
            scopes.colocation_stack = []
        else:
            scopes.colocation_stack = list(saved_coloc)
        if op is not None:
            scopes.colocation_stack.append(op)
        try:
            yield
        finally:
            scopes.device_stack, scopes.colocation_stack = saved_devices, saved_coloc

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs: Any) -> Iterator[None]:
        """Makes ops created inside run after `control_inputs`.

        Follows `Graph.control_dependencies`: `control_inputs` is a list of ops or tensors;
        None clears the outer scopes.

        Raises:
          TypeError: for items that are not ops or tensors of this graph.
        """
        if control_inputs is None:
            controller = _ControlDependencies(None)
        else:
            current = {id(c) for ctl in self._active_controllers() for c in ctl.control_inputs}
            ops: list[Operation] = []
            for c in control_inputs:
                if hasattr(c, "_as_graph_element") and not isinstance(c, Operation | Tensor):
                    c = c._as_graph_element()
                if isinstance(c, Tensor):
                    c = c.op
                if not isinstance(c, Operation):
                    raise TypeError(f"Control input must be Operation or Tensor: {c!r}")
                if c.graph is not self:
                    raise ValueError(f"Control input {c.name} is not an element of this graph.")
                if id(c) not in current:
                    ops.append(c)
                    current.add(id(c))
            controller = _ControlDependencies(ops)
        # NOTE: as TensorFlow's, `control_dependencies(None)` also leaves any cond/while
        # context (variables and loop Enters are created outside them).
        saved_ctx = self._control_flow_context
        if control_inputs is None:
            self._control_flow_context = None
        self._scopes.control_stack.append(controller)
        try:
            yield
        finally:
            self._scopes.control_stack.pop()
            self._control_flow_context = saved_ctx

    def _active_controllers(self) -> list[_ControlDependencies]:
        stack = self._scopes.control_stack
        for i in range(len(stack) - 1, -1, -1):
            if stack[i].clears:
                return stack[i + 1 :]
        return list(stack)

    @contextlib.contextmanager
    def container(self, container_name: str) -> Iterator[str]:
        """Gives stateful ops created inside `container=container_name`.

        Follows `Graph.container`.
        """
        old = self._scopes.container
        self._scopes.container = container_name
        try:
            yield container_name
        finally:
            self._scopes.container = old

    @contextlib.contextmanager
    def _attr_scope(self, attr_map: dict[str, Any]) -> Iterator[None]:
        """Ops created inside get these attrs (unless they set them themselves)."""
        saved = dict(self._scopes.attr_scope)
        self._scopes.attr_scope.update(attr_map)
        try:
            yield
        finally:
            self._scopes.attr_scope = saved

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map: dict[str, str]) -> Iterator[None]:
        """Ops of the given types created inside use another registered gradient."""
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    # ------------------------------------------------- applying scopes to new ops
    def _control_inputs_for(self, inputs: list[Tensor]) -> list[Operation]:
        input_ops = [t.op for t in inputs]
        ret: list[Operation] = []
        for ctl in self._active_controllers():
            if any(id(op) in ctl.seen for op in input_ops):
                continue
            ret.extend(c for c in ctl.control_inputs if c not in input_ops and c not in ret)
        return ret

    def _finish_op(self, op: Operation, compute_device: bool) -> None:
        scopes = self._scopes
        for key, value in scopes.attr_scope.items():
            op._attrs.setdefault(key, value)
        mapped = self._gradient_override_map.get(op.type)
        if mapped:
            op._attrs["_gradient_op_type"] = mapped
        for ctl in scopes.control_stack:
            ctl.seen.add(id(op))
        if compute_device:
            self._apply_device_functions(op)
        if scopes.colocation_stack:
            groups: set[bytes] = set()
            device_set = False
            for c in scopes.colocation_stack:
                groups.update(c.colocation_groups())
                if c.device and not device_set:
                    op._device = c.device
                    device_set = True
            op._attrs["_class"] = sorted(g.decode() for g in groups)
        if scopes.container and op._is_stateful and "container" in op._attrs:
            if not op._attrs["container"]:
                op._attrs["container"] = scopes.container

    def _apply_device_functions(self, op: Operation) -> None:
        for entry in reversed(self._scopes.device_stack):
            if entry.is_stop:
                break
            if entry.function is None and entry.spec is None:
                continue
            op._device = entry.apply(op)
