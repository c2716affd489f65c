"""Kernels of `Print` and `Assert`, and TensorFlow's `Tensor::SummarizeValue` text format.

`summarize_value` reproduces TF 1.x's legacy (non-`print_v2`) format: elements separated by
spaces, one bracket level per dimension below the first, `...` where entries were cut, e.g.
`[[1 2][3...]...]` for a 2x2 tensor summarized to 3 entries. Floats print with the
shortest of 6/9 (float32) or 15/17 (float64) significant digits that round-trips, bools as
1/0, strings C-escaped without quotes.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.kernels.registry import KernelNode, register_kernel


def _float_str(x: Any, short: int, long: int, npt: Any) -> str:
    text = f"{float(x):.{short}g}"
    if not np.isnan(x) and npt(float(text)) != x:
        text = f"{float(x):.{long}g}"
    return text


def _escape(b: bytes) -> str:
    out = []
    for c in b:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif 0x20 <= c < 0x7F:
            out.append(chr(c))
        else:
            out.append(f"\\{c:03o}")
    return "".join(out)


_ESCAPES = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}


def _element_str(x: Any) -> str:
    if isinstance(x, bytes | np.bytes_):
        return _escape(bytes(x))
    if isinstance(x, str):
        return _escape(x.encode("utf-8"))
    if isinstance(x, np.bool_ | bool):
        return "1" if x else "0"
    if isinstance(x, np.complexfloating):
        return f"({_element_str(x.real)},{_element_str(x.imag)})"
    if isinstance(x, np.float64):
        return _float_str(x, 15, 17, np.float64)
    if isinstance(x, np.floating):
        return _float_str(x, 6, 9, np.float32)
    return str(int(x))


def _print_dim(
    dim: int, shape: tuple[int, ...], limit: int, elems: list[str], index: list[int], out: list[str]
) -> None:
    if index[0] >= limit:
        return
    count = shape[dim]
    if dim == len(shape) - 1:
        for i in range(count):
            if index[0] >= limit:
                if dim != 0:
                    out.append("...")
                return
            if i > 0:
                out.append(" ")
            out.append(elems[index[0]])
            index[0] += 1
        return
    for _ in range(count):
        opened = index[0] < limit
        if opened:
            out.append("[")
        _print_dim(dim + 1, shape, limit, elems, index, out)
        if index[0] < limit or opened:
            out.append("]")


def summarize_value(value: Any, max_entries: int) -> str:
    """The text TensorFlow's `Tensor::SummarizeValue(max_entries)` gives for `value`.

    Args:
      value: an ndarray or scalar of any dtype.
      max_entries: the number of entries to print; negative prints all.

    Returns:
      The summary, without the outer brackets that `Print` and `Assert` add.
    """
    arr = np.asarray(value)
    num = arr.size
    limit = num if max_entries < 0 else min(max_entries, num)
    flat = arr.reshape(-1)
    elems = [_element_str(flat[i]) for i in range(limit)]
    if arr.ndim == 0:
        out = [" ".join(elems)]
    else:
        out = []
        _print_dim(0, arr.shape, limit, elems, [0], out)
    if num > limit:
        out.append("...")
    return "".join(out)


def _as_str(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


@register_kernel("Print")
def _print(node: KernelNode) -> Any:
    message = _as_str(node.attrs.get("message", ""))
    first_n = int(node.attrs.get("first_n", -1))
    summarize = int(node.attrs.get("summarize", 3))
    lock = threading.Lock()
    calls = [0]

    def compute(ctx: Any, input_: Any, *data: Any) -> Any:
        if first_n >= 0:
            with lock:
                if calls[0] >= first_n:
                    return input_
                calls[0] += 1
        line = message + "".join(f"[{summarize_value(d, summarize)}]" for d in data)
        stream = sys.stderr
        stream.write(line + "\n")
        stream.flush()
        return input_

    return compute


@register_kernel("Assert")
def _assert(node: KernelNode) -> Any:
    summarize = int(node.attrs.get("summarize", 3))

    def compute(ctx: Any, condition: Any, *data: Any) -> None:
        cond = np.asarray(condition)
        if not (cond.ndim == 0 or (cond.ndim == 1 and cond.shape[0] == 1)):
            dims = ",".join(str(d) for d in cond.shape)
            raise errors.InvalidArgumentError(None, None, f"In[0] should be a scalar: [{dims}]")
        if bool(cond.reshape(())):
            return None
        parts = " ".join(f"[{summarize_value(d, summarize)}]" for d in data)
        raise errors.InvalidArgumentError(None, None, f"assertion failed: {parts}")

    return compute
