"""NumPy kernels of the fake quantization ops, in float32 arithmetic as TensorFlow's
(the nudged range keeps 0.0 exactly representable). Results can differ from TensorFlow's
in the last bit or two, where its compiled kernel fuses multiply-adds."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.kernels.array_kernels import invalid
from tensorweave.kernels.registry import KernelNode, register_kernel

_F = np.float32


def _nudge(lo: Any, hi: Any, num_bits: int, narrow: bool) -> tuple[Any, Any, Any]:
    """(nudged_min, nudged_max, scale), element-wise over lo/hi arrays."""
    qmin, qmax = _F(1 if narrow else 0), _F((1 << num_bits) - 1)
    lo, hi = np.asarray(lo, _F), np.asarray(hi, _F)
    scale = (hi - lo) / (qmax - qmin)
    zero_from_min = qmin - lo / scale
    zero = np.where(zero_from_min < qmin, qmin,
                    np.where(zero_from_min > qmax, qmax, np.floor(zero_from_min + _F(0.5))))
    return ((qmin - zero) * scale).astype(_F), ((qmax - zero) * scale).astype(_F), scale


def _quantize(x: Any, lo: Any, hi: Any, scale: Any) -> Any:
    clamped = np.minimum(np.maximum(np.asarray(x, _F), lo), hi)
    steps = np.floor((clamped - lo) * (_F(1) / scale) + _F(0.5))
    return (steps * scale + lo).astype(_F)


def _check(num_bits: int, lo: Any, hi: Any) -> None:
    if not 2 <= num_bits <= 16:
        raise invalid(f"num_bits is out of range, expected between 2 and 16, was: {num_bits}")
    if np.any(np.asarray(lo) > np.asarray(hi)):
        raise invalid(f"min has to be smaller or equal than max, min: {lo} max: {hi}")


@register_kernel("FakeQuantWithMinMaxArgs")
def _args(node: KernelNode) -> Any:
    a = node.attrs
    _check(a["num_bits"], a["min"], a["max"])
    lo, hi, scale = _nudge(a["min"], a["max"], a["num_bits"], a["narrow_range"])
    return lambda ctx, x: _quantize(x, lo, hi, scale)


@register_kernel("FakeQuantWithMinMaxArgsGradient")
def _args_grad(node: KernelNode) -> Any:
    a = node.attrs
    lo, hi, _ = _nudge(a["min"], a["max"], a["num_bits"], a["narrow_range"])

    def compute(ctx: Any, grads: Any, x: Any) -> Any:
        inside = (np.asarray(x) >= lo) & (np.asarray(x) <= hi)
        return np.where(inside, grads, _F(0)).astype(_F)

    return compute


def _vars(per_channel: bool) -> Any:
    def builder(node: KernelNode) -> Any:
        bits, narrow = node.attrs["num_bits"], node.attrs["narrow_range"]

        def compute(ctx: Any, x: Any, lo: Any, hi: Any) -> Any:
            _check(bits, lo, hi)
            if per_channel and np.shape(lo) != np.shape(x)[-1:]:
                raise invalid(f"min and max must be [d] for the last dimension d of inputs, "
                              f"got {list(np.shape(lo))} and inputs {list(np.shape(x))}")
            n_lo, n_hi, scale = _nudge(lo, hi, bits, narrow)
            return _quantize(x, n_lo, n_hi, scale)

        return compute

    return builder


def _vars_grad(per_channel: bool) -> Any:
    def builder(node: KernelNode) -> Any:
        bits, narrow = node.attrs["num_bits"], node.attrs["narrow_range"]

        def compute(ctx: Any, grads: Any, x: Any, lo: Any, hi: Any) -> Any:
            n_lo, n_hi, _ = _nudge(lo, hi, bits, narrow)
            x, grads = np.asarray(x, _F), np.asarray(grads, _F)
            below, above = x < n_lo, x > n_hi
            axes = tuple(range(x.ndim - 1)) if per_channel else None
            d_min = np.sum(np.where(below, grads, _F(0)), axis=axes).astype(_F)
            d_max = np.sum(np.where(above, grads, _F(0)), axis=axes).astype(_F)
            return np.where(below | above, _F(0), grads).astype(_F), d_min, d_max

        return compute

    return builder


register_kernel("FakeQuantWithMinMaxVars")(_vars(False))
register_kernel("FakeQuantWithMinMaxVarsPerChannel")(_vars(True))
register_kernel("FakeQuantWithMinMaxVarsGradient")(_vars_grad(False))
register_kernel("FakeQuantWithMinMaxVarsPerChannelGradient")(_vars_grad(True))
