"""The registry of Python callables run by `PyFunc`/`PyFuncStateless`/`EagerPyFunc` nodes
(follows TF's `script_ops.FuncRegistry`): a node's `token` attr names its function.

Functions live in the process that built the graph: as in TensorFlow, a py_func node must
run in that process (a node placed on another task fails with the token not found).
"""

from __future__ import annotations

import itertools
import threading
from typing import Any


class FuncRegistry:
    """Token -> callable, thread-safe; tokens are unique for the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._funcs: dict[str, Any] = {}
        self._counter = itertools.count()

    def insert(self, func: Any) -> str:
        """Registers `func` and returns its new token."""
        with self._lock:
            token = f"pyfunc_{next(self._counter)}"
            self._funcs[token] = func
            return token

    def get(self, token: str) -> Any:
        """The callable for `token`, or None."""
        with self._lock:
            return self._funcs.get(token)

    def remove(self, token: str) -> None:
        """Forgets `token`."""
        with self._lock:
            self._funcs.pop(token, None)

    def size(self) -> int:
        """The number of registered functions."""
        with self._lock:
            return len(self._funcs)


# NOTE: one registry per process, as TensorFlow's `_py_funcs`: kernels look tokens up here.
py_funcs = FuncRegistry()
