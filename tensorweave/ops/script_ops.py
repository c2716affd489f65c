"""`tf.py_func`, `tf.numpy_function` and `tf.py_function`: graph nodes that call Python
(follows TF 1.x `script_ops`).

The function receives NumPy arrays (`py_function`: arrays that also have `.numpy()`) and
returns values convertible to `Tout`. It runs in the process that built the graph; it is
not differentiable, and a graph holding one cannot be exported to another process.
"""

from __future__ import annotations

from typing import Any

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.py_func_registry import py_funcs
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.gradients_impl import no_gradient


def _call(op_type: str, func: Any, inp: Any, Tout: Any, name: Any) -> Any:  # noqa: N803
    if not callable(func):
        raise TypeError(f"Expected func to be callable, got func of type {type(func)}")
    single = not isinstance(Tout, list | tuple)
    touts = [dtypes.as_dtype(t) for t in ([Tout] if single else Tout)]
    with graph_mod.name_scope(name, op_type, list(inp or [])):
        inputs = [convert_to_tensor(x) for x in (inp or [])]
        token = py_funcs.insert(func)
        result = apply_op(op_type, input=inputs, token=token, Tout=touts)
        if not touts:
            # Without outputs the node itself is returned, as TensorFlow does.
            return graph_mod.get_default_graph().get_operations()[-1]
    outs = result if isinstance(result, list) else [result]
    if len(outs) == 1 and isinstance(outs[0], list):
        outs = outs[0]
    return outs[0] if single else list(outs)


def py_func(func: Any, inp: Any, Tout: Any, stateful: bool = True,  # noqa: N803
            name: str | None = None) -> Any:
    """A node computing `func(*inputs)` on NumPy arrays (follows `tf.py_func`).

    Args:
      func: a Python callable returning one value per `Tout` entry.
      inp: list of input tensors.
      Tout: one dtype (the result is one Tensor) or a list of dtypes (a list of Tensors).
      stateful: False lets the node be treated as a pure function (op `PyFuncStateless`).
      name: op name.

    Raises:
      TypeError: if `func` is not callable. At run time the function's exceptions map to
        TensorFlow's error codes (ValueError -> InvalidArgumentError, ...).
    """
    return _call("PyFunc" if stateful else "PyFuncStateless", func, inp, Tout, name)


def numpy_function(func: Any, inp: Any, Tout: Any, stateful: bool = True,  # noqa: N803
                   name: str | None = None) -> Any:
    """Same as `py_func` (follows `tf.numpy_function`)."""
    return py_func(func, inp, Tout, stateful=stateful, name=name)


def py_function(func: Any, inp: Any, Tout: Any, name: str | None = None) -> Any:  # noqa: N803
    """A node computing `func(*inputs)`; the inputs answer `.numpy()` like eager tensors
    (follows `tf.py_function`, op `EagerPyFunc`; not differentiable here)."""
    return _call("EagerPyFunc", func, inp, Tout, name)


for _op in ("PyFunc", "PyFuncStateless", "EagerPyFunc"):
    no_gradient(_op)

__all__ = ["numpy_function", "py_func", "py_function"]
