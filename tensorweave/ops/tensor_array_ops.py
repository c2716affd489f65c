"""TensorArray (placeholder until the TensorArrayV3 family lands)."""

from __future__ import annotations

from typing import Any


class TensorArray:
    """Placeholder."""

    flow: Any = None


def build_ta_with_new_flow(old_ta: Any, flow: Any) -> Any:
    """Placeholder."""
    raise NotImplementedError
