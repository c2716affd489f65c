"""`NodeSpec`: the runtime's light view of a node, built from an `Operation` or a `NodeDef`.

Pruning, placement, partitioning and the executor work on NodeSpecs, so the same code runs a
Python graph in process and a `GraphDef` received over the wire.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework.graph_export import attr_kind
from tensorweave.framework.graph_io import decode_attrs, parse_input
from tensorweave.framework.op_def import OpDef, op_def_registry
from tensorweave.framework.operation import Operation


class NodeSpec:
    """A node: name, op type, input names (`x`, `x:1`, `^x`), device and Python attrs."""

    __slots__ = ("name", "op", "inputs", "device", "attrs", "op_def", "_out", "_refs")

    def __init__(
        self, name: str, op: str, inputs: list[str], device: str, attrs: dict[str, Any]
    ):
        self.name = name
        self.op = op
        self.inputs = inputs
        self.device = device
        self.attrs = attrs
        self.op_def: OpDef | None = op_def_registry.get(op)
        self._out: list[dtypes.DType] | None = None
        self._refs: list[bool] | None = None

    @classmethod
    def from_operation(cls, op: Operation) -> NodeSpec:
        """The spec of a graph `Operation`."""
        inputs = [t._as_node_def_input() for t in op.inputs]
        inputs.extend("^" + c.name for c in op.control_inputs)
        spec = cls(op.name, op.type, inputs, op.device, op._attrs)
        spec._out = [t.dtype for t in op._outputs]
        return spec

    @classmethod
    def from_node_def(cls, nd: Any) -> NodeSpec:
        """The spec of a `NodeDef` proto (attrs decoded, OpDef defaults filled).

        Raises:
          ValueError: for an op type that is not registered.
        """
        if nd.op not in op_def_registry:
            raise ValueError(f"Op type not registered '{nd.op}' (node '{nd.name}')")
        return cls(nd.name, nd.op, list(nd.input), nd.device, decode_attrs(nd))

    def to_node_def(self) -> Any:
        """This node as a `NodeDef` proto."""
        from tensorweave.framework.attr_value import to_attr_value
        from tensorweave.protos import node_def_pb2

        nd = node_def_pb2.NodeDef(name=self.name, op=self.op, device=self.device)
        nd.input.extend(self.inputs)
        for k, v in self.attrs.items():
            nd.attr[k].CopyFrom(to_attr_value(v, attr_kind(self.op_def, k, v)))
        return nd

    def copy(self, **changes: Any) -> NodeSpec:
        """A shallow copy with some fields replaced."""
        spec = NodeSpec(
            changes.get("name", self.name), changes.get("op", self.op),
            list(changes.get("inputs", self.inputs)), changes.get("device", self.device),
            dict(changes.get("attrs", self.attrs)),
        )
        if "op" not in changes and "attrs" not in changes:
            spec._out = self._out
        return spec

    @property
    def output_dtypes(self) -> list[dtypes.DType]:
        """The output dtypes (ref types for reference outputs)."""
        if self._out is None:
            self._out = self.op_def.output_dtypes(self.attrs) if self.op_def else []
        return self._out

    @property
    def ref_inputs(self) -> list[bool]:
        """For each data input, whether the op takes it by reference."""
        if self._refs is None:
            self._refs = self.op_def.ref_inputs(self.attrs) if self.op_def else []
        return self._refs

    @property
    def is_stateful(self) -> bool:
        """True for ops with side effects or state."""
        return self.op_def is not None and self.op_def.is_stateful

    def data_inputs(self) -> list[tuple[str, int]]:
        """(source op, output index) of each data input, in order."""
        out = []
        for name in self.inputs:
            src, idx, is_control = parse_input(name)
            if not is_control:
                out.append((src, idx))
        return out

    def control_inputs(self) -> list[str]:
        """Names of the control-input ops."""
        return [n[1:] for n in self.inputs if n.startswith("^")]

    def __repr__(self) -> str:
        return f"NodeSpec({self.name!r}, {self.op!r}, device={self.device!r})"


def tensor_name(op_name: str, index: int) -> str:
    """`"op:index"`."""
    return f"{op_name}:{index}"


def split_tensor_name(name: str) -> tuple[str, int]:
    """`"op:1"` -> ("op", 1); `"op"` -> ("op", 0)."""
    src, idx, _ = parse_input(name)
    return src, idx
