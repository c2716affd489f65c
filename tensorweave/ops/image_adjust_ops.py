"""Pixel-value adjustments of `tf.image` (follows TF 1.x `image_ops_impl.py`):
`per_image_standardization`, `adjust_brightness`, `adjust_contrast`, `adjust_gamma`,
`random_brightness`, `random_contrast`.

All are composites of existing ops, so their gradients are those of the parts.
`adjust_contrast` is TF's `AdjustContrastv2` op written as its definition
(`(x - mean) * factor + mean`, the mean over height and width per channel); TF registers
no gradient for that op, tensorweave differentiates the composition.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_ops_shape import shape
from tensorweave.ops.control_dependency_ops import with_dependencies
from tensorweave.ops.cwise_binary_ops import add, div, maximum, multiply, subtract
from tensorweave.ops.cwise_unary_ops import cast, rsqrt
from tensorweave.ops.image_ops import convert_image_dtype, to_float_image
from tensorweave.ops.image_shape_checks import assert_at_least_3d, static_assert
from tensorweave.ops.random_ops import random_uniform
from tensorweave.ops.reduction_ops import reduce_mean, reduce_prod
from tensorweave.ops.special_math_ops import reduce_std


def per_image_standardization(image: Any) -> Any:
    """Scales each image to mean 0 and variance 1 (follows TF 1.x
    `tf.image.per_image_standardization`).

    Computes `(x - mean) / max(stddev, 1 / sqrt(num_pixels))` over the last three axes,
    where `num_pixels = height * width * channels`; integer images are cast (not rescaled).

    Args:
      image: `[..., height, width, channels]` (at least 3-D) of a numeric dtype.

    Returns:
      float32 of `image`'s shape.

    Raises:
      ValueError: if the static rank is below 3 or a static inner dimension is 0.
      InvalidArgumentError: at run time, if an unknown inner dimension is 0.
    """
    with graph_mod.name_scope(None, "per_image_standardization", [image]) as scope:
        image = assert_at_least_3d(convert_to_tensor(image, name="image"))
        image = cast(image, dtypes.float32)
        num_pixels = reduce_prod(shape(image)[-3:])
        mean = reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
        stddev = reduce_std(image, axis=[-1, -2, -3], keepdims=True)
        adjusted_stddev = maximum(stddev, rsqrt(cast(num_pixels, dtypes.float32)))
        return div(subtract(image, mean), adjusted_stddev, name=scope)


def adjust_brightness(image: Any, delta: Any) -> Any:
    """Adds `delta` to every pixel (follows TF 1.x `tf.image.adjust_brightness`).

    Non-float16/32 images are converted to float32 in [0, 1] first and converted back
    (saturating) afterwards, so `delta` is in that scale.

    Args:
      image: an image tensor of any shape and an integer or floating dtype.
      delta: float scalar added to the (converted) pixels.

    Returns:
      A tensor of `image`'s shape and dtype.
    """
    with graph_mod.name_scope(None, "adjust_brightness", [image, delta]) as name:
        image = convert_to_tensor(image, name="image")
        orig_dtype = image.dtype.base_dtype
        flt_image = to_float_image(image)
        adjusted = add(flt_image, cast(delta, flt_image.dtype), name=name)
        return convert_image_dtype(adjusted, orig_dtype, saturate=True)


def adjust_contrast(images: Any, contrast_factor: Any) -> Any:
    """Scales each channel's distance from its mean (follows TF 1.x
    `tf.image.adjust_contrast`, op `AdjustContrastv2`).

    Per image and channel: `(x - mean) * contrast_factor + mean`, the mean taken over
    height and width (float32 arithmetic, also for float16 images). Non-float16/32 images
    are converted to float32 first and back (saturating) afterwards.

    Args:
      images: `[..., height, width, channels]` (at least 3-D), integer or floating.
      contrast_factor: float32 scalar.

    Returns:
      A tensor of `images`' shape and dtype.

    Raises:
      ValueError: if the static rank is below 3 or `contrast_factor` is not a scalar.
    """
    with graph_mod.name_scope(None, "adjust_contrast", [images, contrast_factor]) as name:
        images = convert_to_tensor(images, name="images")
        static = images.get_shape()
        if static.ndims is not None and static.ndims < 3:
            raise ValueError(f"Shape must be at least rank 3 but is rank {static.ndims} "
                             f"for 'images' (shape {static}) of adjust_contrast.")
        factor = convert_to_tensor(contrast_factor, dtypes.float32, name="contrast_factor")
        if factor.get_shape().ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {factor.get_shape().ndims} "
                             "for 'contrast_factor' of adjust_contrast.")
        orig_dtype = images.dtype.base_dtype
        flt_images = to_float_image(images)
        x = cast(flt_images, dtypes.float32)
        mean = reduce_mean(x, axis=[-3, -2], keepdims=True)
        adjusted = add(multiply(subtract(x, mean), factor), mean)
        adjusted = cast(adjusted, flt_images.dtype, name=name)
        return convert_image_dtype(adjusted, orig_dtype, saturate=True)


def adjust_gamma(image: Any, gamma: Any = 1, gain: Any = 1) -> Any:
    """Gamma correction `gain * image ** gamma` (follows TF 1.x `tf.image.adjust_gamma`).

    Non-float16/32 images are converted to float32 in [0, 1] first and back (saturating)
    afterwards.

    Args:
      image: an image tensor of any shape and an integer or floating dtype.
      gamma: non-negative scalar (Python number or tensor).
      gain: scalar multiplier.

    Returns:
      A tensor of `image`'s shape and dtype.

    Raises:
      ValueError: if `gamma` is a negative Python number.
      InvalidArgumentError: at run time, if a tensor `gamma` is negative.
    """
    with graph_mod.name_scope(None, "adjust_gamma", [image, gamma, gain]):
        image = convert_to_tensor(image, name="image")
        orig_dtype = image.dtype.base_dtype
        flt_image = to_float_image(image)
        checks = static_assert(gamma >= 0, "Gamma should be a non-negative real number.")
        if checks:
            gamma = with_dependencies(checks, gamma)
        adjusted = gain * flt_image**gamma
        return convert_image_dtype(adjusted, orig_dtype, saturate=True)


def random_factor(lower: float, upper: float, seed: int | None) -> Any:
    """A float32 scalar drawn uniformly from `[lower, upper)` per step (the factor of
    `random_contrast` and `random_saturation`).

    Raises:
      ValueError: if `upper <= lower` or `lower < 0` (TF's messages).
    """
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return random_uniform([], lower, upper, seed=seed)


def random_brightness(image: Any, max_delta: float, seed: int | None = None) -> Any:
    """`adjust_brightness` by a delta drawn uniformly from `[-max_delta, max_delta)`
    (follows TF 1.x `tf.image.random_brightness`).

    Args:
      image: as `adjust_brightness`.
      max_delta: non-negative float.
      seed: op-level seed (see `tf.set_random_seed`).

    Returns:
      A tensor of `image`'s shape and dtype.

    Raises:
      ValueError: if `max_delta` is negative.
    """
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def random_contrast(image: Any, lower: float, upper: float, seed: int | None = None) -> Any:
    """`adjust_contrast` by a factor drawn uniformly from `[lower, upper)` (follows TF 1.x
    `tf.image.random_contrast`).

    Args:
      image: as `adjust_contrast`.
      lower: non-negative float.
      upper: float above `lower`.
      seed: op-level seed (see `tf.set_random_seed`).

    Returns:
      A tensor of `image`'s shape and dtype.

    Raises:
      ValueError: if `upper <= lower` or `lower < 0`.
    """
    return adjust_contrast(image, random_factor(lower, upper, seed))


__all__ = [
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "per_image_standardization",
    "random_brightness",
    "random_contrast",
]
