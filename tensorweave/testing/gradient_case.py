"""`GradientCase`: one numerical gradient check of an op.

Cases are run by `tensorweave.testing.gradient_checker.check_gradients`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any


@dataclasses.dataclass(frozen=True)
class GradientCase:
    """A graph `build(*inputs) -> output` whose gradient w.r.t. its float inputs is checked.

    Attributes:
      op_type: the op type whose gradient the case covers, e.g. `"MatMul"`.
      build: called with one float64 placeholder per entry of `input_shapes`; returns the
        output tensor to differentiate.
      input_shapes: the shape of each input.
      name: a label telling cases of one op apart.
      input_range: inputs are drawn uniformly from `[low, high)`.
    """

    op_type: str
    build: Callable[..., Any]
    input_shapes: tuple[tuple[int, ...], ...]
    name: str = ""
    input_range: tuple[float, float] = (-1.0, 1.0)
