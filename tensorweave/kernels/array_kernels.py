"""NumPy kernels of the array ops."""

from __future__ import annotations

from typing import Any

from tensorweave import errors
from tensorweave.kernels.registry import KernelNode, register_compute, register_kernel


@register_kernel("Const")
def _const(node: KernelNode) -> Any:
    value = node.attrs["value"]
    value.flags.writeable = False
    return lambda ctx: value


@register_kernel("Placeholder")
def _placeholder(node: KernelNode) -> Any:
    dtype = node.attrs["dtype"]
    shape = node.attrs.get("shape")
    dims = "<unknown>" if shape is None or shape.ndims is None else "[%s]" % ",".join(
        "?" if d is None else str(d) for d in shape.as_list()
    )
    message = (
        f"You must feed a value for placeholder tensor '{node.name}' with dtype "
        f"{dtype.name} and shape {dims}"
    )

    def compute(ctx: Any) -> Any:
        raise errors.InvalidArgumentError(None, None, message)

    return compute


@register_compute("Identity", "StopGradient", "PlaceholderWithDefault")
def _identity(ctx: Any, x: Any) -> Any:
    return x
