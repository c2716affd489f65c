"""Gradients of `ExtractImagePatches`/`ExtractVolumePatches` (as TensorFlow's: the patch
op applied to an image of pixel indices tells where each patch element came from, and the
gradient is summed back there); the other misc ops have none."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.ops import array_ops, constant_op, cwise_ops, reduction_ops
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient
from tensorweave.ops.misc_ops import extract_image_patches, extract_volume_patches


def _patches_grad(op: Any, grad: Any, extract: Any) -> Any:
    x = op.inputs[0]
    shape = x.shape.as_list() if x.shape.ndims is not None else None
    if shape is None or None in shape[1:]:
        raise NotImplementedError(f"the gradient of {op.type} needs static spatial and "
                                  "depth dimensions")
    spatial, depth = shape[1:-1], shape[-1]
    n = int(np.prod(spatial))
    ids = constant_op.constant(np.arange(1, n + 1, dtype=np.int64).reshape([1, *spatial, 1]))
    where = extract(ids) - 1  # [1, out..., K]: source pixel, -1 for padding
    where = array_ops.expand_dims(where, -1) * depth + np.arange(depth, dtype=np.int64)
    source = array_ops.where(cwise_ops.greater_equal(where, 0), where,
                             array_ops.fill(array_ops.shape(where), np.int64(n * depth)))
    source = array_ops.reshape(source, [-1])
    batch = array_ops.shape(grad)[0]
    per_batch = array_ops.transpose(array_ops.reshape(grad, array_ops.stack([batch, -1])))
    summed = reduction_ops.unsorted_segment_sum(per_batch, source, n * depth + 1)[: n * depth]
    return array_ops.reshape(array_ops.transpose(summed), array_ops.shape(x))


@RegisterGradient("ExtractImagePatches")
def _extract_image_patches_grad(op: Any, grad: Any) -> Any:
    attrs = {k: op.get_attr(k) for k in ("ksizes", "strides", "rates", "padding")}
    attrs["padding"] = attrs["padding"].decode() if isinstance(attrs["padding"], bytes) \
        else attrs["padding"]
    return _patches_grad(op, grad, lambda ids: extract_image_patches(ids, **attrs))


@RegisterGradient("ExtractVolumePatches")
def _extract_volume_patches_grad(op: Any, grad: Any) -> Any:
    attrs = {k: op.get_attr(k) for k in ("ksizes", "strides", "padding")}
    attrs["padding"] = attrs["padding"].decode() if isinstance(attrs["padding"], bytes) \
        else attrs["padding"]
    return _patches_grad(op, grad, lambda ids: extract_volume_patches(ids, **attrs))


for _op in ("Timestamp", "SerializeSparse", "SerializeManySparse",
            "DeserializeManySparse", "RandomIndexShuffle"):
    no_gradient(_op)
