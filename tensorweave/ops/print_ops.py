"""`tf.print` (TensorFlow's `print_v2`): a `StringFormat` of the inputs into one string,
printed by a stateful `PrintV2` op (follows `tensorflow/python/ops/logging_ops.py`).

In graph mode the op prints when it runs: fetch it, or make other ops depend on it with
`tf.control_dependencies`.
"""

from __future__ import annotations

import sys
from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.op_defs import string_format as _defs  # noqa: F401  (registers)
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.ops.gradients_impl import no_gradient
from tensorweave.ops.variables import Variable

no_gradient("StringFormat")
no_gradient("PrintV2")

_TENSOR = object()  # marks where a tensor goes among the literal pieces


def _stream_name(output_stream: Any) -> str:
    if output_stream is None or output_stream in (sys.stderr, sys.__stderr__):
        return "stderr"
    if output_stream in (sys.stdout, sys.__stdout__):
        return "stdout"
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        return output_stream
    name = getattr(output_stream, "__name__", None)
    if name in ("info", "warning", "error") and "logging" in str(
            getattr(output_stream, "__module__", "")):
        return f"log({name})"
    raise ValueError(f"Unsupported output stream {output_stream!r}: sys.stdout, sys.stderr, "
                     "tf.logging.info/warning/error (or logging's) or 'file://<path>'")


def _pieces(value: Any, tensors: list[Any], top: bool) -> list[Any]:
    """`value` as literal strings and `_TENSOR` marks (one per tensor, in `tensors`)."""
    if isinstance(value, Tensor | Variable):
        tensors.append(value)
        return [_TENSOR]
    if isinstance(value, str):
        return [value if top else repr(value)]
    if isinstance(value, dict):
        out: list[Any] = ["{"]
        for n, (k, v) in enumerate(value.items()):
            out += ([", "] if n else []) + _pieces(k, tensors, False) + [": "]
            out += _pieces(v, tensors, False)
        return out + ["}"]
    if isinstance(value, list | tuple):
        out = ["(" if isinstance(value, tuple) else "["]
        for n, v in enumerate(value):
            out += ([", "] if n else []) + _pieces(v, tensors, False)
        return out + [")" if isinstance(value, tuple) else "]"]
    return [str(value)]


def _placeholder(literal: str) -> str:
    """`{}`, lengthened with digits until it does not occur in the literal text (as
    TensorFlow picks it)."""
    placeholder, digit = "{}", 0
    while placeholder in literal:
        placeholder += str(digit % 10)
        digit += 1
    return placeholder


def print_v2(*inputs: Any, output_stream: Any = None, summarize: int = 3,
             sep: str = " ", end: str = "\n", name: str | None = None) -> Operation:
    """An op printing `inputs` when it runs (follows `tf.print`).

    Tensors print as TensorFlow prints them (nested brackets, elements separated by
    spaces, strings quoted, at most `summarize` entries at each end of a dimension that
    has more than twice as many; -1: all); Python strings print as they are, other Python
    values as `str()`, and lists and dicts with their tensors filled in.

    Args:
      *inputs: tensors, Python values, or lists/dicts of them.
      output_stream: `sys.stdout`, `sys.stderr` (None, the default: the process's
        stderr when the op runs), `tf.logging.info`/`warning`/`error` or
        `"file://<path>"` (appended to).
      summarize: entries printed at each end of a long dimension.
      sep: text between inputs.
      end: text after the last input.
      name: op name.

    Returns:
      The `PrintV2` operation.

    Raises:
      ValueError: for an unsupported `output_stream`.
    """
    stream = _stream_name(output_stream)
    with graph_mod.name_scope(name):
        tensors: list[Any] = []
        pieces: list[Any] = []
        for n, value in enumerate(inputs):
            pieces += ([sep] if n else []) + _pieces(value, tensors, True)
        placeholder = _placeholder("".join(p for p in pieces if p is not _TENSOR))
        template = "".join(placeholder if p is _TENSOR else p for p in pieces)
        formatted = apply_op("StringFormat", inputs=tensors, template=template,
                             placeholder=placeholder, summarize=summarize)
        return apply_op("PrintV2", input=formatted, output_stream=stream, end=end, name=name)


__all__ = ["print_v2"]
