"""Kernels of the stack ops (`StackV2` family): a step-local Python list per `StackV2` run.

The handle a `StackV2` outputs *is* the stack (as queue handles are their queue); a new
one is created each time the op runs, so a gradient loop pops exactly what its forward
loop pushed in that step.
"""

from __future__ import annotations

import threading
from typing import Any

from tensorweave import errors
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel


class Stack:
    """One stack: its elements, size limit and name."""

    __slots__ = ("name", "max_size", "items", "closed", "lock")

    def __init__(self, name: str, max_size: int):
        self.name, self.max_size = name, max_size
        self.items: list[Any] = []
        self.closed = False
        self.lock = threading.Lock()


@register_kernel("StackV2")
def _stack(node: KernelNode):
    name = node.attrs.get("stack_name") or node.name

    def compute(ctx: Any, max_size: Any) -> Stack:
        return Stack(name, int(max_size))

    return compute


@register_compute("StackPushV2")
def _push(ctx: Any, stack: Stack, elem: Any) -> Any:
    with stack.lock:
        if stack.closed:
            raise errors.InvalidArgumentError(
                None, None, f"Stack[{stack.name}] has already been closed.")
        if 0 <= stack.max_size <= len(stack.items):
            raise errors.InvalidArgumentError(
                None, None, f"Stack[{stack.name}] overflowed its max_size ({stack.max_size})")
        stack.items.append(elem)
    return elem


@register_compute("StackPopV2")
def _pop(ctx: Any, stack: Stack) -> Any:
    with stack.lock:
        if not stack.items:
            raise errors.InvalidArgumentError(
                None, None, f"Stack[{stack.name}] is empty when calling Pop().")
        return stack.items.pop()


@register_compute("StackCloseV2")
def _close(ctx: Any, stack: Stack) -> None:
    with stack.lock:
        stack.closed = True
        stack.items.clear()
