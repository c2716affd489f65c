"""`tf.py_func`, `tf.numpy_function` and `tf.py_function`: ops that call a Python function
on NumPy values (follows TensorFlow's `tensorflow/python/ops/script_ops.py`).

The function is registered in the process's `framework.py_funcs` registry under a token
the node carries; the graph keeps it alive. It runs in the process that executes the node,
so it must be the one that built the graph (a local session, or an op placed on the
client's own task). Not differentiable. `py_function` passes arrays that also have
TensorFlow's eager-tensor `.numpy()`; there is no gradient tape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.op_defs import script as _defs  # noqa: F401  (registers)
from tensorweave.framework.py_funcs import py_funcs
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.gradients_impl import no_gradient

for _op_type in ("PyFunc", "PyFuncStateless", "EagerPyFunc"):
    no_gradient(_op_type)


def _py_func_op(op_type: str, func: Callable[..., Any], inp: Sequence[Any], tout: Any,
                name: str | None) -> Any:
    if not callable(func):
        raise ValueError(f"Expected func to be callable, got func of type {type(func)}")
    single = not isinstance(tout, list | tuple)
    tout_list = [dtypes.as_dtype(t) for t in ([tout] if single else tout)]
    graph = graph_mod.get_default_graph()
    inputs = [convert_to_tensor(x) for x in inp]
    token = py_funcs.register(graph, func)  # NOTE: held weakly; the graph keeps it
    attrs = {"is_async": False} if op_type == "EagerPyFunc" else {}
    (outputs,) = apply_op(op_type, input=inputs, token=token, Tout=tout_list, name=name,
                          **attrs)
    if not tout_list:
        # NOTE: an op without outputs gives no tensor to reach it by; it is the newest op.
        return graph.get_operations()[-1]
    return outputs[0] if single else list(outputs)


def py_func(func: Callable[..., Any], inp: Sequence[Any], Tout: Any,  # noqa: N803
            stateful: bool = True, name: str | None = None) -> Any:
    """An op calling `func(*numpy_inputs)` (follows `tf.compat.v1.py_func`).

    Args:
      func: takes one `np.ndarray` per input; returns one value per `Tout` dtype (a list
        or tuple when `Tout` is a list). Returned ndarrays must have exactly those dtypes;
        other values (Python numbers, lists) are converted to them.
      inp: the input tensors (or values convertible to tensors).
      Tout: a dtype (one output tensor) or a list of dtypes (a list of tensors; empty:
        the op itself is returned).
      stateful: False makes the op `PyFuncStateless`.
      name: op name.

    Returns:
      The output tensor(s), of unknown shape. Running raises `InvalidArgumentError` for
      a wrong count or dtype of results or a `ValueError`/`TypeError` in `func`,
      `OutOfRangeError` for `StopIteration`, `UnimplementedError` for
      `NotImplementedError`, `UnknownError` for other exceptions.

    Raises:
      ValueError: if `func` is not callable.
    """
    return _py_func_op("PyFunc" if stateful else "PyFuncStateless", func, inp, Tout, name)


def numpy_function(func: Callable[..., Any], inp: Sequence[Any], Tout: Any,  # noqa: N803
                   stateful: bool = True, name: str | None = None) -> Any:
    """`py_func` under its TensorFlow 2 name (follows `tf.numpy_function`)."""
    return py_func(func, inp, Tout, stateful=stateful, name=name)


def py_function(func: Callable[..., Any], inp: Sequence[Any], Tout: Any,  # noqa: N803
                name: str | None = None) -> Any:
    """An `EagerPyFunc` op: like `py_func`, but the inputs also have `.numpy()` as
    TensorFlow's eager tensors do (follows `tf.py_function`; no gradient)."""
    return _py_func_op("EagerPyFunc", func, inp, Tout, name)


__all__ = ["numpy_function", "py_func", "py_function"]
