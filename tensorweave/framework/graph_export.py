"""Graph -> `GraphDef`: `Graph.as_graph_def` and `Operation.node_def` (TF's `NodeDef` form).

Imports no graph module, so `graph` and `operation` use it directly; `graph_io` holds the
other direction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tensorweave.framework import attr_value
from tensorweave.protos import graph_pb2, node_def_pb2

if TYPE_CHECKING:
    from tensorweave.framework.operation import Operation


def attr_kind(op_def: Any, name: str, value: Any) -> str:
    """The attr kind of `name`, from the OpDef when declared there, else inferred."""
    if op_def is not None and name in op_def.attrs:
        return op_def.attrs[name].type
    return attr_value.infer_kind(value)


def node_def_of(op: Operation, add_shapes: bool = False) -> Any:
    """`op` as a `NodeDef` proto (inputs as `name`, `name:i` and `^control`)."""
    nd = node_def_pb2.NodeDef(name=op.name, op=op.type, device=op.device)
    nd.input.extend(t._as_node_def_input() for t in op.inputs)
    nd.input.extend("^" + c.name for c in op.control_inputs)
    for name, value in op._attrs.items():
        nd.attr[name].CopyFrom(attr_value.to_attr_value(value, attr_kind(op.op_def, name, value)))
    if add_shapes and op.outputs:
        nd.attr["_output_shapes"].CopyFrom(
            attr_value.to_attr_value([t.shape for t in op.outputs], "list(shape)")
        )
    return nd


def graph_to_graph_def(graph: Any, from_version: int | None = None, add_shapes: bool = False):
    """The ops of `graph` (those added since `from_version` when given) as a `GraphDef`."""
    gd = graph_pb2.GraphDef()
    gd.versions.CopyFrom(graph.graph_def_versions)
    ops = graph._ops_since(from_version or 0)
    gd.node.extend(node_def_of(op, add_shapes) for op in ops)
    return gd
