"""The global step: create, find, read, increment (follows TF 1.x `training_util.py`).

The global step is the int64 scalar variable `global_step` (zeros initializer, not
trainable) in the `GLOBAL_VARIABLES` and `GLOBAL_STEP` collections. It is created with
`tf.get_variable` at the root name scope but under the current device scope, so inside
`tf.device(tf.train.replica_device_setter(...))` it lands on a parameter server.

Deviation: the cached read (`GLOBAL_STEP_READ_KEY`) is `global_step + 0` on the variable's
snapshot, not on `initialized_value()` (which re-runs the initializer in tensorweave).
"""

from __future__ import annotations

import logging
from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.ops import init_ops, state_ops, variable_scope
from tensorweave.ops.variables import GraphKeys, Variable

_log = logging.getLogger(__name__)

# Collection caching the tensor that reads the global step before any increment.
GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


def global_step(sess: Any, global_step_tensor: Any) -> int:
    """The global step's value as a Python int (follows `tf.train.global_step`).

    Args:
      sess: a `Session`.
      global_step_tensor: the global step variable or tensor, or its name.
    """
    return int(sess.run(global_step_tensor))


def get_global_step(graph: graph_mod.Graph | None = None) -> Any:
    """The global step of `graph` (default graph), or None (follows `get_global_step`).

    Looks in the `GLOBAL_STEP` collection, then for the tensor `global_step:0`.

    Raises:
      TypeError: if the found global step is not an integer scalar Variable or Tensor.
    """
    graph = graph or graph_mod.get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) == 1:
        global_step_tensor = found[0]
    elif not found:
        try:
            global_step_tensor = graph.get_tensor_by_name("global_step:0")
        except KeyError:
            return None
    else:
        _log.error("Multiple tensors in global_step collection.")
        return None
    assert_global_step(global_step_tensor)
    return global_step_tensor


def create_global_step(graph: graph_mod.Graph | None = None) -> Variable:
    """Creates the global step variable in `graph` (follows `create_global_step`).

    Returns:
      The int64 scalar `Variable` named `global_step`, zero-initialized.

    Raises:
      ValueError: if the graph already has a global step ('"global_step" already exists.').
    """
    graph = graph or graph_mod.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph.name_scope(None):
        return variable_scope.get_variable(
            GraphKeys.GLOBAL_STEP,
            shape=[],
            dtype=dtypes.int64,
            initializer=init_ops.zeros_initializer(),
            trainable=False,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP],
        )


def get_or_create_global_step(graph: graph_mod.Graph | None = None) -> Any:
    """The global step of `graph`, created if missing (follows `get_or_create_global_step`)."""
    graph = graph or graph_mod.get_default_graph()
    global_step_tensor = get_global_step(graph)
    if global_step_tensor is None:
        global_step_tensor = create_global_step(graph)
    return global_step_tensor


def assert_global_step(global_step_tensor: Any) -> None:
    """Checks that `global_step_tensor` is an integer scalar `Variable` or `Tensor`.

    Raises:
      TypeError: 'Existing "global_step" must be a Variable or Tensor: ...', '... does not
        have integer type: ...' or '... is not scalar: ...'.
    """
    if not isinstance(global_step_tensor, Variable | Tensor):
        raise TypeError(
            f'Existing "global_step" must be a Variable or Tensor: {global_step_tensor}.'
        )
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError(
            f'Existing "global_step" does not have integer type: {global_step_tensor.dtype}'
        )
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


def _get_global_step_read(graph: graph_mod.Graph | None = None) -> Any:
    """The cached read of the global step, or None.

    Raises:
      RuntimeError: if the `GLOBAL_STEP_READ_KEY` collection holds several tensors.
    """
    graph = graph or graph_mod.get_default_graph()
    reads = graph.get_collection(GLOBAL_STEP_READ_KEY)
    if len(reads) > 1:
        raise RuntimeError(
            f"There are multiple items in collection {GLOBAL_STEP_READ_KEY}. "
            "There should be only one."
        )
    return reads[0] if reads else None


def _get_or_create_global_step_read(graph: graph_mod.Graph | None = None) -> Any:
    """A tensor `global_step/add` reading the global step (cached), or None without one."""
    graph = graph or graph_mod.get_default_graph()
    read = _get_global_step_read(graph)
    if read is not None:
        return read
    global_step_tensor = get_global_step(graph)
    if global_step_tensor is None:
        return None
    with graph.as_default(), graph.name_scope(None):
        with graph.name_scope(global_step_tensor.op.name + "/"):
            read = global_step_tensor + 0
            graph.add_to_collection(GLOBAL_STEP_READ_KEY, read)
    return _get_global_step_read(graph)


def _increment_global_step(increment: Any, graph: graph_mod.Graph | None = None) -> Any:
    """`assign_add(global_step, increment)` after the cached read (used by hooks).

    Raises:
      ValueError: if the graph has no global step.
    """
    graph = graph or graph_mod.get_default_graph()
    global_step_tensor = get_global_step(graph)
    if global_step_tensor is None:
        raise ValueError(
            "Global step tensor should be created by tf.train.get_or_create_global_step "
            "before calling increment."
        )
    read = _get_or_create_global_step_read(graph)
    with graph.as_default(), graph.name_scope(None):
        with graph.name_scope(global_step_tensor.op.name + "/"):
            with graph.control_dependencies([read]):
                return state_ops.assign_add(global_step_tensor, increment)


__all__ = [
    "GLOBAL_STEP_READ_KEY",
    "assert_global_step",
    "create_global_step",
    "get_global_step",
    "get_or_create_global_step",
    "global_step",
]
