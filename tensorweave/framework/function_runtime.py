"""Running function bodies from kernels (TensorFlow's `FunctionLibraryRuntime`, reduced).

Dataset kernels call user functions (the `f` of `MapDataset`, ...), whose bodies are
`GraphDef`s (see `framework.op_defs.dataset`). Kernels may not import the runtime, so the
runtime registers the factory that turns a body into a callable here, under the key
"plan", when `tensorweave.runtime` is imported.

Python callables of `Dataset.from_generator` are in `framework.py_funcs` (as `tf.py_func`'s).
"""

from __future__ import annotations

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


