"""Small top-level helpers TF1 programs use: `tf.is_tensor`, `tf.get_static_value`,
`tf.tables_initializer` (and `initialize_all_tables`), `tf.init_scope`, `tf.OpError`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import control_flow_ops
from tensorweave.ops.variables import GraphKeys, Variable

OpError = errors.OpError


def is_tensor(x: Any) -> bool:
    """Whether `x` is a graph tensor or tensor-like (`Tensor`, `Variable`,
    `IndexedSlices`, a sparse tensor), not a Python or NumPy value (follows
    `tf.is_tensor`)."""
    if isinstance(x, Tensor | Variable | IndexedSlices):
        return True
    return bool(getattr(x, "is_tensor_like", False)) or (
        type(x).__name__ == "SparseTensor" and isinstance(getattr(x, "values", None), Tensor))


def get_static_value(tensor: Any, partial: bool = False) -> np.ndarray | None:
    """The value of `tensor` when graph construction can compute it, else None (follows
    `tf.get_static_value`; `partial` is accepted, as TF1 graphs compute whole values only).

    Non-tensors are returned as NumPy arrays.
    """
    if not isinstance(tensor, Tensor | Variable):
        return np.asarray(tensor)
    if isinstance(tensor, Variable):
        return None
    return constant_value(tensor)


def tables_initializer(name: str = "init_all_tables") -> Operation:
    """An op running every op in `GraphKeys.TABLE_INITIALIZERS` (a `NoOp` when there are
    none); follows `tf.tables_initializer`."""
    initializers = graph_mod.get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    if initializers:
        return control_flow_ops.group(*initializers, name=name)
    return control_flow_ops.no_op(name=name)


def initialize_all_tables(name: str = "init_all_tables") -> Operation:
    """Deprecated alias of `tables_initializer` (follows `tf.initialize_all_tables`)."""
    return tables_initializer(name)


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """A context for building initialization ops: outside every control dependency of the
    default graph, keeping the name scope (follows `tf.init_scope` in graph mode)."""
    with graph_mod.get_default_graph().control_dependencies(None):
        yield


__all__ = ["OpError", "get_static_value", "init_scope", "initialize_all_tables",
           "is_tensor", "tables_initializer"]
