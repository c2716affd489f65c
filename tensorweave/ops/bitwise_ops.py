"""Bitwise ops on integer tensors (follows `tf.bitwise`: `BitwiseAnd`, `BitwiseOr`,
`BitwiseXor`, `Invert`, `LeftShift`, `RightShift`; shifts outside [0, bits) are clamped)."""

from __future__ import annotations

from typing import Any

import tensorweave.framework.op_defs  # noqa: F401  (registers the op definitions)
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.ops.gradients_impl import no_gradient


def bitwise_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x & y`, broadcasting (integer dtypes)."""
    return apply_op("BitwiseAnd", x=x, y=y, name=name)


def bitwise_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x | y`, broadcasting (integer dtypes)."""
    return apply_op("BitwiseOr", x=x, y=y, name=name)


def bitwise_xor(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x ^ y`, broadcasting (integer dtypes)."""
    return apply_op("BitwiseXor", x=x, y=y, name=name)


def invert(x: Any, name: str | None = None) -> Tensor:
    """`~x` (integer dtypes)."""
    return apply_op("Invert", x=x, name=name)


def left_shift(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x << y`, broadcasting (integer dtypes)."""
    return apply_op("LeftShift", x=x, y=y, name=name)


def right_shift(x: Any, y: Any, name: str | None = None) -> Tensor:
    """`x >> y` (arithmetic for signed types), broadcasting."""
    return apply_op("RightShift", x=x, y=y, name=name)


def population_count(x: Any, name: str | None = None) -> Tensor:
    """The number of set bits of each element, uint8 (op `PopulationCount`)."""
    return apply_op("PopulationCount", x=x, name=name)


for _op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor", "Invert", "LeftShift", "RightShift",
            "PopulationCount"):
    no_gradient(_op)

__all__ = [
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "invert",
    "left_shift",
    "right_shift",
]
