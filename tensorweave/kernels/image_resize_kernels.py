"""Kernels of `ResizeBilinear`, `ResizeNearestNeighbor` and their gradient ops (follow
TensorFlow's `resize_bilinear_op.cc`, `resize_nearest_neighbor_op.cc` and
`image_resizer_state.h`).

Source coordinates are computed in float32 exactly as TensorFlow does, so the sampled pixels
and the bilinear weights (and hence the float32 outputs) equal TensorFlow's:

* scale = `(in - 1) / (out - 1)` with `align_corners` (and `out > 1`), else `in / out`;
* bilinear: `src = (dst + 0.5) * scale - 0.5` with `half_pixel_centers`, else `dst * scale`;
  the neighbours are `max(floor(src), 0)` and `min(ceil(src), in - 1)`, weighted by
  `src - floor(src)`;
* nearest: `src = (dst + 0.5) * scale` with `half_pixel_centers`, else `dst * scale`, then
  rounded half away from zero with `align_corners`, else floored, and clamped to the input.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import op_defs  # noqa: F401  (op definitions)
from tensorweave.kernels.registry import KernelNode, invalid, register_kernel

_F32 = np.float32


def _flags(node: KernelNode) -> tuple[bool, bool]:
    return bool(node.attrs.get("align_corners", False)), bool(
        node.attrs.get("half_pixel_centers", False))


def _check_flags(align_corners: bool, half_pixel_centers: bool) -> None:
    if align_corners and half_pixel_centers:
        raise invalid("If half_pixel_centers is True, align_corners must be False.")


def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return _F32(in_size - 1) / _F32(out_size - 1)
    return _F32(in_size) / _F32(out_size)


def _output_size(images: np.ndarray, size: Any) -> tuple[int, int]:
    """Validates a resize's `images` [batch, height, width, channels] and `size` [2]."""
    if images.ndim != 4:
        raise invalid(f"input must be 4-dimensional, got shape {list(images.shape)}")
    size = np.asarray(size)
    if size.shape != (2,):
        raise invalid(f"size must be a 1-D tensor of 2 elements, got shape {list(size.shape)}")
    height, width = int(size[0]), int(size[1])
    if height <= 0 or width <= 0:
        raise invalid(f"output dimensions must be positive, got {[height, width]}")
    if images.shape[1] == 0 or images.shape[2] == 0:
        raise invalid(f"input image must be of non-zero size, got shape {list(images.shape)}")
    return height, width


def _linear(in_size: int, out_size: int, align_corners: bool,
            half_pixel: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower index, upper index, float32 weight of upper) of each output position."""
    scale = _scale(in_size, out_size, align_corners)
    dst = np.arange(out_size, dtype=_F32)
    src = (dst + _F32(0.5)) * scale - _F32(0.5) if half_pixel else dst * scale
    floor = np.floor(src)
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(src).astype(np.int64), in_size - 1)
    return lower, upper, (src - floor).astype(_F32)


def _nearest(in_size: int, out_size: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """The input index each output position copies."""
    scale = _scale(in_size, out_size, align_corners)
    dst = np.arange(out_size, dtype=_F32)
    src = (dst + _F32(0.5)) * scale if half_pixel else dst * scale
    index = np.floor(src)
    if align_corners:  # C's roundf: halves go up (src is never negative here)
        index = np.where(src - index >= 0.5, index + 1, index)
    return np.clip(index.astype(np.int64), 0, in_size - 1)


@register_kernel("ResizeBilinear")
def _resize_bilinear(node: KernelNode) -> Any:
    align_corners, half_pixel = _flags(node)

    def compute(ctx: Any, images: Any, size: Any) -> np.ndarray:
        _check_flags(align_corners, half_pixel)
        images = np.asarray(images)
        height, width = _output_size(images, size)
        y0, y1, wy = _linear(images.shape[1], height, align_corners, half_pixel)
        x0, x1, wx = _linear(images.shape[2], width, align_corners, half_pixel)
        flt = images.astype(_F32)
        wx = wx[:, None]
        top, bottom = flt[:, y0], flt[:, y1]
        top = top[:, :, x0] + (top[:, :, x1] - top[:, :, x0]) * wx
        bottom = bottom[:, :, x0] + (bottom[:, :, x1] - bottom[:, :, x0]) * wx
        return top + (bottom - top) * wy[:, None, None]

    return compute


@register_kernel("ResizeBilinearGrad")
def _resize_bilinear_grad(node: KernelNode) -> Any:
    align_corners, half_pixel = _flags(node)
    out_dtype = node.output_dtypes[0].as_numpy_dtype

    def compute(ctx: Any, grads: Any, original_image: Any) -> np.ndarray:
        _check_flags(align_corners, half_pixel)
        grads, original = np.asarray(grads, _F32), np.asarray(original_image)
        if grads.ndim != 4 or original.ndim != 4:
            raise invalid("input_grad and original_image must be 4-dimensional, got shapes "
                          f"{list(grads.shape)} and {list(original.shape)}")
        if grads.shape[0] != original.shape[0] or grads.shape[3] != original.shape[3]:
            raise invalid("input_grad and original_image must agree in batch and channels, "
                          f"got shapes {list(grads.shape)} and {list(original.shape)}")
        y0, y1, wy = _linear(original.shape[1], grads.shape[1], align_corners, half_pixel)
        x0, x1, wx = _linear(original.shape[2], grads.shape[2], align_corners, half_pixel)
        # The four corner contributions of each gradient pixel, [out_h, out_w, 4], added in
        # TensorFlow's order (row-major pixels; top-left, top-right, bottom-left,
        # bottom-right) so that the float sums round alike.
        ys, xs = np.broadcast_arrays(np.stack([y0, y0, y1, y1], -1)[:, None],
                                     np.stack([x0, x1, x0, x1], -1)[None, :])
        ly = np.stack([1 - wy, 1 - wy, wy, wy], -1)[:, None, :]
        lx = np.stack([1 - wx, wx, 1 - wx, wx], -1)[None, :, :]
        part = (grads[:, :, :, None, :] * ly[..., None]) * lx[..., None]
        # half accumulates in float32 and is rounded once at the end, as TensorFlow does.
        acc_dtype = np.float32 if out_dtype == np.float16 else out_dtype
        out = np.zeros(original.shape, acc_dtype)
        np.add.at(out, (slice(None), ys.ravel(), xs.ravel()),
                  part.astype(acc_dtype).reshape(grads.shape[0], -1, grads.shape[3]))
        return out.astype(out_dtype, copy=False)

    return compute


@register_kernel("ResizeNearestNeighbor")
def _resize_nearest(node: KernelNode) -> Any:
    align_corners, half_pixel = _flags(node)

    def compute(ctx: Any, images: Any, size: Any) -> np.ndarray:
        _check_flags(align_corners, half_pixel)
        images = np.asarray(images)
        height, width = _output_size(images, size)
        ys = _nearest(images.shape[1], height, align_corners, half_pixel)
        xs = _nearest(images.shape[2], width, align_corners, half_pixel)
        return images[:, ys][:, :, xs]

    return compute


@register_kernel("ResizeNearestNeighborGrad")
def _resize_nearest_grad(node: KernelNode) -> Any:
    align_corners, half_pixel = _flags(node)

    def compute(ctx: Any, grads: Any, size: Any) -> np.ndarray:
        _check_flags(align_corners, half_pixel)
        grads = np.asarray(grads)
        height, width = _output_size(grads, size)
        # Each gradient position adds to the input pixel its forward position copied.
        ys = _nearest(height, grads.shape[1], align_corners, half_pixel)
        xs = _nearest(width, grads.shape[2], align_corners, half_pixel)
        out = np.zeros((grads.shape[0], height, width, grads.shape[3]), grads.dtype)
        np.add.at(out, (slice(None), ys[:, None], xs[None, :]), grads)
        return out

    return compute
