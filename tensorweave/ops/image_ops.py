"""Image dtype and colour-space conversions of `tf.image` (TF 1.x `image_ops_impl.py`):
`convert_image_dtype`, `rgb_to_grayscale`, `grayscale_to_rgb`.

Composites of existing ops (cast, multiply, div, matmul, tile), so their gradients
are those of the parts.
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_ops import identity
from tensorweave.ops.array_ops_join import concat, tile
from tensorweave.ops.array_ops_shape import expand_dims, ones, rank, reshape, shape
from tensorweave.ops.constant_op import constant
from tensorweave.ops.cwise_binary_ops import div, multiply
from tensorweave.ops.cwise_unary_ops import cast, saturate_cast
from tensorweave.ops.matmul_ops import matmul

# Luma weights (ITU-R BT.601) of TF's rgb_to_grayscale.
_RGB_WEIGHTS = [0.2989, 0.5870, 0.1140]


def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False,
                        name: str | None = None) -> Any:
    """`image` as `dtype`, rescaled (follows TF 1.x `tf.image.convert_image_dtype`).

    Float images are taken to lie in [0, 1], integer images in [0, dtype.max]:
    integer -> float multiplies by `1 / in.max`; float -> integer multiplies by
    `out.max + 0.5` and casts; integer -> integer divides (narrowing) or multiplies
    (widening) by the ratio of `max + 1`; float -> float only casts. `saturate` clips
    before a cast that could overflow (float -> int, narrowing int).

    Args:
      image: a numeric tensor of any shape.
      dtype: the integer or floating target dtype.
      saturate: clip to `dtype`'s range before casting.
      name: op name.

    Returns:
      A tensor of `dtype` and `image`'s shape (`image` itself through `Identity` when the
      dtypes agree).

    Raises:
      AttributeError: if `image`'s dtype or `dtype` is neither integer nor floating (as TF).
    """
    image = convert_to_tensor(image, name="image")
    dtype = dtypes_lib.as_dtype(dtype)
    for what, d in (("image dtype", image.dtype.base_dtype), ("dtype", dtype)):
        if not (d.is_floating or d.is_integer):
            raise AttributeError(f"{what} must be either floating point or integer")
    if dtype == image.dtype.base_dtype:
        return identity(image, name=name)
    to_type = saturate_cast if saturate else cast
    src = image.dtype.base_dtype
    with graph_mod.name_scope(name, "convert_image", [image]) as name:
        if src.is_integer and dtype.is_integer:
            scale_in, scale_out = int(src.max), int(dtype.max)
            if scale_in > scale_out:
                scaled = div(image, (scale_in + 1) // (scale_out + 1))
                return to_type(scaled, dtype, name=name)
            return multiply(to_type(image, dtype), (scale_out + 1) // (scale_in + 1),
                            name=name)
        if src.is_floating and dtype.is_floating:
            return cast(image, dtype, name=name)
        if src.is_integer:
            return multiply(cast(image, dtype), 1.0 / int(src.max), name=name)
        scaled = multiply(image, float(dtype.max) + 0.5)
        return to_type(scaled, dtype, name=name)


def to_float_image(image: Tensor) -> Tensor:
    """float16/float32 images as they are, others through `convert_image_dtype` to float32
    (TF 1.x's adjustments compute in these; not a `tf.image` name)."""
    if image.dtype.base_dtype in (dtypes_lib.float16, dtypes_lib.float32):
        return image
    return convert_image_dtype(image, dtypes_lib.float32)


def rgb_to_grayscale(images: Any, name: str | None = None) -> Any:
    """Luma of RGB images (follows TF 1.x `tf.image.rgb_to_grayscale`).

    Args:
      images: `[..., 3]` of any integer or floating dtype.
      name: op name.

    Returns:
      `[..., 1]` of `images`' dtype: `0.2989 R + 0.5870 G + 0.1140 B`, computed in
      float32 after `convert_image_dtype` and converted back.
    """
    with graph_mod.name_scope(name, "rgb_to_grayscale", [images]) as name:
        images = convert_to_tensor(images, name="images")
        orig_dtype = images.dtype.base_dtype
        flt_image = convert_image_dtype(images, dtypes_lib.float32)
        # NOTE: TF contracts with tensordot; as [pixels, 3] @ [3, 1] the rank may be
        # unknown (a decode_image output).
        flat = reshape(flt_image, [-1, 3])
        gray_flat = matmul(flat, constant([[w] for w in _RGB_WEIGHTS], dtypes_lib.float32))
        gray = reshape(gray_flat, concat([shape(flt_image)[:-1], [1]], 0))
        if images.get_shape().ndims is not None:
            gray.set_shape(images.get_shape()[:-1].concatenate([1]))
        return convert_image_dtype(gray, orig_dtype, name=name)


def grayscale_to_rgb(images: Any, name: str | None = None) -> Any:
    """Grayscale images with the channel repeated 3 times (TF 1.x `tf.image.grayscale_to_rgb`).

    Args:
      images: `[..., 1]` of any dtype.
      name: op name.

    Returns:
      `[..., 3]` of `images`' dtype.

    Raises:
      ValueError: if the static rank is below 2 or the last dimension is not 1.
    """
    with graph_mod.name_scope(name, "grayscale_to_rgb", [images]) as name:
        images = convert_to_tensor(images, name="images")
        static = images.get_shape()
        if static.ndims is not None:
            if static.ndims < 2:
                raise ValueError(
                    f"A grayscale image (shape {static}) must be at least two-dimensional.")
            if static[-1].value is not None and static[-1].value != 1:
                raise ValueError("Last dimension of a grayscale image should be size 1.")
        rank_1 = expand_dims(rank(images) - 1, 0)
        multiples = concat([ones(rank_1, dtype=dtypes_lib.int32), [3]], 0)
        rgb = tile(images, multiples, name=name)
        if static.ndims is not None:
            rgb.set_shape(static[:-1].concatenate([3]))
        return rgb


__all__ = ["convert_image_dtype", "grayscale_to_rgb", "rgb_to_grayscale"]
