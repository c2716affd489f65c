"""`tf.no_op`, `tf.group`, `tf.tuple` and `with_dependencies`: ordering ops by control
dependencies (TF 1.x `control_flow_ops`).

These build no control-flow context, so they live below `control_flow_ctx` (whose cond
branches gate operations on the pivot with `with_dependencies`) and `logging_ops`;
`control_flow_ops` re-exports them under TensorFlow's module name.
"""

from __future__ import annotations

import builtins
from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.ops import array_ops
from tensorweave.ops.gradient_registry import no_gradient

no_gradient("NoOp")


def no_op(name: str | None = None) -> Operation:
    """An op that does nothing; useful as a control-dependency anchor."""
    return apply_op("NoOp", name=name)


def _as_ops(inputs: Any) -> list[Operation]:
    ops: list[Operation] = []
    for x in inputs:
        if isinstance(x, list | builtins.tuple):
            ops.extend(_as_ops(x))
            continue
        if x is None:
            continue
        if hasattr(x, "_as_graph_element") and not isinstance(x, Operation | Tensor):
            x = x._as_graph_element()
        if isinstance(x, Tensor):
            x = x.op
        if not isinstance(x, Operation):
            raise TypeError(f"Expected an Operation or Tensor in tf.group, got {x!r}")
        ops.append(x)
    return ops


def group(*inputs: Any, name: str | None = None) -> Operation:
    """A `NoOp` that runs after all `inputs` (ops or tensors) (follows `tf.group`).

    Raises:
      TypeError: for inputs that are not ops or tensors.
    """
    ops = _as_ops(inputs)
    with graph_mod.name_scope(name, "group_deps", ops) as scope:
        with graph_mod.get_default_graph().control_dependencies(ops):
            return no_op(name=scope)


def with_dependencies(dependencies: Any, output_tensor: Tensor, name: str | None = None):
    """`output_tensor`, passed through an Identity that runs after `dependencies`."""
    g = graph_mod.get_default_graph()
    with graph_mod.name_scope(name, "control_dependency", [output_tensor]) as scope:
        # NOTE: colocated with the tensor, as TensorFlow does, so gating stays on its task.
        with g.colocate_with(output_tensor), g.control_dependencies(_as_ops(dependencies)):
            return array_ops.identity(output_tensor, name=scope)


def tuple(tensors: Any, name: str | None = None, control_inputs: Any = None) -> list[Any]:  # noqa: A001
    """Tensors gated so that each is available only after all are computed (`tf.tuple`)."""
    with graph_mod.name_scope(name, "tuple", tensors):
        gating = group(*[t for t in tensors if t is not None], *(control_inputs or []))
        return [None if t is None else with_dependencies([gating], t) for t in tensors]


__all__ = ["no_op", "group", "tuple", "with_dependencies"]
