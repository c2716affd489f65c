"""Kernels of `RGBToHSV` and `HSVToRGB` (TensorFlow's `colorspace_op`): hue, saturation
and value in [0, 1], computed element-wise in the images' dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import op_defs  # noqa: F401  (op definitions)
from tensorweave.kernels.registry import KernelNode, register_kernel


def _check_last_dim(images: np.ndarray) -> None:
    if images.ndim < 1 or images.shape[-1] != 3:
        raise errors.InvalidArgumentError(
            None, None, f"input must have 3 channels but input only has "
                        f"{images.shape[-1] if images.ndim else 0} channels.")


def _compute_type(dtype: np.dtype) -> type:
    """float16 is computed in float32 and rounded once (as Eigen's half arithmetic)."""
    return np.float32 if dtype == np.float16 else dtype.type


@register_kernel("RGBToHSV")
def _rgb_to_hsv(node: KernelNode) -> Any:
    def compute(ctx: Any, images: Any) -> np.ndarray:
        images = np.asarray(images)
        _check_last_dim(images)
        t = _compute_type(images.dtype)
        r, g, b = (images[..., i].astype(t) for i in range(3))
        value = np.maximum(np.maximum(r, g), b)
        spread = value - np.minimum(np.minimum(r, g), b)
        with np.errstate(divide="ignore", invalid="ignore"):
            saturation = np.where(value > 0, spread / value, t(0))
            norm = t(1) / (t(6) * spread)
            hue = np.where(r == value, norm * (g - b),
                           np.where(g == value, norm * (b - r) + t(2) / t(6),
                                    norm * (r - g) + t(4) / t(6)))
        hue = np.where(spread > 0, hue, t(0))
        hue = np.where(hue < 0, hue + t(1), hue)
        return np.stack([hue, saturation, value], axis=-1).astype(images.dtype)

    return compute


@register_kernel("HSVToRGB")
def _hsv_to_rgb(node: KernelNode) -> Any:
    def compute(ctx: Any, images: Any) -> np.ndarray:
        images = np.asarray(images)
        _check_last_dim(images)
        t = _compute_type(images.dtype)
        h, s, v = (images[..., i].astype(t) for i in range(3))
        sixths = h * t(6)
        # Each channel's share of the chroma, a clipped tent over the hue circle (so hues
        # outside [0, 1] clip rather than wrap, as in TF).
        shares = [np.clip(np.abs(sixths - t(3)) - t(1), 0, 1),
                  np.clip(t(2) - np.abs(sixths - t(2)), 0, 1),
                  np.clip(t(2) - np.abs(sixths - t(4)), 0, 1)]
        rgb = [((t(1) - s) + s * share) * v for share in shares]
        return np.stack(rgb, axis=-1).astype(images.dtype)

    return compute
