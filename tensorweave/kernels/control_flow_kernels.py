"""Kernels of control-flow helper ops."""

from __future__ import annotations

from typing import Any

from tensorweave.kernels.registry import register_compute


@register_compute("NoOp")
def _no_op(ctx: Any) -> None:
    return None
