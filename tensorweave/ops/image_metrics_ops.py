"""Image measures of `tf.image` (follows TF 1.x `image_ops_impl.py`): `total_variation`,
`image_gradients`, `psnr`.

Composites of strided slices, `Sub`, `Abs`, `Sum`, `Mean` and `Log`, so their gradients are
those of the parts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_ops import identity
from tensorweave.ops.array_ops_join import concat, stack, unstack
from tensorweave.ops.array_ops_more import shape_n
from tensorweave.ops.array_ops_shape import reshape, shape, size, zeros
from tensorweave.ops.cwise_binary_ops import equal, greater_equal, squared_difference, subtract
from tensorweave.ops.cwise_unary_ops import abs, cast, log  # noqa: A004
from tensorweave.ops.image_ops import convert_image_dtype
from tensorweave.ops.logging_ops import Assert
from tensorweave.ops.reduction_ops import reduce_all, reduce_mean, reduce_sum


def total_variation(images: Any, name: str | None = None) -> Any:
    """The sum of absolute differences between vertically and horizontally neighbouring
    pixels (follows TF 1.x `tf.image.total_variation`).

    Args:
      images: `[height, width, channels]` or `[batch, height, width, channels]`, numeric.
      name: name scope (default "total_variation").

    Returns:
      A scalar for a 3-D input, `[batch]` for a 4-D one, of `images`' dtype.

    Raises:
      ValueError: if the static rank is not 3 or 4.
    """
    with graph_mod.name_scope(name, "total_variation"):
        images = convert_to_tensor(images, name="images")
        ndims = images.get_shape().ndims
        if ndims == 3:
            dif_h = images[1:, :, :] - images[:-1, :, :]
            dif_w = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif ndims == 4:
            dif_h = images[:, 1:, :, :] - images[:, :-1, :, :]
            dif_w = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return reduce_sum(abs(dif_h), axis=axis) + reduce_sum(abs(dif_w), axis=axis)


def image_gradients(image: Any) -> tuple[Any, Any]:
    """Forward differences along height and width, zero in the last row / column (follows
    TF 1.x `tf.image.image_gradients`).

    Args:
      image: `[batch, height, width, depth]`, numeric.

    Returns:
      `(dy, dx)`, both of `image`'s shape and dtype: `dy[:, i] = image[:, i + 1] -
      image[:, i]`, `dx[:, :, j] = image[:, :, j + 1] - image[:, :, j]`.

    Raises:
      ValueError: if `image` is not statically 4-D.
    """
    image = convert_to_tensor(image, name="image")
    if image.get_shape().ndims != 4:
        raise ValueError("image_gradients expects a 4D tensor [batch_size, h, w, d], not "
                         f"{image.get_shape()}.")
    image_shape = shape(image)
    batch, height, width, depth = unstack(image_shape)
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = concat([dy, zeros(stack([batch, 1, width, depth]), image.dtype)], 1)
    dx = concat([dx, zeros(stack([batch, height, 1, depth]), image.dtype)], 2)
    return reshape(dy, image_shape), reshape(dx, image_shape)


def _compatible_image_checks(a: Any, b: Any) -> list:
    """Run-time checks that `a` and `b` are images of the same inner three dimensions.

    Raises:
      ValueError: if their static shapes cannot be: rank below 3, different inner
        dimensions, or batch dimensions that do not broadcast.
    """
    shape_a = a.get_shape().with_rank_at_least(3)
    shape_b = b.get_shape().with_rank_at_least(3)
    if not shape_a[-3:].is_compatible_with(shape_b[-3:]):
        raise ValueError(f"Shapes {shape_a[-3:]} and {shape_b[-3:]} are incompatible")
    if shape_a.ndims is not None and shape_b.ndims is not None:
        for da, db in zip(reversed(shape_a.dims[:-3]), reversed(shape_b.dims[:-3]),
                          strict=False):
            if not (da.value == 1 or db.value == 1 or da.is_compatible_with(db)):
                raise ValueError(f"Two images are not compatible: {shape_a} and {shape_b}")
    dyn_a, dyn_b = shape_n([a, b])
    return [Assert(greater_equal(size(dyn_a), 3), [dyn_a, dyn_b], summarize=10),
            Assert(reduce_all(equal(dyn_a[-3:], dyn_b[-3:])), [dyn_a, dyn_b], summarize=10)]


def psnr(a: Any, b: Any, max_val: Any, name: str | None = None) -> Any:
    """Peak signal-to-noise ratio between two images, in dB (follows TF 1.x
    `tf.image.psnr`).

    `20 log10(max_val) - 10 log10(mse)`, the mean squared error taken over the last three
    axes after converting both images (and `max_val`, cast to `a`'s dtype) with
    `convert_image_dtype` to float32.

    Args:
      a: `[..., height, width, channels]`, integer or floating.
      b: like `a`, of the same inner three dimensions (leading ones broadcast).
      max_val: the dynamic range of the images (e.g. 255 for uint8, 1.0 for floats).
      name: name scope (default "PSNR").

    Returns:
      float32 of the broadcast leading shape (a scalar for 3-D images).

    Raises:
      ValueError: if the static shapes are not compatible images.
      InvalidArgumentError: at run time, if the shapes are not.
    """
    with graph_mod.name_scope(name, "PSNR", [a, b]):
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        max_val = convert_image_dtype(cast(max_val, a.dtype), dtypes.float32)
        a = convert_image_dtype(a, dtypes.float32)
        b = convert_image_dtype(b, dtypes.float32)
        mse = reduce_mean(squared_difference(a, b), [-3, -2, -1])
        value = subtract(20 * log(max_val) / log(10.0),
                         np.float32(10 / np.log(10)) * log(mse), name="psnr")
        checks = _compatible_image_checks(a, b)
        with graph_mod.control_dependencies(checks):
            return identity(value)


__all__ = ["image_gradients", "psnr", "total_variation"]
