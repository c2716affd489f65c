"""Gradients of `ResizeBilinear` and `ResizeNearestNeighbor` (follow TF 1.x
`image_grad.py`). The gradient ops themselves are not differentiable, as in TensorFlow."""

from __future__ import annotations

from typing import Any

from tensorweave.framework import op_defs  # noqa: F401  (registers the ops)
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.array_ops_shape import shape
from tensorweave.ops.gradients_impl import RegisterGradient, no_gradient

no_gradient("ResizeBilinearGrad")
no_gradient("ResizeNearestNeighborGrad")


def _flags(op: Any) -> dict[str, bool]:
    return {"align_corners": op.get_attr("align_corners"),
            "half_pixel_centers": op.get_attr("half_pixel_centers")}


@RegisterGradient("ResizeBilinear")
def _resize_bilinear_grad(op: Any, grad: Any) -> tuple[Any, None]:
    return apply_op("ResizeBilinearGrad", grads=grad, original_image=op.inputs[0],
                    **_flags(op)), None


@RegisterGradient("ResizeNearestNeighbor")
def _resize_nearest_neighbor_grad(op: Any, grad: Any) -> tuple[Any, None]:
    image = op.inputs[0]
    static = image.get_shape()[1:3]
    size = static.as_list() if static.is_fully_defined() else shape(image)[1:3]
    return apply_op("ResizeNearestNeighborGrad", grads=grad, size=size, **_flags(op)), None
