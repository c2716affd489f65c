"""Colour-space conversions and colour adjustments of `tf.image` (follows TF 1.x
`image_ops_impl.py` / `gen_image_ops`): `rgb_to_hsv`, `hsv_to_rgb` (the `RGBToHSV` /
`HSVToRGB` ops), `adjust_hue`, `adjust_saturation`, `random_hue`, `random_saturation`.

TF runs the adjustments as the ops `AdjustHue` / `AdjustSaturation`, fused kernels of a
round trip through HSV; tensorweave composes that round trip from `RGBToHSV`, element-wise
ops and `HSVToRGB` (equal up to float32 rounding). TF registers no gradient for those ops,
and `HSVToRGB` is not differentiable, so neither are the adjustments here.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import (
    dtypes,
    op_defs,  # noqa: F401  (registers the ops)
)
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_ops_join import stack, unstack
from tensorweave.ops.clip_ops import clip_by_value
from tensorweave.ops.cwise_binary_ops import floormod, multiply
from tensorweave.ops.cwise_unary_ops import cast
from tensorweave.ops.image_adjust_ops import random_factor
from tensorweave.ops.image_ops import convert_image_dtype, to_float_image
from tensorweave.ops.random_ops import random_uniform


def rgb_to_hsv(images: Any, name: str | None = None) -> Any:
    """RGB to HSV (`RGBToHSV`; follows TF 1.x `tf.image.rgb_to_hsv`).

    Args:
      images: float16/float32/float64 `[..., 3]`, RGB in [0, 1].
      name: op name.

    Returns:
      `images`' dtype and shape: hue, saturation and value, each in [0, 1].

    Raises:
      ValueError: if the static last dimension is not 3 (or the rank is 0).
      InvalidArgumentError: at run time, if the last dimension is not 3.
    """
    return apply_op("RGBToHSV", images=images, name=name)


def hsv_to_rgb(images: Any, name: str | None = None) -> Any:
    """HSV to RGB (`HSVToRGB`; follows TF 1.x `tf.image.hsv_to_rgb`); as `rgb_to_hsv`,
    the inverse conversion. Not differentiable (as in TF)."""
    return apply_op("HSVToRGB", images=images, name=name)


def _through_hsv(image: Any, change: Any, scope: str, name: str | None) -> Any:
    """`image` converted to float32 HSV, `change(h, s, v)` applied, and converted back to
    `image`'s dtype (without saturation, as TF)."""
    with graph_mod.name_scope(name, scope, [image]):
        image = convert_to_tensor(image, name="image")
        ndims = image.get_shape().ndims
        if ndims is not None and ndims < 3:
            raise ValueError(f"Shape must be at least rank 3 but is rank {ndims} for 'image' "
                             f"(shape {image.get_shape()}) of {scope}.")
        orig_dtype = image.dtype.base_dtype
        flt = to_float_image(image)
        hsv = rgb_to_hsv(cast(flt, dtypes.float32))
        h, s, v = unstack(hsv, axis=-1)
        rgb = hsv_to_rgb(stack(change(h, s, v), axis=-1))
        return convert_image_dtype(cast(rgb, flt.dtype), orig_dtype)


def adjust_hue(image: Any, delta: Any, name: str | None = None) -> Any:
    """Rotates the hue of RGB images by `delta` turns (follows TF 1.x
    `tf.image.adjust_hue`).

    Non-float16/32 images are converted to float32 first and back afterwards.

    Args:
      image: `[..., 3]` RGB, integer or floating.
      delta: float scalar, the hue shift in [-1, 1] (a fraction of the colour circle).
      name: name scope (default "adjust_hue").

    Returns:
      A tensor of `image`'s shape and dtype.

    Raises:
      ValueError: if the static rank is below 3 or the last dimension is not 3 (TF checks
        the last dimension only at run time).
    """
    def change(h: Any, s: Any, v: Any) -> list:
        return [floormod(h + cast(delta, dtypes.float32), 1.0), s, v]

    return _through_hsv(image, change, "adjust_hue", name)


def adjust_saturation(image: Any, saturation_factor: Any, name: str | None = None) -> Any:
    """Scales the saturation of RGB images by `saturation_factor` (float scalar), clipped
    to [0, 1] (follows TF 1.x `tf.image.adjust_saturation`); dtypes, shapes and errors as
    `adjust_hue`."""
    def change(h: Any, s: Any, v: Any) -> list:
        scaled = multiply(s, cast(saturation_factor, dtypes.float32))
        return [h, clip_by_value(scaled, 0.0, 1.0), v]

    return _through_hsv(image, change, "adjust_saturation", name)


def random_hue(image: Any, max_delta: float, seed: int | None = None) -> Any:
    """`adjust_hue` by a delta drawn uniformly from `[-max_delta, max_delta)` (follows
    TF 1.x `tf.image.random_hue`).

    Args:
      image: as `adjust_hue`.
      max_delta: float in [0, 0.5].
      seed: op-level seed (see `tf.set_random_seed`).

    Returns:
      A tensor of `image`'s shape and dtype.

    Raises:
      ValueError: if `max_delta` is above 0.5 or negative.
    """
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_hue(image, delta)


def random_saturation(image: Any, lower: float, upper: float, seed: int | None = None) -> Any:
    """`adjust_saturation` by a factor drawn uniformly from `[lower, upper)` per step, with
    op-level `seed` (follows TF 1.x `tf.image.random_saturation`); `image`'s shape and dtype.
    ValueError if `upper <= lower` or `lower < 0`."""
    return adjust_saturation(image, random_factor(lower, upper, seed))


__all__ = [
    "adjust_hue",
    "adjust_saturation",
    "hsv_to_rgb",
    "random_hue",
    "random_saturation",
    "rgb_to_hsv",
]
