"""The registry of Python functions that `tf.py_func` ops and `Dataset.from_generator`
call (follows TensorFlow's `script_ops.FuncRegistry`).

A `PyFunc` (or `PyGeneratorDataset`) node names its function by a token (`pyfunc_<n>`,
unique in the process). The registry holds the functions weakly; the graph that uses one
keeps it alive (`register`), so functions go away with their graphs, as TensorFlow's
per-graph cleanup of `_py_funcs` does. Only the process that built the graph knows its
functions: such a node placed on another task fails there, as in TensorFlow.
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

    def register(self, graph: Any, func: Callable[..., Any]) -> str:
        """Registers `func` for as long as `graph` (a `Graph`) lives; returns its token.

        A function graph being traced (`Dataset.map`'s, with an `outer` graph) is dropped
        once its body is serialized, so its functions belong to the outermost graph, as
        TensorFlow's `py_func` does with `FuncGraph.outer_graph`.
        """
        token, holder = self.insert(func)
        while getattr(graph, "outer", None) is not None:
            graph = graph.outer
        graph._py_funcs_used_in_graph.append(holder)
        return token


#: The process's registry (TensorFlow's `_py_funcs`): a keyed registry whose entries
#: belong to graphs (docs/internals.md, "Process state").
py_funcs = FuncRegistry()
