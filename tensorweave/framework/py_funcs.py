"""The registry of Python functions that `tf.py_func` ops call (follows TensorFlow's
`script_ops.FuncRegistry`).

A `PyFunc` node names its function by a token (`pyfunc_<n>`, unique in the process). The
registry holds the functions weakly; the graph that uses one keeps it alive, so functions
go away with their graphs. Only the process that built the graph knows its functions: a
`PyFunc` placed on another task fails there, as in TensorFlow.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable
from typing import Any


class _Holder:
    """A weakly referable box for any callable (ufuncs and builtins are not)."""

    __slots__ = ("func", "__weakref__")

    def __init__(self, func: Callable[..., Any]):
        self.func = func


class FuncRegistry:
    """Token -> function, weakly held (through the `_Holder` the graph keeps)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._funcs: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
        self._ids = itertools.count()

    def insert(self, func: Callable[..., Any]) -> tuple[str, Any]:
        """Registers `func`; returns its new token and the object that keeps it
        registered (whoever uses the token holds it: the graph)."""
        holder = _Holder(func)
        with self._lock:
            token = f"pyfunc_{next(self._ids)}"
            self._funcs[token] = holder
        return token, holder

    def get(self, token: str | bytes) -> Callable[..., Any] | None:
        """The function of `token`, or None when it is unknown or was collected."""
        if isinstance(token, bytes):
            token = token.decode()
        with self._lock:
            holder = self._funcs.get(token)
        return holder.func if holder is not None else None



#: The process's registry (TensorFlow's `_py_funcs`).
py_funcs = FuncRegistry()
