"""`GraphDef` -> Graph: `import_graph_def`, `write_graph` and NodeDef decoding helpers.

The other direction (`Graph.as_graph_def`, `Operation.node_def`) is `graph_export`.
"""

from __future__ import annotations

import os
from typing import Any

from tensorweave.framework import attr_value
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph_export import (  # noqa: F401  (also importable from here)
    attr_kind,
    graph_to_graph_def,
    node_def_of,
)
from tensorweave.framework.op_def import op_def_registry
from tensorweave.framework.operation import Operation, Tensor


def decode_attrs(node_def: Any) -> dict[str, Any]:
    """The attrs of a `NodeDef` as Python values, with the OpDef's defaults filled in."""
    attrs = {k: attr_value.from_attr_value(v) for k, v in node_def.attr.items()}
    op_def = op_def_registry.get(node_def.op)
    if op_def is not None:
        for name, a in op_def.attrs.items():
            if name not in attrs and a.has_default:
                attrs[name] = list(a.default) if isinstance(a.default, list) else a.default
    return attrs


def parse_input(name: str) -> tuple[str, int, bool]:
    """Splits a NodeDef input `"x:1"` / `"x"` / `"^x"` into (op name, index, is_control)."""
    if name.startswith("^"):
        return name[1:], -1, True
    op_name, sep, idx = name.rpartition(":")
    if sep and idx.isdigit():
        return op_name, int(idx), False
    return name, 0, False


_MERGES = ("Merge", "RefMerge")
_NEXT_ITERATIONS = ("NextIteration", "RefNextIteration")


def _is_back_edge(node: Any, src: str, by_name: dict[str, Any]) -> bool:
    """A loop's back edge, NextIteration -> Merge: the one cycle a GraphDef may have."""
    return node.op in _MERGES and src in by_name and by_name[src].op in _NEXT_ITERATIONS


def _topological(nodes: list[Any]) -> list[Any]:
    by_name = {n.name: n for n in nodes}
    state: dict[str, int] = {}
    order: list[Any] = []
    for root in nodes:
        if root.name in state:
            continue
        stack = [(root, iter(root.input))]
        state[root.name] = 1
        while stack:
            node, it = stack[-1]
            for inp in it:
                src = parse_input(inp)[0]
                if _is_back_edge(node, src, by_name):
                    continue
                if src in by_name and state.get(src) is None:
                    state[src] = 1
                    stack.append((by_name[src], iter(by_name[src].input)))
                    break
                if state.get(src) == 1 and src in by_name:
                    raise ValueError(f"GraphDef has a cycle through node '{src}'")
            else:
                stack.pop()
                state[node.name] = 2
                order.append(node)
    return order


def import_graph_def(
    graph_def: Any,
    input_map: dict[str, Any] | None = None,
    return_elements: list[str] | None = None,
    name: str | None = None,
    op_dict: Any = None,
    producer_op_list: Any = None,
) -> list[Any] | None:
    """Imports a `GraphDef` into the default graph (follows `tf.import_graph_def`).

    Args:
      graph_def: a `GraphDef` proto (ours or TensorFlow's: the bytes are the same).
      input_map: maps tensor names of `graph_def` (`"x:0"` or `"x"`) to Tensors of the
        default graph that replace them.
      return_elements: names of ops (`"x"`) or tensors (`"x:0"`) to return.
      name: prefix for the imported names (default `"import"`; `""` for none).
      op_dict: ignored; accepted for TensorFlow signature compatibility (deprecated there).
      producer_op_list: ignored; accepted for TensorFlow signature compatibility (there it
        lists the producer's ops so that default-valued attrs can be stripped).

    Returns:
      The requested elements, or None when `return_elements` is None.

    Raises:
      ValueError: for unregistered op types, unknown input names, unused input_map keys,
        cycles, or name collisions.
      TypeError: if an input_map value is not a Tensor, or has the wrong dtype.
    """
    g = graph_mod.get_default_graph()
    input_map = {_tensor_key(k): v for k, v in (input_map or {}).items()}
    for k, v in input_map.items():
        if not isinstance(v, Tensor):
            raise TypeError(f"input_map must map to Tensors; {k!r} maps to {v!r}")
    with graph_mod.name_scope(name, "import", list(input_map.values())) as scope:
        imported: dict[str, Operation] = {}
        used: set[str] = set()
        back_edges: list[tuple[Operation, int, str, int]] = []
        for nd in _topological(list(graph_def.node)):
            imported[nd.name] = _import_node(g, nd, scope, imported, input_map, used,
                                             back_edges)
        for op, index, src, idx in back_edges:
            if src not in imported:
                raise ValueError(f"Node '{op.name}': input '{src}' not found in graph_def.")
            op._update_input(index, imported[src].outputs[idx])
    unused = set(input_map) - used
    if unused:
        raise ValueError(
            f"Attempted to map inputs that were not found in graph_def: {sorted(unused)}"
        )
    if return_elements is None:
        return None
    return [_resolve_element(e, imported) for e in return_elements]


def _tensor_key(name: str) -> str:
    return name if ":" in name or name.startswith("^") else name + ":0"


def _import_node(g, nd, scope, imported, input_map, used, back_edges) -> Operation:
    op_def = op_def_registry.get(nd.op)
    if op_def is None:
        raise ValueError(f"Op type not registered '{nd.op}' in binary (node '{nd.name}').")
    inputs, control = [], []
    pending: list[tuple[int, str, int]] = []
    for inp in nd.input:
        src, idx, is_control = parse_input(inp)
        if is_control:
            if src not in imported:
                raise ValueError(f"Node '{nd.name}': control input '{src}' not found in graph_def.")
            control.append(imported[src])
            continue
        key = f"{src}:{idx}"
        if key in input_map:
            used.add(key)
            inputs.append(input_map[key])
        elif src in imported:
            inputs.append(imported[src].outputs[idx])
        elif nd.op in _MERGES:
            # NOTE: a loop's back edge (its NextIteration comes later): a stand-in input
            # until every node is imported.
            pending.append((len(inputs), src, idx))
            inputs.append(None)
        else:
            raise ValueError(f"Node '{nd.name}': input '{inp}' not found in graph_def.")
    if pending:
        stand_in = next((t for t in inputs if t is not None), None)
        if stand_in is None:
            raise ValueError(f"Node '{nd.name}': no input of the Merge is imported first.")
        inputs = [stand_in if t is None else t for t in inputs]
    attrs = decode_attrs(nd)
    if "_class" in attrs:
        attrs["_class"] = [
            "loc:@" + scope + c[5:] if c.startswith("loc:@") else c for c in attrs["_class"]
        ]
    attrs.pop("_output_shapes", None)
    op = g.create_op(
        nd.op,
        inputs,
        op_def.output_dtypes(attrs),
        name=scope + nd.name + "/",
        attrs=attrs,
        op_def=op_def,
        compute_device=False,
    )
    op._add_control_inputs(control)
    back_edges.extend((op, i, src, idx) for i, src, idx in pending)
    op._set_device(nd.device)
    g._apply_device_functions(op)
    return op


def _resolve_element(name: str, imported: dict[str, Operation]) -> Any:
    if ":" in name:
        op_name, _, idx = name.rpartition(":")
        if op_name in imported:
            return imported[op_name].outputs[int(idx)]
    elif name in imported:
        return imported[name]
    raise ValueError(f"Requested return_element {name!r} not found in graph_def.")


def write_graph(graph_or_graph_def: Any, logdir: str, name: str, as_text: bool = True) -> str:
    """Writes a graph as a `GraphDef` file, text or binary (follows `tf.train.write_graph`).

    Returns:
      The path of the written file.

    Raises:
      OSError: if the directory cannot be created or the file written.
    """
    from google.protobuf import text_format

    graph_def = graph_or_graph_def
    if isinstance(graph_or_graph_def, graph_mod.Graph):
        graph_def = graph_or_graph_def.as_graph_def()
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    tmp = f"{path}.tmp{os.getpid()}"
    if as_text:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text_format.MessageToString(graph_def))
    else:
        with open(tmp, "wb") as f:
            f.write(graph_def.SerializeToString())
    os.replace(tmp, path)
    return path
