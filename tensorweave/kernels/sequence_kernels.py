"""Kernel of `ReverseSequence`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.kernels.registry import KernelNode, register_kernel


@register_kernel("ReverseSequence")
def _reverse_sequence(node: KernelNode):
    seq_dim, batch_dim = node.attrs["seq_dim"], node.attrs.get("batch_dim", 0)

    def compute(ctx: Any, x: Any, lengths: Any) -> Any:
        x, lengths = np.asarray(x), np.asarray(lengths).reshape(-1)
        if lengths.size != x.shape[batch_dim]:
            raise errors.InvalidArgumentError(
                None, None, f"Length of seq_lengths != input.dims({batch_dim}), "
                f"({lengths.size} vs. {x.shape[batch_dim]})")
        if (lengths > x.shape[seq_dim]).any() or (lengths < 0).any():
            raise errors.InvalidArgumentError(
                None, None, f"seq_lengths must be in [0, {x.shape[seq_dim]}], got "
                f"{lengths.tolist()}")
        out = x.copy()
        for b, n in enumerate(lengths):
            n = int(n)
            src = [slice(None)] * x.ndim
            src[batch_dim], src[seq_dim] = b, slice(n - 1, None, -1) if n else slice(0, 0)
            dst = [slice(None)] * x.ndim
            dst[batch_dim], dst[seq_dim] = b, slice(0, n)
            out[tuple(dst)] = x[tuple(src)]
        return out

    return compute
