"""Image resizing and flipping of `tf.image` (follows TF 1.x `image_ops_impl.py`, whose
`tf.compat.v1` names these are): `resize_bilinear`, `resize_nearest_neighbor`,
`resize_images` (alias `resize`) with `ResizeMethod`, `flip_left_right`, `flip_up_down`,
`random_flip_left_right`, `random_flip_up_down`.

`ResizeMethod.BICUBIC` and `ResizeMethod.AREA` have no kernels in tensorweave:
`resize_images` raises ValueError for them while building the graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import (
    dtypes,
    op_defs,  # noqa: F401  (registers the ops)
)
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape
from tensorweave.ops.array_ops_join import reverse_v2
from tensorweave.ops.array_ops_shape import expand_dims, reshape, shape, squeeze
from tensorweave.ops.constant_op import constant
from tensorweave.ops.control_flow_ops import cond
from tensorweave.ops.cwise_binary_ops import less, minimum
from tensorweave.ops.cwise_unary_ops import cast, round  # noqa: A004
from tensorweave.ops.image_shape_checks import by_rank
from tensorweave.ops.random_ops import random_uniform


class ResizeMethod:
    """The `method` values of TF 1.x `tf.image.resize_images` (`ResizeMethodV1`)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def resize_bilinear(images: Any, size: Any, align_corners: bool = False,
                    name: str | None = None, half_pixel_centers: bool = False) -> Any:
    """Bilinear resize (`ResizeBilinear`; follows TF 1.x `tf.image.resize_bilinear`).

    Args:
      images: `[batch, height, width, channels]` of an integer or floating dtype.
      size: int32 `[2]`: `new_height, new_width`.
      align_corners: map the corner pixels of input and output onto each other.
      name: op name.
      half_pixel_centers: sample at pixel centres (`(i + 0.5) * scale - 0.5`).

    Returns:
      float32 `[batch, new_height, new_width, channels]`.

    Raises:
      ValueError: if `images` is not 4-D or `size` not of 2 elements (while building).
      InvalidArgumentError: at run time for non-positive sizes, an empty input, or both
        `align_corners` and `half_pixel_centers`.
    """
    return apply_op("ResizeBilinear", images=images, size=size, align_corners=align_corners,
                    half_pixel_centers=half_pixel_centers, name=name)


def resize_nearest_neighbor(images: Any, size: Any, align_corners: bool = False,
                            name: str | None = None, half_pixel_centers: bool = False) -> Any:
    """Nearest-neighbour resize (`ResizeNearestNeighbor`; follows TF 1.x
    `tf.image.resize_nearest_neighbor`).

    Args and errors as `resize_bilinear`; returns `[batch, new_height, new_width, channels]`
    of `images`' dtype.
    """
    return apply_op("ResizeNearestNeighbor", images=images, size=size,
                    align_corners=align_corners, half_pixel_centers=half_pixel_centers,
                    name=name)


def _aspect_preserving_size(images: Any, size: Any) -> Any:
    """The largest `[h, w]` within `size` with `images`' aspect ratio: float32 arithmetic,
    rounded half to even (TF's `Round`); a constant when the sizes are known statically
    (TensorFlow's C++ shape inference folds it likewise)."""
    _, height, width, _ = images.get_shape().as_list()
    target = constant_value(size)
    if None not in (height, width) and target is not None:
        hw = np.array([height, width], np.float32)
        factor = np.min(target.astype(np.float32) / hw)
        return constant(np.round(factor * hw).astype(np.int32), name="size")
    dims = cast(shape(images)[1:3], dtypes.float32)
    factor = minimum(cast(size[0], dtypes.float32) / dims[0],
                     cast(size[1], dtypes.float32) / dims[1])
    return cast(round(factor * dims), dtypes.int32)


def resize_images(images: Any, size: Any, method: int = ResizeMethod.BILINEAR,
                  align_corners: bool = False, preserve_aspect_ratio: bool = False,
                  name: str | None = None) -> Any:
    """Resizes images to `size` (follows TF 1.x `tf.image.resize_images` / `tf.image.resize`).

    When the static input size already equals a constant `size`, `images` is returned
    unchanged (not converted to float), as in TF 1.x.

    Args:
      images: `[batch, height, width, channels]` or `[height, width, channels]`.
      size: int32 `[2]`: `new_height, new_width`.
      method: `ResizeMethod.BILINEAR` (float32 output) or `ResizeMethod.NEAREST_NEIGHBOR`
        (`images`' dtype).
      align_corners: map the corner pixels of input and output onto each other.
      preserve_aspect_ratio: resize to the largest size within `size` that keeps the
        aspect ratio.
      name: name scope (default "resize").

    Returns:
      The resized images, of `images`' rank.

    Raises:
      ValueError: if `images` has no static rank or one other than 3 or 4, `size` is not
        an int32 vector of 2 elements, or `method` is BICUBIC/AREA (not implemented in
        tensorweave) or unknown.
    """
    with graph_mod.name_scope(name, "resize", [images, size]):
        images = convert_to_tensor(images, name="images")
        static = images.get_shape()
        if static.ndims is None:
            raise ValueError("'images' contains no shape.")
        if static.ndims not in (3, 4):
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        is_batch = static.ndims == 4
        if not is_batch:
            images = expand_dims(images, 0)
        _, height, width, _ = images.get_shape().as_list()
        try:
            size = convert_to_tensor(size, dtypes.int32, name="size")
        except (TypeError, ValueError) as e:
            raise ValueError("'size' must be a 1-D int32 Tensor") from e
        if not size.get_shape().is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        if method == ResizeMethod.BILINEAR:
            op = resize_bilinear
        elif method == ResizeMethod.NEAREST_NEIGHBOR:
            op = resize_nearest_neighbor
        elif method in (ResizeMethod.BICUBIC, ResizeMethod.AREA):
            raise ValueError("Resize methods BICUBIC and AREA are not implemented in "
                             "tensorweave; use BILINEAR or NEAREST_NEIGHBOR.")
        else:
            raise ValueError("Resize method is not implemented.")
        if preserve_aspect_ratio:
            size = _aspect_preserving_size(images, size)
        new_height, new_width = constant_value_as_shape(size).as_list()
        if (None not in (height, width, new_height, new_width)
                and (height, width) == (new_height, new_width)):
            return images if is_batch else squeeze(images, axis=[0])
        resized = op(images, size, align_corners=align_corners)
        resized.set_shape([None, new_height, new_width, None])
        return resized if is_batch else squeeze(resized, axis=[0])


resize = resize_images


def _check_image(image: Any) -> Any:
    image = convert_to_tensor(image, name="image")
    static = image.get_shape()
    if static.ndims is not None:
        if static.ndims < 3:
            raise ValueError(f"'image' (shape {static}) must be at least three-dimensional.")
        if static.ndims > 4:
            raise ValueError(f"'image' (shape {static}) must have either 3 or 4 dimensions.")
        if any(d.value == 0 for d in static):
            raise ValueError("all dims of 'image.shape' must be > 0.")
    return image


def _flip(image: Any, axis: int, scope: str) -> Any:
    with graph_mod.name_scope(None, scope, [image]):
        image = _check_image(image)
        out = by_rank(image, lambda: reverse_v2(image, [axis]),
                       lambda: reverse_v2(image, [axis + 1]))
        out.set_shape(image.get_shape())
        return out


def _random_flip(image: Any, axis: int, seed: int | None, scope: str) -> Any:
    with graph_mod.name_scope(None, scope, [image]):
        image = _check_image(image)

        def one() -> Any:
            flip = less(random_uniform([], 0, 1.0, seed=seed), 0.5)
            return cond(flip, lambda: reverse_v2(image, [axis]), lambda: image)

        def batch() -> Any:
            n = shape(image)[0]
            flips = round(reshape(random_uniform([n], 0, 1.0, seed=seed), [n, 1, 1, 1]))
            flips = cast(flips, image.dtype)
            return flips * reverse_v2(image, [axis + 1]) + (1 - flips) * image

        out = by_rank(image, one, batch)
        out.set_shape(image.get_shape())
        return out


def flip_left_right(image: Any) -> Any:
    """Reverses the width axis (follows TF 1.x `tf.image.flip_left_right`).

    Args:
      image: `[height, width, channels]` or `[batch, height, width, channels]`, any dtype.

    Returns:
      `image` reversed along its width axis (same shape and dtype).

    Raises:
      ValueError: if the static rank is known and not 3 or 4, or a static dimension is 0.
    """
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image: Any) -> Any:
    """Reverses the height axis (follows TF 1.x `tf.image.flip_up_down`); as
    `flip_left_right`."""
    return _flip(image, 0, "flip_up_down")


def random_flip_left_right(image: Any, seed: int | None = None) -> Any:
    """Flips the width axis with probability 1/2 (follows TF 1.x
    `tf.image.random_flip_left_right`).

    A 3-D image is flipped as a whole; each image of a 4-D batch is flipped independently
    (drawn per step from `random_uniform` with `seed`).

    Args:
      image: `[height, width, channels]` or `[batch, height, width, channels]`; 4-D
        batches must be of a dtype that supports multiplication.
      seed: op-level seed (see `tf.set_random_seed`).

    Returns:
      A tensor of `image`'s shape and dtype.

    Raises:
      ValueError: as `flip_left_right`.
    """
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image: Any, seed: int | None = None) -> Any:
    """Flips the height axis with probability 1/2 (follows TF 1.x
    `tf.image.random_flip_up_down`); as `random_flip_left_right`."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


__all__ = [
    "ResizeMethod",
    "flip_left_right",
    "flip_up_down",
    "random_flip_left_right",
    "random_flip_up_down",
    "resize",
    "resize_bilinear",
    "resize_images",
    "resize_nearest_neighbor",
]
