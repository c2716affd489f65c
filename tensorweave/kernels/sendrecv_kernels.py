"""Kernels of `_Send` and `_Recv`.

`_Send` deposits into the step rendezvous and never blocks; `_Recv` waits for the value in
the step rendezvous (remote values are pulled there by the worker).
"""

from __future__ import annotations

from typing import Any

from tensorweave import errors
from tensorweave.framework.rendezvous import create_key
from tensorweave.kernels.registry import AsyncKernel, KernelNode, register_kernel


def key_of(attrs: dict[str, Any]) -> str:
    """The rendezvous key of a `_Send`/`_Recv` node's attrs."""
    return create_key(
        attrs["send_device"],
        attrs["send_device_incarnation"],
        attrs["recv_device"],
        attrs["tensor_name"],
    )


@register_kernel("_Send")
def _send(node: KernelNode) -> Any:
    key = key_of(node.attrs)
    if node.attrs.get("client_terminated"):
        raise errors.InternalError(None, None, f"Client-terminated {node.name} must be a fetch")

    def compute(ctx: Any, value: Any) -> None:
        ctx.rendezvous.send(key, value)

    return compute


class _RecvKernel(AsyncKernel):
    def __init__(self, key: str):
        self.key = key

    def start(self, ctx: Any, inputs: list[Any], done: Any) -> None:
        def on_values(values: Any, error: Any) -> None:
            if error is not None:
                done(error=error)
            else:
                done(values[0])

        ctx.rendezvous.recv_many_async([self.key], on_values)


@register_kernel("_Recv")
def _recv(node: KernelNode) -> Any:
    if node.attrs.get("client_terminated"):
        raise errors.InternalError(None, None, f"Client-terminated {node.name} must be a feed")
    return _RecvKernel(key_of(node.attrs))
