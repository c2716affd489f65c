"""Op definitions of the image codecs and `DecodeJSONExample` (TensorFlow's
`core/ops/image_ops.cc`, `parsing_ops.cc`): `DecodePng`, `EncodePng`, `DecodeBmp`,
`DecodeImage`."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.tensor_shape import TensorShape


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
