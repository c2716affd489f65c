"""Kernels of control-flow helper ops."""

from __future__ import annotations

from typing import Any

from tensorweave import errors
from tensorweave.kernels.registry import register_compute


@register_compute("NoOp")
def _no_op(ctx: Any) -> None:
    return None


# NOTE: the control-flow primitives are run by the frame executor itself
# (`runtime/frame_executor.py`), which gives them their deadness semantics; these kernels
# are what a plan without frames would call: pass-throughs, and errors for Switch/Merge,
# which have no meaning without deadness.
def _passthrough(ctx: Any, data: Any) -> Any:
    return data


for _op in ("Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration",
            "LoopCond"):
    register_compute(_op)(_passthrough)


def _needs_frames(ctx: Any, *args: Any) -> None:
    raise errors.InternalError(
        None, None, "Switch and Merge run only in the control-flow executor")


for _op in ("Switch", "RefSwitch", "Merge", "RefMerge"):
    register_compute(_op)(_needs_frames)


@register_compute("ControlTrigger")
def _control_trigger(ctx: Any) -> None:
    return None
