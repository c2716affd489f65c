"""Kernels of `PyFunc`, `PyFuncStateless` and `EagerPyFunc`: call the registered Python
function (follows TensorFlow's `py_func.cc` and `FuncRegistry.__call__`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.framework.py_funcs import py_funcs
from tensorweave.kernels.registry import KernelNode, register_kernel

_ERRORS = ((StopIteration, errors.OutOfRangeError), (ValueError, errors.InvalidArgumentError),
           (TypeError, errors.InvalidArgumentError),
           (NotImplementedError, errors.UnimplementedError))


class EagerArray(np.ndarray):
    """An ndarray with `.numpy()`, standing in for an eager tensor in `py_function`."""

    def numpy(self) -> np.ndarray:
        """The values as a plain ndarray."""
        return np.asarray(self)


def _convert(value: Any, dtype: dtypes.DType, index: int, token: str) -> np.ndarray:
    want = np.dtype(object) if dtype == dtypes.string else dtype.as_numpy_dtype
    if isinstance(value, np.ndarray | np.generic):
        got = np.asarray(value)
        if dtype == dtypes.string and got.dtype.kind in "SUO":
            return got.astype(object)
        if got.dtype != want:
            raise errors.InvalidArgumentError(
                None, None, f"{index}-th value returned by {token} is "
                f"{dtypes.as_dtype(got.dtype).name}, but expects {dtype.name}")
        return np.array(got, copy=True) if isinstance(value, EagerArray) else got
    if dtype == dtypes.string:
        return np.asarray(value, dtype=object)
    return np.asarray(value, dtype=want)


def _call(func: Any, args: list[Any], token: str) -> Any:
    try:
        return func(*args)
    except errors.OpError:
        raise
    except Exception as e:  # noqa: BLE001  (mapped to TensorFlow's error classes)
        cls = next((c for t, c in _ERRORS if isinstance(e, t)), errors.UnknownError)
        raise cls(None, None, f"{type(e).__name__}: {e} (in {token})") from e


def _builder(eager: bool) -> Any:
    def build(node: KernelNode) -> Any:
        token = node.attr("token")
        tout = [dtypes.as_dtype(t) for t in node.attr("Tout", [])]

        def compute(ctx: Any, *inputs: Any) -> Any:
            func = py_funcs.get(token)
            if func is None:
                raise errors.InvalidArgumentError(
                    None, None, f"callback {token} is not found (a py_func runs only in the "
                    "process that built its graph)")
            args = [np.asarray(x).view(EagerArray) if eager else x for x in inputs]
            result = _call(func, args, token)
            if not tout:
                return None
            values = list(result) if isinstance(result, list | tuple) else [result]
            if len(values) != len(tout):
                raise errors.InvalidArgumentError(
                    None, None, f"{token} returns {len(values)} values, but expects to see "
                    f"{len(tout)} values.")
            out = [_convert(v, t, i, token) for i, (v, t) in enumerate(zip(values, tout))]
            return out[0] if len(out) == 1 else out

        return compute

    return build


register_kernel("PyFunc")(_builder(eager=False))
register_kernel("PyFuncStateless")(_builder(eager=False))
register_kernel("EagerPyFunc")(_builder(eager=True))
