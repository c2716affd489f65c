"""Running function bodies from kernels (TensorFlow's `FunctionLibraryRuntime`, reduced).

Dataset kernels call user functions (the `f` of `MapDataset`, ...), whose bodies are
`GraphDef`s (see `framework.op_defs.dataset`). Kernels may not import the runtime, so the
runtime registers the factory that turns a body into a callable here, under the key
"plan", when `tensorweave.runtime` is imported.

Python callables of `Dataset.from_generator` are held in `py_callables`, keyed by a token
stored in the op's attrs (as TensorFlow's `PyFunc` registry does); they exist only in the
process that built the graph.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable
from typing import Any

from google.protobuf import text_format

from tensorweave import errors
from tensorweave.framework.registry import Registry
from tensorweave.protos import graph_pb2

function_runtimes = Registry("function runtimes")

# A callable `fn(ctx, args) -> outputs`; `ctx` is a kernel StepContext.
FunctionCall = Callable[[Any, list[Any]], list[Any]]


def body_to_text(graph_def: Any) -> str:
    """The text form of a body `GraphDef`, as stored in a `<attr>_body` attr."""
    return text_format.MessageToString(graph_def)


def parse_body(body: str) -> Any:
    """The `GraphDef` of a body attr.

    Raises:
      InvalidArgumentError: if the body does not parse.
    """
    graph_def = graph_pb2.GraphDef()
    try:
        text_format.Parse(body, graph_def)
    except text_format.ParseError as e:
        raise errors.InvalidArgumentError(None, None, f"Bad function body: {e}") from None
    return graph_def


def instantiate(body: str, num_args: int, num_outputs: int, device: str) -> FunctionCall:
    """A callable running a body (text-format `GraphDef`) on `device`.

    Raises:
      InvalidArgumentError: if the body does not parse.
    """
    graph_def = parse_body(body)
    factory = function_runtimes.lookup("plan")
    return factory(graph_def, num_args, num_outputs, device)


class PyCallables:
    """token -> Python callable, weakly held by the graph that registered it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._items: dict[str, Any] = {}

    def register(self, owner: Any, fn: Any) -> str:
        """Registers `fn` for as long as `owner` (a Graph) lives; returns its token."""
        with self._lock:
            token = f"pyfunc_{next(self._ids)}"
            self._items[token] = fn
        weakref.finalize(owner, self._drop, token)
        return token

    def _drop(self, token: str) -> None:
        with self._lock:
            self._items.pop(token, None)

    def lookup(self, token: str) -> Any:
        """The callable.

        Raises:
          NotFoundError: if it is not registered in this process.
        """
        with self._lock:
            fn = self._items.get(token)
        if fn is None:
            raise errors.NotFoundError(
                None, None, f"Python callable {token} is not registered in this process "
                "(Dataset.from_generator runs only in the process that built the graph)")
        return fn


py_callables = PyCallables()
