"""Kernels of `PyFunc`, `PyFuncStateless` and `EagerPyFunc`: call the registered Python
function on NumPy arrays and check its results against `Tout`.

Python exceptions map to TensorFlow's codes as its py_func kernel maps them: ValueError and
TypeError -> InvalidArgumentError, StopIteration -> OutOfRangeError, MemoryError ->
ResourceExhaustedError, NotImplementedError -> UnimplementedError, OpErrors keep their
class, anything else -> UnknownError.
"""

from __future__ import annotations

import traceback
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework.py_func_registry import py_funcs
from tensorweave.kernels.registry import KernelNode, register_kernel


class EagerValue(np.ndarray):
    """A NumPy array that also answers `.numpy()`, as `tf.py_function` arguments do."""

    def numpy(self) -> np.ndarray:
        """The plain array."""
        return np.asarray(self)


_ERRORS = (
    ((ValueError, TypeError), errors.InvalidArgumentError),
    ((StopIteration,), errors.OutOfRangeError),
    ((MemoryError,), errors.ResourceExhaustedError),
    ((NotImplementedError,), errors.UnimplementedError),
)


def _as_error(exc: BaseException) -> errors.OpError:
    if isinstance(exc, errors.OpError):
        return exc
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    for kinds, cls in _ERRORS:
        if isinstance(exc, kinds):
            return cls(None, None, detail)
    return errors.UnknownError(None, None, detail)


def _convert(value: Any, dtype: Any, i: int, token: str) -> Any:
    npt = dtype.as_numpy_dtype
    if np.dtype(npt) == np.dtype(object):
        arr = np.asarray(value, dtype=object)
        return np.vectorize(lambda v: v if isinstance(v, bytes) else str(v).encode(),
                            otypes=[object])(arr) if arr.size else arr
    arr = np.asarray(value)
    if arr.dtype != np.dtype(npt):
        if arr.dtype.kind == "f" and np.dtype(npt).kind in "iu" or (
                arr.dtype.kind == "c" and np.dtype(npt).kind != "c"):
            raise errors.InvalidArgumentError(
                None, None, f"{token} returns {arr.dtype} at output {i}, but Tout[{i}] = "
                f"{dtype.name}")
        arr = arr.astype(npt)
    return arr


def _py_func(eager: bool) -> Any:
    def builder(node: KernelNode) -> Any:
        token = node.attrs["token"]
        token = token.decode() if isinstance(token, bytes) else token
        touts = node.output_dtypes

        def compute(ctx: Any, *inputs: Any) -> Any:
            func = py_funcs.get(token)
            if func is None:
                raise errors.InvalidArgumentError(
                    None, None, f"Could not find callback with key={token} in the registry.")
            args = [np.asarray(x).view(EagerValue) if eager else np.asarray(x)
                    for x in inputs]
            try:
                result = func(*args)
            except BaseException as e:  # noqa: BLE001  (mapped to TF's error codes)
                raise _as_error(e) from e
            if not touts:
                return None
            values = list(result) if isinstance(result, list | tuple) else [result]
            if len(values) != len(touts):
                raise errors.InvalidArgumentError(
                    None, None, f"{token} returns {len(values)} values, but expects to see "
                    f"{len(touts)} values.")
            out = [_convert(v, t, i, token) for i, (v, t) in enumerate(zip(values, touts))]
            return out[0] if len(out) == 1 else out

        return compute

    return builder


register_kernel("PyFunc")(_py_func(False))
register_kernel("PyFuncStateless")(_py_func(False))
register_kernel("EagerPyFunc")(_py_func(True))
