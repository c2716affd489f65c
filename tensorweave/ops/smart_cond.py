"""`smart_cond`: branch in Python on a static predicate, else build `tf.cond`.

Follows TensorFlow's `framework/smart_cond.py`: a Python bool, or a Tensor whose value is
known while building the graph, calls one branch directly.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import control_flow_ops


def smart_constant_value(pred: Any) -> bool | None:
    """The static value of a bool predicate (Python bool or Tensor), or None.

    Raises:
      TypeError: for a predicate that is neither a bool nor a Tensor.
    """
    if isinstance(pred, Tensor):
        value = constant_value(pred)
        return None if value is None else bool(value)
    if isinstance(pred, bool | int) or hasattr(pred, "__bool__") and not hasattr(pred, "dtype"):
        return bool(pred)
    if hasattr(pred, "dtype") and getattr(pred, "shape", None) == ():
        return bool(pred)
    raise TypeError(f"`pred` must be a Tensor, or a Python bool, or 1 or 0. Found instead: {pred}")


def smart_cond(pred: Any, true_fn: Any = None, false_fn: Any = None, name: str | None = None):
    """`true_fn()` or `false_fn()`, chosen now if `pred` is static, else by `tf.cond`.

    Args:
      pred: a Python bool or a bool scalar Tensor.
      true_fn: callable for the true branch.
      false_fn: callable for the false branch.
      name: name of the `cond` op.

    Returns:
      The chosen branch's result.

    Raises:
      TypeError: if a branch is not callable.
    """
    if not callable(true_fn):
        raise TypeError(f"`true_fn` must be callable. Received: {true_fn}")
    if not callable(false_fn):
        raise TypeError(f"`false_fn` must be callable. Received: {false_fn}")
    value = smart_constant_value(pred)
    if value is not None:
        return true_fn() if value else false_fn()
    return control_flow_ops.cond(pred, true_fn=true_fn, false_fn=false_fn, name=name)


__all__ = ["smart_cond", "smart_constant_value"]
