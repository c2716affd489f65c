"""Cropping, padding and rotating of `tf.image` (follows TF 1.x `image_ops_impl.py`):
`crop_to_bounding_box`, `pad_to_bounding_box`, `resize_image_with_crop_or_pad` (alias
`resize_with_crop_or_pad`), `central_crop`, `rot90`, `transpose_image` (alias `transpose`).

Composites of `Slice`, `Pad`, `ReverseV2` and `Transpose`, so their gradients are those
of the parts. Offsets and sizes may be Python ints (checked while building, ValueError)
or int32 scalar tensors (checked at run time by `Assert`, InvalidArgumentError).
"""

from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops.array_ops_index import slice  # noqa: A004
from tensorweave.ops.array_ops_join import pad, reverse_v2, stack
from tensorweave.ops.array_ops_shape import expand_dims, reshape, shape, squeeze
from tensorweave.ops.array_ops_shape import transpose as _transpose
from tensorweave.ops.control_dependency_ops import with_dependencies
from tensorweave.ops.control_flow_ops import case
from tensorweave.ops.cwise_binary_ops import equal, logical_and, maximum, minimum, mod
from tensorweave.ops.cwise_unary_ops import cast
from tensorweave.ops.image_shape_checks import (
    assert_at_least_3d,
    by_rank,
    check_at_least_3d,
    check_rank_3_or_4,
    image_dimensions,
    static_assert,
)
from tensorweave.ops.tensor_helpers import is_tensor


def _as_batch(image: Any) -> tuple[Any, bool]:
    """`image` as a 4-D batch and whether it was one.

    Raises:
      ValueError: if the static rank is known and not 3 or 4.
    """
    image = convert_to_tensor(image, name="image")
    ndims = check_rank_3_or_4(image)
    if ndims == 4:
        return image, True
    batch = expand_dims(image, 0)
    if ndims is None:
        batch.set_shape([None] * 4)
    return batch, False


def _static_shape(dims: list) -> list:
    return [None if is_tensor(d) else d for d in dims]


def crop_to_bounding_box(image: Any, offset_height: Any, offset_width: Any,
                         target_height: Any, target_width: Any) -> Any:
    """The `[target_height, target_width]` window at `(offset_height, offset_width)`
    (follows TF 1.x `tf.image.crop_to_bounding_box`).

    Args:
      image: `[batch, height, width, channels]` or `[height, width, channels]`, any dtype.
      offset_height: non-negative int (or int32 scalar tensor): first row.
      offset_width: non-negative int (or int32 scalar tensor): first column.
      target_height: positive int (or int32 scalar tensor).
      target_width: positive int (or int32 scalar tensor).

    Returns:
      `image`'s dtype and rank, `[..., target_height, target_width, channels]`.

    Raises:
      ValueError: for a static rank other than 3 or 4, a static inner dimension of 0, or
        Python offsets/sizes that are negative, non-positive or exceed the image.
      InvalidArgumentError: at run time, for such tensor offsets/sizes.
    """
    with graph_mod.name_scope(None, "crop_to_bounding_box", [image]):
        image, is_batch = _as_batch(image)
        checks = check_at_least_3d(image)
        batch, height, width, depth = image_dimensions(image, 4)
        checks += static_assert(offset_width >= 0, "offset_width must be >= 0.")
        checks += static_assert(offset_height >= 0, "offset_height must be >= 0.")
        checks += static_assert(target_width > 0, "target_width must be > 0.")
        checks += static_assert(target_height > 0, "target_height must be > 0.")
        checks += static_assert(width >= target_width + offset_width,
                                "width must be >= target + offset.")
        checks += static_assert(height >= target_height + offset_height,
                                "height must be >= target + offset.")
        if checks:
            image = with_dependencies(checks, image)
        dims = shape(image)
        cropped = slice(image, stack([0, offset_height, offset_width, 0]),
                        stack([dims[0], target_height, target_width, dims[3]]))
        cropped.set_shape(_static_shape([batch, target_height, target_width, depth]))
        return cropped if is_batch else squeeze(cropped, axis=[0])


def pad_to_bounding_box(image: Any, offset_height: Any, offset_width: Any,
                        target_height: Any, target_width: Any) -> Any:
    """`image` zero-padded to `[target_height, target_width]`, its top-left corner at
    `(offset_height, offset_width)` (follows TF 1.x `tf.image.pad_to_bounding_box`).

    Args:
      image: `[batch, height, width, channels]` or `[height, width, channels]`, any dtype.
      offset_height: non-negative int (or int32 scalar tensor): rows added above.
      offset_width: non-negative int (or int32 scalar tensor): columns added on the left.
      target_height: int (or int32 scalar tensor), at least `offset_height + height`.
      target_width: int (or int32 scalar tensor), at least `offset_width + width`.

    Returns:
      `image`'s dtype and rank, `[..., target_height, target_width, channels]`.

    Raises:
      ValueError: for a static rank other than 3 or 4, a static inner dimension of 0, or
        Python offsets/sizes that are negative or leave no room for the image.
      InvalidArgumentError: at run time, for such tensor offsets/sizes.
    """
    with graph_mod.name_scope(None, "pad_to_bounding_box", [image]):
        image, is_batch = _as_batch(image)
        batch, height, width, depth = image_dimensions(image, 4)
        after_width = target_width - offset_width - width
        after_height = target_height - offset_height - height
        checks = check_at_least_3d(image)
        checks += static_assert(offset_height >= 0, "offset_height must be >= 0")
        checks += static_assert(offset_width >= 0, "offset_width must be >= 0")
        checks += static_assert(after_width >= 0, "width must be <= target - offset")
        checks += static_assert(after_height >= 0, "height must be <= target - offset")
        if checks:
            image = with_dependencies(checks, image)
        paddings = reshape(stack([0, 0, offset_height, after_height, offset_width,
                                  after_width, 0, 0]), [4, 2])
        padded = pad(image, paddings)
        padded.set_shape(_static_shape([batch, target_height, target_width, depth]))
        return padded if is_batch else squeeze(padded, axis=[0])


def _max(x: Any, y: Any) -> Any:
    return maximum(x, y) if is_tensor(x) or is_tensor(y) else max(x, y)


def _min(x: Any, y: Any) -> Any:
    return minimum(x, y) if is_tensor(x) or is_tensor(y) else min(x, y)


def resize_image_with_crop_or_pad(image: Any, target_height: Any, target_width: Any) -> Any:
    """Centrally crops or zero-pads `image` to `[target_height, target_width]` (follows
    TF 1.x `tf.image.resize_image_with_crop_or_pad` / `tf.image.resize_with_crop_or_pad`).

    Each axis is cropped (offset `(size - target) // 2`) when too large and padded
    (offset `(target - size) // 2`) when too small.

    Args:
      image: `[batch, height, width, channels]` or `[height, width, channels]`, any dtype.
      target_height: positive int (or int32 scalar tensor).
      target_width: positive int (or int32 scalar tensor).

    Returns:
      `image`'s dtype and rank, `[..., target_height, target_width, channels]`.

    Raises:
      ValueError: for a static rank other than 3 or 4, a static inner dimension of 0, or
        a non-positive Python target.
      InvalidArgumentError: at run time, for a non-positive tensor target.
    """
    with graph_mod.name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image, is_batch = _as_batch(image)
        checks = check_at_least_3d(image)
        checks += static_assert(target_width > 0, "target_width must be > 0.")
        checks += static_assert(target_height > 0, "target_height must be > 0.")
        if checks:
            image = with_dependencies(checks, image)
            if is_tensor(target_height):
                target_height = with_dependencies(checks, target_height)
            if is_tensor(target_width):
                target_width = with_dependencies(checks, target_width)
        _, height, width, _ = image_dimensions(image, 4)
        width_diff = target_width - width
        height_diff = target_height - height
        cropped = crop_to_bounding_box(image, _max(-height_diff // 2, 0),
                                       _max(-width_diff // 2, 0),
                                       _min(target_height, height), _min(target_width, width))
        resized = pad_to_bounding_box(cropped, _max(height_diff // 2, 0),
                                      _max(width_diff // 2, 0), target_height, target_width)
        return resized if is_batch else squeeze(resized, axis=[0])


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def _crop_start(size: Any, fraction: Any, dynamic: bool) -> Any:
    """`int((size - size * fraction) / 2)`, in float64 (as TF), as a tensor if `dynamic`."""
    if not dynamic:
        return int((float(size) - float(size) * fraction) / 2)
    size = cast(size, dtypes.float64)
    return cast((size - size * cast(fraction, dtypes.float64)) / 2, dtypes.int32)


def central_crop(image: Any, central_fraction: Any) -> Any:
    """The central `central_fraction` of each image's height and width (follows TF 1.x
    `tf.image.central_crop`).

    The crop starts at `int((size - size * central_fraction) / 2)` on each axis and is
    symmetric; a `central_fraction` of 1 returns `image` itself.

    Args:
      image: `[batch, height, width, channels]` or `[height, width, channels]`, any dtype.
      central_fraction: float in (0, 1] (or a float scalar tensor).

    Returns:
      `image`'s dtype and rank.

    Raises:
      ValueError: if a constant `central_fraction` lies outside (0, 1], or the static rank
        is not 3 or 4.
    """
    with graph_mod.name_scope(None, "central_crop", [image]):
        image = convert_to_tensor(image, name="image")
        fraction_static = (constant_value(central_fraction) if is_tensor(central_fraction)
                           else central_fraction)
        if fraction_static is not None:
            fraction_static = float(fraction_static)
            if fraction_static <= 0.0 or fraction_static > 1.0:
                raise ValueError("central_fraction must be within (0, 1]")
            if fraction_static == 1.0:
                return image
        else:
            # NOTE: TF's own check is `fraction > 0 or fraction <= 1` (always true); this
            # one is the documented range.
            image = with_dependencies(static_assert(
                logical_and(central_fraction > 0.0, central_fraction <= 1.0),
                "central_fraction must be within (0, 1]"), image)
        # NOTE: as in TF, only the static checks bind here: the run-time checks are built
        # but nothing depends on them (TF 2.21 crops a fed 0-height image to 0 rows).
        check_at_least_3d(image)
        ndims = image.get_shape().ndims
        if ndims not in (3, 4):
            raise ValueError("`image` should either be a Tensor with rank = 3 or rank = 4. "
                             f"Had rank = {ndims}.")
        first = ndims - 3
        dims = image.get_shape().as_list()
        sizes = []
        for axis in (first, first + 1):
            static_size = dims[axis]
            dynamic = static_size is None or fraction_static is None
            size = shape(image)[axis] if static_size is None else static_size
            start = _crop_start(size, central_fraction if fraction_static is None
                                else fraction_static, dynamic)
            sizes.append((start, size - start * 2, dynamic))
        (h0, hs, hdyn), (w0, ws, wdyn) = sizes
        begin = [h0, w0, 0] if ndims == 3 else [0, h0, w0, 0]
        size = [hs, ws, -1] if ndims == 3 else [-1, hs, ws, -1]
        cropped = slice(image, stack(begin), stack(size))
        inner = [None if hdyn else hs, None if wdyn else ws, dims[-1]]
        cropped.set_shape(inner if ndims == 3 else [dims[0], *inner])
        return cropped


def _rot90(image: Any, k: Any, scope: str, ndims: int) -> Any:
    """`image` (of rank `ndims`, 3 or 4) rotated by `k` (int32 scalar in [0, 3]) quarter
    turns."""
    h = ndims - 3
    perm = list(range(ndims))
    perm[h], perm[h + 1] = h + 1, h
    result = case([
        (equal(k, 1), lambda: _transpose(reverse_v2(image, [h + 1]), perm)),
        (equal(k, 2), lambda: reverse_v2(image, [h, h + 1])),
        (equal(k, 3), lambda: reverse_v2(_transpose(image, perm), [h + 1])),
    ], default=lambda: image, exclusive=True, name=scope)
    static = image.get_shape()
    dims = static.as_list() if static.ndims is not None else [None] * ndims
    result.set_shape([*dims[:h], None, None, dims[h + 2]])
    return result


def rot90(image: Any, k: Any = 1, name: str | None = None) -> Any:
    """`image` rotated counter-clockwise by `k` quarter turns (follows TF 1.x
    `tf.image.rot90`).

    Args:
      image: `[batch, height, width, channels]` or `[height, width, channels]`, any dtype.
      k: int32 scalar, taken modulo 4.
      name: name scope (default "rot90").

    Returns:
      `image`'s dtype and rank; height and width are swapped for odd `k` (statically
      unknown unless `k`'s value is).

    Raises:
      ValueError: if the static rank is known and not 3 or 4, or `k` is not a scalar.
    """
    with graph_mod.name_scope(name, "rot90", [image, k]) as scope:
        image = assert_at_least_3d(convert_to_tensor(image, name="image"))
        k = convert_to_tensor(k, dtypes.int32, name="k")
        k.get_shape().with_rank(0)
        k = mod(k, 4)
        check_rank_3_or_4(image)
        return by_rank(image, lambda: _rot90(image, k, scope, 3),
                       lambda: _rot90(image, k, scope, 4))


def transpose_image(image: Any, name: str | None = None) -> Any:
    """Swaps the height and width axes (follows TF 1.x `tf.image.transpose_image` /
    `tf.image.transpose`).

    Args:
      image: `[batch, height, width, channels]` or `[height, width, channels]`, any dtype.
      name: op name.

    Returns:
      `[batch, width, height, channels]` or `[width, height, channels]` of `image`'s dtype.

    Raises:
      ValueError: if the static rank is known and not 3 or 4.
    """
    with graph_mod.name_scope(name, "transpose", [image]):
        image = assert_at_least_3d(convert_to_tensor(image, name="image"))
        check_rank_3_or_4(image)
        return by_rank(image, lambda: _transpose(image, [1, 0, 2], name=name),
                       lambda: _transpose(image, [0, 2, 1, 3], name=name))


transpose = transpose_image


__all__ = [
    "central_crop",
    "crop_to_bounding_box",
    "pad_to_bounding_box",
    "resize_image_with_crop_or_pad",
    "resize_with_crop_or_pad",
    "rot90",
    "transpose",
    "transpose_image",
]
