"""Op definitions of the image and audio summaries: `ImageSummary`, `AudioSummaryV2`
(follows `tensorflow/core/ops/logging_ops.cc`). Each outputs a scalar `string`: a
serialized `Summary`."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def import register_op
from tensorweave.framework.shape_inference import op_error, with_rank
from tensorweave.framework.tensor_shape import TensorShape


def _image_summary_shape(op: Any) -> list[TensorShape]:
    with_rank(op, op.inputs[1].shape, 4)
    return [TensorShape([])]


def _audio_summary_shape(op: Any) -> list[TensorShape]:
    shape = op.inputs[1].shape
    if shape.rank is not None and shape.rank not in (2, 3):
        raise op_error(op, f"Shape must be rank 2 or 3 but is rank {shape.rank}")
    with_rank(op, op.inputs[2].shape, 0)
    return [TensorShape([])]


register_op(
    "ImageSummary",
    inputs=["tag: string", "tensor: T"],
    outputs=["summary: string"],
    # NOTE: TensorFlow's default bad_color is uint8 [255, 0, 0, 255] (opaque red); op
    # specs here cannot spell tensor defaults, so the wrapper always passes it.
    attrs=["max_images: int >= 1 = 3", "T: {uint8, float, half, double} = DT_FLOAT",
           "bad_color: tensor"],
    shape_fn=_image_summary_shape,
)
register_op(
    "AudioSummaryV2",
    inputs=["tag: string", "tensor: float", "sample_rate: float"],
    outputs=["summary: string"],
    attrs=["max_outputs: int >= 1 = 3"],
    shape_fn=_audio_summary_shape,
)
