"""Shared graph-building helpers of the element-wise op functions.

The type sets (`FLOATS`, `NUMBER`, ...) live in `framework.op_def` and the shape functions
in `framework.shape_inference`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod


def op_scope(name: str | None, default: str, values: list[Any]) -> Any:
    """`graph.name_scope(name, default, values)`: the scope an op function builds in."""
    return graph_mod.name_scope(name, default, values)


def base_dtype(t: Any) -> dtypes.DType:
    """The base (non-reference) dtype of tensor `t`."""
    return t.dtype.base_dtype
