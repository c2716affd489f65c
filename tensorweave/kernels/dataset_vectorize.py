"""Map-and-batch fusion: when a `BatchDatasetV2` reads a `MapDataset` whose function is
element-wise, the batch is formed from the map's input and the function runs once on the
whole batch (TensorFlow's `map_and_batch_fusion` plus `map_vectorization` rewrites, here
done by the batch kernel). The elements are the same; only the cost per element changes.

A body is element-wise when every node is an argument, a scalar constant or captured
scalar, or an allow-listed element-wise op whose batched operands have the same fully
known element shape, and every result depends on an argument. Stateful ops (random
numbers) never qualify, so each element still sees exactly the computation TensorFlow
would run.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.graph_io import parse_input
from tensorweave.framework.tensor_shape import TensorShape

_UNARY = frozenset({
    "Identity", "Cast", "Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Log1p",
    "Tanh", "Sigmoid", "Relu", "Floor", "Ceil", "Round", "Sign", "Reciprocal", "LogicalNot",
})
_BINARY = frozenset({
    "Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Maximum",
    "Minimum", "Pow", "SquaredDifference", "Equal", "NotEqual", "Less", "LessEqual",
    "Greater", "GreaterEqual", "LogicalAnd", "LogicalOr",
})


def _shape(attr_value: Any) -> list[int] | None:
    shape = attr_value.shape
    if shape.unknown_rank or any(d.size < 0 for d in shape.dim):
        return None
    return [d.size for d in shape.dim]


def is_elementwise(graph_def: Any, num_outputs: int) -> bool:
    """True if the body computes each result element-wise from its arguments."""
    nodes = {n.name: n for n in graph_def.node}
    # name -> (batched, element shape or None for "unbatched scalar")
    info: dict[str, tuple[bool, list[int] | None]] = {}

    def visit(name: str, depth: int = 0) -> tuple[bool, list[int] | None] | None:
        if name in info:
            return info[name]
        node = nodes.get(name)
        if node is None or depth > 200:
            return None
        result = _classify(node, lambda n: visit(n, depth + 1))
        if result is not None:
            info[name] = result
        return result

    for k in range(num_outputs):
        out = visit(f"output_{k}")
        if out is None or not out[0]:
            return False
    return True


def _classify(node: Any, visit: Any) -> tuple[bool, list[int] | None] | None:
    if node.op == "Placeholder":
        shape = _shape(node.attr["shape"])
        if node.name.startswith("args_"):
            return None if shape is None else (True, shape)
        return (False, None) if shape == [] else None
    if node.op == "Const":
        dims = node.attr["value"].tensor.tensor_shape.dim
        return (False, None) if len(dims) == 0 else None
    inputs = [parse_input(i) for i in node.input]
    if any(control for _, _, control in inputs):
        return None
    if node.op in _UNARY and len(inputs) == 1:
        return visit(inputs[0][0])
    if node.op in _BINARY and len(inputs) == 2:
        a, b = visit(inputs[0][0]), visit(inputs[1][0])
        if a is None or b is None:
            return None
        batched = [x for x in (a, b) if x[0]]
        if len(batched) == 2 and TensorShape(a[1]) != TensorShape(b[1]):
            return None
        return batched[0] if batched else (False, None)
    return None
