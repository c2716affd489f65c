"""Kernels of `StringFormat` and `PrintV2` (follows TensorFlow's `string_format_op.cc`,
`logging_ops.cc` and the `print_v2` form of `Tensor::SummarizeValue`).

Floats print with 6 significant digits when that reads back to the same float32 value,
else 9 (float64: 15, else 17), as TensorFlow's FloatToBuffer/DoubleToBuffer; booleans as
1/0; strings in double quotes.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.kernels.registry import KernelNode, register_kernel

_log = logging.getLogger("tensorweave")


def _number(x: Any) -> str:
    if isinstance(x, np.floating):
        if np.isnan(x):
            return "nan"
        if np.isinf(x):
            return "inf" if x > 0 else "-inf"
        short, full = (15, 17) if x.dtype == np.float64 else (6, 9)
        text = f"{float(x):.{short}g}"
        return text if type(x)(text) == x else f"{float(x):.{full}g}"
    if isinstance(x, np.bool_):
        return "1" if x else "0"
    if isinstance(x, bytes | str):
        text = x.decode("utf-8", "backslashreplace") if isinstance(x, bytes) else x
        return f'"{text}"'
    if isinstance(x, np.complexfloating):
        return f"({_number(x.real)},{_number(x.imag)})"
    return str(x)


def summarize(value: np.ndarray, limit: int) -> str:
    """A tensor as `tf.print` shows it (`limit` < 0: every entry)."""
    value = np.asarray(value)
    if value.ndim == 0:
        return _number(value[()])

    def fmt(a: np.ndarray, depth: int) -> str:
        n = a.shape[0]
        elide = 0 <= limit and n > 2 * limit
        idx = [*range(limit), -1, *range(n - limit, n)] if elide else list(range(n))
        if a.ndim == 1:
            return "[" + " ".join("..." if i < 0 else _number(a[i]) for i in idx) + "]"
        sep = "\n" * (a.ndim - 1) + " " * (depth + 1)
        return "[" + sep.join("..." if i < 0 else fmt(a[i], depth + 1) for i in idx) + "]"

    return fmt(value, 0)


@register_kernel("StringFormat")
def _string_format(node: KernelNode) -> Any:
    template = node.attr("template", "%s")
    placeholder = node.attr("placeholder", "%s")
    limit = int(node.attr("summarize", 3))
    pieces = template.split(placeholder)

    def compute(ctx: Any, *inputs: Any) -> np.ndarray:
        if len(pieces) - 1 != len(inputs):
            raise errors.InvalidArgumentError(
                None, None, f"num placeholders in template and num inputs must match: "
                f"{len(pieces) - 1} vs. {len(inputs)}")
        parts = [pieces[0]]
        for value, piece in zip(inputs, pieces[1:]):
            parts += [summarize(value, limit), piece]
        text = "".join(parts)
        out = np.empty((), dtype=object)
        out[()] = text.encode("utf-8")
        return out

    return compute


@register_kernel("PrintV2")
def _print_v2(node: KernelNode) -> Any:
    stream = node.attr("output_stream", "stderr")
    end = node.attr("end", "\n")

    def compute(ctx: Any, text: Any) -> None:
        value = np.asarray(text, dtype=object).item()
        message = value.decode("utf-8") if isinstance(value, bytes) else str(value)
        if stream in ("stdout", "stderr"):
            out = sys.stdout if stream == "stdout" else sys.stderr
            out.write(message + end)
            out.flush()
        elif stream.startswith("log(") and stream.endswith(")"):
            getattr(_log, stream[4:-1])(message)
        elif stream.startswith("file://"):
            with open(stream[len("file://"):], "a", encoding="utf-8") as f:
                f.write(message + end)
        else:
            raise errors.InvalidArgumentError(
                None, None, f"{stream} is not a valid value for output_stream")

    return compute
