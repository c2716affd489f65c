"""Subgraph extraction: the nodes a (feeds, fetches, targets) signature needs (follows
TensorFlow's `graph/subgraph.cc` pruning)."""

from __future__ import annotations

from tensorweave import errors
from tensorweave.runtime.node_spec import NodeSpec, split_tensor_name
from tensorweave.runtime.ref_reads import order_reads_after_writes


def prune(
    nodes: dict[str, NodeSpec], feeds: set[str], fetches: list[str], targets: list[str]
) -> list[NodeSpec]:
    """Returns the nodes needed to compute `fetches` and run `targets`, cutting at `feeds`.

    Args:
      nodes: all nodes by name.
      feeds: tensor names (`"x:0"`) whose values are supplied.
      fetches: tensor names to compute.
      targets: op names to run.

    Returns:
      The needed nodes, in the order of `nodes`; a read of a ref variable that a control
      dependency orders after a write of it is given a read of its own (`ref_reads`).

    Raises:
      NotFoundError: if a fetch, target or input names no node.
    """
    needed: set[str] = set()
    stack: list[str] = []
    for name in fetches:
        if name in feeds:
            continue
        op_name, _ = split_tensor_name(name)
        stack.append(_check(nodes, op_name, "Fetch"))
    stack.extend(_check(nodes, t, "Target") for t in targets)
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        for inp in nodes[name].inputs:
            if inp.startswith("^"):
                src = inp[1:]
                if _fed_op(nodes, src, feeds):
                    continue  # a fed op has run (TF: its value comes from the feed)
            elif (inp if ":" in inp else inp + ":0") in feeds:
                continue
            else:
                src = split_tensor_name(inp)[0]
            if src not in needed:
                stack.append(_check(nodes, src, f"Input of {name}"))
    kept = [_without_fed_controls(nodes[n], nodes, feeds) for n in nodes if n in needed]
    return order_reads_after_writes(kept)


def _fed_op(nodes: dict[str, NodeSpec], name: str, feeds: set[str]) -> bool:
    """True when `name` is a single-output op whose output is fed."""
    return f"{name}:0" in feeds and name in nodes and len(nodes[name].output_dtypes) == 1


def _without_fed_controls(node: NodeSpec, nodes: dict[str, NodeSpec], feeds: set[str]):
    """`node` without control inputs on fed ops (a copy only when it has some)."""
    if not feeds or not any(i.startswith("^") and _fed_op(nodes, i[1:], feeds)
                            for i in node.inputs):
        return node
    return node.copy(inputs=[i for i in node.inputs
                             if not (i.startswith("^") and _fed_op(nodes, i[1:], feeds))])


def _check(nodes: dict[str, NodeSpec], name: str, what: str) -> str:
    if name not in nodes:
        raise errors.NotFoundError(None, None, f"{what} node {name} is not in the graph")
    return name
