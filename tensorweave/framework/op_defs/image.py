"""Op definitions of the image codecs and `DecodeJSONExample` (TensorFlow's
`core/ops/image_ops.cc`, `parsing_ops.cc`): `DecodePng`, `EncodePng`, `DecodeBmp`,
`DecodeImage`, and the resize ops `ResizeBilinear`, `ResizeNearestNeighbor` with their
gradient ops `ResizeBilinearGrad`, `ResizeNearestNeighborGrad`, and the colour-space ops
`RGBToHSV`, `HSVToRGB` (bfloat16 left out: tensorweave has no such dtype)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import op_error, with_rank, with_rank_at_least
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.framework.tensor_util import constant_value


def _image(op: Any) -> list[TensorShape]:
    channels = op.get_attr("channels")
    return [TensorShape([None, None, channels or None])]


register_op("DecodePng", inputs=["contents: string"], outputs=["image: dtype"],
            attrs=["channels: int = 0", "dtype: {uint8, uint16} = DT_UINT8"], shape_fn=_image)
register_op("DecodeBmp", inputs=["contents: string"], outputs=["image: uint8"],
            attrs=["channels: int = 0"], shape_fn=_image)
register_op("DecodeImage", inputs=["contents: string"], outputs=["image: dtype"],
            attrs=["channels: int = 0", "dtype: {uint8, uint16, float} = DT_UINT8",
                   "expand_animations: bool = true"],
            shape_fn=lambda op: [TensorShape(None)])
register_op("EncodePng", inputs=["image: T"], outputs=["contents: string"],
            attrs=["compression: int = -1", "T: {uint8, uint16} = DT_UINT8"],
            shape_fn=lambda op: [TensorShape([])])
register_op("DecodeJSONExample", inputs=["json_examples: string"],
            outputs=["binary_examples: string"], shape_fn=lambda op: [op.inputs[0].shape])


def _resized(op: Any, like: TensorShape) -> list[TensorShape]:
    """`[batch, size[0], size[1], channels]` (batch and channels from `like`)."""
    size_shape = with_rank(op, op.inputs[1].shape, 1)
    if size_shape[0].value is not None and size_shape[0].value != 2:
        raise op_error(op, f"size must have 2 elements, got shape {size_shape}")
    size = constant_value(op.inputs[1])
    height, width = (None, None) if size is None else (int(size[0]), int(size[1]))
    if like.ndims is None:
        return [TensorShape([None, height, width, None])]
    return [TensorShape([like[0].value, height, width, like[3].value])]


def _resize_shape(op: Any) -> list[TensorShape]:
    return _resized(op, with_rank(op, op.inputs[0].shape, 4))


_RESIZE_ATTRS = ["align_corners: bool = false", "half_pixel_centers: bool = false"]
register_op("ResizeBilinear", inputs=["images: T", "size: int32"],
            outputs=["resized_images: float"],
            attrs=["T: {int8, uint8, int16, uint16, int32, int64, half, float, double}",
                   *_RESIZE_ATTRS], shape_fn=_resize_shape)
register_op("ResizeNearestNeighbor", inputs=["images: T", "size: int32"],
            outputs=["resized_images: T"],
            attrs=["T: {int8, uint8, int16, uint16, int32, int64, half, float, double}",
                   *_RESIZE_ATTRS], shape_fn=_resize_shape)
register_op("ResizeBilinearGrad", inputs=["grads: float", "original_image: T"],
            outputs=["output: T"], attrs=["T: {float, half, double}", *_RESIZE_ATTRS],
            shape_fn=lambda op: [with_rank(op, op.inputs[1].shape, 4)])
register_op("ResizeNearestNeighborGrad", inputs=["grads: T", "size: int32"],
            outputs=["output: T"],
            attrs=["T: {uint8, int8, int32, half, float, double}", *_RESIZE_ATTRS],
            shape_fn=lambda op: _resized(op, with_rank(op, op.inputs[0].shape, 4)))


def _pixels_of_3(op: Any) -> list[TensorShape]:
    """`images`' shape: at least 1-D, the last dimension 3 (TF's `ColorspaceShapeFn`)."""
    images = with_rank_at_least(op, op.inputs[0].shape, 1)
    if images.ndims is not None and images[-1].value not in (None, 3):
        raise op_error(op, f"Dimension must be 3 but is {images[-1].value}")
    if images.ndims is None:
        return [images]
    return [TensorShape([*images.as_list()[:-1], 3])]


register_op("RGBToHSV", inputs=["images: T"], outputs=["output: T"],
            attrs=["T: {half, float, double} = DT_FLOAT"], shape_fn=_pixels_of_3)
register_op("HSVToRGB", inputs=["images: T"], outputs=["output: T"],
            attrs=["T: {half, float, double} = DT_FLOAT"], shape_fn=_pixels_of_3)
