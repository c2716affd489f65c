"""The kernel registry: `(op_type, device_type)` -> kernel builder.

A *builder* is called once per node when a plan is built, with a `KernelNode` (name, attrs,
dtypes), and returns the *compute function* called at every step as
`compute(ctx, *inputs)`. It returns the single output, a tuple/list of outputs for ops with
several, or None for ops without outputs. Kernels must never mutate their inputs: values
are shared between ops, steps and variables.

An `AsyncKernel` instead completes through a callback, so the executor can run other ready
ops while it waits (used by `_Recv` and blocking queue ops).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.framework.registry import Registry

kernel_registry = Registry("kernels")

Compute = Callable[..., Any]
Builder = Callable[["KernelNode"], Any]


def invalid(message: str) -> errors.InvalidArgumentError:
    """The error a kernel raises for bad runtime values (the executor names the node)."""
    return errors.InvalidArgumentError(None, None, message)


@dataclasses.dataclass(frozen=True)
class KernelNode:
    """What a kernel builder knows about its node."""

    name: str
    op: str
    attrs: dict[str, Any]
    device: str
    input_dtypes: tuple[dtypes.DType, ...]
    output_dtypes: tuple[dtypes.DType, ...]

    @property
    def num_outputs(self) -> int:
        """The number of outputs."""
        return len(self.output_dtypes)

    def attr(self, name: str, default: Any = None) -> Any:
        """An attr value, or `default`."""
        return self.attrs.get(name, default)


class AsyncKernel:
    """Base class of kernels that complete through `done(outputs)` / `done(error=e)`.

    Subclasses implement `start(ctx, inputs, done)`; `done` may be called from any thread,
    exactly once.
    """

    def start(self, ctx: Any, inputs: list[Any], done: Callable[..., None]) -> None:
        """Begins the computation."""
        raise NotImplementedError


def register_kernel(op_type: str, device_type: str = "CPU") -> Callable[[Builder], Builder]:
    """Decorator registering a kernel *builder* for `op_type` on `device_type`.

    Raises:
      KeyError: if a kernel is already registered for the pair.
    """

    def deco(builder: Builder) -> Builder:
        kernel_registry.register(builder, (op_type, device_type))
        return builder

    return deco


def register_compute(*op_types: str, device_type: str = "CPU") -> Callable[[Compute], Compute]:
    """Decorator registering an attr-free compute function `fn(ctx, *inputs)` directly."""

    def deco(fn: Compute) -> Compute:
        for op_type in op_types:
            kernel_registry.register(lambda node, _fn=fn: _fn, (op_type, device_type))
        return fn

    return deco


def lookup_builder(op_type: str, device_type: str = "CPU") -> Builder:
    """The builder for `(op_type, device_type)`.

    Raises:
      LookupError: if there is none.
    """
    return kernel_registry.lookup((op_type, device_type))


def has_kernel(op_type: str, device_type: str = "CPU") -> bool:
    """True if a kernel is registered."""
    return (op_type, device_type) in kernel_registry
